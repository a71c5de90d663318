#!/usr/bin/env bash
# Runs each libFuzzer target (tests/fuzz) for a bounded time on its seed corpus and dictionary.
#   scripts/fuzz.sh [SECONDS_PER_TARGET [TARGET...]]     targets: cint flatzinc flashrnn_cli (default all)
# FUZZ_BUILD_DIR: the build (default build-fuzz: Clang, ASan + UBSan, CONSTRINT_FUZZ=ON, configured
# here when missing; CI passes its sanitizer build). An input that crashes, trips a sanitizer, hangs
# (-timeout) or runs out of memory is written to tests/fuzz/corpus/TARGET/ (crash-*, timeout-*, oom-*):
# commit it with the fix, and ctest fuzz.replay.TARGET replays it in every build from then on. What
# the fuzzers add to the corpus otherwise stays in the build folder. Exit status 1 when a target found
# something.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(cint flatzinc flashrnn_cli)
build="${FUZZ_BUILD_DIR:-build-fuzz}"

if [ ! -f "$build/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only" -DCONSTRINT_SANITIZE=address,undefined \
    -DCONSTRINT_FUZZ=ON -DFLASHRNN_CUDA=OFF -DCONSTRINT_BUILD_PYTHON=OFF -DCONSTRINT_BUILD_EXAMPLES=OFF \
    -DCONSTRINT_WARNINGS_AS_ERRORS=ON >/dev/null
fi
cmake --build "$build" --target $(printf 'fuzz_%s ' "${targets[@]}")

# The seeds beyond tests/fuzz/corpus (the same folders as tests/fuzz/CMakeLists.txt's replay).
seeds_cint=(examples/models tests/cli/models)
seeds_flatzinc=(tests/flatzinc/snippets)
seeds_flashrnn_cli=()
# Seconds one input may take before libFuzzer reports a hang, every target: 30, because the ASan+UBSan build runs
# the solver 10-20x slower than a release build while the limits promise the limit plus about a
# second in release (docs/cli.md). Measured: the corpus's timeout-divisibility-chain-under-asan.cint
# takes 0.27 s in release with a 0.05 s limit and 5 s under ASan (over 10 s while three fuzzers
# shared two cores); the flashrnn CLI's slowest known refusal, tune-fused-refusal-explanation, 2.9 s
# in release. A real hang runs on: the creeping linear equation the fuzzer found ran past 60 s.
input_timeout=30

status=0
for target in "${targets[@]}"; do
  corpus="tests/fuzz/corpus/$target"
  work="$build/fuzz-corpus/$target"
  log="$build/fuzz-$target.log"
  mkdir -p "$work"
  declare -n seeds="seeds_$target"
  # The first folder receives what the fuzzer finds interesting; the others are only read.
  if ! "$build/tests/fuzz/fuzz_$target" "$work" "$corpus" "${seeds[@]}" "-dict=tests/fuzz/$target.dict" \
    "-max_total_time=$seconds" -max_len=4096 "-timeout=$input_timeout" -rss_limit_mb=2048 "-artifact_prefix=$corpus/" \
    -print_final_stats=1 >"$log" 2>&1; then
    status=1
    echo "fuzz_$target: FOUND a failure (log: $log):"
    grep -m3 -E '^==[0-9]+==ERROR|runtime error|ALARM|deadly signal|fuzz_[a-z_]+: ' "$log" || true
    grep -E 'Test unit written to|^Base64:' "$log" || true
  fi
  executions="$(awk '/stat::number_of_executed_units/ {print $2}' "$log")"
  echo "fuzz_$target: ${executions:-?} executions in at most $seconds s, corpus $(ls "$work" | wc -l) inputs"
done
exit $status

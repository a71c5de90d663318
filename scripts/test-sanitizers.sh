#!/usr/bin/env bash
# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then each fuzz target for
# FUZZ_SECONDS (default 60) seconds: run by scripts/test.sh beside the normal build. One Clang build
# (SANITIZER_BUILD_DIR, default build-asan) serves both: no CUDA, no Python package, no examples, and
# only the targets these tests run (constrint_tests, flashrnn_tests, the three programs, the fuzz
# targets and their replays, the two Python packages' extensions: their pytest suites run with the
# sanitizer runtime preloaded into the uninstrumented interpreter, tests/python/CMakeLists.txt). Not run here: the MiniZinc instances (slow under ASan, and the
# FlatZinc front end is fuzzed instead), the install and GPU tests (other builds), the tests of a
# memory limit (cli.memory_limit, the FlatZinc snippet out_of_memory: ASan reserves terabytes of address
# space, so an address-space limit stops it before main; docs/cli.md), and the three exhaustive grids of the fused
# tiling model (about 10 minutes each under ASan at -O1; the solver code they run is covered by the
# other tests, and the normal build runs them).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${SANITIZER_BUILD_DIR:-build-asan}"
test_python="$(./scripts/install-python-deps.sh)" # a Python with torch for the flashrnn package's tests
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only" -DCONSTRINT_SANITIZE=address,undefined \
  -DCONSTRINT_FUZZ=ON -DFLASHRNN_CUDA=OFF -DCONSTRINT_BUILD_PYTHON=ON "-DFLASHRNN_TEST_PYTHON=$test_python" \
  -DCONSTRINT_BUILD_EXAMPLES=OFF -DCONSTRINT_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target constrint_tests flashrnn_tests constrint_cli \
  fzn_constrint flashrnn_cli fuzz_cint fuzz_flatzinc fuzz_flashrnn_cli fuzz_cint_replay \
  fuzz_flatzinc_replay fuzz_flashrnn_cli_replay constrint_python flashrnn_python
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" \
  -E 'flatzinc\.minizinc|install|gpu|GPU|cli\.memory_limit|flatzinc\.snippet\.out_of_memory|clang-formatted|over a grid of sizes fits every limit|model counts the bytes the kernel is launched with|largest head dimensions in docs/kernels.md'
FUZZ_BUILD_DIR="$build" ./scripts/fuzz.sh "${FUZZ_SECONDS:-60}"

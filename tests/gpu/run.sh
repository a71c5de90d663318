#!/usr/bin/env bash
# Everything that needs the GPU, in one call: the GPU tests, compute-sanitizer (memcheck and
# racecheck) on a subset of them, the benchmarks with their peers, and a short table last.
#
#   tests/gpu/run.sh [BIN]     BIN: the programs built by scripts/build-gpu.sh (default ./gpu-bin)
#
# CSV files and one file of all logs (logs.txt) go to $OUT (default /tmp/flashrnn-gpu). Set
# FLASHRNN_GPU_QUICK=1 for the short benchmark grid, FLASHRNN_GPU_BENCH=0 for tests and sanitizers only.
# FLASHRNN_GPU_PARTS picks the parts (default "rnn rnn-sanitizers scan python bench newton-bench"), so that each
# device call ends well inside its 10 minutes: "rnn" the recurrent backends' tests and CLI runs (374 to
# 473 s on the H200, 32 cases, 2026-12-02), "rnn-sanitizers" compute-sanitizer on a subset of them
# (more than 380 s on the H200 since both loads of R are checked: run it as calls of its own,
# "rnn-memcheck", and racecheck per backend: "rnn-racecheck-alternating", "rnn-racecheck-fused" (about
# 270 s) and the fused head split over a thread-block cluster alone, "rnn-racecheck-fused-cluster"
# (279 s); or "rnn-racecheck" for all three), "scan" tests/gpu/scan.sh (the scans' and the Newton family's tests,
# sanitizers and the scan benchmark, about 5 min), "python" the flashrnn package's pytest suite with
# its GPU tests run for real (about 2.5 min; the wheel in BIN/wheels, built for the GPU machine's Python, e.g. with Python 3.12:
# `python3.12 -m pip wheel ./bindings/python/flashrnn --no-deps -w gpu-bin/wheels
# --config-settings=cmake.define.CMAKE_CUDA_ARCHITECTURES=90`; the tree's Python files are laid over
# it), "bench" the LSTM benchmarks, "newton-bench" the Newton family's benchmarks with their peer
# (about 3 min), "largest-heads" (not in the default) the fused backend at the
# largest heads that compile (docs/kernels.md; about 340 s on the H200 with the float64 references in
# one thread, before they ran in parallel), "k-split" (not in the default) the k split's GPU tests and
# the fused backend at (1, 768) with 1, 2, 4 and 8 k blocks asked for (docs/kernels.md, "The k split").
# Exit status: non-zero when any step failed.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-gpu-bin}
OUT=${OUT:-/tmp/flashrnn-gpu}
LOGS=$(mktemp -d)
mkdir -p "$OUT"
QUICK=${FLASHRNN_GPU_QUICK:-0}
PARTS=" ${FLASHRNN_GPU_PARTS:-rnn rnn-sanitizers scan python bench newton-bench} "
part() { [[ "$PARTS" == *" $1 "* ]]; }
STEP_LOGS=$LOGS
source tests/gpu/step.sh

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$LOGS/device.txt"
if part rnn; then
# The scans' and the Newton family's tests run in the "scan" part (tests/gpu/scan.sh). Each case's
# duration is printed, to see where the part's time goes.
step gpu-tests "$BIN/flashrnn_gpu_tests" --duration=true -tce='linrec*,RG-LRU*,newton*,*prefetch with the multicast gather*'
# A case that faulted on the H200 before its fix (2026-12-03, a ptxas miscompile; tests/gpu/test_fused.cpp):
# in a process of its own, since a fault ends the CUDA context of every case after it.
step gpu-tests-prefetch "$BIN/flashrnn_gpu_tests" -tc='*prefetch with the multicast gather*'
step cli-alternating "$BIN/flashrnn" run --backend alternating --cell lstm --heads 3 --head-dim 24 --batch 5 --steps 9 --dtype bf16
step cli-fused "$BIN/flashrnn" run --backend fused --cell gru --heads 3 --head-dim 40 --batch 5 --steps 9 --dtype fp16
step cli-newton "$BIN/flashrnn" run --cell flash_lstm --backend newton --units 24 --batch 3 --steps 300
fi
memcheck=0
if part rnn-sanitizers || part rnn-memcheck; then memcheck=1; fi
# racecheck of one backend alone ("rnn-racecheck-alternating", "rnn-racecheck-fused"; the fused
# cluster forward, "rnn-racecheck-fused-cluster"): together they did not end within 420 s on the H200.
# racecheck runs one sanitizer process per case, so that the summary shows each case's time
# (H200, 2026-12-02: clipped and cut 29 s, chunks of a small head 27 s, chunks inside each step 130 s,
# R loaded directly 34 s, split over blocks 42 s, split over a cluster 279 s).
racecheck_backend() { part rnn-sanitizers || part rnn-racecheck || part "rnn-racecheck-$1"; }
if [ "$memcheck" = 1 ] || racecheck_backend alternating || racecheck_backend fused || racecheck_backend fused-cluster; then
# Modules loaded eagerly under the sanitizers: with CUDA's lazy loading, compute-sanitizer (CUDA 13.0)
# memcheck itself crashed (SIGSEGV in its cudaGraphLaunch callback, 0 errors reported) on the
# alternating backend's kept graphs in 3 of 3 runs on an H100 where 3 of 3 eager runs passed, same
# machine and state (docs/benchmarks.md). Eager loading made it rarer, not gone: it crashed the same
# way once more at fceca15 (SIGSEGV in "clipped and cut", 0 errors). memcheck therefore runs the
# alternating backend with direct launches (FLASHRNN_ALTERNATING_GRAPHS=0): the same kernels with the
# same arguments, not replayed from a graph; racecheck keeps the graphs.
# racecheck, failing on a hazard in any kernel but cuBLAS's own Hopper GEMMs (nvjet_*, which the fused
# backend's weight gradients call at some sizes): on the H100 (2026-11-24, B = 201 and 999) racecheck
# reported hazards between two accesses inside them, shared memory that vendor code synchronises in
# ways racecheck does not see. Excluding them with --kernel-name-exclude instead made the sanitizer
# itself fail ("failed to handle a hardware exception") in the next test case, so they run checked and
# only their reports are set aside. Also fails when the tests fail or the sanitizer reports an error.
racecheck_of_ours() {
  local log; log=$(mktemp)
  env CUDA_MODULE_LOADING=EAGER compute-sanitizer --tool racecheck "$@" >"$log" 2>&1
  local rc=$?
  cat "$log"
  local ours; ours=$(grep -E '(Race reported between|and) (Read|Write) access at' "$log" | grep -v -c ' access at nvjet_')
  if [ "$rc" -ne 0 ] || [ "$ours" -ne 0 ] || grep -q 'Internal Sanitizer Error' "$log"; then
    echo "racecheck: exit status $rc, $ours hazard lines in kernels of ours"; return 1
  fi
  echo "racecheck: no hazard in kernels of ours ($(grep -c ' access at nvjet_' "$log") lines in cuBLAS's nvjet kernels set aside)"
}
# The sanitizers' subset of each backend's cases (doctest splits -tc on commas: names as wildcards).
# memcheck runs it in one process with the argument checks and the cluster split; racecheck one case
# per process, the cluster split as a part of its own.
sanitizer_subset=("clipped and cut*" "a head split over blocks*" "batch chunks of a small head*"
                  "batch chunks inside each step*" "R loaded directly under*")
cluster_case="a head split over a thread-block cluster*"
# The fused backend's own cases beside those (the alternating backend has no k split).
fused_subset=("the k split*")
for backend in alternating fused; do
  subset=("${sanitizer_subset[@]}")
  [ "$backend" = fused ] && subset+=("${fused_subset[@]}")
  [ "$memcheck" = 1 ] && step "memcheck-$backend" env CUDA_MODULE_LOADING=EAGER FLASHRNN_ALTERNATING_GRAPHS=0 \
    compute-sanitizer --tool memcheck --error-exitcode 1 "$BIN/flashrnn_gpu_tests" \
    -tc="$(printf "$backend backend: %s," "${subset[@]}" "refuses*" "$cluster_case")"
  if racecheck_backend "$backend"; then
    for case in "${subset[@]}"; do
      name=${case%\*}
      step "racecheck-$backend-${name// /-}" racecheck_of_ours "$BIN/flashrnn_gpu_tests" -tc="$backend backend: $case"
    done
  fi
done
racecheck_backend fused-cluster && step racecheck-fused-cluster racecheck_of_ours "$BIN/flashrnn_gpu_tests" \
  -tc="fused backend: $cluster_case"
fi
if part largest-heads; then
# The compiled entries of docs/kernels.md's largest-head table ("Which of these entries compile and
# which ran"), one head, B 16, forward and backward against the float64 reference.
for entry in lstm:bf16:2304 lstm:fp16:2160 lstm:fp32:1584 gru:bf16:2112 gru:fp16:2112 gru:fp32:1600 \
             slstm:bf16:2112 slstm:fp16:2112 slstm:fp32:1056 elman:bf16:4224 elman:fp16:4224 elman:fp32:2464; do
  IFS=: read -r cell dtype head_dim <<<"$entry"
  step "largest-$cell-$dtype-$head_dim" "$BIN/flashrnn" run --backend fused --cell "$cell" --heads 1 \
    --head-dim "$head_dim" --batch 16 --steps 64 --dtype "$dtype"
done
fi
# The k split: its tests (both passes; with batch chunks), then LSTM bf16 at (1, 768) over the batch
# sweep's large end with each number of k blocks asked for (0: the model's own choice).
if part k-split; then
  step k-split-tests "$BIN/flashrnn_gpu_tests" -tc="fused backend: the k split*"
  for k in 0 2 4 8; do
    step "k-split-bench-$k" env FLASHRNN_FUSED_MIN_K_BLOCKS=$k "$BIN/alternating_bench" --backend fused \
      --dtype bf16 --runs 7 --shapes 1:768:16,1:768:64,1:768:128,1:768:256 --csv "$OUT/k_split_$k.csv"
  done
fi
if part scan; then # tests/gpu/scan.sh expects a build folder's layout
  layout=$(mktemp -d); mkdir -p "$layout/tests/gpu" "$layout/examples/bench"
  ln -s "$(realpath "$BIN/flashrnn_gpu_tests")" "$layout/tests/gpu/flashrnn_gpu_tests"
  [ -f "$BIN/scan_bench" ] && ln -s "$(realpath "$BIN/scan_bench")" "$layout/examples/bench/scan_bench"
  step scan bash tests/gpu/scan.sh "$layout" "$LOGS/scan"
fi
if part python; then
  site=$(mktemp -d)
  if python3 -m pip install -q --no-index --no-deps --no-compile --upgrade --target "$site" "$BIN"/wheels/flashrnn-*.whl; then
    cp bindings/python/flashrnn/*.py "$site/flashrnn/"
    # The two-process gloo tests run on the CPU, which CI covers; on the device machine (no network)
    # torchrun's processes did not finish within 240 s in 2 of 2 runs, so they are left to CI here.
    step python-tests env PYTHONPATH="$site" CONSTRINT_SOURCE_DIR="$PWD" python3 -m pytest -q -rs -p no:cacheprovider \
      -n 8 --durations=12 -k "not gloo_processes" tests/python/flashrnn
  else
    step python-tests false "no flashrnn wheel in $BIN/wheels"
  fi
fi

quick=(); [ "$QUICK" = 1 ] && quick=(--quick)
if [ "${FLASHRNN_GPU_BENCH:-1}" = 0 ] || ! part bench; then :; # tests and sanitizers only
elif [ -x "$BIN/alternating_bench" ]; then
  step bench-lstm "$BIN/alternating_bench" --backend both --dtype bf16 --csv "$OUT/lstm_bf16.csv" "${quick[@]}"
fi
if [ "${FLASHRNN_GPU_BENCH:-1}" != 0 ] && part bench && python3 -c "import torch" 2>/dev/null; then
  step bench-torch-lstm python3 examples/bench/torch_lstm_bench.py --csv "$OUT/torch_lstm.csv" "${quick[@]}"
fi
# The Newton family (issue 16): its shapes and the crossover grid (without it when quick), every
# compiled fused configuration at the issue's shapes, and the peer (apple/ml-pararnn, built on the CPU
# machine by examples/bench/prepare_pararnn.sh and carried; FLASHRNN_NEWTON_PEER, default
# gpu-peer/ml-pararnn) in the same call. About 3 min on the H200 (2026-12-02).
if [ "${FLASHRNN_GPU_BENCH:-1}" != 0 ] && part newton-bench && [ -x "$BIN/newton_bench" ]; then
  grid=(); [ "$QUICK" = 1 ] && grid=(--no-grid)
  step newton-bench "$BIN/newton_bench" --csv "$OUT/newton_bench.csv" "${grid[@]}"
  step newton-fused-sweep "$BIN/newton_bench" --no-grid --fused-sweep --runs 10 \
    --shapes 32:2048:2048,32:2048:8192,1:256:65536 --csv "$OUT/newton_sweep.csv"
  peer=${FLASHRNN_NEWTON_PEER:-gpu-peer/ml-pararnn}
  if [ -d "$peer" ] && python3 -c "import torch" 2>/dev/null; then
    step newton-peer python3 examples/bench/newton_peer.py --pararnn "$peer" --module --mamba \
      --ours "$OUT/newton_bench.csv" --csv "$OUT/newton_peer.csv"
  else
    echo "newton-peer: not run: no built peer at $peer (examples/bench/prepare_pararnn.sh builds one) or no torch"
  fi
fi

echo
for f in "$LOGS"/*.log "$LOGS"/*.txt; do [ -f "$f" ] || continue; echo "===== $(basename "$f")"; cat "$f"; done >"$OUT/logs.txt"
echo "== summary ($(head -2 "$LOGS/device.txt" | tail -1))"
printf '%s\n' "${summary[@]}"
for f in "$OUT"/lstm_bf16.csv "$OUT"/torch_lstm.csv; do [ -f "$f" ] && { echo "-- $f"; cat "$f"; }; done
exit $failed

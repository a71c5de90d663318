#!/usr/bin/env bash
# The scans' GPU checks (issue 7), for a build with CUDA (sm_90) on a GPU machine:
#   tests/gpu/scan.sh BUILD_DIR [OUT_DIR]
# 1. the linrec (scalar and 2x2 block elements), RG-LRU and Newton (reduction, forward, backward) GPU
#    tests (flashrnn_gpu_tests, exact and random, every configuration);
# 2. compute-sanitizer memcheck, racecheck and synccheck on the quick subsets;
# 3. unless FLASHRNN_GPU_BENCH=0, the benchmark (examples/bench/scan_bench) and, where PyTorch is importable, its torch.add / copy
#    peers (examples/bench/scan_peer.py), timed three ways (--timing stream, steady, isolated: see
#    scan_bench.cpp); CSV files go to OUT_DIR (default: BUILD_DIR/scan_results).
# Exit status: non-zero when a test or a sanitizer run fails.
set -uo pipefail
build=${1:?usage: tests/gpu/scan.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build/scan_results}
here=$(cd "$(dirname "$0")/../.." && pwd)
tests=$build/tests/gpu/flashrnn_gpu_tests
bench=$build/examples/bench/scan_bench
mkdir -p "$out"
status=0
step() { printf '\n== %s\n' "$*"; }

step "GPU tests: linrec and RG-LRU"
"$tests" -tc='linrec*,RG-LRU*' || status=1

step "GPU tests: Newton (reduction, forward, backward)"
"$tests" -tc='newton*' || status=1

sanitizer=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck synccheck; do
    step "compute-sanitizer --tool $tool (quick subsets)"
    "$sanitizer" --tool "$tool" --error-exitcode 9 "$tests" -tc='linrec small*,linrec 2x2 small*,RG-LRU small*' ||
        status=1
    "$sanitizer" --tool "$tool" --error-exitcode 9 "$tests" \
        -tc='newton reduce small*,newton forward small: a non-finite*,newton forward small: bad*,newton fused sanitizer case*,newton sequential sanitizer case*' ||
        status=1
done

if [ "${FLASHRNN_GPU_BENCH:-1}" = 0 ]; then # tests and sanitizers only
    exit $status
fi

step "benchmark: scans (13200 rows, L = 16 .. 65536)"
"$bench" --variants automatic,ref,tile --csv "$out/scan_bench.csv" | tee "$out/scan_bench.txt" || status=1
for timing in steady isolated; do
    "$bench" --timing $timing --csv "$out/scan_bench_$timing.csv" >"$out/scan_bench_$timing.txt" || status=1
done
if python3 -c 'import torch' 2>/dev/null; then
    step "peers: torch.add and copy on the same shapes"
    for timing in stream steady isolated; do
        python3 "$here/examples/bench/scan_peer.py" --timing $timing --csv "$out/scan_peer_$timing.csv" |
            tee "$out/scan_peer_$timing.txt" || status=1
    done
fi

step "summary (% of the measured copy bandwidth, automatic configuration; timing stream / steady / isolated)"
awk -F, 'FNR == 1 { file++ } FNR > 1 && ($3 == "automatic" || $3 == "fused") {
           key = sprintf("%-9s %-5s L=%-6s", $1, $2, $4); if (file == 1) order[++n] = key; pct[key, file] = 100 * $8 }
         END { for (i = 1; i <= n; i++) printf "%s %5.1f / %5.1f / %5.1f%%\n", order[i], pct[order[i], 1], pct[order[i], 2], pct[order[i], 3] }' \
    "$out/scan_bench.csv" "$out/scan_bench_steady.csv" "$out/scan_bench_isolated.csv"
exit $status

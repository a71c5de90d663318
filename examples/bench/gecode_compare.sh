#!/usr/bin/env bash
# The comparison table: runs ConstrINT's solver_bench and Gecode (Debian's fzn-gecode 6.2 through
# minizinc) on the same classic problems (queens.mzn from the MiniZinc benchmarks, pigeonhole.mzn and
# gemm_tiling.mzn here) and prints both side by side. Needs: apt-get install minizinc flatzinc, and
# the build (./scripts/build.sh). Usage: examples/bench/gecode_compare.sh [BUILD_DIR]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
queens="${QUEENS_MZN:-$here/../../../shared/minizinc/queens/queens.mzn}"
build="${1:-$here/../../build}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

run() {  # name, model, data assignment, fzn-gecode flags
  local name="$1" model="$2" data="$3" flags="$4"
  minizinc -c --solver gecode ${data:+-D "$data"} "$model" --fzn "$tmp/m.fzn" --ozn "$tmp/m.ozn" >/dev/null 2>&1
  local start end
  start=$(date +%s.%N)
  fzn-gecode $flags -s "$tmp/m.fzn" > "$tmp/out" 2>&1
  end=$(date +%s.%N)
  local nodes solvetime
  nodes=$(sed -n 's/^%%%mzn-stat: nodes=//p' "$tmp/out")
  solvetime=$(sed -n 's/^%%%mzn-stat: solveTime=//p' "$tmp/out")
  printf '"%s",%s,%s\n' "$name" "${nodes:-?}" "$(python3 -c "print(${solvetime:-0} * 1000)")" >> "$tmp/gecode.csv"
}

run "queens 50, first solution" "$queens" "n=50" ""
run "queens 12, all solutions" "$queens" "n=12" "-a"
run "pigeonhole 10 into 9 (unsat)" "$here/pigeonhole.mzn" "n=10" ""
run "GEMM tiling, all solutions" "$here/gemm_tiling.mzn" "" "-a"

"$build/examples/bench/solver_bench" "$tmp/constrint.csv" > /dev/null
python3 - "$tmp/constrint.csv" "$tmp/gecode.csv" <<'PY'
import csv, sys
ours = {row["case"]: row for row in csv.DictReader(open(sys.argv[1]))}
print(f"{'problem':<32} {'ConstrINT ms':>12} {'nodes':>9} {'Gecode ms':>10} {'nodes':>9} {'time ratio':>10}")
for name, nodes, ms in csv.reader(open(sys.argv[2])):
    mine = next(row for case, row in ours.items() if case.startswith(name))
    our_ms = float(mine["median_seconds"]) * 1e3
    print(f"{name:<32} {our_ms:>12.1f} {mine['nodes']:>9} {float(ms):>10.1f} {nodes:>9} {our_ms / float(ms):>9.2f}x")
PY

#!/usr/bin/env bash
# Runs Gecode (Debian's fzn-gecode 6.2 through minizinc) on the classic problems of solver_bench,
# same models (queens.mzn from the MiniZinc benchmarks, pigeonhole.mzn here), and prints its
# solve time and nodes. Needs: apt-get install minizinc flatzinc.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
queens="${QUEENS_MZN:-$here/../../../shared/minizinc/queens/queens.mzn}"
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
  printf '%-36s %10s nodes  %8.1f ms (solve)  %8.1f ms (wall)\n' "$name" "${nodes:-?}" \
    "$(python3 -c "print(${solvetime:-0} * 1000)")" "$(python3 -c "print(($end - $start) * 1000)")"
}

run "queens 50, first solution" "$queens" "n=50" ""
run "queens 12, all solutions" "$queens" "n=12" "-a"
run "pigeonhole 10 into 9 (unsat)" "$here/pigeonhole.mzn" "n=10" ""
run "GEMM tiling, all solutions" "$here/gemm_tiling.mzn" "" "-a"

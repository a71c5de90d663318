#!/bin/bash
# Two fzn-constrint binaries (before and after a change) on the same FlatZinc files, in the same run:
# the median user CPU time of N alternating runs each (nice'd; CPU time, not wall time, because the
# development machine is shared), the node count, and a check that both print the same answers.
#
# usage: N=7 examples/bench/fzn_before_after.sh BEFORE AFTER FILE.fzn...
# Flatten an instance for ConstrINT's mznlib first, for example:
#   MZN_SOLVER_PATH=build/share/minizinc/solvers minizinc -c --solver constrint \
#       golomb.mzn 09.dzn --fzn golomb9.fzn
set -euo pipefail
if [ $# -lt 3 ]; then
    sed -n 2,9p "$0"
    exit 2
fi
before=$1 after=$2
shift 2
runs=${N:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | sed -n "$(((runs + 1) / 2))p"; }
user_time() { { /usr/bin/time -f %U nice "$1" -s "$2" >"$3"; } 2>&1 | tail -1; }

printf "%-28s %12s %12s %7s %10s\n" instance "before user s" "after user s" ratio nodes
for fzn in "$@"; do
    before_times=() after_times=()
    for _ in $(seq "$runs"); do
        before_times+=("$(user_time "$before" "$fzn" "$work/before")")
        after_times+=("$(user_time "$after" "$fzn" "$work/after")")
    done
    if ! cmp -s <(grep -v mzn-stat "$work/before") <(grep -v mzn-stat "$work/after"); then
        echo "$fzn: the answers differ" >&2
        exit 1
    fi
    nodes_before=$(grep -o 'nodes=[0-9]*' "$work/before" || true)
    nodes_after=$(grep -o 'nodes=[0-9]*' "$work/after" || true)
    [ "$nodes_before" == "$nodes_after" ] || echo "$fzn: node counts differ ($nodes_before, $nodes_after)" >&2
    b=$(printf "%s\n" "${before_times[@]}" | median)
    a=$(printf "%s\n" "${after_times[@]}" | median)
    ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { print (b > 0 ? sprintf("%.2f", a / b) : "-") }')
    printf "%-28s %12s %12s %7s %10s\n" "$(basename "$fzn" .fzn)" "$b" "$a" "$ratio" "${nodes_after#nodes=}"
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

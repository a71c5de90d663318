#!/usr/bin/env bash
# The demo: builds, then solves every example model in examples/models/ and prints the answers.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh >/dev/null
for model in examples/models/*.cint examples/models/flashrnn/*.cint; do
  echo "== $model"
  status=0
  ./build/constrint/constrint solve "$model" --stats || status=$?
  echo "(exit status $status)"
done
echo "== flashrnn: the launch configuration ConstrINT picks, and the CPU reference on random data"
./build/flashrnn/flashrnn tune --gpu h100_sxm --cell lstm --heads 12 --head-dim 64 --batch 16
./build/flashrnn/flashrnn run --backend reference --cell gru --heads 2 --head-dim 24 --batch 3 --steps 7
echo "== fzn-constrint: a FlatZinc model beyond Gecode's 32-bit values (domains up to 2^62)"
./build/constrint/fzn-constrint tests/flatzinc/snippets/big_numbers.fzn
echo "== flashrnn: the fused kernels' tiling, chosen by ConstrINT for the H100"
./build/flashrnn/flashrnn tune --gpu h100 --cell lstm --heads 12 --head-dim 64 --batch 16 --backend fused

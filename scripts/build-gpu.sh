#!/usr/bin/env bash
# Builds the GPU tests and benchmarks for Hopper (sm_90) into ./build-gpu and copies the programs into
# ./gpu-bin, which tests/gpu/run.sh runs on a GPU machine (the device machine has the CUDA runtime
# libraries but not this project's build dependencies, so the programs are built here and carried).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DCONSTRINT_BUILD_PYTHON=OFF -DFLASHRNN_CUDA=ON >/dev/null
targets=(flashrnn_gpu_tests flashrnn_cli)
for t in alternating_bench scan_bench newton_bench; do
  if cmake --build build-gpu --target help | grep -q "^$t:"; then targets+=("$t"); fi
done
cmake --build build-gpu --parallel "$(nproc)" --target "${targets[@]}"
mkdir -p gpu-bin
cp build-gpu/tests/gpu/flashrnn_gpu_tests build-gpu/flashrnn/flashrnn gpu-bin/
for t in alternating_bench scan_bench newton_bench; do
  [ -f "build-gpu/examples/bench/$t" ] && cp "build-gpu/examples/bench/$t" gpu-bin/
done
ls -la gpu-bin

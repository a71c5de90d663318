#!/usr/bin/env bash
# Builds the peer of newton_bench (the paper's public code, apple/ml-pararnn or its mirror
# xaviergonzalez/ml-pararnn) on the CPU machine for the GPU machine, so that a device call spends no
# time compiling it: its CUDA extension for sm_90 against PyTorch 2.11 (CUDA 13.0) and CPython 3.12,
# the GPU machine's Python (docs/benchmarks.md, "Newton parallel RNNs"). Nothing of the peer is
# changed; newton_peer.py --module rewrites one dataclass default at run time (Python 3.11+).
#
#   examples/bench/prepare_pararnn.sh CHECKOUT DEST [TORCH_WHEEL]
#
# CHECKOUT: a checkout of the peer's repository; DEST: where the built copy goes (git-ignored, e.g.
# gpu-peer/ml-pararnn, listed in .git/info/exclude); TORCH_WHEEL: a torch-2.11.0 cp312 wheel (else pip
# downloads it). Then, on the GPU machine (carry gpu-bin and gpu-peer):
#   gpu-bin/newton_bench --cells flash_gru --no-grid --csv $OUT/newton_bench.csv &&
#   python3 examples/bench/newton_peer.py --pararnn gpu-peer/ml-pararnn --module \
#       --ours $OUT/newton_bench.csv --csv $OUT/newton_peer.csv
# Never load two copies of the built library in one process: each registers the op namespace
# parallel_reduce_cuda, and the second registration aborts the process.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,17p' "$0"; exit 2; }
checkout=$(realpath "$1")
dest=$2
wheel=${3:-}
[ -f "$checkout/setup.py" ] && [ -d "$checkout/pararnn" ] || {
  echo "prepare_pararnn: $checkout is not a checkout of ml-pararnn (no setup.py and pararnn/)"; exit 1; }
python312=$(PYENV_VERSION=3.12.1 pyenv which python 2>/dev/null || command -v python3.12) || {
  echo "prepare_pararnn: no Python 3.12 (pyenv 3.12.1 or python3.12)"; exit 1; }
venv=${PREPARE_PARARNN_VENV:-/tmp/pararnn-venv}
[ -x "$venv/bin/python" ] || "$python312" -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip wheel ninja numpy 'setuptools<82' # torch 2.11 needs setuptools < 82
if [ -n "$wheel" ]; then "$venv/bin/python" -m pip install -q "$wheel"; else "$venv/bin/python" -m pip install -q torch==2.11.0; fi
cuda=$("$venv/bin/python" -c 'import torch; print(torch.version.cuda)')
[ "${cuda%%.*}" = 13 ] || { echo "prepare_pararnn: torch is built for CUDA $cuda, the GPU machine's for 13.0"; exit 1; }

rm -rf "$dest"
mkdir -p "$dest"
cp -r "$checkout/." "$dest/"
rm -rf "$dest/.git" "$dest/build" "$dest/training"
(cd "$dest" && CUDA_HOME=/usr/local/cuda TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=$(nproc) \
   PATH="$venv/bin:/usr/local/cuda/bin:$PATH" python setup.py build_ext --inplace)
rm -rf "$dest/build"
find "$dest" -name __pycache__ -prune -exec rm -rf {} +
library=$(find "$dest" -maxdepth 1 -name '*parallel_reduce_cuda*.so')
[ -n "$library" ] || { echo "prepare_pararnn: the build left no *parallel_reduce_cuda*.so in $dest"; exit 1; }
strip --strip-debug "$library"
# It loads and its ops resolve (without a GPU: nothing is launched).
"$venv/bin/python" -c "import sys, torch; torch.ops.load_library(sys.argv[1]); torch.ops.parallel_reduce_cuda.fused_fwd_gru_diag_mh; print('loads:', sys.argv[1])" "$library"
du -sh "$dest"

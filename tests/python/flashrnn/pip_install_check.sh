#!/usr/bin/env bash
# `pip install ./bindings/python/flashrnn` (scikit-build-core over the project's CMake, without the CUDA
# kernels to keep CI's build short) into a fresh virtual environment; then the installed package is
# used from outside the source tree: the core always, the torch ops and a layer when the Python given
# as third argument has torch (its site-packages are lent to the environment, not installed into it).
set -euo pipefail
source_dir="$1"
work="$2"
torch_python="${3:-}"
rm -rf "$work"
/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$source_dir/bindings/python/flashrnn" \
  --config-settings=cmake.define.FLASHRNN_CUDA=OFF
torch_site=""
if [ -n "$torch_python" ] && "$torch_python" -c "import torch" >/dev/null 2>&1; then
  torch_site="$("$torch_python" -c "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))")"
fi
cd "$work"
PYTHONPATH="$torch_site" "$work/venv/bin/python" - <<'PY'
import flashrnn
assert flashrnn.__file__.startswith(__import__("sys").prefix), flashrnn.__file__
assert flashrnn.cell_info("gru")["num_gates"] == 4
assert not flashrnn.built_with_cuda()
try:
    import torch
except ImportError:
    print("torch not available: the core only")
else:
    layer = flashrnn.nn.LSTM(3, num_heads=2, head_dim=4)
    out, state = layer(torch.randn(5, 2, 3))
    out.sum().backward()
    assert out.shape == (5, 2, 8) and layer.recurrent_weights.grad is not None
    print("the torch ops run from the installed package")
PY
echo "pip install of flashrnn works"

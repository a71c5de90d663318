#!/usr/bin/env bash
# The Python environment of the flashrnn package's tests: a virtual environment of Debian's python3
# (its apt packages, pytest among them, stay visible) with torch, numpy and matplotlib (the plots of
# examples/tasks) from the package index. It
# lives outside the work tree and is reused across runs, so only the first run downloads torch (about
# 3 GB with its CUDA libraries, 5 GB installed; a minute here). Prints the environment's python.
#   FLASHRNN_PYTHON_ENV   where the environment lives (default ~/.cache/constrint-ci/venv)
set -euo pipefail
env_dir="${FLASHRNN_PYTHON_ENV:-${XDG_CACHE_HOME:-$HOME/.cache}/constrint-ci/venv}"
if [ ! -x "$env_dir/bin/python" ]; then
  mkdir -p "$(dirname "$env_dir")"
  /usr/bin/python3 -m venv --system-site-packages "$env_dir" >&2
fi
if ! "$env_dir/bin/python" -c "import torch, numpy, matplotlib" >/dev/null 2>&1; then
  echo "installing torch, numpy and matplotlib into $env_dir" >&2
  start=$(date +%s)
  "$env_dir/bin/pip" install --quiet --disable-pip-version-check torch numpy matplotlib >&2
  echo "torch installed in $(( $(date +%s) - start )) s" >&2
fi
echo "$env_dir/bin/python"

#!/usr/bin/env bash
# `pip install .` (scikit-build-core over the project's CMake) into a fresh virtual environment, then
# the installed package and `python -m constrint` are used from outside the source tree.
set -euo pipefail
source_dir="$1"
work="$2"
rm -rf "$work"
/usr/bin/python3 -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$source_dir"
cd "$work"
"$work/venv/bin/python" - <<'PY'
import constrint as ci
m = ci.Model()
x = m.int_var("x", 1, 2**70)
m += x % 16 == 0
m.prefer(x, "max")
assert m.solve()[x] == 2**70, "the installed package solves"
PY
"$work/venv/bin/python" -m constrint "$source_dir/examples/models/send_more_money.cint" | grep -q "S = 9"
echo "pip install . works"

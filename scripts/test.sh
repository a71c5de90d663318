#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test through ctest. The flashrnn
# package's tests run under the Python environment of scripts/install-python-deps.sh (torch).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
test_python="$(./scripts/install-python-deps.sh)"
./scripts/build.sh -DCONSTRINT_WARNINGS_AS_ERRORS=ON "-DFLASHRNN_TEST_PYTHON=$test_python"
ctest --test-dir build --output-on-failure --parallel "$(nproc)"

#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test through ctest, then the CPU
# C++ tests again under AddressSanitizer + UBSan and each fuzz target for a bounded time
# (scripts/test-sanitizers.sh; SANITIZERS=0 skips it). The flashrnn package's tests run under the
# Python environment of scripts/install-python-deps.sh (torch).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
test_python="$(./scripts/install-python-deps.sh)"
./scripts/build.sh -DCONSTRINT_WARNINGS_AS_ERRORS=ON "-DFLASHRNN_TEST_PYTHON=$test_python"
ctest --test-dir build --output-on-failure --parallel "$(nproc)"
if [ "${SANITIZERS:-1}" != 0 ]; then
  ./scripts/test-sanitizers.sh
fi

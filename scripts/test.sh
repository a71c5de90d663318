#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, runs every test through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/build.sh -DCONSTRINT_WARNINGS_AS_ERRORS=ON
ctest --test-dir build --output-on-failure --parallel "$(nproc)"

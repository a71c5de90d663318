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

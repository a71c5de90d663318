#!/usr/bin/env bash
# Installs what building and testing need on Debian 12 (only what is missing).
set -euo pipefail

packages=(cmake g++ ninja-build ccache clang-format clang libclang-rt-14-dev git libboost-dev doctest-dev libeigen3-dev python3 python3-dev python3-venv pybind11-dev python3-pytest python3-hypothesis minizinc flatzinc)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

#!/usr/bin/env bash
# Installs the Debian packages dflow needs, only those that are missing. Uses sudo when not root.
# Usage: scripts/install-deps.sh [--bench]   (--bench adds PyTorch and NumPy for the comparisons)
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config
  libabsl-dev libprotobuf-dev protobuf-compiler
  libgrpc++-dev protobuf-compiler-grpc
  libdnnl-dev ocl-icd-opencl-dev   # dnnl's CMake config looks for OpenCL (its GPU runtime)
  libgtest-dev libgmock-dev libbenchmark-dev
)
if [[ "${1:-}" == "--bench" ]]; then
  # OpenBLAS gives PyTorch its fast BLAS (without it Debian's torch uses the reference BLAS).
  packages+=(python3 python3-torch python3-numpy libopenblas0-pthread)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "Installing: ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"

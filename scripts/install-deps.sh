#!/usr/bin/env bash
# Installs the Debian packages dflow needs, only those that are missing (sudo when not root), then
# the pinned Python packages the Python package's build and tests need, with pip, only those that
# are missing or of another version (for the python3 on PATH, the one CMake builds for).
# Usage: scripts/install-deps.sh [--bench]   (--bench adds PyTorch 2.13, CPU build, for the comparisons)
set -euo pipefail

packages=(
  cmake ninja-build g++ make pkg-config
  libabsl-dev libprotobuf-dev protobuf-compiler
  libgrpc++-dev protobuf-compiler-grpc
  zlib1g-dev   # compressed TFRecord files
  libdnnl-dev ocl-icd-opencl-dev   # dnnl's CMake config looks for OpenCL (its GPU runtime)
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-dev python3-pip   # the Python package: headers for the extension, pip below
  clang libomp-dev   # `make fuzz`: libFuzzer and the sanitizers (clang), OpenMP for clang (dnnl's ops)
  libclang-rt-14-dev   # the sanitizer and libFuzzer runtimes: only recommended by clang-14, not installed with it
  clang-format   # scripts/format.sh (.clang-format)
)
bench=0
if [[ "${1:-}" == "--bench" ]]; then
  bench=1
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "Installing: ${missing[*]}"
  sudo=""
  if [[ $(id -u) -ne 0 ]]; then
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Python packages, pinned: the build needs pybind11 and numpy, the tests pytest and TensorFlow
# (the reference the tests compare with), GraphDefs from Python protobuf (the version TensorFlow
# pulls in), `pip install .` scikit-build-core.
python=${PYTHON:-python3}
pins=(numpy==2.4.6 pybind11==3.1.0 pytest==9.0.3 protobuf==7.36.2 tensorflow-cpu==2.21.0 tensorboard==2.21.0
      scikit-build-core==1.1.2)   # pyproject.toml's build backend (test_package reads its metadata)
if [[ $bench -eq 1 ]]; then
  # The PyTorch peer of bench/run_all.sh: 2.13.0's CPU build, pinned with its local label so that pip
  # never takes the far larger CUDA build (where pip cannot find it, PyTorch's CPU index has it:
  # PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu).
  pins+=(torch==2.13.0+cpu)
  pins+=(matplotlib==3.9.2)   # bench/scale/run_scale.py's plots (docs/scale_*.png)
fi
mapfile -t pip_missing < <("$python" - "${pins[@]}" <<'PY'
import importlib.metadata as md
import sys
for spec in sys.argv[1:]:
    name, want = spec.split("==")
    try:
        have = md.version(name)
    except md.PackageNotFoundError:
        have = None
    if have != want:
        print(spec)
PY
)
if [[ ${#pip_missing[@]} -gt 0 ]]; then
  echo "Installing with pip: ${pip_missing[*]}"
  pip_args=(-q)
  # Debian's own python3 refuses pip installs (PEP 668) unless told to.
  if "$python" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))'; then
    pip_args+=(--break-system-packages)
  fi
  "$python" -m pip install "${pip_args[@]}" "${pip_missing[@]}"
fi

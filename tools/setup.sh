#!/usr/bin/env bash
# Sets up a fresh Debian/Ubuntu machine to build and test mpigpu: installs every package it needs
# (apt) and checks for the CUDA toolkit, saying clearly what is missing.
#   tools/setup.sh            install and check
#   tools/setup.sh --check    only check, install nothing
set -euo pipefail

PACKAGES=(bazel-bootstrap g++ libboost-dev libhwloc-dev hwloc libnuma-dev numactl
          libgtest-dev libgmock-dev libbenchmark-dev gnuplot-nox iproute2
          libpmix-dev openmpi-bin libopenmpi-dev libibverbs-dev librdmacm-dev ibverbs-providers ibverbs-utils
          rdma-core perftest qemu-system-x86 busybox-static cpio kmod bc
          pkg-config dpkg-dev nlohmann-json3-dev libcli11-dev cmake python3
          slurmctld slurmd slurm-client munge)
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}

if [ "${1:-}" != "--check" ]; then
  mapfile -t todo < <(missing_packages)
  if [ ${#todo[@]} -gt 0 ]; then
    echo "setup: installing ${todo[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -q
    $SUDO apt-get install -y -q --no-install-recommends "${todo[@]}"
  fi
fi

status=0
mapfile -t still < <(missing_packages)
if [ ${#still[@]} -gt 0 ]; then
  echo "setup: MISSING packages: ${still[*]} (install them with apt-get)" >&2
  status=1
fi
if [ ! -x "$CUDA_HOME/bin/nvcc" ] || [ ! -f "$CUDA_HOME/lib64/libcudart_static.a" ] \
   || [ ! -f "$CUDA_HOME/include/cuda_runtime_api.h" ]; then
  echo "setup: MISSING the CUDA toolkit at $CUDA_HOME (need bin/nvcc, include/cuda_runtime_api.h," \
       "lib64/libcudart_static.a; CUDA 12.4 or newer, for sm_90). Install it from" \
       "https://developer.nvidia.com/cuda-downloads; a GPU is NOT needed to build and test." >&2
  status=1
else
  echo "setup: CUDA toolkit: $("$CUDA_HOME/bin/nvcc" --version | tail -n 2 | head -n 1)"
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "setup: GPUs: $(nvidia-smi -L | wc -l) ($(nvidia-smi -L | head -n 1))"
else
  echo "setup: no GPU visible: GPU tests will skip with a reason, host paths are fully tested"
fi
[ $status -eq 0 ] && echo "setup: ready"
exit $status

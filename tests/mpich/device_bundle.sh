#!/usr/bin/env bash
# Puts what the GPU machine needs for the suite's GPU memory types (it has no network) under
# .device/mpich (ignored by git, carried to the device): an opt installation of this checkout
# (the wrappers find their prefix from their own location, so it moves) and the suite's source
# from the cache. Then, on the device machine (under MPS for one GPU, see device-steps.sh):
#   MPICH_SUITE_CACHE=$PWD/.device/mpich/cache tests/mpich/run.sh --gpu \
#     --prefix $PWD/.device/mpich/prefix --out $PWD/.device/mpich/results-gpu
# (needs perl, python3, make, a C compiler and the CUDA toolkit at $CUDA_HOME there).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
suite=$("$top/tests/mpich/fetch.sh")
dst=$top/.device/mpich
rm -rf "$dst/prefix" "$dst/cache"
mkdir -p "$dst/cache/mpich-4.0.2/test"
"$top/tools/install.sh" --prefix "$dst/prefix" >&2
strip "$dst/prefix/lib/"*.so "$dst/prefix/bin/mpigpurun" 2>/dev/null || true
cp -a "$suite" "$dst/cache/mpich-4.0.2/test/mpi"
du -sh "$dst"

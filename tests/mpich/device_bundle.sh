#!/usr/bin/env bash
# Prepares the suite's GPU memory types (pt2pt/testlist.gpu, coll/testlist.gpu) for the GPU
# machine, which has no network and little time: here, an opt installation of this checkout and
# the suite configured --with-cuda against it, its GPU programs built, all under one fixed
# absolute path (the Makefiles and wrappers name it), then copied to gpu-bundle/mpich-gpu (ignored
# by git, carried to the device) with the CUDA runtime the programs link. On the device:
#   ln -sfn "$PWD/gpu-bundle/mpich-gpu" /tmp/mpigpu-mpich-gpu
#   LD_LIBRARY_PATH=/tmp/mpigpu-mpich-gpu/cudart tests/mpich/run.sh --gpu \
#     --prebuilt /tmp/mpigpu-mpich-gpu --out "$OUT/mpich-gpu"
# (one GPU: under MPS, see benchmarks/device/measure.sh).
#   tests/mpich/device_bundle.sh [--no-build]   (--no-build: install from bazel-bin -c opt as is)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
stage=/tmp/mpigpu-mpich-gpu
cuda=${CUDA_HOME:-/usr/local/cuda}
suite=$("$top/tests/mpich/fetch.sh")
rm -rf "$stage"
mkdir -p "$stage/cudart"
if [ "${1:-}" = --no-build ]; then
  "$top/tools/install.sh" --prefix "$stage/prefix" --no-build --from "$(cd "$top" && bazel info -c opt bazel-bin)" >&2
else
  "$top/tools/install.sh" --prefix "$stage/prefix" >&2
fi
chmod -R u+w "$stage/prefix"
strip "$stage/prefix/lib/"*.so "$stage/prefix/bin/"mpigpu* 2>/dev/null || true
cp -a "$suite" "$stage/build"
# run.sh's options, with CUDA.
# shellcheck source=tests/mpich/suite_options.sh
source "$top/tests/mpich/suite_options.sh"
CUDA_HOME=$cuda suite_options "$stage/prefix" 1
(cd "$stage/build" && ./configure "${SUITE_OPTS[@]}" >configure.log 2>&1) ||
  { tail -20 "$stage/build/configure.log" >&2; exit 1; }
grep -q '^#define HAVE_CUDA 1' "$stage/build/include/mpitestconf.h" ||
  { echo "device_bundle.sh: the suite did not configure with CUDA" >&2; exit 1; }
(cd "$stage/build/util" && make -j"$(nproc)" >/dev/null)
for d in pt2pt coll; do
  progs=$(awk '!/^#/ && NF { print $1 }' "$stage/build/$d/testlist.gpu" | sort -u)
  # shellcheck disable=SC2086
  (cd "$stage/build/$d" && make -j"$(nproc)" $progs >/dev/null)
done
# Only the directories runtests needs on the device (the top-level files stay: the Makefiles'
# regeneration rules name them).
(cd "$stage/build" && for e in */; do
   case "$e" in pt2pt/|coll/|util/|dtpools/|include/|confdb/) ;; *) rm -rf "$e" ;; esac
 done)
cp -L "$cuda"/lib64/libcudart.so.[0-9]* "$stage/cudart/"
rm -rf "$top/gpu-bundle/mpich-gpu"
mkdir -p "$top/gpu-bundle"
cp -a "$stage" "$top/gpu-bundle/mpich-gpu"
du -sh "$top/gpu-bundle/mpich-gpu"

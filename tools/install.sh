#!/usr/bin/env bash
# Installs mpigpu for programs built outside Bazel:
#   tools/install.sh --prefix DIR [--no-build] [--from BAZEL_BIN]
# DIR/include/{mpigpu.h,mpi.h}, DIR/lib/{libmpigpu.so,libmpi.so}, DIR/lib/pkgconfig/{mpigpu,mpi}.pc,
# DIR/bin/{mpigpurun,mpigpu-info,mpigpu-sweep,mpigpucc,mpigpucxx,mpicc,mpicxx,mpic++,mpiexec,mpirun}.
# Then: DIR/bin/mpigpucc app.c -o app && DIR/bin/mpigpurun -n 2 ./app, or for an MPI program
# DIR/bin/mpicc app.c -o app && DIR/bin/mpirun -n 2 ./app
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
prefix="" build=1 from=""
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
    --prefix=*) prefix=${1#--prefix=}; shift ;;
    --no-build) build=0; shift ;;
    --from) from=${2:?--from needs a directory}; shift 2 ;;
    -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix DIR is required" >&2; exit 2; }
targets=(//mpigpu_api:libmpigpu.so //mpi:libmpi.so //tools:mpigpurun //tools:mpigpu-info)
[ -f "$top/tools/sweep_main.cc" ] && targets+=(//tools:mpigpu-sweep)
if [ $build -eq 1 ]; then
  (cd "$top" && bazel build -c opt "${targets[@]}")
  from=$(cd "$top" && bazel info -c opt bazel-bin 2>/dev/null)
fi
from=${from:-$top/bazel-bin}
mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/bin"
prefix=$(cd "$prefix" && pwd)
install -m 0644 "$top/mpigpu_api/mpigpu.h" "$top/mpi/mpi.h" "$prefix/include/"
install -m 0755 "$from/mpigpu_api/libmpigpu.so" "$from/mpi/libmpi.so" "$prefix/lib/"
for t in "${targets[@]}"; do
  case "$t" in
    //tools:*) name=${t#//tools:}; [ -f "$from/tools/$name" ] && install -m 0755 "$from/tools/$name" "$prefix/bin/" ;;
  esac
done
install -m 0755 "$top/tools/mpigpucc" "$prefix/bin/mpigpucc"
ln -sf mpigpucc "$prefix/bin/mpigpucxx"
# The MPI interface's wrappers: one script each, named by how it was called.
install -m 0755 "$top/tools/mpicc" "$prefix/bin/mpicc"
ln -sf mpicc "$prefix/bin/mpicxx"
ln -sf mpicc "$prefix/bin/mpic++"
install -m 0755 "$top/tools/mpiexec" "$prefix/bin/mpiexec"
ln -sf mpiexec "$prefix/bin/mpirun"
# pkg-config: mpigpu (the buffer-type API, -lmpigpu) and mpi (mpi.h, -lmpi).
pc() {  # name description library
  cat >"$prefix/lib/pkgconfig/$1.pc" <<PC
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: $1
Description: $2
Version: 0.19
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -l$3
PC
}
pc mpigpu "mpigpu: GPU-aware message layer (mpigpu.h, buffer-type API)" mpigpu
pc mpi "mpigpu's MPI interface (mpi.h)" mpi
echo "install.sh: installed mpigpu into $prefix"

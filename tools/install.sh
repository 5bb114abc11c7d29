#!/usr/bin/env bash
# Installs mpigpu for programs built outside Bazel:
#   tools/install.sh --prefix DIR [--no-build] [--from BAZEL_BIN]
# DIR/include/mpigpu.h, DIR/lib/libmpigpu.so, DIR/bin/{mpigpurun,mpigpu-info,mpigpu-sweep,
# mpigpucc,mpigpucxx}. Then: DIR/bin/mpigpucc app.c -o app && DIR/bin/mpigpurun -n 2 ./app
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
targets=(//mpigpu_api:libmpigpu.so //tools:mpigpurun //tools:mpigpu-info)
[ -f "$top/tools/sweep_main.cc" ] && targets+=(//tools:mpigpu-sweep)
if [ $build -eq 1 ]; then
  (cd "$top" && bazel build -c opt "${targets[@]}")
  from=$(cd "$top" && bazel info -c opt bazel-bin 2>/dev/null)
fi
from=${from:-$top/bazel-bin}
mkdir -p "$prefix/include" "$prefix/lib" "$prefix/bin"
install -m 0644 "$top/mpigpu_api/mpigpu.h" "$prefix/include/"
install -m 0755 "$from/mpigpu_api/libmpigpu.so" "$prefix/lib/"
for t in "${targets[@]}"; do
  case "$t" in
    //tools:*) name=${t#//tools:}; [ -f "$from/tools/$name" ] && install -m 0755 "$from/tools/$name" "$prefix/bin/" ;;
  esac
done
install -m 0755 "$top/tools/mpigpucc" "$prefix/bin/mpigpucc"
ln -sf mpigpucc "$prefix/bin/mpigpucxx"
echo "install.sh: installed mpigpu into $prefix"

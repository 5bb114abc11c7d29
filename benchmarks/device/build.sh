#!/usr/bin/env bash
# Builds what a GPU machine without Bazel needs to measure and test mpigpu, into gpu-bundle/
# (ignored by git): optimized binaries (bazel build -c opt; the project links statically,
# --dynamic_mode=off, so they run there as they are), stripped, plus the shared libraries they
# load that such a machine may lack (Google Benchmark). Pack it, copy it over, unpack it at the
# repository root there, and run benchmarks/device/measure.sh.
#   benchmarks/device/build.sh [--old REV] [--pack] [TARGET...]
#     TARGET...  extra Bazel targets (default: the launcher, the sweep, halo, the benches and
#                every GPU test binary that measure.sh runs)
#     --old REV  also build revision REV (a git worktree under $TMPDIR) into gpu-bundle/old, for
#                `measure.sh ab` (old and new builds alternating)
#     --pack     write gpu-bundle.tar.gz beside gpu-bundle/
set -euo pipefail
top=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$top"
old="" pack=0 extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --old) old=$2; shift 2 ;;
    --pack) pack=1; shift ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) extra+=("$1"); shift ;;
  esac
done
TARGETS=(//tools:mpigpurun //tools:mpigpu-sweep //tools:mpigpu-info //benchmarks:halo
  //benchmarks:pingpong //benchmarks:copier_bench //benchmarks:stream_order_bench
  //benchmarks:pincache_bench //benchmarks:mpi_overhead_bench
  //tests:device_copier_test //tests:memcopy_test //tests:pipeline_gpu_test //tests:cuda_ipc_test
  //tests:transport_test //tests:transport_faults_test //tests:transport_stream_test
  //tests:transport_stream_ipc_test //tests:transport_stream_ring_test //tests:api_gpu_test
  //tests:api_gpu_coll_test //tests:api_gpu_persistent_test //tests:api_p2p_test
  //tests:api_buffer_check_test //tests:mpi_gpu_test //tests:tcp_datapath_test
  //tests:pin_cache_gpu_test //tests:pin_cache_off_gpu_test //tests:mps_rank
  //tests:launcher_probe //tests:launcher_mps_gpu_test)

bundle() {  # SRC_TREE DEST
  local src=$1 dest=$2 t bin
  (cd "$src" && bazel build -c opt "${TARGETS[@]}" "${extra[@]}")
  mkdir -p "$dest"
  for t in "${TARGETS[@]}" "${extra[@]}"; do
    bin="$src/bazel-bin/$(sed 's|^//||; s|:|/|' <<<"$t")"
    [ -f "$bin" ] || { echo "no binary for $t" >&2; continue; }
    install -m 755 "$bin" "$dest/"
    strip "$dest/$(basename "$bin")" 2>/dev/null || true
  done
  # Google Benchmark is a shared library on Debian: the benches find it beside them (rpath).
  for l in /usr/lib/x86_64-linux-gnu/libbenchmark.so*; do [ -e "$l" ] && cp -aL "$l" "$dest/"; done
  git -C "$src" rev-parse HEAD >"$dest/COMMIT"
}

bundle "$top" gpu-bundle/bin
if [ -n "$old" ]; then
  wt=$(mktemp -d "${TMPDIR:-/tmp}/mpigpu-old.XXXXXX")
  git worktree add --detach "$wt" "$old"
  bundle "$wt" gpu-bundle/old
  git worktree remove --force "$wt"
fi
[ "$pack" = 1 ] && tar czf gpu-bundle.tar.gz gpu-bundle && ls -l gpu-bundle.tar.gz
du -sh gpu-bundle

#!/usr/bin/env bash
# Runs one measurement on a GPU machine, from the repository root, with the binaries of
# benchmarks/device/build.sh unpacked in gpu-bundle/ (no Bazel needed there). Output goes to
# $OUT (default /tmp/mpigpu-out), one file per measurement, beside info.txt (GPUs, links, CPUs,
# date, load). Each results folder's README names the command that made its data.
#   benchmarks/device/measure.sh [--mps] [--rounds N] WHAT [ARGS...]
#     --mps       under a private MPS daemon, with the settings that exercise the IPC and copier
#                 paths when both ranks share one GPU (steps.sh: MPS)
#     --rounds N  repetitions (default 4); A/B rounds alternate old and new (ABBA)
#   WHAT:
#     tests       every GPU test binary (2 ranks on one GPU where it has one), then the transport
#                 variants (ring forced; tiny fastboxes and 2 cells)
#     tcp-tests   the TCP netmod's GPU tests over loopback (MPIGPU_SHM=0)
#     sweep       mpigpu-sweep latency and bandwidth of every buffer pair with limits and peers;
#                 ARGS replace the default "latency bw --all-pairs -m 1:64M -i 50 -x 5"
#     latency-dd  D->D latency, 8 B-64 KiB, N rounds
#     bw-dd       D->D bandwidth, 1-64 MiB, N rounds (ARGS: extra env, e.g. MPIGPU_SHM=0)
#     host        H->H latency 1 B-64 KiB and bandwidth 64 KiB-64 MiB, N rounds
#     pingpong    benchmarks/pingpong H->H, N rounds (compare with pingpong_table.py)
#     halo        the halo application, every mode, weak scaling, double, with --check
#     pincache    pageable host buffers: H->D and D->H bandwidth with MPIGPU_PIN_CACHE=0 and 1
#                 (sweep, 1-256 MiB), then pincache_bench
#     stream      stream_order_bench, alone and with the resident copier (--copier)
#     copier      copier_bench (the resident copy kernel's per-copy cost)
#     mpi         mpi_overhead_bench: mpi.h against mpigpu.h, host and device
#     ab          mpigpu-sweep ARGS, old (gpu-bundle/old) and new builds alternating, N rounds
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
mps=0 ROUNDS=4
while [ $# -gt 0 ]; do
  case $1 in
    --mps) mps=1; shift ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || { sed -n '2,31p' "$0"; exit 2; }
what=$1; shift
export ROUNDS
source benchmarks/device/steps.sh
device_env
[ -x "$B/mpigpurun" ] || { echo "no $B/mpigpurun: run benchmarks/device/build.sh and unpack it here" >&2; exit 2; }
D=${OUT:-/tmp/mpigpu-out}; mkdir -p "$D"
{ device_info; date -u; uptime; cat "$B/COMMIT" 2>/dev/null; } >"$D/info.txt" 2>&1
E=""
if [ "$mps" = 1 ]; then mps_start && echo "MPS started" >>"$D/info.txt"; E=$MPS; trap mps_stop EXIT; fi
rounds() { seq 1 "$ROUNDS"; }

case $what in
  tests)
    { env $E bash -c "source benchmarks/device/steps.sh; device_env; all_gpu_tests; transport_variants"; } 2>&1 |
      grep -vE "$SKIPS" >"$D/tests.txt" ;;
  tcp-tests)
    for t in tcp_datapath_test transport_test; do
      echo "== $t (MPIGPU_SHM=0 $E)"
      env $E MPIGPU_SHM=0 timeout 180 $B/$t 2>&1 | grep -E "$GPU_TEST_LINES|mismatch"
    done 2>&1 | grep -vE "$SKIPS" >"$D/tcp-tests.txt" ;;
  sweep)
    [ $# -gt 0 ] || set -- latency bw --all-pairs -m 1:64M -i 50 -x 5
    env $E $R $B/mpigpu-sweep "$@" --json "$D/sweep.json" >"$D/sweep.txt" 2>&1 ;;
  latency-dd)
    for r in $(rounds); do echo "== round $r"; env $E "$@" $R $B/mpigpu-sweep latency D D -m 8:64K -i 1000 -x 50 --no-peers; done >"$D/latency-dd.txt" 2>&1 ;;
  bw-dd)
    for r in $(rounds); do echo "== round $r"; env $E "$@" $R $B/mpigpu-sweep bw D D -m 1M:64M -i 10 -x 2 --no-peers; done >"$D/bw-dd.txt" 2>&1 ;;
  host)
    for r in $(rounds); do
      echo "== round $r latency"; $R $B/mpigpu-sweep latency H H -m 1:64K -i 5000 -x 200 --no-limits
      echo "== round $r bw"; $R $B/mpigpu-sweep bw H H -m 64K:64M -W 64 -i 20 -x 2 --no-limits
    done >"$D/host.txt" 2>&1 ;;
  pingpong)
    for r in $(rounds); do $R $B/pingpong "$@" >"$D/pingpong-$r.txt" 2>&1; done ;;
  halo)
    timeout 300 env $E $R $B/halo --mode all --weak --check "$@" >"$D/halo.txt" 2>&1 ;;
  pincache)
    for r in $(rounds); do for pc in 0 1; do
      echo "== round $r MPIGPU_PIN_CACHE=$pc"
      env $E MPIGPU_PIN_CACHE=$pc $R $B/mpigpu-sweep bw --pairs HD,DH -m 1M:256M -i 10 -x 2 -W 8 --no-peers
    done; done >"$D/pincache.txt" 2>&1
    $B/pincache_bench >>"$D/pincache.txt" 2>&1 ;;
  stream)
    { env $E $B/stream_order_bench; env $E $B/stream_order_bench --copier; } >"$D/stream-order.txt" 2>&1 ;;
  copier)
    env $E $B/copier_bench "$@" >"$D/copier.txt" 2>&1 ;;
  mpi)
    env $E $R $B/mpi_overhead_bench "$@" >"$D/mpi-overhead.txt" 2>&1 ;;
  ab)
    old_build
    [ -x "$O/mpigpurun" ] || { echo "no $O: build.sh --old REV" >&2; exit 2; }
    ab "ab" "$E" "$@" >"$D/ab.txt" 2>&1 ;;
  *) echo "unknown measurement: $what" >&2; exit 2 ;;
esac
echo "$what: $D"

#!/usr/bin/env bash
# mpigpu's TCP netmod between two hosts that are network namespaces of this machine (a veth
# pair), against Open MPI 4.1's TCP BTL (pml ob1, btl tcp,self) over the same veth and a raw TCP
# stream (iperf3, one stream), in one run: host buffers, 2 ranks, one per namespace.
#   latency: ping-pong at every power of two 1 B..64 KiB    (mpigpu-sweep latency H H)
#   bw:      windows of messages, 64 KiB..64 MiB            (mpigpu-sweep bw H H)
# Open MPI runs benchmarks/peers/mpi_sweep.c, the same loops, timing and defaults as the sweep.
# Rounds alternate the order (mpigpu, Open MPI, iperf3; then backwards); the table shows each
# size's median over the rounds and the ratios of the medians, against the targets:
# latency <= Open MPI at every size; bandwidth >= Open MPI and >= 0.9 x iperf3 from 1 MiB.
#
#   benchmarks/netns_bench.sh [--rounds N] [--net A.B.C] [--out DIR] [--iperf-seconds S]
#                             [--lat-max SIZE] [--bw-min SIZE] [--bw-max SIZE] [--no-build]
#                             [--lat-opts "OPTS"] [--bw-opts "OPTS"] [--packets] [--pin] [--probe]
# --packets: instead, TCP segments per 8-byte round trip of each library (both namespaces'
# TcpOutSegs; the difference of a 22000- and a 2000-iteration run, so the job's set-up cancels):
# what the wire costs, whatever the load.
# --pin: each host's processes on a CPU of their own (host a on CPU 0, host b on CPU 1, through
# taskset in the launch agent and for iperf3), as two real hosts would have; without it the
# scheduler may put both ranks, or a rank and the other's network work, on one CPU.
# --probe: before and after each measurement, cpu_pair_probe (//benchmarks:cpu_pair_probe) on
# CPUs 0 and 1 times how fast the machine's two CPUs hand data to each other (a cache line's
# round trip; a 256 KiB-chunk producer/consumer copy). On a VM whose two vCPUs the host moves
# between nearby and distant cores (seen here: a round trip of 55-80 ns or of 320-350 ns, for
# tens of seconds at a time) every TCP stream between the hosts changes speed with it; the
# table then also compares the libraries within each state (a measurement counts as in one
# state when the probes on both sides of it saw it).
# --lat-opts / --bw-opts: the loops' -i (timed iterations), -x (warm-up), -W (window), given
# to both programs alike. Default: the sweep's own for latency (10000 iterations up to 8 KiB,
# 1000 above), "-W 8 -i 5 -x 1" for bw (6 windows: 3.2 GB at 64 MiB).
#
# Needs root, ip(8), Open MPI (mpirun, libopenmpi-dev), iperf3, python3 and Bazel. Makes the
# namespaces nbench<pid>a/b on NET.1 and NET.2 (default 10.95.0) and removes them on exit.
# Raw results (the sweep's CSV, mpi_sweep's CSV, iperf3's JSON) and table.md go to --out
# (default a new directory under /tmp).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
args="$*"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
rounds=3
net=10.95.0
out=""
iperf_seconds=5
lat_max=64K
bw_min=64K
bw_max=64M
lat_opts=""
bw_opts="-W 8 -i 5 -x 1"
build=1
packets=0
probe=0
pin_a=""
pin_b=""
die() { echo "netns_bench: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds=${2:?}; shift 2 ;;
    --net) net=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --iperf-seconds) iperf_seconds=${2:?}; shift 2 ;;
    --lat-max) lat_max=${2:?}; shift 2 ;;
    --bw-min) bw_min=${2:?}; shift 2 ;;
    --bw-max) bw_max=${2:?}; shift 2 ;;
    --no-build) build=0; shift ;;
    --lat-opts) lat_opts=$2; shift 2 ;;
    --bw-opts) bw_opts=$2; shift 2 ;;
    --packets) packets=1; shift ;;
    --probe) probe=1; shift ;;
    --pin) pin_a="taskset -c 0"; pin_b="taskset -c 1"; shift ;;
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]?$ ]] || die "--rounds takes 1..99"
[[ "$iperf_seconds" =~ ^[1-9][0-9]?$ ]] || die "--iperf-seconds takes 1..99"
for o in $lat_opts $bw_opts; do [[ "$o" =~ ^(-[iWx]|[0-9]+)$ ]] || die "--lat-opts/--bw-opts take -i, -x, -W and numbers"; done
[[ "$net" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]] || die "--net takes three octets, e.g. 10.95.0"

[[ "$lat_max$bw_min$bw_max" =~ ^([0-9]+[KMG]?)+$ ]] || die "sizes are numbers with an optional K, M or G"
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
for tool in ip mpirun iperf3 python3 bazel; do
  command -v "$tool" >/dev/null || die "needs $tool"
done

cd "$here"
if [ "$build" = 1 ]; then
  bazel build -c opt //tools:mpigpurun //tools:mpigpu-sweep //benchmarks:mpi_sweep \
    //benchmarks:cpu_pair_probe >&2 ||
    die "the build failed"
fi
bin=$(bazel info -c opt bazel-bin 2>/dev/null)
mpigpurun=$bin/tools/mpigpurun
sweep=$bin/tools/mpigpu-sweep
mpi_sweep=$bin/benchmarks/mpi_sweep
cpu_probe=$bin/benchmarks/cpu_pair_probe
needed=("$mpigpurun" "$sweep" "$mpi_sweep")
[ $probe = 0 ] || needed+=("$cpu_probe")
for f in "${needed[@]}"; do [ -x "$f" ] || die "missing $f (build it, or drop --no-build)"; done
[ -n "$out" ] || out=$(mktemp -d /tmp/netns-bench.XXXXXX)
mkdir -p "$out/raw"

# ---- the hosts ----
tag=$$
ns_a=nbench${tag}a
ns_b=nbench${tag}b
veth=nbv${tag}
ip_a=$net.1
ip_b=$net.2
iperf_pid=""
# The measuring job now running: in the background, in a process group of its own (set -m), so
# that a signal to this script stops the job with all its processes too.
child=""
set -m
cleanup() {
  set +e
  [ -n "$child" ] && kill -TERM -- "-$child" 2>/dev/null && sleep 1 && kill -KILL -- "-$child" 2>/dev/null
  [ -n "$iperf_pid" ] && kill "$iperf_pid" 2>/dev/null
  ip netns del "$ns_a" 2>/dev/null || true  # takes the veth pair with it
  ip netns del "$ns_b" 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo "netns_bench: interrupted" >&2; exit 130' INT
trap 'echo "netns_bench: terminated" >&2; exit 143' TERM
ip netns add "$ns_a"
ip netns add "$ns_b"
ip link add "${veth}a" type veth peer name "${veth}b"
ip link set "${veth}a" netns "$ns_a"
ip link set "${veth}b" netns "$ns_b"
ip -n "$ns_a" addr add "$ip_a/24" dev "${veth}a"
ip -n "$ns_b" addr add "$ip_b/24" dev "${veth}b"
for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
ip -n "$ns_a" link set "${veth}a" up
ip -n "$ns_b" link set "${veth}b" up
mtu=$(ip -n "$ns_a" -o link show "${veth}a" | sed -n 's/.* mtu \([0-9]*\).*/\1/p')

# The launch agent (as ssh, or Open MPI's plm_rsh_agent): enters the host's namespace. Both
# launchers use it; each host also gets its own UTS name there, so Open MPI's daemons see two
# nodes by name as well as by address.
agent=$out/agent.sh
cat >"$agent" <<EOF
#!/bin/sh
host=\$1; shift
case "\$host" in
  $ip_a) ns=$ns_a; pin="$pin_a" ;;
  $ip_b) ns=$ns_b; pin="$pin_b" ;;
  *) echo "netns_bench agent: unknown host '\$host'" >&2; exit 255 ;;
esac
exec ip netns exec "\$ns" \$pin unshare --uts sh -c "hostname \$ns; exec \$*"
EOF
chmod +x "$agent"
# (With --pin the launcher runs on host a's CPU too: a rank it starts itself stays there.)
in_a() { ip netns exec "$ns_a" $pin_a unshare --uts sh -c "hostname $ns_a; exec \"\$@\"" sh "$@"; }

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ompi=(mpirun -n 2 --host "$ip_a,$ip_b" --bind-to none --mca plm_rsh_agent "$agent"
      --mca oob_tcp_if_include "$net.0/24" --mca pml ob1 --mca btl tcp,self
      --mca btl_tcp_if_include "$net.0/24")
mpg=("$mpigpurun" -n 2 --host "$ip_a:1,$ip_b:1" --bind-to none --launch-agent "$agent"
     --timeout 900)

opts_for() { if [ "$1" = bw ]; then echo "$bw_opts"; else echo "$lat_opts"; fi; }
run_mpigpu() {  # test range file
  # shellcheck disable=SC2046  # the options are words
  in_a "${mpg[@]}" "$sweep" "$1" H H -m "$2" $(opts_for "$1") --no-limits --no-peers --csv "$3" >"$3.log" 2>&1 &
  child=$!
  local rc=0
  wait "$child" || rc=$?
  child=""
  [ $rc = 0 ] || { cat "$3.log" >&2; die "mpigpu $1 failed (status $rc)"; }
}
# Number of sizes from MIN to MAX (K/M suffixes), doubling.
count_sizes() {
  python3 -c 'import sys
def b(t): return int(t[:-1]) << {"K": 10, "M": 20, "G": 30}[t[-1]] if t[-1] in "KMG" else int(t)
lo, hi = b(sys.argv[1]), b(sys.argv[2]); n = 0
while lo <= hi: n += 1; lo *= 2
print(n)' "$1" "$2"
}
run_ompi() {  # test min max file
  # Open MPI's mpirun has been seen to stay for minutes after its ranks printed everything
  # (a loaded machine): once every size is in, it gets 30 s to exit, then is stopped.
  local rows=$(( $(count_sizes "$2" "$3") + 1 )) grace=0 pid rc=0
  # shellcheck disable=SC2046
  in_a timeout 900 "${ompi[@]}" "$mpi_sweep" "$1" -m "$2:$3" $(opts_for "$1") >"$4" 2>"$4.log" &
  pid=$!
  child=$pid
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    [ "$(grep -c . "$4")" -ge "$rows" ] || continue
    grace=$((grace + 1))
    if [ $grace -ge 30 ]; then
      echo "netns_bench: mpirun did not exit 30 s after its last result: stopped" | tee -a "$4.log" >&2
      kill -TERM -- "-$pid" 2>/dev/null || true
      break
    fi
  done
  wait "$pid" || rc=$?
  child=""
  [ "$(grep -c . "$4")" -ge "$rows" ] || { cat "$4.log" >&2; die "Open MPI $1 failed (status $rc)"; }
}
run_iperf() {  # file
  local limit=$((iperf_seconds + 30)) tries=0
  ip netns exec "$ns_b" $pin_b timeout $limit iperf3 -s -1 -B "$ip_b" -p 5201 >"$1.server.log" 2>&1 &
  iperf_pid=$!
  until ip netns exec "$ns_b" ss -Hltn "sport = :5201" | grep -q .; do
    tries=$((tries + 1))
    [ $tries -lt 100 ] || die "the iperf3 server did not start: $(cat "$1.server.log")"
    sleep 0.1
  done
  ip netns exec "$ns_a" $pin_a timeout $limit iperf3 -c "$ip_b" -p 5201 -t "$iperf_seconds" -J >"$1" 2>"$1.log" ||
    die "iperf3 failed: $(cat "$1.log" "$1.server.log")"
  wait "$iperf_pid" || true
  iperf_pid=""
}
run_probe() {  # file (appended: one line before a measurement, one after)
  [ $probe = 1 ] || return 0
  "$cpu_probe" --cpus 0,1 >>"$1" 2>"$1.log" || die "cpu_pair_probe failed: $(cat "$1.log")"
}

# Segments both hosts sent (TcpOutSegs of each namespace's own counters).
out_segs() {
  local n=0 ns v
  for ns in "$ns_a" "$ns_b"; do
    v=$(ip netns exec "$ns" nstat -az TcpOutSegs | awk '$1 == "TcpOutSegs" { print $2 }')
    n=$((n + v))
  done
  echo "$n"
}
if [ $packets = 1 ]; then
  declare -A seg
  for lib in mpigpu ompi; do
    for iters in 2000 22000; do
      before=$(out_segs)
      lat_opts="-i $iters -x 0"
      if [ $lib = mpigpu ]; then run_mpigpu latency 8:8 "$out/raw/packets-$lib-$iters.csv"
      else run_ompi latency 8 8 "$out/raw/packets-$lib-$iters.csv"; fi
      seg[$lib-$iters]=$(( $(out_segs) - before ))
    done
  done
  {
    echo "# TCP segments per 8-byte round trip, $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- both namespaces' TcpOutSegs; (run of 22000 round trips - run of 2000) / 20000"
    echo
    echo "| library | segments, 2000 | segments, 22000 | per round trip |"
    echo "|---|---:|---:|---:|"
    for lib in mpigpu ompi; do
      a=${seg[$lib-2000]} b=${seg[$lib-22000]}
      echo "| $lib | $a | $b | $(python3 -c "print(f'{($b - $a) / 20000:.2f}')") |"
    done
  } | tee "$out/packets.md"
  exit 0
fi

echo "netns_bench: $rounds rounds, hosts $ns_a ($ip_a) and $ns_b ($ip_b), veth mtu $mtu; raw results in $out" >&2
for r in $(seq 1 "$rounds"); do
  order="mpigpu ompi iperf"
  [ $((r % 2)) = 0 ] && order="iperf ompi mpigpu"
  for what in $order; do
    echo "netns_bench: round $r/$rounds: $what" >&2
    case $what in
      mpigpu) run_probe "$out/raw/r$r-mpigpu-probe.csv"
              run_mpigpu latency "1:$lat_max" "$out/raw/r$r-mpigpu-latency.csv"
              run_probe "$out/raw/r$r-mpigpu-probe.csv"
              run_mpigpu bw "$bw_min:$bw_max" "$out/raw/r$r-mpigpu-bw.csv"
              run_probe "$out/raw/r$r-mpigpu-probe.csv" ;;
      ompi) run_probe "$out/raw/r$r-ompi-probe.csv"
            run_ompi latency 1 "$lat_max" "$out/raw/r$r-ompi-latency.csv"
            run_probe "$out/raw/r$r-ompi-probe.csv"
            run_ompi bw "$bw_min" "$bw_max" "$out/raw/r$r-ompi-bw.csv"
            run_probe "$out/raw/r$r-ompi-probe.csv" ;;
      iperf) run_probe "$out/raw/r$r-iperf3-probe.csv"
             run_iperf "$out/raw/r$r-iperf3.json"
             run_probe "$out/raw/r$r-iperf3-probe.csv" ;;
    esac
  done
done

{
  echo "# netns_bench $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "- machine: $(uname -srm), $(nproc) CPUs, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1)"
  echo "- load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- mpigpu: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')$(git -C "$here" diff --quiet 2>/dev/null || echo ' (modified)'); $(mpirun --version | head -1); $(iperf3 --version | head -1)"
  echo "- hosts pinned: $([ -n "$pin_a" ] && echo "host a on CPU 0, host b on CPU 1" || echo no)"
  echo "- veth mtu $mtu; $rounds rounds; iperf3 $iperf_seconds s, one stream; latency options '${lat_opts:-the sweep defaults}', bw options '$bw_opts'"
  echo "- load average at the start: $load_start"
  echo "- command: benchmarks/netns_bench.sh $args"
  echo
} >"$out/table.md"
python3 - "$out" "$rounds" "$probe" >>"$out/table.md" <<'EOF'
import csv, json, statistics, sys
out, rounds, probe = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
MIB = 1 << 20

def sweep(path, test):  # mpigpu-sweep --csv: the mpigpu series
    with open(path) as f:
        return {int(r["size"]): float(r["value"]) for r in csv.DictReader(f)
                if r["test"] == test and r["kind"] == "mpigpu" and r["value"]}

def mpi(path):
    with open(path) as f:
        return {int(r["size"]): float(r["value"]) for r in csv.DictReader(f)}

def iperf(path):
    with open(path) as f:
        return json.load(f)["end"]["sum_received"]["bits_per_second"] / 8 / 1e9

def med(runs, size):
    v = [r[size] for r in runs if size in r]
    return statistics.median(v) if v else float("nan")

def best(runs, size, low):
    v = [r[size] for r in runs if size in r]
    return (min(v) if low else max(v)) if v else float("nan")

def spread(runs, size):
    v = [r[size] for r in runs if size in r]
    return f"{min(v):.3g}–{max(v):.3g}" if v else "-"

def size_text(n):
    return f"{n >> 20} MiB" if n >= MIB else f"{n >> 10} KiB" if n >= 1024 else f"{n} B"

R = range(1, rounds + 1)
lat = {k: [sweep(f"{out}/raw/r{r}-mpigpu-latency.csv", "latency") if k == "mpigpu"
           else mpi(f"{out}/raw/r{r}-ompi-latency.csv") for r in R] for k in ("mpigpu", "ompi")}
bw = {k: [sweep(f"{out}/raw/r{r}-mpigpu-bw.csv", "bw") if k == "mpigpu"
          else mpi(f"{out}/raw/r{r}-ompi-bw.csv") for r in R] for k in ("mpigpu", "ompi")}
raw = [iperf(f"{out}/raw/r{r}-iperf3.json") for r in R]
raw_med = statistics.median(raw)
misses = []

print(f"## Latency, one way (µs; median of {rounds} rounds, range in brackets)\n")
print("| size | mpigpu | Open MPI tcp | mpigpu/OMPI | best/best | target ≤ 1 |")
print("|---:|---:|---:|---:|---:|:--|")
for n in sorted(lat["mpigpu"][0]):
    m, o = med(lat["mpigpu"], n), med(lat["ompi"], n)
    ok = m <= o
    if not ok: misses.append(f"latency {size_text(n)}: {m / o:.2f}× Open MPI")
    print(f"| {size_text(n)} | {m:.2f} ({spread(lat['mpigpu'], n)}) | {o:.2f} ({spread(lat['ompi'], n)}) "
          f"| {m / o:.2f} | {best(lat['mpigpu'], n, True) / best(lat['ompi'], n, True):.2f} "
          f"| {'met' if ok else 'MISSED'} |")

print(f"\n## Bandwidth, one way (GB/s = 1e9 B/s; median of {rounds} rounds)\n")
print(f"iperf3 (raw TCP stream, one connection): {raw_med:.3f} GB/s median "
      f"({', '.join(f'{v:.3f}' for v in raw)}).\n")
print("| size | mpigpu | Open MPI tcp | mpigpu/OMPI | best/best | mpigpu/iperf3 | target from 1 MiB: ≥ 1 and ≥ 0.9 |")
print("|---:|---:|---:|---:|---:|---:|:--|")
for n in sorted(bw["mpigpu"][0]):
    m, o = med(bw["mpigpu"], n), med(bw["ompi"], n)
    verdict = "-"
    if n >= MIB:
        ok = m >= o and m >= 0.9 * raw_med
        verdict = "met" if ok else "MISSED"
        if m < o: misses.append(f"bw {size_text(n)}: {m / o:.2f}× Open MPI")
        if m < 0.9 * raw_med: misses.append(f"bw {size_text(n)}: {m / raw_med:.2f}× iperf3")
    print(f"| {size_text(n)} | {m:.3f} ({spread(bw['mpigpu'], n)}) | {o:.3f} ({spread(bw['ompi'], n)}) "
          f"| {m / o:.2f} | {best(bw['mpigpu'], n, False) / best(bw['ompi'], n, False):.2f} "
          f"| {m / raw_med:.2f} | {verdict} |")
print()
print("Ratios: of the medians; best/best: of each side's best round (lowest latency, highest "
      "bandwidth). Targets are judged on the medians.\n")
print("Targets missed: " + ("; ".join(misses) if misses else "none"))

if probe:
    # Probe lines: mpigpu and ompi: before latency, between latency and bw, after bw; iperf3:
    # before and after. Each: line_ns,pass_gbs,local_gbs.
    def probes(r, lib):
        with open(f"{out}/raw/r{r}-{lib}-probe.csv") as f:
            return [tuple(float(x) for x in l.split(",")[:2]) for l in f if l.strip()]
    libs = ("mpigpu", "ompi", "iperf3")
    p = {(r, k): probes(r, k) for r in R for k in libs}
    # The states are far apart (here 55-85 against 320-370 ns): near means within 2.5x the
    # fastest probe of the run.
    usual = min(v[0] for ps in p.values() for v in ps)
    limit = 2.5 * usual
    def state(ps):  # "near" when both probes saw the usual state, "far" when both saw the other
        near = [v[0] <= limit for v in ps]
        return "near" if all(near) else "far" if not any(near) else "mixed"
    lat_state = {(r, k): state(p[(r, k)][0:2]) for r in R for k in ("mpigpu", "ompi")}
    bw_state = {(r, k): state(p[(r, k)][-2:]) for r in R for k in libs}
    mark = {"near": "·", "far": "✗", "mixed": "~"}
    def shown(ps):
        return " → ".join(f"{v[0]:.0f}" for v in ps)
    top = max(bw["mpigpu"][0])
    print(f"\n## Each round beside the machine's state\n")
    print(f"cpu_pair_probe before, between and after each library's measurements: a cache line's "
          f"round trip between CPUs 0 and 1 (ns). The near state: near {usual:.0f} ns (the fastest "
          f"probe); a measurement whose probes on both sides are ≤ {limit:.0f} ns is in it "
          f"(·), both above: in the distant state (✗), else mixed (~).\n")
    print(f"| round | mpigpu 1 B µs | mpigpu {size_text(top)} GB/s | probes | Open MPI 1 B µs "
          f"| Open MPI {size_text(top)} GB/s | probes | iperf3 GB/s | probes |")
    print("|---:|---:|---:|---|---:|---:|---|---:|---|")
    for r in R:
        def cells(k, lat_by, bw_by):
            return (f"{lat_by[r - 1].get(1, float('nan')):.2f} {mark[lat_state[(r, k)]]} | "
                    f"{bw_by[r - 1].get(top, float('nan')):.3f} {mark[bw_state[(r, k)]]} | "
                    f"{shown(p[(r, k)])}")
        print(f"| {r} | {cells('mpigpu', lat['mpigpu'], bw['mpigpu'])} "
              f"| {cells('ompi', lat['ompi'], bw['ompi'])} "
              f"| {raw[r - 1]:.3f} {mark[bw_state[(r, 'iperf3')]]} | {shown(p[(r, 'iperf3')])} |")
    for st, title in (("near", "the near state (·)"), ("far", "the distant state (✗)")):
        lk = {k: [r for r in R if lat_state[(r, k)] == st] for k in ("mpigpu", "ompi")}
        bk = {k: [r for r in R if bw_state[(r, k)] == st] for k in libs}
        print(f"\n### Within {title}\n")
        print(f"Latency rounds: mpigpu {len(lk['mpigpu'])}, Open MPI {len(lk['ompi'])}; bandwidth "
              f"rounds: mpigpu {len(bk['mpigpu'])}, Open MPI {len(bk['ompi'])}, iperf3 "
              f"{len(bk['iperf3'])} (of {rounds}).\n")
        if lk["mpigpu"] and lk["ompi"]:
            print("| size | mpigpu µs | Open MPI µs | mpigpu/OMPI | target ≤ 1 |")
            print("|---:|---:|---:|---:|:--|")
            for n in sorted(lat["mpigpu"][0]):
                m = med([lat["mpigpu"][r - 1] for r in lk["mpigpu"]], n)
                o = med([lat["ompi"][r - 1] for r in lk["ompi"]], n)
                print(f"| {size_text(n)} | {m:.2f} | {o:.2f} | {m / o:.2f} "
                      f"| {'met' if m <= o else 'MISSED'} |")
            print()
        if bk["mpigpu"] and bk["ompi"] and bk["iperf3"]:
            rs = statistics.median(raw[r - 1] for r in bk["iperf3"])
            print(f"iperf3 {rs:.3f} GB/s (median of its rounds in this state).\n")
            print("| size | mpigpu GB/s | Open MPI GB/s | mpigpu/OMPI | mpigpu/iperf3 | target from 1 MiB |")
            print("|---:|---:|---:|---:|---:|:--|")
            for n in sorted(bw["mpigpu"][0]):
                m = med([bw["mpigpu"][r - 1] for r in bk["mpigpu"]], n)
                o = med([bw["ompi"][r - 1] for r in bk["ompi"]], n)
                verdict = "-" if n < MIB else "met" if m >= o and m >= 0.9 * rs else "MISSED"
                print(f"| {size_text(n)} | {m:.3f} | {o:.3f} | {m / o:.2f} | {m / rs:.2f} "
                      f"| {verdict} |")
        else:
            print("Too few bandwidth rounds of each in this state to compare.")
EOF
cat "$out/table.md"

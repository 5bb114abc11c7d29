#!/usr/bin/env bash
# Issue 20's sweep on one GPU with two ranks, without MPS (the slow case: ~150 us a D->D message
# through a context switch). How long, with the iteration rule (--time-per-size, default 0.2 s):
#   1. the default sweep (`mpigpu-sweep`: latency H H, 1 B - 4 MiB);
#   2. `mpigpu-sweep latency D D` (default sizes): the default test on the slow pair;
#   3. `mpigpu-sweep latency bw --all-pairs -m 1:64M` with its limit and peer columns (--progress:
#      the progress line's estimates go to all-pairs.err).
# Every line of output is stamped (seconds since the epoch) as it arrives, to show that rows come
# out as they are measured; times.txt has each run's wall time (date +%s around it; no
# assertions) and, from each run's --json, every table's iteration counts. Logs under $OUT (7
# files: env.txt, times.txt, default.txt, latency-DD.txt, all-pairs.txt, all-pairs.err,
# all-pairs.json). Run from the repository root with the device bundle in .device/bin
# (mpigpu-sweep, mpigpurun): ../shared/device-bundle //tools:mpigpu-sweep //tools:mpigpurun
set -u
. benchmarks/results/device-steps.sh
device_env
device_info > $OUT/env.txt 2>&1
J=$(mktemp -d)

stamp() { while IFS= read -r line; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$line"; done; }

timed() {  # $1: label, $2: timeout (s), $3: where stderr goes, the rest: mpigpu-sweep's arguments
  local label=$1 limit=$2 err=$3 t0 t1 rc
  shift 3
  t0=$(date +%s)
  timeout $limit $B/mpigpu-sweep "$@" --json $J/$label.json 2> $err | stamp > $OUT/$label.txt
  rc=${PIPESTATUS[0]}
  t1=$(date +%s)
  echo "$label: mpigpu-sweep $* -> exit $rc, $((t1 - t0)) s" | tee -a $OUT/times.txt
}

timed default 90 /dev/stdout
timed latency-DD 90 /dev/stdout latency D D
timed all-pairs 400 $OUT/all-pairs.err latency bw --all-pairs -m 1:64M --progress
cp $J/all-pairs.json $OUT/ 2>/dev/null

for f in default latency-DD all-pairs; do
  python3 - "$J/$f.json" <<'PY' >> $OUT/times.txt 2>&1
import json, sys
r = json.load(open(sys.argv[1]))
for t in r["tables"]:
    s = t["series"][0]
    print("  %s %-7s %s: %d sizes, series %s, iterations %s" % (
        sys.argv[1].rsplit("/", 1)[-1], t["test"], t["pair"], len(t["sizes"]),
        ",".join(x["name"] for x in t["series"]), s.get("iterations", [])))
PY
done
rm -rf $J
echo done

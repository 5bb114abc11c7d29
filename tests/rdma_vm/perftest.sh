#!/bin/bash
# In the VM: perftest's server and client on rxe0 (two processes), the client's report on stdout.
#   perftest.sh <ib_write_bw|ib_read_bw|ib_write_lat|...> [perftest options]
# The server is started first and the client connects once it listens (port 18515).
# Under TCG perftest's CPU-frequency calibration sometimes fails ("Correlation coefficient r^2 <
# 0.9"; -F lets it go on) and its latency report is then "inf": that is no measurement, so the
# pair runs again, at most three times, each report printed.
t=$1; shift
for attempt in 1 2 3; do
  "$t" -d rxe0 -x "$RDMA_VM_GID" -F "$@" > /tmp/perftest.server.log 2>&1 & s=$!
  for i in $(seq 100); do ss -ltn | grep -q ':18515 ' && break; sleep 0.2; done
  out=$("$t" -d rxe0 -x "$RDMA_VM_GID" -F "$@" "$RDMA_VM_ADDR" 2>&1); c=$?
  wait $s; r=$?
  printf '%s\n' "$out"
  [ $r -eq 0 ] || { echo "server failed ($r):"; cat /tmp/perftest.server.log; }
  [ $c -eq 0 ] && [ $r -eq 0 ] || exit 1
  grep -qE '^ *[0-9]+ +[0-9]+ +inf ' <<< "$out" || exit 0
  echo "perftest.sh: calibration failed (inf), attempt $attempt of 3"
done
exit 0

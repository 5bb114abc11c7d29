#!/bin/bash
# In the VM: perftest's server and client on rxe0 (two processes), the client's report on stdout.
#   perftest.sh <ib_write_bw|ib_read_bw|ib_write_lat|...> [perftest options]
# The server is started first and the client connects once it listens (port 18515).
t=$1; shift
"$t" -d rxe0 -x "$RDMA_VM_GID" -F "$@" > /tmp/perftest.server.log 2>&1 & s=$!
for i in $(seq 100); do ss -ltn | grep -q ':18515 ' && break; sleep 0.2; done
"$t" -d rxe0 -x "$RDMA_VM_GID" -F "$@" "$RDMA_VM_ADDR"; c=$?
wait $s; r=$?
[ $r -eq 0 ] || { echo "server failed ($r):"; cat /tmp/perftest.server.log; }
[ $c -eq 0 ] && [ $r -eq 0 ]

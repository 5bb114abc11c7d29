#!/bin/bash
# Runs inside the VM: Soft-RoCE (rxe0 on dummy0, 10.77.0.1/24: rdma_cm does not work on lo),
# the smoke checks (ibv_devinfo sees rxe0 PORT_ACTIVE; ibv_rc_pingpong between two processes),
# then every step of /guest/plan ("name<TAB>timeout_s<TAB>command", run by bash in /guest with
# BIN=/guest/bin and RDMA_VM_ADDR, RDMA_VM_GID set). Each step's output: /out/logs/<name>.log;
# one line per step in /out/results. Exit status: 0 only when every step passed.
export BIN=/guest/bin RDMA_VM_ADDR=10.77.0.1 TMPDIR=/tmp
L=/out/logs; mkdir -p $L; : > /out/results
up() { cut -d' ' -f1 /proc/uptime; }
fail=0
record() { # name rc seconds
  printf '%-40s rc=%-3d %7.2fs %s\n' "$1" "$2" "$3" "$([ "$2" = 0 ] && echo PASS || echo FAIL)" | tee -a /out/results
  [ "$2" = 0 ] || fail=1
}
run_step() { # name timeout cmd
  local a=$(up) rc
  ( cd /guest && timeout -k 5 "$2" bash -c "$3" ) < /dev/null > "$L/$1.log" 2>&1; rc=$?
  record "$1" $rc "$(echo "$(up) - $a" | bc)"
  [ $rc -eq 0 ] && return
  # The lines that say why first (the tail alone may miss a failure early in a long log).
  echo "---- why, from $1.log"
  grep -n -E -A3 'rank check failed|Failure$|too fast|FAILED  \]|error:' "$L/$1.log" | head -n 40
  echo "---- tail of $1.log"; tail -n 30 "$L/$1.log"; echo "----"
}
echo "[guest] start t=$(up)s kernel $(uname -r)"
ip link set lo up && ip link set dummy0 up && ip addr add $RDMA_VM_ADDR/24 dev dummy0 || exit 90
rdma link add rxe0 type rxe netdev dummy0 || { echo "[guest] rdma link add failed"; exit 91; }
# The RoCE v2 GID that carries the IPv4 address (::ffff:a.b.c.d).
export RDMA_VM_GID=$(ibv_devinfo -v -d rxe0 | awk -F'[][]' -v a="::ffff:$RDMA_VM_ADDR" \
  '/GID\[/ && index($0,a) && /v2/ {gsub(/ /,"",$2); print $2; exit}')
echo "[guest] rxe0 up, RoCE v2 GID index ${RDMA_VM_GID:-none}"
run_step smoke.ibv_devinfo 30 'ibv_devinfo -d rxe0 | tee -a /dev/stderr | grep -q PORT_ACTIVE'
run_step smoke.rc_pingpong 120 '
  ibv_rc_pingpong -d rxe0 -g $RDMA_VM_GID -n 200 -s 4096 & s=$!
  for i in $(seq 50); do ss -ltn | grep -q ":18515 " && break; sleep 0.2; done
  ibv_rc_pingpong -d rxe0 -g $RDMA_VM_GID -n 200 -s 4096 $RDMA_VM_ADDR; c=$?
  wait $s; s=$?; echo "client rc=$c server rc=$s"; [ $c -eq 0 ] && [ $s -eq 0 ]'
if [ -f /guest/plan ]; then
  while IFS=$'\t' read -r name t cmd; do
    [ -z "$name" ] || [ "${name:0:1}" = "#" ] && continue
    run_step "$name" "$t" "$cmd"
  done < /guest/plan
fi
echo "[guest] end t=$(up)s fail=$fail"
exit $fail

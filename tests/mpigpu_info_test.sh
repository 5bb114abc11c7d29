#!/usr/bin/env bash
# mpigpu-info --config prints every variable with its allowed values; a value MPIGPU_Init would
# refuse is marked '!' with its reason while every other row still prints, and the exit status
# is then 1. Without --config it also shows the netmods found.
set -uo pipefail
info="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/mpigpu-info"
fail() { echo "FAIL: $*" >&2; echo "$out" >&2; exit 1; }
rows() { grep -cE '^  [ *!] MPIGPU_[A-Z_]+ +=' <<<"$out"; }

out=$(env -u MPIGPU_DEBUG "$info" --config) || fail "the defaults are refused"
n=$(rows)
[ "$n" -ge 25 ] || fail "only $n variables printed"
grep -qE '^    MPIGPU_LMT_UNITS += 8 +\(default 8; allowed 2\.\.4096\)' <<<"$out" || fail "no range for MPIGPU_LMT_UNITS"
grep -q 'allowed 0 (off) or 64K..1G' <<<"$out" || fail "no range for MPIGPU_CMA_CHUNK"
grep -q 'MPIGPU_YIELD .*allowed auto | on | off' <<<"$out" || fail "no MPIGPU_YIELD"
grep -qE '^  ! ' <<<"$out" && fail "a default is flagged"

out=$(MPIGPU_LMT_UNITS=1000000 "$info" --config); rc=$?
[ "$rc" = 1 ] || fail "exit status $rc with a refused value"
[ "$(rows)" = "$n" ] || fail "not every variable printed"
grep -qE '^  ! MPIGPU_LMT_UNITS ' <<<"$out" || fail "MPIGPU_LMT_UNITS not flagged"
grep -q "REFUSED: MPIGPU_LMT_UNITS='1000000' is out of range (allowed 2..4096)" <<<"$out" || fail "no reason"
grep -q "MPIGPU_Init refuses this configuration: MPIGPU_LMT_UNITS='1000000'" <<<"$out" || fail "no verdict"

# A broken combination: no single row is wrong, the verdict says which.
out=$(MPIGPU_LMT_UNIT_GPU_MIN=8M "$info" --config); rc=$?
[ "$rc" = 1 ] || fail "exit status $rc with MPIGPU_LMT_UNIT_GPU_MIN above MPIGPU_LMT_UNIT_GPU"
grep -q 'MPIGPU_Init refuses this configuration: MPIGPU_LMT_UNIT_GPU_MIN (8M) is above MPIGPU_LMT_UNIT_GPU (4M)' <<<"$out" || fail "no verdict for the combination"
# Without --config: the back-ends and their capabilities, as data (the seam's caps).
out=$(env -u MPIGPU_DEBUG "$info") || fail "the full report failed"
grep -qE '^  large +cma +this node, single copy, host only, contiguous only' <<<"$out" || fail "no cma caps"
grep -qE '^  large +chan +any node, .*universal' <<<"$out" || fail "no chan caps"
grep -qE '^  channel +tcp +any node' <<<"$out" || fail "no tcp channel"
# Whether libpmix is there is shown, never required: found (its version and file), or why not.
out=$("$info"); rc=$?
[ "$rc" = 0 ] || fail "exit status $rc without --config"
grep -qE '^PMIx \(ranks started by .*\): libpmix (.*PMIx.* \(/.*libpmix[^ ]*\)|not loadable: )' <<<"$out" || fail "no PMIx line"
out=$(MPIGPU_PMIX_LIB=/nonexistent/libpmix.so.2 "$info"); rc=$?
[ "$rc" = 0 ] || fail "exit status $rc without libpmix"
grep -q 'libpmix not loadable: cannot load the PMIx library /nonexistent/libpmix.so.2' <<<"$out" || fail "no reason for a missing libpmix"
# The netmods found: tcp's IPv4 interfaces and the address MPIGPU_NET_IF selects;
# ibverbs' RDMA devices through libibverbs loaded at run time, never linked.
if command -v readelf >/dev/null; then
  grep -q 'NEEDED.*libibverbs' <<<"$(readelf -d "$info")" && { out=$(readelf -d "$info"); fail "mpigpu-info links libibverbs"; }
fi
out=$(env -u MPIGPU_NET_IF "$info") || fail "exit status $? with the defaults"
grep -q '^Netmods (peers on other hosts' <<<"$out" || fail "no netmods section"
grep -qE '^  tcp      IPv4 interfaces: ' <<<"$out" || fail "no tcp line"
grep -q "listens on the address this host reaches the job's bootstrap from (MPIGPU_NET_IF unset)" <<<"$out" || fail "no listen address"
devices=$(ls /sys/class/infiniband 2>/dev/null || true)
if [ -n "$devices" ]; then
  for d in $devices; do grep -qE "^  ibverbs  RDMA devices:.* $d" <<<"$out" || fail "RDMA device $d not shown"; done
# (ldconfig lives in /sbin, which a test's PATH may lack: CI's clean clone did. Its list is read
# whole first: with pipefail, `ldconfig -p | grep -q` fails when grep stops reading early and
# ldconfig dies of SIGPIPE, as once in a clean CI run.)
elif grep -q 'libibverbs\.so\.1 ' <<<"$("$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null)"; then
  grep -q '^  ibverbs  none: no RDMA device' <<<"$out" || fail "expected 'none: no RDMA device'"
else
  grep -q '^  ibverbs  none: libibverbs.so.1 cannot be loaded' <<<"$out" || fail "expected libibverbs missing"
fi
out2=$("$info" --config)
grep -q '^Netmods' <<<"$out2" && { out=$out2; fail "--config prints the netmods"; }
# MPIGPU_NET_IF as an address, as an interface name (the first one listed), and naming nothing.
out=$(MPIGPU_NET_IF=127.0.0.1 "$info") || fail "exit status $? with MPIGPU_NET_IF=127.0.0.1"
grep -q '^           listens on 127.0.0.1 (MPIGPU_NET_IF=127.0.0.1)$' <<<"$out" || fail "MPIGPU_NET_IF=127.0.0.1 not shown"
first=$(sed -n 's/^  tcp      IPv4 interfaces: \([^ ]*\) \([0-9.]*\).*/\1 \2/p' <<<"$out")
if [ -n "$first" ]; then
  set -- $first
  out=$(MPIGPU_NET_IF=$1 "$info") || fail "exit status $? with MPIGPU_NET_IF=$1"
  grep -q "^           listens on $2 (MPIGPU_NET_IF=$1)\$" <<<"$out" || fail "MPIGPU_NET_IF=$1 does not select $2"
else
  echo "SKIPPED: MPIGPU_NET_IF by interface name: this sandbox has no IPv4 interface"
fi
out=$(MPIGPU_NET_IF=nosuchif0 "$info") || fail "exit status $? with MPIGPU_NET_IF=nosuchif0"
grep -q "^         ! MPIGPU_NET_IF: MPIGPU_NET_IF='nosuchif0' is neither an IPv4 address nor an interface with one" <<<"$out" || fail "a wrong MPIGPU_NET_IF is not flagged"
echo "mpigpu-info test ok"

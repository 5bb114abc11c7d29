#!/usr/bin/env bash
# mpigpu-info --config prints every variable with its allowed values; a value MPIGPU_Init would
# refuse is marked '!' with its reason while every other row still prints, and the exit status
# is then 1 (issue 15).
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
echo "mpigpu-info test ok"

#!/usr/bin/env bash
# Runs each MPI test program under mpigpurun with 2 ranks (and 3 for the p2p program: an idle
# rank must not disturb it; 3 and 4 for the one-sided ones; 1 and 5 for the collectives); a
# program passes when it exits 0 and prints " No Errors". One that prints "SKIPPED: reason" (no
# GPU) is reported as skipped, not as passed. mpi_fatal_test must instead end the job with a
# non-zero status and name its failed call.
#   mpi_programs_test.sh MPIGPURUN PROGRAM...
set -uo pipefail
run=$1; shift
fail=0
for prog in "$@"; do
  for n in 2 $(case "$(basename "$prog")" in mpi_p2p_test) echo 3 ;; mpi_rma_test|mpi_rma_gpu_test) echo 3 4 ;; mpi_coll_test|mpi_persistent_test) echo 1 5 ;; esac); do
    out=$(timeout 120 "$run" -n "$n" "$prog" 2>&1); rc=$?
    if [ "$(basename "$prog")" = mpi_fatal_test ]; then  # must end the job, naming the call
      if [ $rc -ne 0 ] && grep -q 'MPI_Send: invalid rank' <<<"$out" && ! grep -q 'still running' <<<"$out"; then
        echo "PASS $(basename "$prog") -n $n (ended with status $rc)"
      else
        echo "FAIL $(basename "$prog") -n $n (exit $rc)"; echo "$out" | tail -20; fail=1
      fi
    elif [ $rc -eq 0 ] && grep -q '^ No Errors$' <<<"$out"; then
      echo "PASS $(basename "$prog") -n $n"
    elif [ $rc -eq 0 ] && grep -q '^SKIPPED: ' <<<"$out"; then
      echo "SKIPPED $(basename "$prog") -n $n: $(grep -m1 '^SKIPPED: ' <<<"$out" | cut -c10-)"
    else
      echo "FAIL $(basename "$prog") -n $n (exit $rc)"; echo "$out" | tail -20; fail=1
    fi
  done
done
exit $fail

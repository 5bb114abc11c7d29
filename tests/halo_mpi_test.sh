#!/usr/bin/env bash
# benchmarks/halo_mpi (the halo stencil against plain mpi.h) builds from one source with Open MPI's
# mpicxx and runs with --check (every rank's cells equal a serial run of the whole grid, exactly)
# on 1, 3 and 4 ranks, float and double, host grids (--cpu). With mpigpu's own wrapper the same
# source is built by the install test once mpi.h exists there.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
mpicxx=$(command -v mpicxx.openmpi || true)
if [ -z "$mpicxx" ] || [ ! -x /usr/bin/mpirun.openmpi ]; then
  echo "SKIPPED: Open MPI (mpicxx.openmpi, mpirun.openmpi) is not installed"; exit 0
fi
# (The Makefile finds the sources beside itself in the runfiles; it writes only under BUILD.)
make -s -C "$root/benchmarks/halo_mpi" MPICXX="$mpicxx" BUILD="$TEST_TMPDIR/ompi"
run() {  # ranks, options
  local n=$1; shift
  out=$(timeout 120 /usr/bin/mpirun.openmpi --allow-run-as-root --oversubscribe -n "$n" \
    --mca btl self,vader "$TEST_TMPDIR/ompi/halo_mpi" --cpu --check "$@")
  echo "$out"
  grep -q ' ok$' <<<"$out" || { echo "halo_mpi -n $n $*: no checked row" >&2; exit 1; }
  if grep -q MISMATCH <<<"$out"; then echo "halo_mpi -n $n $*: mismatch" >&2; exit 1; fi
}
run 1 --n 40 --iters 5
run 3 --n 33 --iters 9 --double
run 4 --n 64 --iters 12
# Bad options are refused (exit 2), not run.
if timeout 60 /usr/bin/mpirun.openmpi --allow-run-as-root -n 1 "$TEST_TMPDIR/ompi/halo_mpi" --n -3 \
   >/dev/null 2>&1; then echo "bad option accepted" >&2; exit 1; fi
echo "halo_mpi test ok"

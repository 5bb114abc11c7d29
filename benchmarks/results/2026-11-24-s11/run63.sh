#!/usr/bin/env bash
# Device run 63 (session 11): halo_mpi, the halo stencil against plain mpi.h, one source built with
# mpigpu's installed mpicxx (carried: .device/hm) and, on the device, with its Open MPI's mpicxx;
# two ranks on one GPU under a hand-started MPS daemon (both libraries alike). --check first, then
# 3 alternating rounds of --n 1024 and 2048 (direct = device pointers to MPI; staged = host copies).
set -u
. benchmarks/results/device-steps.sh
device_env
export MPIGPU_PIN_CACHE=0
H=.device/hm/halo_mpi
export LD_LIBRARY_PATH=$PWD/.device/hm:$LD_LIBRARY_PATH
{ command -v mpicxx mpirun; mpirun --version 2>&1 | head -1
  ompi_info --parsable --all 2>/dev/null | grep -i 'mpi_built_with_cuda_support:value' || echo "ompi_info: no CUDA line"; } > $OUT/ompi.txt 2>&1
cuda_aware=$(grep -c 'cuda_support:value:true' $OUT/ompi.txt)
make -s -C benchmarks/halo_mpi MPICXX=mpicxx BUILD=/tmp/ompi >> $OUT/ompi.txt 2>&1 || echo "Open MPI build failed" >> $OUT/ompi.txt
OM="mpirun --allow-run-as-root --oversubscribe -n 2 -x CUDA_MPS_PIPE_DIRECTORY -x LD_LIBRARY_PATH"
omode=staged; [ "$cuda_aware" -gt 0 ] && omode=all
mps_start
{
  echo "== mpigpu --check"; timeout 60 $R $H --check --n 256 --iters 20
  [ -x /tmp/ompi/halo_mpi ] && { echo "== Open MPI --check ($omode)"; timeout 60 $OM /tmp/ompi/halo_mpi --check --n 256 --iters 20 --mode $omode; }
  for round in 1 2 3; do
    for n in 1024 2048; do
      echo "== round $round n $n mpigpu"; timeout 60 $R $H --n $n --iters 200 | grep -v '^#'
      [ -x /tmp/ompi/halo_mpi ] && { echo "== round $round n $n Open MPI"; timeout 60 $OM /tmp/ompi/halo_mpi --n $n --iters 200 --mode $omode | grep -v '^#'; }
    done
  done
} > $OUT/halo_mpi.txt 2>&1
mps_stop
echo "run63 done"

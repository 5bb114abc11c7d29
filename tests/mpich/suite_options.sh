# The MPICH suite's configure options, one list for tests/mpich/run.sh and device_bundle.sh (why
# each is there: run.sh). Sourced:  suite_options PREFIX GPU  sets the array SUITE_OPTS (GPU 1:
# configured --with-cuda, $CUDA_HOME or /usr/local/cuda).
suite_options() {
  SUITE_OPTS=(--with-mpi="$1" --disable-fortran --disable-cxx --disable-spawn --disable-rma
              --disable-romio --disable-ft-tests --enable-xfail --enable-threads=multiple)
  if [ "$2" -eq 1 ]; then SUITE_OPTS+=(--with-cuda="${CUDA_HOME:-/usr/local/cuda}"); fi
}

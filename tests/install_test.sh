#!/usr/bin/env bash
# tools/install.sh puts headers, libmpigpu.so, the tools and the wrappers under a prefix; a program
# built there with mpigpucc runs under the installed mpigpurun on 3 ranks.
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
prefix="${TEST_TMPDIR}/prefix"
"$root/tools/install.sh" --prefix "$prefix" --no-build --from "$root"
for f in include/mpigpu.h include/mpi.h lib/libmpigpu.so lib/libmpi.so bin/mpigpurun bin/mpigpu-info \
         bin/mpigpucc bin/mpigpucxx bin/mpicc bin/mpicxx bin/mpic++ bin/mpiexec bin/mpirun \
         lib/pkgconfig/mpi.pc lib/pkgconfig/mpigpu.pc; do
  [ -e "$prefix/$f" ] || { echo "missing $prefix/$f" >&2; exit 1; }
done
"$prefix/bin/mpigpucc" -show -c x.c | grep -q -- "-I$prefix/include" || { echo "-show without -I" >&2; exit 1; }
"$prefix/bin/mpigpucc" "$root/tests/install_smoke.c" -o "$TEST_TMPDIR/smoke"
out=$("$prefix/bin/mpigpurun" -n 3 --timeout 60 "$TEST_TMPDIR/smoke")
echo "$out"
[ "$out" = "install smoke: 3 ranks ok" ] || { echo "unexpected output" >&2; exit 1; }
# (Captured first: grep -q would close the pipe early and, with pipefail, fail the test.)
info=$("$prefix/bin/mpigpu-info" --config)
grep -q MPIGPU_EAGER_LIMIT <<<"$info"
# The MPI wrappers: -show prints the commands (the form CMake's FindMPI and autotools parse),
# an MPI program that interposes MPI_Send on PMPI_Send builds with mpicc against libmpi.so and
# runs under mpirun, a C++ program builds with mpicxx.
show=$("$prefix/bin/mpicc" -show)
[ "$show" = "cc -I$prefix/include -L$prefix/lib -Wl,-rpath,$prefix/lib -lmpi" ] || { echo "mpicc -show: $show" >&2; exit 1; }
show=$("$prefix/bin/mpicxx" -show -c x.cc)
[ "$show" = "c++ -I$prefix/include -c x.cc" ] || { echo "mpicxx -show: $show" >&2; exit 1; }
show=$("$prefix/bin/mpirun" -show -np 2 ./a)
[ "$show" = "$prefix/bin/mpigpurun -np 2 ./a" ] || { echo "mpirun -show: $show" >&2; exit 1; }
"$prefix/bin/mpicc" -std=c99 -Wall -Werror -I"$root/tests/mpi" "$root/tests/mpi/mpi_pmpi_test.c" \
  -o "$TEST_TMPDIR/pmpi"
out=$("$prefix/bin/mpirun" -n 2 --timeout 60 "$TEST_TMPDIR/pmpi")
[ "$out" = " No Errors" ] || { echo "pmpi: $out" >&2; exit 1; }
printf '#include <mpi.h>\nint main(int c, char** v) { MPI_Init(&c, &v); return MPI_Finalize(); }\n' \
  >"$TEST_TMPDIR/cxx.cc"
"$prefix/bin/mpicxx" -Wall -Werror -pedantic "$TEST_TMPDIR/cxx.cc" -o "$TEST_TMPDIR/cxx"
"$prefix/bin/mpirun" -n 2 --timeout 60 "$TEST_TMPDIR/cxx"
pc=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs mpi | sed "s/ *$//")
[ "$pc" = "-I$prefix/include -L$prefix/lib -Wl,-rpath,$prefix/lib -lmpi" ] || { echo "pkg-config mpi: $pc" >&2; exit 1; }
# CMake's find_package(MPI) finds the wrappers on PATH (mpicc -show), reads MPI 3.1 from mpi.h
# and links a program against libmpi.so that runs under the mpiexec it found.
if command -v cmake >/dev/null; then
  cm=$TEST_TMPDIR/cmake
  mkdir -p "$cm/build"
  cat >"$cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.10)
project(findmpi C CXX)
find_package(MPI REQUIRED COMPONENTS C CXX)
file(WRITE ${CMAKE_BINARY_DIR}/found.txt "${MPI_C_VERSION} ${MPIEXEC_EXECUTABLE} ${MPI_C_LIBRARIES}")
add_executable(hello hello.c)
target_link_libraries(hello MPI::MPI_C)
CM
  printf '#include <mpi.h>\n#include <stdio.h>\nint main(int c, char** v) { int n; MPI_Init(&c, &v); MPI_Comm_size(MPI_COMM_WORLD, &n); printf("%%d\\n", n); return MPI_Finalize(); }\n' >"$cm/hello.c"
  (cd "$cm/build" && PATH="$prefix/bin:$PATH" cmake .. >cmake.log 2>&1 && make >>cmake.log 2>&1) ||
    { cat "$cm/build/cmake.log" >&2; echo "cmake find_package(MPI) failed" >&2; exit 1; }
  found=$(cat "$cm/build/found.txt")
  [ "$found" = "3.1 $prefix/bin/mpiexec $prefix/lib/libmpi.so" ] || { echo "FindMPI found: $found" >&2; exit 1; }
  out=$("$prefix/bin/mpiexec" -n 2 --timeout 60 "$cm/build/hello")
  [ "$out" = $'2\n2' ] || { echo "cmake-built program: $out" >&2; exit 1; }
  echo "cmake find_package(MPI): $found"
else
  echo "SKIPPED the CMake check: cmake is not installed (apt-get install cmake)"
fi
# Bad usage is refused with a message.
if "$root/tools/install.sh" --bogus 2>/dev/null; then echo "bad option accepted" >&2; exit 1; fi
# The halo stencil against plain mpi.h (benchmarks/halo_mpi): the source Open MPI's wrapper builds
# in halo_mpi_test, built by the installed mpicxx, checked exactly under the installed mpirun.
make -s -C "$root/benchmarks/halo_mpi" MPICXX="$prefix/bin/mpicxx" BUILD="$TEST_TMPDIR/halo-build"
out=$("$prefix/bin/mpirun" -n 4 --timeout 120 "$TEST_TMPDIR/halo-build/halo_mpi" --cpu --check --n 48 --iters 6)
echo "$out"
grep -q '^direct .* ok$' <<<"$out" || { echo "halo_mpi under mpigpu: no checked row" >&2; exit 1; }
echo "install test ok"

/* The environment calls: Init_thread, Query_thread, Is_thread_main, Initialized/Finalized,
 * Wtime/Wtick, names and versions. */
#include <string.h>

#include "mpi_test.h"

int main(int argc, char** argv) {
  int flag = 1, provided = -1, q = -1, len = 0, v = 0, sv = 0;
  char name[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
  double t0, t1;
  MPI_Initialized(&flag);
  if (flag) return 1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK(provided == MPI_THREAD_MULTIPLE);
  CHECK_OK(MPI_Query_thread(&q));
  CHECK(q == provided);
  CHECK_OK(MPI_Is_thread_main(&flag));
  CHECK(flag == 1);
  CHECK_OK(MPI_Initialized(&flag));
  CHECK(flag == 1);
  CHECK_OK(MPI_Finalized(&flag));
  CHECK(flag == 0);
  t0 = MPI_Wtime();
  t1 = MPI_Wtime();
  CHECK(t1 >= t0 && MPI_Wtick() > 0.0 && MPI_Wtick() < 1.0);
  CHECK_OK(MPI_Get_processor_name(name, &len));
  CHECK(len > 0 && (int)strlen(name) == len);
  CHECK_OK(MPI_Get_version(&v, &sv));
  CHECK(v == MPI_VERSION && sv == MPI_SUBVERSION);
  CHECK_OK(MPI_Get_library_version(lib, &len));
  CHECK(len > 0 && strstr(lib, "mpigpu") != NULL);
  {
    int rc = mt_finish();
    MPI_Finalized(&flag);
    return flag ? rc : 1;
  }
}

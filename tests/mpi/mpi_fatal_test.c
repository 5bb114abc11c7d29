/* MPI_ERRORS_ARE_FATAL is the default: an invalid call ends the job, naming the call. The test
 * script expects a non-zero exit and "MPI_Send" and the error class's text on stderr. */
#include <stdio.h>

#include "mpi.h"

int main(int argc, char** argv) {
  int size, v = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Send(&v, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD); /* no such rank: fatal */
  printf("still running after a fatal error\n");
  MPI_Finalize();
  return 0;
}

/* Checks for the MPI interface's test programs: CHECK prints the failed condition with the
 * rank and counts it; each program ends with mt_finish(), which prints " No Errors" (as MPICH's
 * tests do) when nothing failed and returns the exit status. */
#ifndef MPIGPU_TESTS_MPI_MPI_TEST_H_
#define MPIGPU_TESTS_MPI_MPI_TEST_H_

#include <stdio.h>

#include "mpi.h"

static int mt_errors = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      int mt_rank_ = -1;                                                            \
      MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank_);                                     \
      fprintf(stderr, "%s:%d: rank %d: check failed: %s\n", __FILE__, __LINE__, mt_rank_, \
              #cond);                                                               \
      fflush(stderr);                                                               \
      ++mt_errors;                                                                  \
    }                                                                               \
  } while (0)

#define CHECK_OK(call) CHECK((call) == MPI_SUCCESS)

/* Sums the errors over all ranks; rank 0 prints " No Errors" or the count. */
static int mt_finish(void) {
  int total = 0, rank = 0;
  MPI_Allreduce(&mt_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    if (total == 0) printf(" No Errors\n");
    else printf(" Found %d errors\n", total);
    fflush(stdout);
  }
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}

#endif

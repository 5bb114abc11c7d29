/* Built by tests/install_test.sh with the installed mpigpucc, as a user's program would be:
 * each rank passes its rank to the next one around a ring, then all agree on a sum. */
#include <mpigpu.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank, size, got = -1, sum = 0;
  MPIGPU_Init(&argc, &argv);
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &size);
  MPIGPU_Sendrecv(&rank, MPIGPU_BUF_HOST, 1, MPIGPU_INT, (rank + 1) % size, 7, &got,
                  MPIGPU_BUF_HOST, 1, MPIGPU_INT, (rank + size - 1) % size, 7, MPIGPU_COMM_WORLD,
                  MPIGPU_STATUS_IGNORE);
  MPIGPU_Allreduce(&rank, MPIGPU_BUF_HOST, &sum, MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_SUM,
                   MPIGPU_COMM_WORLD);
  if (got != (rank + size - 1) % size || sum != size * (size - 1) / 2) {
    fprintf(stderr, "rank %d: got %d, sum %d\n", rank, got, sum);
    return 1;
  }
  if (rank == 0) printf("install smoke: %d ranks ok\n", size);
  MPIGPU_Finalize();
  return 0;
}

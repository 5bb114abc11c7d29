/* A C89 program on the public API: proves mpigpu.h works from C, and serves as the rank program
 * of api_launcher_test under mpigpurun. Ring exchange with Isend/Irecv/Waitall, Bcast,
 * Allreduce, Barrier; exits 0 when every check passes. With the argument "fail", the last rank
 * sends to a rank that does not exist: the fatal default handler ends it with status 1. */
#include <stdio.h>
#include <string.h>

#include "mpigpu_api/mpigpu.h"

#define CHECK(cond)                                                           \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "api_c_smoke: rank %d: check failed: %s\n", rank, #cond); \
      return 1;                                                               \
    }                                                                         \
  } while (0)

int main(int argc, char** argv) {
  int rank = -1, size = 0, left, right, i, count = 0, sum = 0;
  int out[4], in[4], root_data[8];
  MPIGPU_Request reqs[2];
  MPIGPU_Status statuses[2];

  if (MPIGPU_Init(&argc, &argv) != MPIGPU_SUCCESS) return 2;
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &size);
  CHECK(rank >= 0 && rank < size);

  if (argc > 1 && strcmp(argv[1], "fail") == 0 && rank == size - 1)
    MPIGPU_Send(out, MPIGPU_BUF_HOST, 1, MPIGPU_INT, size + 5, 0, MPIGPU_COMM_WORLD);

  right = (rank + 1) % size;
  left = (rank + size - 1) % size;
  for (i = 0; i < 4; ++i) {
    out[i] = rank * 10 + i;
    in[i] = -1;
  }
  MPIGPU_Irecv(in, MPIGPU_BUF_HOST, 4, MPIGPU_INT, left, 3, MPIGPU_COMM_WORLD, &reqs[0]);
  MPIGPU_Isend(out, MPIGPU_BUF_HOST, 4, MPIGPU_INT, right, 3, MPIGPU_COMM_WORLD, &reqs[1]);
  CHECK(MPIGPU_Waitall(2, reqs, statuses) == MPIGPU_SUCCESS);
  CHECK(statuses[0].MPIGPU_SOURCE == left && statuses[0].MPIGPU_TAG == 3);
  MPIGPU_Get_count(&statuses[0], MPIGPU_INT, &count);
  CHECK(count == 4);
  for (i = 0; i < 4; ++i) CHECK(in[i] == left * 10 + i);

  for (i = 0; i < 8; ++i) root_data[i] = rank == 0 ? 100 + i : 0;
  MPIGPU_Bcast(root_data, MPIGPU_BUF_HOST, 8, MPIGPU_INT, 0, MPIGPU_COMM_WORLD);
  for (i = 0; i < 8; ++i) CHECK(root_data[i] == 100 + i);

  MPIGPU_Allreduce(&rank, MPIGPU_BUF_HOST, &sum, MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_SUM,
                   MPIGPU_COMM_WORLD);
  CHECK(sum == size * (size - 1) / 2);
  MPIGPU_Barrier(MPIGPU_COMM_WORLD);
  CHECK(MPIGPU_Wtime() > 0.0);

  CHECK(MPIGPU_Finalize() == MPIGPU_SUCCESS);
  if (rank == 0) printf("api_c_smoke: %d ranks ok\n", size);
  return 0;
}

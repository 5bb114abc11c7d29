/* Persistent requests through mpi.h: point-to-point (Send_init/Recv_init around a ring) and
 * collectives (Allreduce_init, Bcast_init, Alltoall_init) started together by one Startall,
 * several times with new data, completed by Waitall, Testall and Waitsome in turn; each stays
 * valid and inactive after completion; Waitany/Testany skip inactive ones; Request_free of an
 * inactive one. A persistent neighborhood alltoall on a periodic ring, twice. */
#include <stdlib.h>

#include "mpi_test.h"

#define RUNS 6
#define NREQ 5

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int sendv = 0, recvv = -1, in = 0, sum = 0, root_val = 0;
  int* a2a_in = malloc(sizeof(int) * size);
  int* a2a_out = malloc(sizeof(int) * size);
  MPI_Request req[NREQ];
  CHECK_OK(MPI_Send_init(&sendv, 1, MPI_INT, right, 7, MPI_COMM_WORLD, &req[0]));
  CHECK_OK(MPI_Allreduce_init(&in, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &req[1]));
  CHECK_OK(MPI_Recv_init(&recvv, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &req[2]));
  CHECK_OK(MPI_Bcast_init(&root_val, 1, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &req[3]));
  CHECK_OK(MPI_Alltoall_init(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &req[4]));
  for (int run = 0; run < RUNS; ++run) {
    sendv = 100 * run + rank;
    in = run + rank;
    root_val = rank == size - 1 ? 1000 + run : -1;
    for (int r = 0; r < size; ++r) a2a_in[r] = 100 * run + 10 * rank + r;
    CHECK_OK(MPI_Startall(NREQ, req));
    if (run % 3 == 0) {
      MPI_Status st[NREQ];
      CHECK_OK(MPI_Waitall(NREQ, req, st));
      CHECK(st[2].MPI_SOURCE == left && st[2].MPI_TAG == 7);
    } else if (run % 3 == 1) {
      int flag = 0;
      while (!flag) CHECK_OK(MPI_Testall(NREQ, req, &flag, MPI_STATUSES_IGNORE));
    } else {
      int done = 0, outcount = 0, idx[NREQ];
      while (done < NREQ) {
        CHECK_OK(MPI_Waitsome(NREQ, req, &outcount, idx, MPI_STATUSES_IGNORE));
        CHECK(outcount != MPI_UNDEFINED);
        if (outcount == MPI_UNDEFINED) break;
        done += outcount;
      }
      /* All inactive now: Waitsome finds nothing to wait for. */
      CHECK_OK(MPI_Waitsome(NREQ, req, &outcount, idx, MPI_STATUSES_IGNORE));
      CHECK(outcount == MPI_UNDEFINED);
    }
    for (int k = 0; k < NREQ; ++k) CHECK(req[k] != MPI_REQUEST_NULL);
    CHECK(recvv == 100 * run + left);
    CHECK(sum == run * size + size * (size - 1) / 2);
    CHECK(root_val == 1000 + run);
    for (int r = 0; r < size; ++r) CHECK(a2a_out[r] == 100 * run + 10 * r + rank);
  }
  /* Inactive requests: Waitany and Testany have nothing to complete. */
  int index = 0, flag = 0;
  CHECK_OK(MPI_Waitany(NREQ, req, &index, MPI_STATUS_IGNORE));
  CHECK(index == MPI_UNDEFINED);
  CHECK_OK(MPI_Testany(NREQ, req, &index, &flag, MPI_STATUS_IGNORE));
  CHECK(flag == 1 && index == MPI_UNDEFINED);
  /* A collective one started alone and completed by Wait, then freed while inactive. */
  in = 1;
  CHECK_OK(MPI_Start(&req[1]));
  CHECK_OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
  CHECK(sum == size && req[1] != MPI_REQUEST_NULL);
  for (int k = 0; k < NREQ; ++k) {
    CHECK_OK(MPI_Request_free(&req[k]));
    CHECK(req[k] == MPI_REQUEST_NULL);
  }
  free(a2a_in);
  free(a2a_out);
  /* Neighbours on a periodic ring: block 0 goes left, block 1 right. */
  MPI_Comm ring;
  int dims[1] = {size}, periods[1] = {1}, two[2], got[2];
  MPI_Request nq;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
  CHECK_OK(MPI_Neighbor_alltoall_init(two, 1, MPI_INT, got, 1, MPI_INT, ring, MPI_INFO_NULL, &nq));
  for (int run = 0; run < 2; ++run) {
    two[0] = 10 * rank + run;
    two[1] = 10 * rank + run + 5;
    CHECK_OK(MPI_Start(&nq));
    CHECK_OK(MPI_Wait(&nq, MPI_STATUS_IGNORE));
    CHECK(got[0] == 10 * left + run + 5 && got[1] == 10 * right + run);
  }
  CHECK_OK(MPI_Request_free(&nq));
  CHECK_OK(MPI_Comm_free(&ring));
  return mt_finish();
}

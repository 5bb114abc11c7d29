/* The MPI interface's collectives and ops (mpi_coll.cc over the core's): MPI_IN_PLACE,
 * MINLOC on MPI_DOUBLE_INT, a non-commutative user op, the v-forms, a nonblocking collective
 * overlapping point to point, and MPI_ERR_ROOT / MPI_ERR_OP under MPI_ERRORS_RETURN. */
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

/* 2x2 integer matrices: io = in * io (in holds the lower ranks), not commutative. */
static void matmul(void* in, void* io, int* len, MPI_Datatype* type) {
  int k;
  (void)type;
  for (k = 0; k < *len; ++k) {
    const int* a = (const int*)in + 4 * k;
    int* b = (int*)io + 4 * k;
    int r[4];
    r[0] = a[0] * b[0] + a[1] * b[2];
    r[1] = a[0] * b[1] + a[1] * b[3];
    r[2] = a[2] * b[0] + a[3] * b[2];
    r[3] = a[2] * b[1] + a[3] * b[3];
    memcpy(b, r, sizeof r);
  }
}

int main(int argc, char** argv) {
  int rank, size, i, r;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    /* Gather in place at the root, then Allgatherv with gaps. */
    int* all = malloc(sizeof(int) * 3 * size);
    int* counts = malloc(sizeof(int) * size);
    int* displs = malloc(sizeof(int) * size);
    for (i = 0; i < 3 * size; ++i) all[i] = -1;
    for (i = 0; i < size; ++i) {
      counts[i] = 1;
      displs[i] = 3 * i + 1;
    }
    if (rank == 0) {
      all[0] = 100;
      CHECK_OK(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
      for (r = 0; r < size; ++r) CHECK(all[r] == 100 + r);
    } else {
      int mine = 100 + rank;
      CHECK_OK(MPI_Gather(&mine, 1, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
    }
    for (i = 0; i < 3 * size; ++i) all[i] = -1;
    CHECK_OK(MPI_Allgatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD));
    for (r = 0; r < size; ++r) CHECK(all[3 * r] == -1 && all[3 * r + 1] == r && all[3 * r + 2] == -1);
    free(all);
    free(counts);
    free(displs);
  }
  {
    /* MINLOC on DOUBLE_INT: ties keep the smaller rank. */
    struct { double v; int i; } in, out;
    in.v = rank % 2;
    in.i = rank;
    CHECK_OK(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(out.v == 0 && out.i == 0);
    CHECK_OK(MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    CHECK(out.v == (size > 1 ? 1 : 0) && out.i == (size > 1 ? 1 : 0));
  }
  {
    /* A non-commutative op in rank order: M_r = [[1, r + 1], [0, 2]] does not commute. */
    MPI_Op op;
    int m[4], got[4], want[4] = {1, 0, 0, 1}, commute = -1;
    CHECK_OK(MPI_Op_create(matmul, 0, &op));
    CHECK_OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0);
    for (r = 0; r < size; ++r) {
      int mr[4] = {1, r + 1, 0, 2};
      int tmp[4];
      int len = 1;
      memcpy(tmp, mr, sizeof tmp);
      matmul(want, tmp, &len, NULL); /* tmp = want * M_r */
      memcpy(want, tmp, sizeof tmp);
    }
    m[0] = 1, m[1] = rank + 1, m[2] = 0, m[3] = 2;
    {
      MPI_Datatype mat;
      CHECK_OK(MPI_Type_contiguous(4, MPI_INT, &mat));
      CHECK_OK(MPI_Type_commit(&mat));
      CHECK_OK(MPI_Allreduce(m, got, 1, mat, op, MPI_COMM_WORLD));
      CHECK(memcmp(got, want, sizeof got) == 0);
      memset(got, 0, sizeof got);
      CHECK_OK(MPI_Reduce(m, got, 1, mat, op, size - 1, MPI_COMM_WORLD));
      if (rank == size - 1) CHECK(memcmp(got, want, sizeof got) == 0);
      CHECK_OK(MPI_Type_free(&mat));
    }
    CHECK_OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
  }
  {
    /* Ibcast from the last rank overlapping a ring of Sendrecv, then Wait. */
    int v = rank == size - 1 ? 42 : 0, token = rank, from = -1;
    MPI_Request req;
    CHECK_OK(MPI_Ibcast(&v, 1, MPI_INT, size - 1, MPI_COMM_WORLD, &req));
    CHECK_OK(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 7, &from, 1, MPI_INT,
                          (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK(v == 42 && from == (rank + size - 1) % size);
  }
  {
    /* Reduce_scatter_block in place: block r of the sum to rank r. */
    int* buf = malloc(sizeof(int) * size);
    for (i = 0; i < size; ++i) buf[i] = i * 10 + rank;
    CHECK_OK(MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(buf[0] == size * rank * 10 + size * (size - 1) / 2);
    free(buf);
  }
  {
    /* Errors under MPI_ERRORS_RETURN. */
    int v = 1, out = 0, cls = -1, rc;
    float f = 1, g = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Bcast(&v, 1, MPI_INT, size, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT);
    rc = MPI_Allreduce(&f, &g, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP);
    rc = MPI_Reduce_local(&v, &out, 1, MPI_INT, MPI_BXOR);
    CHECK(rc == MPI_SUCCESS && out == 1);
  }
  return mt_finish();
}

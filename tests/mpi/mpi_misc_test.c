/* Regressions of MPICH test-suite entries, through mpi.h (2 ranks):
 *  - MPI_Comm_idup is nonblocking: rank 0 receives from rank 1 before it starts its idup, while
 *    rank 1 starts its idup first and then sends with MPI_Ssend (a blocking idup deadlocks);
 *    MPI_Comm_idup_with_info likewise.
 *  - attributes on datatypes: keyvals, set/get/delete, copy callbacks on MPI_Type_dup (a
 *    failing one fails the dup), delete callbacks on MPI_Type_free (in reverse order of set).
 *  - a persistent send and receive of a derived type keep working after MPI_Type_free of the
 *    user's handle, even when a new type reuses the handle.
 *  - MPI_BOTTOM sends and receives of a struct of absolute addresses (the packer gets a null
 *    base pointer), and count 0 / empty types with a NULL buffer.
 *  - MPI_Neighbor_alltoall and MPI_Ineighbor_allgather on a periodic ring of 2, where both
 *    neighbours are the one other rank (MPICH's ring_neighbor_alltoall). */
#include <stdint.h>
#include <string.h>

#include "mpi.h"
#include "tests/mpi/mpi_test.h"

static void test_idup(int rank) {
  MPI_Comm nc = MPI_COMM_NULL, nc2 = MPI_COMM_NULL;
  MPI_Request req[2];
  int v = 0;
  MPI_Info info;
  CHECK_OK(MPI_Info_create(&info));
  if (rank == 0) {
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(v == 41);
    CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &nc, &req[0]));
    CHECK_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &nc2, &req[1]));
  } else {
    CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &nc, &req[0]));
    CHECK_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &nc2, &req[1]));
    v = 41;
    CHECK_OK(MPI_Ssend(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD));
  }
  CHECK_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
  CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL);
  int res = -1, sum = -1;
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, nc, &res));
  CHECK(res == MPI_CONGRUENT);
  CHECK_OK(MPI_Comm_compare(nc, nc2, &res));
  CHECK(res == MPI_CONGRUENT);
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, nc2));
  CHECK(sum == 1);
  CHECK_OK(MPI_Comm_free(&nc));
  CHECK_OK(MPI_Comm_free(&nc2));
  CHECK_OK(MPI_Info_free(&info));
}

/* Attribute callbacks record what they saw. */
static int deleted[8], ndeleted = 0, copies = 0;

static int copy_plus(MPI_Datatype t, int key, void* extra, void* in, void* out, int* flag) {
  (void)t;
  (void)key;
  (void)extra;
  ++copies;
  *(void**)out = (char*)in + 1;
  *flag = 1;
  return MPI_SUCCESS;
}

static int copy_fails(MPI_Datatype t, int key, void* extra, void* in, void* out, int* flag) {
  (void)t;
  (void)key;
  (void)extra;
  (void)in;
  (void)out;
  *flag = 0;
  return MPI_ERR_OTHER;
}

static int record_delete(MPI_Datatype t, int key, void* val, void* extra) {
  (void)t;
  (void)key;
  (void)extra;
  if (ndeleted < 8) deleted[ndeleted] = (int)(intptr_t)val;
  ++ndeleted;
  return MPI_SUCCESS;
}

static void test_type_attrs(void) {
  MPI_Datatype t, d;
  int k1 = MPI_KEYVAL_INVALID, k2 = MPI_KEYVAL_INVALID, k3 = MPI_KEYVAL_INVALID, flag = -1;
  void* v = NULL;
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t));
  CHECK_OK(MPI_Type_create_keyval(copy_plus, record_delete, &k1, NULL));
  CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, record_delete, &k2, NULL));
  CHECK_OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, MPI_TYPE_NULL_DELETE_FN, &k3, NULL));
  CHECK_OK(MPI_Type_get_attr(t, k1, &v, &flag));
  CHECK(flag == 0);
  CHECK_OK(MPI_Type_set_attr(t, k1, (void*)(intptr_t)10));
  CHECK_OK(MPI_Type_set_attr(t, k2, (void*)(intptr_t)20));
  CHECK_OK(MPI_Type_set_attr(t, k3, (void*)(intptr_t)30));
  CHECK_OK(MPI_Type_get_attr(t, k2, &v, &flag));
  CHECK(flag == 1 && v == (void*)(intptr_t)20);
  /* Dup: k1 copied (+1), k2 not (null copy), k3 the same value. */
  CHECK_OK(MPI_Type_dup(t, &d));
  CHECK(copies == 1);
  CHECK_OK(MPI_Type_get_attr(d, k1, &v, &flag));
  CHECK(flag == 1 && v == (void*)(intptr_t)11);
  CHECK_OK(MPI_Type_get_attr(d, k2, &v, &flag));
  CHECK(flag == 0);
  CHECK_OK(MPI_Type_get_attr(d, k3, &v, &flag));
  CHECK(flag == 1 && v == (void*)(intptr_t)30);
  /* Delete one: its callback runs once. */
  CHECK_OK(MPI_Type_delete_attr(t, k2));
  CHECK(ndeleted == 1 && deleted[0] == 20);
  /* Free: the remaining delete callbacks, newest first (k3 has none). */
  CHECK_OK(MPI_Type_set_attr(t, k2, (void*)(intptr_t)21));
  ndeleted = 0;
  CHECK_OK(MPI_Type_free(&t));
  CHECK(t == MPI_DATATYPE_NULL);
  CHECK(ndeleted == 2 && deleted[0] == 21 && deleted[1] == 10);
  ndeleted = 0;
  CHECK_OK(MPI_Type_free(&d));
  CHECK(ndeleted == 1 && deleted[0] == 11);
  /* A failing copy callback fails the dup; no type is left. */
  int kf = MPI_KEYVAL_INVALID;
  CHECK_OK(MPI_Type_create_keyval(copy_fails, MPI_TYPE_NULL_DELETE_FN, &kf, NULL));
  CHECK_OK(MPI_Type_contiguous(3, MPI_INT, &t));
  CHECK_OK(MPI_Type_set_attr(t, kf, NULL));
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  d = MPI_INT;
  CHECK(MPI_Type_dup(t, &d) != MPI_SUCCESS);
  CHECK(d == MPI_DATATYPE_NULL);
  /* Bad keyvals fail, they do not crash. */
  CHECK(MPI_Type_set_attr(t, 12345, NULL) != MPI_SUCCESS);
  CHECK(MPI_Type_set_attr(MPI_DATATYPE_NULL, k1, NULL) != MPI_SUCCESS);
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
  CHECK_OK(MPI_Type_free(&t));
  int* keys[] = {&k1, &k2, &k3, &kf};
  for (int i = 0; i < 4; ++i) {
    CHECK_OK(MPI_Type_free_keyval(keys[i]));
    CHECK(*keys[i] == MPI_KEYVAL_INVALID);
  }
}

static void test_persistent_derived(int rank) {
  MPI_Datatype vec, other;
  int buf[12], got[12];
  MPI_Request req;
  CHECK_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
  CHECK_OK(MPI_Type_commit(&vec));
  if (rank == 0) CHECK_OK(MPI_Send_init(buf, 2, vec, 1, 5, MPI_COMM_WORLD, &req));
  else CHECK_OK(MPI_Recv_init(got, 2, vec, 0, 5, MPI_COMM_WORLD, &req));
  CHECK_OK(MPI_Type_free(&vec));
  /* A new type may take the freed handle: the request must keep its own. */
  CHECK_OK(MPI_Type_contiguous(5, MPI_CHAR, &other));
  CHECK_OK(MPI_Type_commit(&other));
  for (int iter = 0; iter < 3; ++iter) {
    for (int i = 0; i < 12; ++i) {
      buf[i] = 100 * iter + i;
      got[i] = -1;
    }
    CHECK_OK(MPI_Start(&req));
    MPI_Status st;
    CHECK_OK(MPI_Wait(&req, &st));
    if (rank == 1) {
      /* Two vectors of 3 ints with stride 2, extent 5 ints: elements 0,2,4 then 5,7,9. */
      const int at[6] = {0, 2, 4, 5, 7, 9};
      for (int i = 0; i < 6; ++i) CHECK(got[at[i]] == 100 * iter + at[i]);
      CHECK(got[1] == -1 && got[3] == -1 && got[6] == -1);
      int count = -1;
      CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
      CHECK(count == 6);
    }
  }
  CHECK_OK(MPI_Request_free(&req));
  CHECK_OK(MPI_Type_free(&other));
}

static void test_bottom_and_empty(int rank) {
  /* A struct of one absolute address: sent and received from MPI_BOTTOM, as a strided vector
   * (the transport's strided layout) and as an irregular indexed type (staged through the
   * packer, which gets a null base pointer), and packed from MPI_BOTTOM. */
  double data[6] = {0, 0, 0, 0, 0, 0};
  if (rank == 0)
    for (int i = 0; i < 6; ++i) data[i] = 1.5 * (i + 1);
  MPI_Aint addr;
  CHECK_OK(MPI_Get_address(data, &addr));
  int blen = 1;
  MPI_Datatype vec, at, idx, at2;
  CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vec));
  CHECK_OK(MPI_Type_commit(&vec));
  CHECK_OK(MPI_Type_create_struct(1, &blen, &addr, &vec, &at));
  CHECK_OK(MPI_Type_commit(&at));
  const int ilens[2] = {1, 2}, idisp[2] = {0, 3};
  CHECK_OK(MPI_Type_indexed(2, ilens, idisp, MPI_DOUBLE, &idx));
  CHECK_OK(MPI_Type_create_struct(1, &blen, &addr, &idx, &at2));
  CHECK_OK(MPI_Type_commit(&at2));
  MPI_Status st;
  if (rank == 0) {
    CHECK_OK(MPI_Send(MPI_BOTTOM, 1, at, 1, 9, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(MPI_BOTTOM, 1, at2, 1, 9, MPI_COMM_WORLD));
    double packed[3] = {0, 0, 0};
    int pos = 0;
    CHECK_OK(MPI_Pack(MPI_BOTTOM, 1, at2, packed, (int)sizeof packed, &pos, MPI_COMM_WORLD));
    CHECK(pos == (int)sizeof packed && packed[0] == 1.5 && packed[1] == 6.0 && packed[2] == 7.5);
  } else {
    CHECK_OK(MPI_Recv(MPI_BOTTOM, 1, at, 0, 9, MPI_COMM_WORLD, &st));
    CHECK(data[0] == 1.5 && data[1] == 0 && data[2] == 4.5 && data[3] == 0);
    for (int i = 0; i < 6; ++i) data[i] = 0;
    CHECK_OK(MPI_Recv(MPI_BOTTOM, 1, at2, 0, 9, MPI_COMM_WORLD, &st));
    CHECK(data[0] == 1.5 && data[1] == 0 && data[2] == 0 && data[3] == 6.0 && data[4] == 7.5 &&
          data[5] == 0);
  }
  CHECK_OK(MPI_Type_free(&at2));
  CHECK_OK(MPI_Type_free(&idx));
  /* Count 0 with that type, and an empty type, with a NULL buffer. */
  MPI_Datatype empty;
  CHECK_OK(MPI_Type_contiguous(0, MPI_INT, &empty));
  CHECK_OK(MPI_Type_commit(&empty));
  int count = -1;
  if (rank == 0) {
    CHECK_OK(MPI_Send(NULL, 0, at, 1, 10, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(NULL, 3, empty, 1, 11, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(NULL, 0, vec, 1, 12, MPI_COMM_WORLD));
  } else {
    CHECK_OK(MPI_Recv(NULL, 0, at, 0, 10, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Get_count(&st, at, &count));
    CHECK(count == 0);
    CHECK_OK(MPI_Recv(NULL, 3, empty, 0, 11, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0);
    CHECK_OK(MPI_Recv(NULL, 0, vec, 0, 12, MPI_COMM_WORLD, &st));
  }
  CHECK_OK(MPI_Type_free(&empty));
  CHECK_OK(MPI_Type_free(&at));
  CHECK_OK(MPI_Type_free(&vec));
}

static void test_neighbor(int rank) {
  int dims[1] = {2}, periods[1] = {1};
  MPI_Comm ring;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
  int sbuf[2] = {-1, 1}, rbuf[2] = {0, 0};
  CHECK_OK(MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, ring));
  CHECK(rbuf[0] == 1 && rbuf[1] == -1);
  MPI_Request req;
  CHECK_OK(MPI_Ineighbor_allgather(&rank, 1, MPI_INT, rbuf, 1, MPI_INT, ring, &req));
  CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
  CHECK(rbuf[0] == 1 - rank && rbuf[1] == 1 - rank);
  CHECK_OK(MPI_Comm_free(&ring));
}

/* Generalized requests: the status query_fn fills is returned, but a single completion still
   leaves MPI_ERROR as the caller had it, unless the status is the empty one (see
   KeepStatusError), even when query_fn leaves the source and tag alone and sets an error. */
static int query_error_only(void* extra, MPI_Status* st) {
  (void)extra;
  st->MPI_ERROR = MPI_ERR_OTHER;
  return MPI_SUCCESS;
}
static int query_named(void* extra, MPI_Status* st) {
  (void)extra;
  st->MPI_SOURCE = 3;
  st->MPI_TAG = 5;
  MPI_Status_set_elements(st, MPI_INT, 4);
  MPI_Status_set_cancelled(st, 0);
  return MPI_SUCCESS;
}
static int greq_free(void* extra) {
  (void)extra;
  return MPI_SUCCESS;
}
static int greq_cancel(void* extra, int complete) {
  (void)extra;
  (void)complete;
  return MPI_SUCCESS;
}
static void test_grequest_status(void) {
  MPI_Grequest_query_function* queries[] = {query_error_only, query_named};
  for (int i = 0; i < 2; ++i) {
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    int count = -1;
    CHECK_OK(MPI_Grequest_start(queries[i], greq_free, greq_cancel, NULL, &r));
    CHECK_OK(MPI_Grequest_complete(r));
    st.MPI_ERROR = MPI_ERR_DIMS;
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && st.MPI_ERROR == MPI_ERR_DIMS);
    if (i == 1) {
      CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
      CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 5 && count == 4);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) printf("SKIPPED: needs 2 ranks, has %d\n", size);
    MPI_Finalize();
    return 0;
  }
  test_idup(rank);
  test_type_attrs();
  test_persistent_derived(rank);
  test_bottom_and_empty(rank);
  test_neighbor(rank);
  test_grequest_status();
  return mt_finish();
}

/* Every point-to-point call of mpi.h between ranks 0 and 1 (2 ranks; more ranks idle):
 * blocking and nonblocking sends of each mode, Sendrecv(_replace), probes, matched probes,
 * persistent requests, buffered sends, synchronous sends (not complete before the receive
 * is posted), cancelled receives, the any/some/all completions, Request_get_status,
 * Request_free, PROC_NULL, count-0 NULL buffers and status queries. */
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

#define N 64

static void fill(int* v, int n, int base) {
  int i;
  for (i = 0; i < n; ++i) v[i] = base + i;
}
static int same(const int* v, int n, int base) {
  int i;
  for (i = 0; i < n; ++i)
    if (v[i] != base + i) return 0;
  return 1;
}

static void blocking(int rank, int peer) {
  int buf[N];
  MPI_Status st;
  int count = -1;
  if (rank == 0) {
    fill(buf, N, 100);
    CHECK_OK(MPI_Send(buf, N, MPI_INT, peer, 1, MPI_COMM_WORLD));
    fill(buf, N, 200);
    CHECK_OK(MPI_Ssend(buf, N, MPI_INT, peer, 2, MPI_COMM_WORLD));
    fill(buf, N, 300);
    CHECK_OK(MPI_Rsend(buf, N, MPI_INT, peer, 3, MPI_COMM_WORLD));
  } else {
    memset(buf, 0, sizeof buf);
    CHECK_OK(MPI_Recv(buf, N, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st));
    CHECK(same(buf, N, 100));
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 1);
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N);
    CHECK_OK(MPI_Get_elements(&st, MPI_INT, &count));
    CHECK(count == N);
    CHECK_OK(MPI_Recv(buf, N, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECK(same(buf, N, 200) && st.MPI_TAG == 2);
    CHECK_OK(MPI_Recv(buf, N, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(same(buf, N, 300));
  }
}

static void nonblocking(int rank, int peer) {
  int a[N], b[N], c[N];
  MPI_Request r[3];
  MPI_Status st[3];
  int idx = -1, flag = 0, out = 0, ind[3];
  if (rank == 0) {
    fill(a, N, 1);
    fill(b, N, 2);
    fill(c, N, 3);
    CHECK_OK(MPI_Isend(a, N, MPI_INT, peer, 10, MPI_COMM_WORLD, &r[0]));
    CHECK_OK(MPI_Issend(b, N, MPI_INT, peer, 11, MPI_COMM_WORLD, &r[1]));
    CHECK_OK(MPI_Irsend(c, N, MPI_INT, peer, 12, MPI_COMM_WORLD, &r[2]));
    CHECK_OK(MPI_Waitall(3, r, st));
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL && r[2] == MPI_REQUEST_NULL);
  } else {
    CHECK_OK(MPI_Irecv(c, N, MPI_INT, peer, 12, MPI_COMM_WORLD, &r[2]));
    CHECK_OK(MPI_Irecv(b, N, MPI_INT, peer, 11, MPI_COMM_WORLD, &r[1]));
    CHECK_OK(MPI_Irecv(a, N, MPI_INT, peer, 10, MPI_COMM_WORLD, &r[0]));
    CHECK_OK(MPI_Waitany(3, r, &idx, &st[0]));
    CHECK(idx >= 0 && idx < 3 && r[idx] == MPI_REQUEST_NULL);
    CHECK(st[0].MPI_TAG == 10 + idx);
    CHECK_OK(MPI_Waitsome(3, r, &out, ind, st));
    CHECK(out >= 1 && out <= 2);
    do {
      CHECK_OK(MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE));
    } while (!flag);
    CHECK(same(a, N, 1) && same(b, N, 2) && same(c, N, 3));
    /* All null: Waitany gives UNDEFINED, Testany flag 1, Waitsome UNDEFINED. */
    CHECK_OK(MPI_Waitany(3, r, &idx, MPI_STATUS_IGNORE));
    CHECK(idx == MPI_UNDEFINED);
    CHECK_OK(MPI_Testany(3, r, &idx, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 1 && idx == MPI_UNDEFINED);
    CHECK_OK(MPI_Waitsome(3, r, &out, ind, MPI_STATUSES_IGNORE));
    CHECK(out == MPI_UNDEFINED);
  }
}

static void test_and_status(int rank, int peer) {
  int v = 0, flag = 0;
  MPI_Request r;
  MPI_Status st;
  if (rank == 0) {
    v = 42;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 20, MPI_COMM_WORLD));
  } else {
    CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 20, MPI_COMM_WORLD, &r));
    do {
      CHECK_OK(MPI_Request_get_status(r, &flag, &st));
    } while (!flag);
    CHECK(r != MPI_REQUEST_NULL); /* get_status does not free */
    CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 20);
    CHECK_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag && r == MPI_REQUEST_NULL && v == 42);
  }
}

static void sendrecv(int rank, int peer) {
  int s[N], r[N];
  MPI_Status st;
  fill(s, N, rank * 1000);
  CHECK_OK(MPI_Sendrecv(s, N, MPI_INT, peer, 30, r, N, MPI_INT, peer, 30, MPI_COMM_WORLD, &st));
  CHECK(same(r, N, peer * 1000) && st.MPI_SOURCE == peer);
  CHECK_OK(MPI_Sendrecv_replace(s, N, MPI_INT, peer, 31, peer, 31, MPI_COMM_WORLD, &st));
  CHECK(same(s, N, peer * 1000) && st.MPI_TAG == 31);
}

/* MPI 4.0's Isendrecv and Isendrecv_replace; single completions leave MPI_ERROR alone. */
static void isendrecv(int rank, int peer) {
  int s[N], r[N], flag = 0;
  MPI_Request q;
  MPI_Status st;
  fill(s, N, rank * 100);
  CHECK_OK(MPI_Isendrecv(s, N, MPI_INT, peer, 32, r, N, MPI_INT, peer, 32, MPI_COMM_WORLD, &q));
  st.MPI_ERROR = MPI_ERR_DIMS;
  CHECK_OK(MPI_Wait(&q, &st));
  CHECK(same(r, N, peer * 100) && st.MPI_SOURCE == peer && st.MPI_TAG == 32);
  CHECK(st.MPI_ERROR == MPI_ERR_DIMS);
  CHECK_OK(MPI_Isendrecv_replace(s, N, MPI_INT, peer, 33, peer, 33, MPI_COMM_WORLD, &q));
  do {
    CHECK_OK(MPI_Test(&q, &flag, &st));
  } while (!flag);
  CHECK(same(s, N, peer * 100) && st.MPI_TAG == 33);
  fill(s, N, rank * 100);
  CHECK_OK(MPI_Isendrecv_replace(s, N, MPI_INT, peer, 34, peer, 34, MPI_COMM_WORLD, &q));
  CHECK_OK(MPI_Waitall(1, &q, &st));
  CHECK(same(s, N, peer * 100) && st.MPI_ERROR == MPI_SUCCESS);
}

static void probes(int rank, int peer) {
  int v[N], flag = 0, count = 0;
  MPI_Status st;
  MPI_Message msg;
  MPI_Request r;
  if (rank == 0) {
    fill(v, N, 7);
    CHECK_OK(MPI_Send(v, N, MPI_INT, peer, 40, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(v, 5, MPI_INT, peer, 41, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(v, 3, MPI_INT, peer, 42, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(v, 2, MPI_INT, peer, 43, MPI_COMM_WORLD));
  } else {
    CHECK_OK(MPI_Probe(peer, 40, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == N && st.MPI_TAG == 40);
    CHECK_OK(MPI_Recv(v, N, MPI_INT, peer, 40, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    do {
      CHECK_OK(MPI_Iprobe(peer, 41, MPI_COMM_WORLD, &flag, &st));
    } while (!flag);
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 5);
    CHECK_OK(MPI_Recv(v, N, MPI_INT, peer, 41, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    /* Matched probe: the message is no longer matchable by a wildcard receive. */
    CHECK_OK(MPI_Mprobe(peer, 42, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg != MPI_MESSAGE_NULL && st.MPI_TAG == 42);
    flag = 1;
    CHECK_OK(MPI_Iprobe(peer, 42, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0);
    memset(v, 0, sizeof v);
    CHECK_OK(MPI_Mrecv(v, N, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL && same(v, 3, 7));
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 3);
    do {
      CHECK_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st));
    } while (!flag);
    CHECK_OK(MPI_Imrecv(v, N, MPI_INT, &msg, &r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(st.MPI_TAG == 43 && same(v, 2, 7));
    /* PROC_NULL. */
    CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    CHECK_OK(MPI_Mrecv(v, N, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL);
  }
}

static void persistent(int rank, int peer) {
  int v = 0, i;
  MPI_Request r[2];
  MPI_Status st;
  if (rank == 0) {
    CHECK_OK(MPI_Send_init(&v, 1, MPI_INT, peer, 50, MPI_COMM_WORLD, &r[0]));
    CHECK_OK(MPI_Ssend_init(&v, 1, MPI_INT, peer, 51, MPI_COMM_WORLD, &r[1]));
    for (i = 0; i < 5; ++i) {
      v = i;
      CHECK_OK(MPI_Start(&r[0]));
      CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
      CHECK(r[0] != MPI_REQUEST_NULL); /* inactive, not freed */
      CHECK_OK(MPI_Startall(1, &r[1]));
      CHECK_OK(MPI_Waitall(1, &r[1], MPI_STATUSES_IGNORE));
    }
    /* Waiting on an inactive persistent request returns at once with an empty status. */
    CHECK_OK(MPI_Wait(&r[0], &st));
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG);
    CHECK_OK(MPI_Request_free(&r[0]));
    CHECK_OK(MPI_Request_free(&r[1]));
    CHECK(r[0] == MPI_REQUEST_NULL);
  } else {
    CHECK_OK(MPI_Recv_init(&v, 1, MPI_INT, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
    for (i = 0; i < 10; ++i) {
      CHECK_OK(MPI_Start(&r[0]));
      CHECK_OK(MPI_Wait(&r[0], &st));
      CHECK(v == i / 2 && st.MPI_TAG == 50 + (i % 2));
    }
    CHECK_OK(MPI_Request_free(&r[0]));
  }
}

static void buffered(int rank, int peer) {
  int v[N], i, size = 0;
  void* b = NULL;
  MPI_Request r;
  const int bytes = 4 * (N * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
  if (rank == 0) {
    char* buf = malloc(bytes);
    CHECK_OK(MPI_Buffer_attach(buf, bytes));
    for (i = 0; i < 3; ++i) {
      fill(v, N, i * 10);
      CHECK_OK(MPI_Bsend(v, N, MPI_INT, peer, 60 + i, MPI_COMM_WORLD));
    }
    fill(v, N, 99);
    CHECK_OK(MPI_Ibsend(v, N, MPI_INT, peer, 63, MPI_COMM_WORLD, &r));
    fill(v, N, -1); /* buffered: the send does not see this */
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Buffer_detach(&b, &size));
    CHECK(b == buf && size == bytes);
    free(buf);
  } else {
    for (i = 3; i >= 0; --i) { /* in reverse: all four sit in rank 0's buffer */
      CHECK_OK(MPI_Recv(v, N, MPI_INT, peer, 60 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK(same(v, N, i == 3 ? 99 : i * 10));
    }
  }
}

/* Synchronous sends do not complete before the receiver matched them: rank 1 posts its receive
 * only after rank 0 has tested its Issend many times (and found it incomplete) and told it to. */
static void synchronous(int rank, int peer) {
  int v[N], go = 1, flag = 0, i, sizes[3] = {0, 1, N};
  MPI_Request r;
  for (i = 0; i < 3; ++i) {
    const int n = sizes[i];
    if (rank == 0) {
      int tries;
      fill(v, N, 500 + i);
      CHECK_OK(MPI_Issend(v, n, MPI_INT, peer, 80 + i, MPI_COMM_WORLD, &r));
      for (tries = 0; tries < 2000 && !flag; ++tries)
        CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
      CHECK(flag == 0);
      CHECK_OK(MPI_Send(&go, 1, MPI_INT, peer, 79, MPI_COMM_WORLD));
      if (!flag) CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
      flag = 0;
      CHECK_OK(MPI_Ssend(v, n, MPI_INT, peer, 90, MPI_COMM_WORLD));
    } else {
      MPI_Status st;
      int count = -1;
      CHECK_OK(MPI_Recv(&go, 1, MPI_INT, peer, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      memset(v, 0, sizeof v);
      CHECK_OK(MPI_Recv(v, N, MPI_INT, peer, 80 + i, MPI_COMM_WORLD, &st));
      CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
      CHECK(count == n && same(v, n, 500 + i));
      CHECK_OK(MPI_Recv(v, N, MPI_INT, peer, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
  }
}

/* A cancelled receive takes no message: the message sent after it goes to the next receive.
 * A send its receiver matched is not cancelled (allowed): it is delivered; one nobody matched is
 * taken back. */
static void cancel(int rank, int peer) {
  int v = 0, flag = -1;
  MPI_Request r;
  MPI_Status st;
  if (rank == 1) {
    CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 95, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1);
    CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1);
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 94, MPI_COMM_WORLD)); /* now send */
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 95, MPI_COMM_WORLD, &st));
    CHECK(v == 77);
    CHECK_OK(MPI_Irecv(&v, 1, MPI_INT, peer, 96, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Send(NULL, 0, MPI_INT, peer, 93, MPI_COMM_WORLD)); /* posted */
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK(v == 78);
    CHECK_OK(MPI_Send(NULL, 0, MPI_INT, peer, 93, MPI_COMM_WORLD)); /* received */
    CHECK_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 92, MPI_COMM_WORLD, &st)); /* 97 cancelled */
    CHECK_OK(MPI_Iprobe(peer, 97, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 0);
  } else {
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer, 94, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    v = 77;
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer, 95, MPI_COMM_WORLD));
    /* A send its receiver matched already: the cancel fails, the message was delivered. */
    CHECK_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 93, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    v = 78;
    CHECK_OK(MPI_Isend(&v, 1, MPI_INT, peer, 96, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 93, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0);
    /* One nobody received: taken back (eager, and a buffered send's copy). */
    CHECK_OK(MPI_Isend(&v, 1, MPI_INT, peer, 97, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Cancel(&r));
    CHECK_OK(MPI_Wait(&r, &st));
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1);
    {
      static char bbuf[64 + MPI_BSEND_OVERHEAD];
      void* old;
      int oldsize;
      CHECK_OK(MPI_Buffer_attach(bbuf, (int)sizeof bbuf));
      CHECK_OK(MPI_Ibsend(&v, 1, MPI_INT, peer, 97, MPI_COMM_WORLD, &r));
      CHECK_OK(MPI_Cancel(&r));
      CHECK_OK(MPI_Wait(&r, &st));
      CHECK_OK(MPI_Test_cancelled(&st, &flag));
      CHECK(flag == 1);
      CHECK_OK(MPI_Ibsend(&v, 1, MPI_INT, peer, 97, MPI_COMM_WORLD, &r)); /* its space is back */
      CHECK_OK(MPI_Cancel(&r));
      CHECK_OK(MPI_Buffer_detach(&old, &oldsize)); /* completes it into r */
      CHECK_OK(MPI_Wait(&r, &st));
      CHECK_OK(MPI_Test_cancelled(&st, &flag));
      CHECK(flag == 1 && old == bbuf);
    }
    CHECK_OK(MPI_Send(NULL, 0, MPI_INT, peer, 92, MPI_COMM_WORLD));
  }
}

static void edge_cases(int rank, int peer) {
  MPI_Status st;
  MPI_Request r = MPI_REQUEST_NULL;
  int flag = 0, count = -1;
  /* PROC_NULL completes at once with source PROC_NULL and count 0. */
  CHECK_OK(MPI_Send(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
  CHECK_OK(MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
  CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(count == 0);
  /* Single completions leave MPI_ERROR as it was. */
  st.MPI_ERROR = MPI_ERR_DIMS;
  CHECK_OK(MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
  CHECK(st.MPI_ERROR == MPI_ERR_DIMS);
  /* Null request: Wait, Test and Request_get_status return at once with the empty status,
     whose error is MPI_SUCCESS whatever the field held before. */
  st.MPI_ERROR = MPI_ERR_DIMS;
  CHECK_OK(MPI_Wait(&r, &st));
  CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG &&
        st.MPI_ERROR == MPI_SUCCESS);
  st.MPI_ERROR = MPI_ERR_DIMS;
  CHECK_OK(MPI_Test(&r, &flag, &st));
  CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_ERROR == MPI_SUCCESS);
  st.MPI_ERROR = MPI_ERR_DIMS;
  flag = 0;
  CHECK_OK(MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st));
  CHECK(flag == 1 && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG &&
        st.MPI_ERROR == MPI_SUCCESS);
  CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(count == 0);
  /* Count 0 with a NULL (MPI_BOTTOM) buffer between ranks. */
  if (rank == 0) {
    CHECK_OK(MPI_Send(MPI_BOTTOM, 0, MPI_INT, peer, 70, MPI_COMM_WORLD));
  } else {
    CHECK_OK(MPI_Recv(MPI_BOTTOM, 0, MPI_INT, peer, 70, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == 0 && st.MPI_TAG == 70);
  }
  /* Status setters. */
  CHECK_OK(MPI_Status_set_elements(&st, MPI_INT, 7));
  CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
  CHECK(count == 7);
  {
    MPI_Count big = (MPI_Count)1 << 40, got = 0;
    CHECK_OK(MPI_Status_set_elements_x(&st, MPI_INT, big));
    CHECK_OK(MPI_Get_elements_x(&st, MPI_INT, &got));
    CHECK(got == big);
    CHECK_OK(MPI_Get_count(&st, MPI_INT, &count));
    CHECK(count == MPI_UNDEFINED);
  }
  CHECK_OK(MPI_Status_set_cancelled(&st, 1));
  CHECK_OK(MPI_Test_cancelled(&st, &flag));
  CHECK(flag == 1);
}

int main(int argc, char** argv) {
  int rank, size, peer;
  CHECK_OK(MPI_Init(&argc, &argv));
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(size >= 2);
  peer = rank == 0 ? 1 : 0;
  if (rank < 2) {
    blocking(rank, peer);
    nonblocking(rank, peer);
    test_and_status(rank, peer);
    sendrecv(rank, peer);
    isendrecv(rank, peer);
    probes(rank, peer);
    persistent(rank, peer);
    buffered(rank, peer);
    synchronous(rank, peer);
    cancel(rank, peer);
    edge_cases(rank, peer);
  }
  return mt_finish();
}

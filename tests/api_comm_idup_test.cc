// MPIGPU_Comm_idup between forked ranks: it must not block (a rank that starts it early goes on
// to a send that a late rank receives before its own idup), idups on different communicators
// started in different orders on different ranks, idups outstanding across a blocking dup of
// another communicator, several idups on one parent at once, an intercommunicator's idup, and
// attributes copied. Every new communicator must carry traffic that no other one takes, which
// fails when two of them got the same context ids.
#include <gtest/gtest.h>

#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

int RankOf(MPIGPU_Comm c) {
  int r = -1;
  API_OK(MPIGPU_Comm_rank(c, &r));
  return r;
}
int SizeOf(MPIGPU_Comm c) {
  int n = 0;
  API_OK(MPIGPU_Comm_size(c, &n));
  return n;
}

// Each comm of `comms` carries one message right around its ring, tag 7, value salt+index,
// all sent before any is received; the receives take ANY_SOURCE and ANY_TAG. Two of them on the
// same context would cross: a receive would take the other's value.
void CheckApart(const std::vector<MPIGPU_Comm>& comms, int salt) {
  const size_t k = comms.size();
  std::vector<int> out(k), in(k, -1);
  std::vector<MPIGPU_Request> sends(k);
  for (size_t i = 0; i < k; ++i) {
    out[i] = salt + static_cast<int>(i);
    const int n = SizeOf(comms[i]), me = RankOf(comms[i]);
    API_OK(MPIGPU_Isend(&out[i], MPIGPU_BUF_HOST, 1, MPIGPU_INT, (me + 1) % n, 7, comms[i],
                        &sends[i]));
  }
  for (size_t i = 0; i < k; ++i) {
    const int n = SizeOf(comms[i]), me = RankOf(comms[i]);
    MPIGPU_Status st;
    API_OK(MPIGPU_Recv(&in[i], MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_ANY_SOURCE, MPIGPU_ANY_TAG,
                       comms[i], &st));
    RANK_CHECK(in[i] == salt + static_cast<int>(i));
    RANK_CHECK(st.MPIGPU_SOURCE == (me + n - 1) % n);
  }
  API_OK(MPIGPU_Waitall(static_cast<int>(k), sends.data(), MPIGPU_STATUSES_IGNORE));
}

// MPICH's comm_idup pattern: rank 0 receives from every other rank before it starts its idup;
// the others start theirs, then Ssend to rank 0, then wait. A blocking idup deadlocks here.
TEST(ApiCommIdupTest, DoesNotBlockWhileAPeerIsInARecv) {
  std::string r = RunApiJob(4, [](int rank) {
    MPIGPU_Comm nc = MPIGPU_COMM_NULL;
    MPIGPU_Request req;
    if (rank == 0) {
      for (int i = 1; i < 4; ++i) {
        int v = -1;
        API_OK(MPIGPU_Recv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, i, 0, kWorld, MPIGPU_STATUS_IGNORE));
        RANK_CHECK(v == 10 + i);
      }
      API_OK(MPIGPU_Comm_idup(kWorld, &nc, &req));
    } else {
      API_OK(MPIGPU_Comm_idup(kWorld, &nc, &req));
      int v = 10 + rank;
      API_OK(MPIGPU_Ssend(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 0, kWorld));
    }
    API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(req == MPIGPU_REQUEST_NULL);
    RANK_CHECK(nc != MPIGPU_COMM_NULL && RankOf(nc) == rank && SizeOf(nc) == 4);
    int sum = -1;
    API_OK(MPIGPU_Allreduce(&rank, MPIGPU_BUF_HOST, &sum, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                             MPIGPU_SUM, nc));
    RANK_CHECK(sum == 6);
    CheckApart({nc, kWorld}, 100);
    API_OK(MPIGPU_Comm_free(&nc));
  });
  EXPECT_EQ(r, "");
}

// Idups on two parents started A-then-B on even ranks and B-then-A on odd ones (each parent's
// own order is the same everywhere, as MPI asks), completed by one Waitall; and idups on comms
// of disjoint and overlapping members, so the agreements interleave in every way.
TEST(ApiCommIdupTest, OverlappingIdupsInDifferentOrders) {
  std::string r = RunApiJob(4, [](int rank) {
    MPIGPU_Comm a, b, pairs, cross;
    API_OK(MPIGPU_Comm_dup(kWorld, &a));
    API_OK(MPIGPU_Comm_dup(kWorld, &b));
    API_OK(MPIGPU_Comm_split(kWorld, rank / 2, rank, &pairs));  // {0,1} {2,3}
    API_OK(MPIGPU_Comm_split(kWorld, rank % 2, rank, &cross));  // {0,2} {1,3}
    for (int iter = 0; iter < 20; ++iter) {
      MPIGPU_Comm na, nb, np, nx;
      MPIGPU_Request req[4];
      if (rank % 2 == 0) {
        API_OK(MPIGPU_Comm_idup(a, &na, &req[0]));
        API_OK(MPIGPU_Comm_idup(pairs, &np, &req[2]));
        API_OK(MPIGPU_Comm_idup(b, &nb, &req[1]));
        API_OK(MPIGPU_Comm_idup(cross, &nx, &req[3]));
      } else {
        API_OK(MPIGPU_Comm_idup(cross, &nx, &req[3]));
        API_OK(MPIGPU_Comm_idup(b, &nb, &req[1]));
        API_OK(MPIGPU_Comm_idup(pairs, &np, &req[2]));
        API_OK(MPIGPU_Comm_idup(a, &na, &req[0]));
      }
      API_OK(MPIGPU_Waitall(4, req, MPIGPU_STATUSES_IGNORE));
      RANK_CHECK(SizeOf(na) == 4 && SizeOf(nb) == 4 && SizeOf(np) == 2 && SizeOf(nx) == 2);
      CheckApart({na, nb, np, nx, a, b, pairs, cross, kWorld}, 1000 * iter);
      for (MPIGPU_Comm* c : {&na, &nb, &np, &nx}) API_OK(MPIGPU_Comm_free(c));
    }
    for (MPIGPU_Comm* c : {&a, &b, &pairs, &cross}) API_OK(MPIGPU_Comm_free(c));
  });
  EXPECT_EQ(r, "");
}

// An idup on {0,1}/{2,3} still open while each rank makes a blocking dup of {0,2}/{1,3} (whose
// progress completes the idup's rounds), and several idups of one parent outstanding at once.
TEST(ApiCommIdupTest, OutstandingAcrossBlockingDupAndMany) {
  std::string r = RunApiJob(4, [](int rank) {
    MPIGPU_Comm pairs, cross;
    API_OK(MPIGPU_Comm_split(kWorld, rank / 2, rank, &pairs));
    API_OK(MPIGPU_Comm_split(kWorld, rank % 2, rank, &cross));
    MPIGPU_Comm np, dx;
    MPIGPU_Request req;
    API_OK(MPIGPU_Comm_idup(pairs, &np, &req));
    API_OK(MPIGPU_Comm_dup(cross, &dx));
    API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
    CheckApart({np, dx, pairs, cross}, 7);

    constexpr int kMany = 8;
    MPIGPU_Comm many[kMany];
    MPIGPU_Request reqs[kMany];
    for (int i = 0; i < kMany; ++i) API_OK(MPIGPU_Comm_idup(kWorld, &many[i], &reqs[i]));
    // Completed in reverse order of their start.
    for (int i = kMany - 1; i >= 0; --i) API_OK(MPIGPU_Wait(&reqs[i], MPIGPU_STATUS_IGNORE));
    CheckApart(std::vector<MPIGPU_Comm>(many, many + kMany), 50);
    for (MPIGPU_Comm& c : many) API_OK(MPIGPU_Comm_free(&c));
    for (MPIGPU_Comm* c : {&np, &dx, &pairs, &cross}) API_OK(MPIGPU_Comm_free(c));
  });
  EXPECT_EQ(r, "");
}

// An intercommunicator's idup, staggered as above across the two groups: the new one talks to
// the remote group and its local side works (Comm_size, a ring over Intercomm_merge).
TEST(ApiCommIdupTest, IntercommIdupStaggered) {
  std::string r = RunApiJob(4, [](int rank) {
    MPIGPU_Comm local, inter, ni, merged;
    API_OK(MPIGPU_Comm_split(kWorld, rank % 2, rank, &local));
    API_OK(MPIGPU_Intercomm_create(local, 0, kWorld, rank % 2 == 0 ? 1 : 0, 11, &inter));
    MPIGPU_Request req;
    const int lrank = RankOf(inter);
    if (lrank == 0) {
      // Waits for the other remote rank's Ssend before starting the idup.
      int v = -1;
      API_OK(MPIGPU_Recv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 0, inter, MPIGPU_STATUS_IGNORE));
      RANK_CHECK(v == 1);
      API_OK(MPIGPU_Comm_idup(inter, &ni, &req));
    } else {
      API_OK(MPIGPU_Comm_idup(inter, &ni, &req));
      API_OK(MPIGPU_Ssend(&lrank, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 0, inter));
    }
    API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
    int flag = 0, rsize = 0;
    API_OK(MPIGPU_Comm_test_inter(ni, &flag));
    API_OK(MPIGPU_Comm_remote_size(ni, &rsize));
    RANK_CHECK(flag == 1 && rsize == 2 && RankOf(ni) == lrank);
    // Each rank sends to the remote rank of its own index; ANY_SOURCE takes only ni's.
    int out = 500 + rank, in = -1, noise = -7;
    MPIGPU_Request s1, s2;
    API_OK(MPIGPU_Isend(&noise, MPIGPU_BUF_HOST, 1, MPIGPU_INT, lrank, 3, inter, &s1));
    API_OK(MPIGPU_Isend(&out, MPIGPU_BUF_HOST, 1, MPIGPU_INT, lrank, 3, ni, &s2));
    MPIGPU_Status st;
    API_OK(MPIGPU_Recv(&in, MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_ANY_SOURCE, MPIGPU_ANY_TAG, ni,
                       &st));
    RANK_CHECK(st.MPIGPU_SOURCE == lrank && in == 500 + (rank % 2 == 0 ? rank + 1 : rank - 1));
    API_OK(MPIGPU_Recv(&in, MPIGPU_BUF_HOST, 1, MPIGPU_INT, lrank, 3, inter, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(in == -7);
    API_OK(MPIGPU_Waitall(1, &s1, MPIGPU_STATUSES_IGNORE));
    API_OK(MPIGPU_Waitall(1, &s2, MPIGPU_STATUSES_IGNORE));
    API_OK(MPIGPU_Intercomm_merge(ni, rank % 2, &merged));
    RANK_CHECK(SizeOf(merged) == 4);
    CheckApart({merged, kWorld, local}, 900);
    for (MPIGPU_Comm* c : {&merged, &ni, &inter, &local}) API_OK(MPIGPU_Comm_free(c));
  });
  EXPECT_EQ(r, "");
}

int CopyPlusOne(MPIGPU_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = static_cast<char*>(in) + 1;
  *flag = 1;
  return MPIGPU_SUCCESS;
}

// Attributes go to the idup'ed communicator through their copy callbacks; bad arguments fail.
TEST(ApiCommIdupTest, AttributesAndErrors) {
  std::string r = RunApiJob(2, [](int) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    int key = -1;
    API_OK(MPIGPU_Comm_create_keyval(CopyPlusOne, MPIGPU_COMM_NULL_DELETE_FN, &key, nullptr));
    static char base[4];
    API_OK(MPIGPU_Comm_set_attr(kWorld, key, base));
    MPIGPU_Comm nc;
    MPIGPU_Request req;
    API_OK(MPIGPU_Comm_idup(kWorld, &nc, &req));
    API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
    void* v = nullptr;
    int flag = 0;
    API_OK(MPIGPU_Comm_get_attr(nc, key, &v, &flag));
    RANK_CHECK(flag == 1 && v == base + 1);
    MPIGPU_Errhandler h = -1;
    API_OK(MPIGPU_Comm_get_errhandler(nc, &h));
    RANK_CHECK(h == MPIGPU_ERRORS_RETURN);
    API_OK(MPIGPU_Comm_free(&nc));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Comm_idup(kWorld, &nc, nullptr));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Comm_idup(kWorld, nullptr, &req));
    RANK_CHECK(req == MPIGPU_REQUEST_NULL);
    API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Comm_idup(12345, &nc, &req));
    API_OK(MPIGPU_Comm_free_keyval(&key));
  });
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

// Communicator constructors of the public API between forked ranks: Comm_create (one group and
// disjoint groups), Comm_create_group (only the members call), split_type SHARED on one node
// and over two nodes, compare, names, idup, intercommunicators (create, point to point with
// remote ranks, dup, merge), 1000 create/free cycles; each new communicator carries traffic
// that must not match any other communicator's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

// Ring traffic on comm with tag 7: every rank sends (salt, its rank) right and receives from
// the left, while WORLD carries a message of the same tag the other way that must not be taken.
void CheckRing(MPIGPU_Comm comm, int salt) {
  int n = 0, me = -1;
  API_OK(MPIGPU_Comm_size(comm, &n));
  API_OK(MPIGPU_Comm_rank(comm, &me));
  int out[2] = {salt, me}, in[2] = {-1, -1};
  MPIGPU_Request rr;
  API_OK(MPIGPU_Irecv(in, MPIGPU_BUF_HOST, 2, MPIGPU_INT, MPIGPU_ANY_SOURCE, MPIGPU_ANY_TAG, comm,
                      &rr));
  API_OK(MPIGPU_Send(out, MPIGPU_BUF_HOST, 2, MPIGPU_INT, (me + 1) % n, 7, comm));
  MPIGPU_Status st;
  API_OK(MPIGPU_Wait(&rr, &st));
  RANK_CHECK(in[0] == salt && in[1] == (me + n - 1) % n);
  RANK_CHECK(st.MPIGPU_SOURCE == (me + n - 1) % n && st.MPIGPU_TAG == 7);
}

TEST(ApiCommCtorTest, CreateAndCreateGroup) {
  std::string r = RunApiJob(6, [](int rank) {
    MPIGPU_Group world, evens, odds, low;
    API_OK(MPIGPU_Comm_group(kWorld, &world));
    int r1[][3] = {{4, 0, -2}};  // 4, 2, 0: reversed order
    int r2[][3] = {{1, 5, 2}};
    API_OK(MPIGPU_Group_range_incl(world, 1, r1, &evens));
    API_OK(MPIGPU_Group_range_incl(world, 1, r2, &odds));
    // Comm_create with one group: members get a comm in the group's order, others COMM_NULL.
    MPIGPU_Comm ce;
    API_OK(MPIGPU_Comm_create(kWorld, evens, &ce));
    if (rank % 2 == 0) {
      int er = -1;
      API_OK(MPIGPU_Comm_rank(ce, &er));
      RANK_CHECK(er == (4 - rank) / 2);
      CheckRing(ce, 100);
    } else {
      RANK_CHECK(ce == MPIGPU_COMM_NULL);
    }
    // Disjoint groups at once (each rank passes its own): two comms on the same call.
    MPIGPU_Comm half;
    API_OK(MPIGPU_Comm_create(kWorld, rank % 2 == 0 ? evens : odds, &half));
    RANK_CHECK(half != MPIGPU_COMM_NULL);
    CheckRing(half, 200 + rank % 2);
    // create_group: only ranks 0..2 call, with WORLD traffic of ranks 3..5 meanwhile.
    int r3[][3] = {{0, 2, 1}};
    API_OK(MPIGPU_Group_range_incl(world, 1, r3, &low));
    if (rank < 3) {
      MPIGPU_Comm cg;
      API_OK(MPIGPU_Comm_create_group(kWorld, low, 42, &cg));
      int n = 0;
      API_OK(MPIGPU_Comm_size(cg, &n));
      RANK_CHECK(n == 3);
      CheckRing(cg, 300);
      API_OK(MPIGPU_Comm_free(&cg));
      RANK_CHECK(cg == MPIGPU_COMM_NULL);
    } else {
      // Ranks 3..5 talk on WORLD meanwhile, with the same tag as create_group's.
      int v = rank, got = -1;
      API_OK(MPIGPU_Sendrecv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 3 + (rank - 2) % 3, 42, &got,
                             MPIGPU_BUF_HOST, 1, MPIGPU_INT, 3 + (rank - 1) % 3, 42, kWorld,
                             MPIGPU_STATUS_IGNORE));
      RANK_CHECK(got == 3 + (rank - 1) % 3);
    }
    API_OK(MPIGPU_Barrier(kWorld));
    // Errors: a group with a rank outside comm; create_group from a non-member.
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    if (rank >= 3) {
      MPIGPU_Comm bad;
      API_FAILS(MPIGPU_ERR_GROUP, MPIGPU_Comm_create_group(kWorld, low, 1, &bad));
    }
    if (ce != MPIGPU_COMM_NULL) API_OK(MPIGPU_Comm_free(&ce));
    API_OK(MPIGPU_Comm_free(&half));
    for (MPIGPU_Group* g : {&world, &evens, &odds, &low}) API_OK(MPIGPU_Group_free(g));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiCommCtorTest, CompareNamesIdupTestInter) {
  std::string r = RunApiJob(4, [](int rank) {
    MPIGPU_Comm dup, rev, half;
    API_OK(MPIGPU_Comm_dup(kWorld, &dup));
    API_OK(MPIGPU_Comm_split(kWorld, 0, -rank, &rev));
    API_OK(MPIGPU_Comm_split(kWorld, rank / 2, rank, &half));
    int res = -1;
    API_OK(MPIGPU_Comm_compare(kWorld, kWorld, &res));
    RANK_CHECK(res == MPIGPU_IDENT);
    API_OK(MPIGPU_Comm_compare(kWorld, dup, &res));
    RANK_CHECK(res == MPIGPU_CONGRUENT);
    API_OK(MPIGPU_Comm_compare(kWorld, rev, &res));
    RANK_CHECK(res == MPIGPU_SIMILAR);
    API_OK(MPIGPU_Comm_compare(kWorld, half, &res));
    RANK_CHECK(res == MPIGPU_UNEQUAL);
    API_OK(MPIGPU_Comm_compare(MPIGPU_COMM_SELF, kWorld, &res));
    RANK_CHECK(res == MPIGPU_UNEQUAL);

    char name[MPIGPU_MAX_OBJECT_NAME];
    int len = -1;
    API_OK(MPIGPU_Comm_get_name(kWorld, name, &len));
    RANK_CHECK(std::strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
    API_OK(MPIGPU_Comm_get_name(dup, name, &len));
    RANK_CHECK(len == 0 && name[0] == '\0');
    API_OK(MPIGPU_Comm_set_name(dup, "a duplicate"));
    API_OK(MPIGPU_Comm_get_name(dup, name, &len));
    RANK_CHECK(std::strcmp(name, "a duplicate") == 0 && len == 11);
    std::string longname(300, 'x');
    API_OK(MPIGPU_Comm_set_name(dup, longname.c_str()));
    API_OK(MPIGPU_Comm_get_name(dup, name, &len));
    RANK_CHECK(len == MPIGPU_MAX_OBJECT_NAME - 1 && name[len] == '\0');

    MPIGPU_Comm idup;
    MPIGPU_Request req;
    API_OK(MPIGPU_Comm_idup(rev, &idup, &req));
    API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
    API_OK(MPIGPU_Comm_compare(rev, idup, &res));
    RANK_CHECK(res == MPIGPU_CONGRUENT);
    CheckRing(idup, 5);
    int inter = -1;
    API_OK(MPIGPU_Comm_test_inter(idup, &inter));
    RANK_CHECK(inter == 0);
    for (MPIGPU_Comm* c : {&dup, &rev, &half, &idup}) API_OK(MPIGPU_Comm_free(c));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiCommCtorTest, ThousandCreateFreeCycles) {
  std::string r = RunApiJob(3, [](int rank) {
    MPIGPU_Group world;
    API_OK(MPIGPU_Comm_group(kWorld, &world));
    for (int k = 0; k < 1000; ++k) {
      MPIGPU_Comm c;
      switch (k % 3) {
        case 0: API_OK(MPIGPU_Comm_dup(kWorld, &c)); break;
        case 1: API_OK(MPIGPU_Comm_split(kWorld, 0, rank, &c)); break;
        default: API_OK(MPIGPU_Comm_create(kWorld, world, &c)); break;
      }
      if (k % 100 == 0) CheckRing(c, k);
      API_OK(MPIGPU_Comm_free(&c));
    }
    CheckRing(kWorld, -1);
    API_OK(MPIGPU_Group_free(&world));
  });
  EXPECT_EQ(r, "");
}

void SplitTypeShared(int expect_local) {
  std::string r = RunApiJob(4, [expect_local](int rank) {
    MPIGPU_Comm node;
    API_OK(MPIGPU_Comm_split_type(kWorld, MPIGPU_COMM_TYPE_SHARED, -rank, MPIGPU_INFO_NULL, &node));
    int n = 0, me = -1;
    API_OK(MPIGPU_Comm_size(node, &n));
    API_OK(MPIGPU_Comm_rank(node, &me));
    RANK_CHECK(n == expect_local);
    // Keys reverse the order within a node; nodes hold consecutive world ranks (multiproc.h).
    RANK_CHECK(me == expect_local - 1 - rank % expect_local);
    CheckRing(node, 9);
    MPIGPU_Comm none;
    API_OK(MPIGPU_Comm_split_type(kWorld, MPIGPU_UNDEFINED, 0, MPIGPU_INFO_NULL, &none));
    RANK_CHECK(none == MPIGPU_COMM_NULL);
    API_OK(MPIGPU_Comm_split_type(kWorld, MPIGPU_COMM_TYPE_HW_GUIDED, 0, MPIGPU_INFO_NULL, &none));
    RANK_CHECK(none == MPIGPU_COMM_NULL);
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Comm_split_type(kWorld, 77, 0, MPIGPU_INFO_NULL, &none));
    API_OK(MPIGPU_Comm_free(&node));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiCommCtorTest, SplitTypeSharedOneNode) { SplitTypeShared(4); }

TEST(ApiCommCtorTest, SplitTypeSharedTwoNodes) {
  // Two nodes of this machine joined by a boot server over TCP (multiproc.h).
  setenv("MULTIPROC_NODES", "2", 1);
  setenv("MPIGPU_NETMOD", "tcp", 1);
  SplitTypeShared(2);
  unsetenv("MULTIPROC_NODES");
  unsetenv("MPIGPU_NETMOD");
}

TEST(ApiCommCtorTest, Intercommunicators) {
  std::string r = RunApiJob(5, [](int rank) {
    // Groups: world ranks {0, 2, 4} and {1, 3}; leaders are their rank 0 (world 0 and 1).
    MPIGPU_Comm local;
    API_OK(MPIGPU_Comm_split(kWorld, rank % 2, rank, &local));
    MPIGPU_Comm inter;
    API_OK(MPIGPU_Intercomm_create(local, 0, kWorld, rank % 2 == 0 ? 1 : 0, 11, &inter));
    int flag = 0, lsize = 0, rsize = 0, me = -1;
    API_OK(MPIGPU_Comm_test_inter(inter, &flag));
    API_OK(MPIGPU_Comm_size(inter, &lsize));
    API_OK(MPIGPU_Comm_remote_size(inter, &rsize));
    API_OK(MPIGPU_Comm_rank(inter, &me));
    RANK_CHECK(flag == 1 && lsize == (rank % 2 ? 2 : 3) && rsize == (rank % 2 ? 3 : 2));
    RANK_CHECK(me == rank / 2);
    MPIGPU_Group rg;
    API_OK(MPIGPU_Comm_remote_group(inter, &rg));
    int rgs = 0;
    API_OK(MPIGPU_Group_size(rg, &rgs));
    RANK_CHECK(rgs == rsize);
    API_OK(MPIGPU_Group_free(&rg));
    // Point to point names remote ranks: remote rank k is world rank 2k + (1 - rank % 2).
    // Each even rank k sends to odd remote rank k % 2; odd ranks receive from every even rank
    // that targets them.
    for (int pass = 0; pass < 2; ++pass) {
      MPIGPU_Comm c = inter;
      MPIGPU_Comm dup = MPIGPU_COMM_NULL;
      if (pass == 1) {
        API_OK(MPIGPU_Comm_dup(inter, &dup));
        c = dup;
      }
      if (rank % 2 == 0) {
        const int v = 1000 * pass + rank;
        API_OK(MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, me % 2, 3, c));
      } else {
        const int expect = me == 0 ? 2 : 1;  // remote ranks 0, 2 -> 0; 1 -> 1
        for (int k = 0; k < expect; ++k) {
          int v = -1;
          MPIGPU_Status st;
          API_OK(MPIGPU_Recv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_ANY_SOURCE, 3, c, &st));
          RANK_CHECK(v == 1000 * pass + 2 * st.MPIGPU_SOURCE);
          RANK_CHECK(st.MPIGPU_SOURCE % 2 == me);
        }
      }
      if (dup != MPIGPU_COMM_NULL) API_OK(MPIGPU_Comm_free(&dup));
    }
    // Merge: the odd group says high = 0, so it comes first: world 1, 3, 0, 2, 4.
    MPIGPU_Comm merged;
    API_OK(MPIGPU_Intercomm_merge(inter, rank % 2 == 0, &merged));
    int mr = -1, ms = 0;
    API_OK(MPIGPU_Comm_rank(merged, &mr));
    API_OK(MPIGPU_Comm_size(merged, &ms));
    const int order[] = {1, 3, 0, 2, 4};
    RANK_CHECK(ms == 5 && order[mr] == rank);
    CheckRing(merged, 77);
    // Split of the intercommunicator by local rank parity: color 0 joins even {0, 4} with odd
    // {1}, color 1 even {2} with odd {3}. Each side's local rank 0 swaps with remote rank 0.
    MPIGPU_Comm sp;
    API_OK(MPIGPU_Comm_split(inter, me % 2, me, &sp));
    int sl = 0, sr = 0, sme = -1;
    API_OK(MPIGPU_Comm_size(sp, &sl));
    API_OK(MPIGPU_Comm_remote_size(sp, &sr));
    API_OK(MPIGPU_Comm_rank(sp, &sme));
    const bool color0 = me % 2 == 0;
    RANK_CHECK(sl == (rank % 2 == 0 ? (color0 ? 2 : 1) : 1));
    RANK_CHECK(sr == (rank % 2 == 0 ? 1 : (color0 ? 2 : 1)));
    if (sme == 0) {
      int v = rank, got = -1;
      API_OK(MPIGPU_Sendrecv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 4, &got, MPIGPU_BUF_HOST, 1,
                             MPIGPU_INT, 0, 4, sp, MPIGPU_STATUS_IGNORE));
      // Partners: color 0 world 0 <-> 1, color 1 world 2 <-> 3.
      RANK_CHECK(got == (rank % 2 == 0 ? rank + 1 : rank - 1));
    }
    API_OK(MPIGPU_Comm_free(&sp));
    // Comm_create on the intercommunicator: each side drops its local rank 0.
    MPIGPU_Group lg, rest;
    API_OK(MPIGPU_Comm_group(inter, &lg));
    const int zero = 0;
    API_OK(MPIGPU_Group_excl(lg, 1, &zero, &rest));
    MPIGPU_Comm cut;
    API_OK(MPIGPU_Comm_create(inter, rest, &cut));
    if (me == 0) {
      RANK_CHECK(cut == MPIGPU_COMM_NULL);
    } else {
      API_OK(MPIGPU_Comm_size(cut, &sl));
      API_OK(MPIGPU_Comm_remote_size(cut, &sr));
      RANK_CHECK(sl == (rank % 2 == 0 ? 2 : 1) && sr == (rank % 2 == 0 ? 1 : 2));
      API_OK(MPIGPU_Comm_free(&cut));
    }
    API_OK(MPIGPU_Group_free(&lg));
    API_OK(MPIGPU_Group_free(&rest));
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Comm_remote_size(kWorld, &rsize));
    for (MPIGPU_Comm* c : {&merged, &inter, &local}) API_OK(MPIGPU_Comm_free(c));
  });
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

// Neighborhood collectives of the public API between forked ranks: Cartesian rings where both
// neighbours are one rank (2 ranks) or the rank itself (1 rank), a non-periodic grid (PROC_NULL
// edges leave their blocks alone), graph and distributed-graph topologies, every form blocking
// and nonblocking, and the errors (no topology).
#include <gtest/gtest.h>

#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;
constexpr MPIGPU_Buftype kHost = MPIGPU_BUF_HOST;

// MPICH's ring_neighbor_alltoall: a periodic ring of n ranks; each sends -1 to its left and +1
// to its right neighbour, and must get +1 from its left (what the left one sent right) and -1
// from its right, even when both neighbours are the same rank or itself.
void RingAlltoall(int n) {
  int dims[1] = {n}, periods[1] = {1};
  MPIGPU_Comm ring;
  API_OK(MPIGPU_Cart_create(kWorld, 1, dims, periods, 0, &ring));
  int sbuf[2] = {-1, 1}, rbuf[2] = {0, 0};
  API_OK(MPIGPU_Neighbor_alltoall(sbuf, kHost, 1, MPIGPU_INT, rbuf, kHost, 1, MPIGPU_INT, ring));
  RANK_CHECK(rbuf[0] == 1 && rbuf[1] == -1);
  rbuf[0] = rbuf[1] = 0;
  MPIGPU_Request req;
  API_OK(MPIGPU_Ineighbor_alltoall(sbuf, kHost, 1, MPIGPU_INT, rbuf, kHost, 1, MPIGPU_INT, ring,
                                   &req));
  API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
  RANK_CHECK(rbuf[0] == 1 && rbuf[1] == -1);
  API_OK(MPIGPU_Comm_free(&ring));
}

TEST(ApiCollNeighborTest, RingOfTwoAndOfOne) {
  EXPECT_EQ(RunApiJob(2, [](int) { RingAlltoall(2); }), "");
  EXPECT_EQ(RunApiJob(1, [](int) { RingAlltoall(1); }), "");
  EXPECT_EQ(RunApiJob(3, [](int) { RingAlltoall(3); }), "");
}

// A 2x3 grid, periodic in the second dimension only: in dimension 0 each rank has one
// PROC_NULL neighbour, whose receive block must stay untouched.
TEST(ApiCollNeighborTest, CartesianGridEveryForm) {
  std::string r = RunApiJob(6, [](int rank) {
    int dims[2] = {2, 3}, periods[2] = {0, 1};
    MPIGPU_Comm grid;
    API_OK(MPIGPU_Cart_create(kWorld, 2, dims, periods, 0, &grid));
    int me = -1;
    API_OK(MPIGPU_Comm_rank(grid, &me));
    RANK_CHECK(me == rank);
    // Expected neighbours, by Cart_shift.
    int nb[4];
    API_OK(MPIGPU_Cart_shift(grid, 0, 1, &nb[0], &nb[1]));
    API_OK(MPIGPU_Cart_shift(grid, 1, 1, &nb[2], &nb[3]));
    // Allgather: block k is neighbour k's rank (untouched -7 for PROC_NULL).
    int all[4] = {-7, -7, -7, -7};
    API_OK(MPIGPU_Neighbor_allgather(&me, kHost, 1, MPIGPU_INT, all, kHost, 1, MPIGPU_INT, grid));
    for (int k = 0; k < 4; ++k) RANK_CHECK(all[k] == (nb[k] == MPIGPU_PROC_NULL ? -7 : nb[k]));
    // Alltoall: block k sent to neighbour k is 100*me + k; from neighbour k, which reached us
    // from the opposite side, comes 100*nb[k] + (k ^ 1).
    int out[4], in[4];
    for (int k = 0; k < 4; ++k) {
      out[k] = 100 * me + k;
      in[k] = -7;
    }
    MPIGPU_Request req;
    API_OK(MPIGPU_Ineighbor_alltoall(out, kHost, 1, MPIGPU_INT, in, kHost, 1, MPIGPU_INT, grid,
                                     &req));
    API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
    for (int k = 0; k < 4; ++k)
      RANK_CHECK(in[k] == (nb[k] == MPIGPU_PROC_NULL ? -7 : 100 * nb[k] + (k ^ 1)));
    // Allgatherv into reversed slots with 2-int gaps; the gaps stay.
    int v[2] = {me, -me}, got[16];
    for (int& x : got) x = -7;
    const int counts[4] = {2, 2, 2, 2}, displs[4] = {12, 8, 4, 0};
    API_OK(MPIGPU_Neighbor_allgatherv(v, kHost, 2, MPIGPU_INT, got, kHost, counts, displs,
                                      MPIGPU_INT, grid));
    for (int k = 0; k < 4; ++k) {
      const bool null = nb[k] == MPIGPU_PROC_NULL;
      RANK_CHECK(got[displs[k]] == (null ? -7 : nb[k]) && got[displs[k] + 1] == (null ? -7 : -nb[k]));
      RANK_CHECK(got[displs[k] + 2] == -7 && got[displs[k] + 3] == -7);
    }
    // Alltoallv with k+1 ints to neighbour k; Alltoallw the same in bytes.
    int sv[10], rv[10];
    const int vc[4] = {1, 2, 3, 4}, vd[4] = {0, 1, 3, 6};
    for (int k = 0; k < 4; ++k)
      for (int j = 0; j < vc[k]; ++j) sv[vd[k] + j] = 1000 * me + 10 * k + j;
    for (int w = 0; w < 2; ++w) {
      for (int& x : rv) x = -7;
      // From neighbour k comes what it sent to its neighbour k ^ 1: k ^ 1 + 1 ints. Only the
      // count of the matching direction fits, so the receive counts mirror the sends'.
      const int rc[4] = {2, 1, 4, 3}, rd[4] = {0, 2, 3, 7};
      if (w == 0) {
        API_OK(MPIGPU_Neighbor_alltoallv(sv, kHost, vc, vd, MPIGPU_INT, rv, kHost, rc, rd,
                                         MPIGPU_INT, grid));
      } else {
        MPIGPU_Aint sb[4], rb[4];
        MPIGPU_Datatype st[4], rt[4];
        for (int k = 0; k < 4; ++k) {
          sb[k] = vd[k] * sizeof(int);
          rb[k] = rd[k] * sizeof(int);
          st[k] = rt[k] = MPIGPU_INT;
        }
        API_OK(MPIGPU_Ineighbor_alltoallw(sv, kHost, vc, sb, st, rv, kHost, rc, rb, rt, grid,
                                          &req));
        API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
      }
      for (int k = 0; k < 4; ++k)
        for (int j = 0; j < rc[k]; ++j)
          RANK_CHECK(rv[rd[k] + j] ==
                     (nb[k] == MPIGPU_PROC_NULL ? -7 : 1000 * nb[k] + 10 * (k ^ 1) + j));
    }
    API_OK(MPIGPU_Comm_free(&grid));
  });
  EXPECT_EQ(r, "");
}

// A graph (a star: 0 joined to 1..3) and a directed distributed graph (a ring i -> i+1, with a
// doubled edge 0 -> 1, which matches in list order).
TEST(ApiCollNeighborTest, GraphAndDistGraph) {
  std::string r = RunApiJob(4, [](int rank) {
    const int index[4] = {3, 4, 5, 6}, edges[6] = {1, 2, 3, 0, 0, 0};
    MPIGPU_Comm star;
    API_OK(MPIGPU_Graph_create(kWorld, 4, index, edges, 0, &star));
    int out[3], in[3] = {-7, -7, -7};
    for (int k = 0; k < 3; ++k) out[k] = 10 * rank + k;
    const int deg = rank == 0 ? 3 : 1;
    API_OK(MPIGPU_Neighbor_alltoall(out, kHost, 1, MPIGPU_INT, in, kHost, 1, MPIGPU_INT, star));
    if (rank == 0) {
      for (int k = 0; k < 3; ++k) RANK_CHECK(in[k] == 10 * (k + 1));  // their only block, 0
    } else {
      RANK_CHECK(in[0] == rank - 1 && in[1] == -7);  // block rank-1 of rank 0
    }
    int all[3] = {-7, -7, -7};
    API_OK(MPIGPU_Neighbor_allgather(&rank, kHost, 1, MPIGPU_INT, all, kHost, 1, MPIGPU_INT, star));
    for (int k = 0; k < deg; ++k) RANK_CHECK(all[k] == (rank == 0 ? k + 1 : 0));

    // Ring i -> i+1; rank 0 also sends to 1 a second time; rank 1 receives from 0 twice.
    std::vector<int> srcs = {(rank + 3) % 4}, dsts = {(rank + 1) % 4};
    if (rank == 0) dsts.push_back(1);
    if (rank == 1) srcs.push_back(0);
    MPIGPU_Comm dg;
    API_OK(MPIGPU_Dist_graph_create_adjacent(kWorld, static_cast<int>(srcs.size()), srcs.data(),
                                             MPIGPU_UNWEIGHTED, static_cast<int>(dsts.size()),
                                             dsts.data(), MPIGPU_UNWEIGHTED, MPIGPU_INFO_NULL, 0,
                                             &dg));
    int o2[2] = {100 * rank, 100 * rank + 1}, i2[2] = {-7, -7};
    MPIGPU_Request req;
    API_OK(MPIGPU_Ineighbor_alltoall(o2, kHost, 1, MPIGPU_INT, i2, kHost, 1, MPIGPU_INT, dg, &req));
    API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(i2[0] == 100 * ((rank + 3) % 4));
    RANK_CHECK(i2[1] == (rank == 1 ? 1 : -7));
    API_OK(MPIGPU_Comm_free(&dg));
    API_OK(MPIGPU_Comm_free(&star));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiCollNeighborTest, Errors) {
  std::string r = RunApiJob(2, [](int) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    int a = 0, b = 0;
    API_FAILS(MPIGPU_ERR_TOPOLOGY, MPIGPU_Neighbor_allgather(&a, kHost, 1, MPIGPU_INT, &b, kHost,
                                                             1, MPIGPU_INT, kWorld));
    MPIGPU_Request req;
    API_FAILS(MPIGPU_ERR_TOPOLOGY, MPIGPU_Ineighbor_alltoall(&a, kHost, 1, MPIGPU_INT, &b, kHost,
                                                             1, MPIGPU_INT, kWorld, &req));
    RANK_CHECK(req == MPIGPU_REQUEST_NULL);
    int dims[1] = {2}, periods[1] = {0};
    MPIGPU_Comm line;
    API_OK(MPIGPU_Cart_create(kWorld, 1, dims, periods, 0, &line));
    API_OK(MPIGPU_Comm_set_errhandler(line, MPIGPU_ERRORS_RETURN));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Neighbor_alltoallv(&a, kHost, nullptr, nullptr, MPIGPU_INT,
                                                        &b, kHost, nullptr, nullptr, MPIGPU_INT,
                                                        line));
    API_FAILS(MPIGPU_ERR_COUNT, MPIGPU_Neighbor_alltoall(&a, kHost, -1, MPIGPU_INT, &b, kHost, 1,
                                                         MPIGPU_INT, line));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Ineighbor_allgather(&a, kHost, 1, MPIGPU_INT, &b, kHost, 1,
                                                         MPIGPU_INT, line, nullptr));
    API_OK(MPIGPU_Comm_free(&line));
  });
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

// Topologies of the public API in forked ranks: Dims_create against a table (with fixed
// dimensions and errors), Cartesian grids (create, get, rank/coords round trips, shift on
// periodic and non-periodic dimensions, sub-grids carrying traffic, map), graphs and
// distributed graphs, Topo_test, dup keeping the topology.
#include <gtest/gtest.h>

#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

TEST(ApiTopoTest, DimsCreateTable) {
  struct Case {
    int nnodes;
    std::vector<int> in, out;
  };
  const Case cases[] = {
      {6, {0, 0}, {3, 2}},          {16, {0, 0, 0}, {4, 2, 2}},  {12, {0, 0, 0}, {3, 2, 2}},
      {24, {0, 0}, {6, 4}},         {7, {0, 0}, {7, 1}},         {1, {0, 0, 0}, {1, 1, 1}},
      {36, {0, 0}, {6, 6}},         {64, {0, 0, 0}, {4, 4, 4}},  {12, {0, 3, 0}, {2, 3, 2}},
      {60, {0, 0, 0}, {5, 4, 3}},   {8, {2, 0, 0}, {2, 2, 2}},   {9, {0, 0, 0, 0}, {3, 3, 1, 1}},
      {1 << 20, {0, 0}, {1024, 1024}}, {2147483647, {0, 0}, {2147483647, 1}},
      {30, {5, 0, 3}, {5, 2, 3}},   {4, {}, {}},
  };
  for (const Case& c : cases) {
    std::vector<int> dims = c.in;
    const int nd = static_cast<int>(dims.size());
    if (nd == 0) continue;
    ASSERT_EQ(MPIGPU_Dims_create(c.nnodes, nd, dims.data()), MPIGPU_SUCCESS) << c.nnodes;
    EXPECT_EQ(dims, c.out) << c.nnodes;
  }
  // Errors (returned: the test process never set a handler, so set WORLD's first).
  ASSERT_EQ(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN), MPIGPU_SUCCESS);
  std::vector<int> d = {4, 0};
  EXPECT_EQ(MPIGPU_Dims_create(6, 2, d.data()), MPIGPU_ERR_DIMS);  // 6 % 4 != 0
  d = {2, 3};
  EXPECT_EQ(MPIGPU_Dims_create(7, 2, d.data()), MPIGPU_ERR_DIMS);
  d = {-1, 0};
  EXPECT_EQ(MPIGPU_Dims_create(4, 2, d.data()), MPIGPU_ERR_DIMS);
  EXPECT_EQ(MPIGPU_Dims_create(4, 0, nullptr), MPIGPU_ERR_DIMS);  // nothing to hold 4
  EXPECT_EQ(MPIGPU_Dims_create(1, 0, nullptr), MPIGPU_SUCCESS);
}

TEST(ApiTopoTest, CartesianGrid) {
  std::string r = RunApiJob(7, [](int rank) {
    // A 3 x 2 grid, periodic in the first dimension only; rank 6 is left out.
    const int dims[] = {3, 2}, periods[] = {1, 0};
    MPIGPU_Comm cart;
    API_OK(MPIGPU_Cart_create(kWorld, 2, dims, periods, 1, &cart));
    int mapped = -1;
    API_OK(MPIGPU_Cart_map(kWorld, 2, dims, periods, &mapped));
    RANK_CHECK(mapped == (rank < 6 ? rank : MPIGPU_UNDEFINED));
    if (rank == 6) {
      RANK_CHECK(cart == MPIGPU_COMM_NULL);
      return;
    }
    int status = -1, nd = -1;
    API_OK(MPIGPU_Topo_test(cart, &status));
    API_OK(MPIGPU_Cartdim_get(cart, &nd));
    RANK_CHECK(status == MPIGPU_CART && nd == 2);
    int gd[2], gp[2], gc[2];
    API_OK(MPIGPU_Cart_get(cart, 2, gd, gp, gc));
    RANK_CHECK(gd[0] == 3 && gd[1] == 2 && gp[0] == 1 && gp[1] == 0);
    RANK_CHECK(gc[0] == rank / 2 && gc[1] == rank % 2);  // row-major
    for (int k = 0; k < 6; ++k) {
      int co[2], back = -1;
      API_OK(MPIGPU_Cart_coords(cart, k, 2, co));
      API_OK(MPIGPU_Cart_rank(cart, co, &back));
      RANK_CHECK(back == k);
    }
    int wrap[] = {-1, 1}, wr = -1;  // periodic: row -1 is row 2
    API_OK(MPIGPU_Cart_rank(cart, wrap, &wr));
    RANK_CHECK(wr == 5);
    // Shifts: dimension 0 wraps, dimension 1 ends in PROC_NULL.
    int src = -9, dst = -9;
    API_OK(MPIGPU_Cart_shift(cart, 0, 1, &src, &dst));
    RANK_CHECK(src == ((gc[0] + 2) % 3) * 2 + gc[1] && dst == ((gc[0] + 1) % 3) * 2 + gc[1]);
    API_OK(MPIGPU_Cart_shift(cart, 0, -4, &src, &dst));  // -4 = -1 mod 3
    RANK_CHECK(dst == ((gc[0] + 2) % 3) * 2 + gc[1]);
    API_OK(MPIGPU_Cart_shift(cart, 1, 1, &src, &dst));
    RANK_CHECK(src == (gc[1] == 1 ? rank - 1 : MPIGPU_PROC_NULL));
    RANK_CHECK(dst == (gc[1] == 0 ? rank + 1 : MPIGPU_PROC_NULL));
    // A halo exchange along dimension 1 with PROC_NULL ends.
    int mine = rank, got = -1;
    API_OK(MPIGPU_Sendrecv(&mine, MPIGPU_BUF_HOST, 1, MPIGPU_INT, dst, 0, &got, MPIGPU_BUF_HOST,
                           1, MPIGPU_INT, src, 0, cart, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(got == (src == MPIGPU_PROC_NULL ? -1 : rank - 1));
    // Sub-grids: the columns (keep dimension 0) are 3-rank periodic rings.
    const int keep0[] = {1, 0};
    MPIGPU_Comm col;
    API_OK(MPIGPU_Cart_sub(cart, keep0, &col));
    int cs = 0, cr = -1, cnd = -1;
    API_OK(MPIGPU_Comm_size(col, &cs));
    API_OK(MPIGPU_Comm_rank(col, &cr));
    API_OK(MPIGPU_Cartdim_get(col, &cnd));
    RANK_CHECK(cs == 3 && cr == gc[0] && cnd == 1);
    API_OK(MPIGPU_Cart_shift(col, 0, 1, &src, &dst));
    int sum = 0;
    API_OK(MPIGPU_Allreduce(&mine, MPIGPU_BUF_HOST, &sum, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                            MPIGPU_SUM, col));
    RANK_CHECK(sum == 6 + 3 * gc[1]);  // column c: ranks c, c + 2, c + 4
    const int keep_none[] = {0, 0};
    MPIGPU_Comm point;
    API_OK(MPIGPU_Cart_sub(cart, keep_none, &point));
    if (rank == 0) {  // keeping no dimension: rank 0 alone, a 0-dimensional grid
      int cmp = -1;
      API_OK(MPIGPU_Comm_size(point, &cs));
      API_OK(MPIGPU_Cartdim_get(point, &cnd));
      API_OK(MPIGPU_Comm_compare(MPIGPU_COMM_SELF, point, &cmp));
      RANK_CHECK(cs == 1 && cnd == 0 && cmp == MPIGPU_CONGRUENT);
    } else {
      RANK_CHECK(point == MPIGPU_COMM_NULL);
    }
    // Dup keeps the topology.
    MPIGPU_Comm d;
    API_OK(MPIGPU_Comm_dup(cart, &d));
    API_OK(MPIGPU_Topo_test(d, &status));
    RANK_CHECK(status == MPIGPU_CART);
    // Errors.
    API_OK(MPIGPU_Comm_set_errhandler(cart, MPIGPU_ERRORS_RETURN));
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    int out_of[] = {0, 2};
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Cart_rank(cart, out_of, &wr));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Cart_shift(cart, 2, 1, &src, &dst));
    API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Cart_coords(cart, 6, 2, gc));
    API_FAILS(MPIGPU_ERR_TOPOLOGY, MPIGPU_Cartdim_get(kWorld, &nd));
    API_FAILS(MPIGPU_ERR_TOPOLOGY, MPIGPU_Graphdims_get(cart, &nd, &nd));
    API_OK(MPIGPU_Topo_test(kWorld, &status));
    RANK_CHECK(status == MPIGPU_UNDEFINED);
    for (MPIGPU_Comm* c : {&cart, &col, &d}) API_OK(MPIGPU_Comm_free(c));
    if (point != MPIGPU_COMM_NULL) API_OK(MPIGPU_Comm_free(&point));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiTopoTest, CartCreateRefusesTooLargeGrid) {
  std::string r = RunApiJob(2, [](int) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    const int dims[] = {3}, periods[] = {0}, zero[] = {0};
    MPIGPU_Comm c;
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Cart_create(kWorld, 1, dims, periods, 0, &c));
    API_FAILS(MPIGPU_ERR_DIMS, MPIGPU_Cart_create(kWorld, 1, zero, periods, 0, &c));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiTopoTest, GraphsAndDistributedGraphs) {
  std::string r = RunApiJob(4, [](int rank) {
    // A ring of 3 nodes (rank 3 left out): node i's neighbours are i-1 and i+1.
    const int index[] = {2, 4, 6}, edges[] = {1, 2, 0, 2, 0, 1};
    MPIGPU_Comm g;
    API_OK(MPIGPU_Graph_create(kWorld, 3, index, edges, 0, &g));
    if (rank == 3) {
      RANK_CHECK(g == MPIGPU_COMM_NULL);
    } else {
      int status = -1, nn = 0, ne = 0, cnt = 0, nb[2];
      API_OK(MPIGPU_Topo_test(g, &status));
      API_OK(MPIGPU_Graphdims_get(g, &nn, &ne));
      RANK_CHECK(status == MPIGPU_GRAPH && nn == 3 && ne == 6);
      API_OK(MPIGPU_Graph_neighbors_count(g, rank, &cnt));
      API_OK(MPIGPU_Graph_neighbors(g, rank, 2, nb));
      RANK_CHECK(cnt == 2 && nb[0] == edges[2 * rank] && nb[1] == edges[2 * rank + 1]);
      int gi[3], ge[6];
      API_OK(MPIGPU_Graph_get(g, 3, 6, gi, ge));
      for (int i = 0; i < 6; ++i) RANK_CHECK(ge[i] == edges[i] && (i >= 3 || gi[i] == index[i]));
      // Neighbours exchange their ranks.
      int got[2] = {-1, -1};
      MPIGPU_Request rq[4];
      for (int k = 0; k < 2; ++k) {
        API_OK(MPIGPU_Irecv(&got[k], MPIGPU_BUF_HOST, 1, MPIGPU_INT, nb[k], 0, g, &rq[k]));
        API_OK(MPIGPU_Isend(&rank, MPIGPU_BUF_HOST, 1, MPIGPU_INT, nb[k], 0, g, &rq[2 + k]));
      }
      API_OK(MPIGPU_Waitall(4, rq, MPIGPU_STATUSES_IGNORE));
      RANK_CHECK(got[0] == nb[0] && got[1] == nb[1]);
      API_OK(MPIGPU_Comm_free(&g));
    }
    int gm = -1;
    API_OK(MPIGPU_Graph_map(kWorld, 3, index, edges, &gm));
    RANK_CHECK(gm == (rank < 3 ? rank : MPIGPU_UNDEFINED));

    // Distributed graph, general form: rank r names the edge r -> (r + 1) % 4 with weight r.
    const int src[] = {rank}, deg[] = {1}, dst[] = {(rank + 1) % 4}, w[] = {rank};
    MPIGPU_Comm dg;
    API_OK(MPIGPU_Dist_graph_create(kWorld, 1, src, deg, dst, w, MPIGPU_INFO_NULL, 0, &dg));
    int in = -1, out = -1, weighted = -1;
    API_OK(MPIGPU_Dist_graph_neighbors_count(dg, &in, &out, &weighted));
    RANK_CHECK(in == 1 && out == 1 && weighted == 1);
    int s[1], sw[1], d[1], dw[1];
    API_OK(MPIGPU_Dist_graph_neighbors(dg, 1, s, sw, 1, d, dw));
    RANK_CHECK(s[0] == (rank + 3) % 4 && sw[0] == (rank + 3) % 4);
    RANK_CHECK(d[0] == (rank + 1) % 4 && dw[0] == rank);
    // Adjacent form, unweighted: both neighbours on a line.
    std::vector<int> nbs;
    if (rank > 0) nbs.push_back(rank - 1);
    if (rank < 3) nbs.push_back(rank + 1);
    MPIGPU_Comm adj;
    API_OK(MPIGPU_Dist_graph_create_adjacent(
        kWorld, static_cast<int>(nbs.size()), nbs.data(), MPIGPU_UNWEIGHTED,
        static_cast<int>(nbs.size()), nbs.data(), MPIGPU_UNWEIGHTED, MPIGPU_INFO_NULL, 0, &adj));
    API_OK(MPIGPU_Dist_graph_neighbors_count(adj, &in, &out, &weighted));
    RANK_CHECK(in == static_cast<int>(nbs.size()) && out == in && weighted == 0);
    int status = -1;
    API_OK(MPIGPU_Topo_test(adj, &status));
    RANK_CHECK(status == MPIGPU_DIST_GRAPH);
    API_OK(MPIGPU_Comm_free(&dg));
    API_OK(MPIGPU_Comm_free(&adj));
  });
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

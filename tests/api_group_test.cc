// Groups of the public API between forked ranks: Comm_group, size/rank, the set algebra
// (union, intersection, difference) and incl/excl/ranges checked against MPI's ordering rules,
// translate_ranks, compare, and the errors of bad arguments.
#include <gtest/gtest.h>

#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

// World ranks of g's members, in group order (through translate_ranks into WORLD's group).
std::vector<int> Members(MPIGPU_Group g) {
  MPIGPU_Group world;
  API_OK(MPIGPU_Comm_group(kWorld, &world));
  int n = 0;
  API_OK(MPIGPU_Group_size(g, &n));
  std::vector<int> in(n), out(n, -99);
  for (int i = 0; i < n; ++i) in[i] = i;
  API_OK(MPIGPU_Group_translate_ranks(g, n, in.data(), world, out.data()));
  API_OK(MPIGPU_Group_free(&world));
  return out;
}

TEST(ApiGroupTest, AlgebraFollowsMpiOrder) {
  std::string r = RunApiJob(6, [](int rank) {
    MPIGPU_Group world;
    API_OK(MPIGPU_Comm_group(kWorld, &world));
    int size = 0, grank = -1;
    API_OK(MPIGPU_Group_size(world, &size));
    API_OK(MPIGPU_Group_rank(world, &grank));
    RANK_CHECK(size == 6 && grank == rank);

    // a = {4, 1, 3}, b = {3, 5, 1, 0}.
    const int ai[] = {4, 1, 3}, bi[] = {3, 5, 1, 0};
    MPIGPU_Group a, b, u, i, d, e;
    API_OK(MPIGPU_Group_incl(world, 3, ai, &a));
    API_OK(MPIGPU_Group_incl(world, 4, bi, &b));
    RANK_CHECK(Members(a) == (std::vector<int>{4, 1, 3}));
    API_OK(MPIGPU_Group_union(a, b, &u));
    RANK_CHECK(Members(u) == (std::vector<int>{4, 1, 3, 5, 0}));
    API_OK(MPIGPU_Group_intersection(a, b, &i));
    RANK_CHECK(Members(i) == (std::vector<int>{1, 3}));
    API_OK(MPIGPU_Group_difference(a, b, &d));
    RANK_CHECK(Members(d) == (std::vector<int>{4}));
    API_OK(MPIGPU_Group_excl(b, 2, std::vector<int>{0, 2}.data(), &e));  // b without ranks 0 and 2
    RANK_CHECK(Members(e) == (std::vector<int>{5, 0}));
    // Group_rank: this process's rank in a, or UNDEFINED.
    int ra = -5;
    API_OK(MPIGPU_Group_rank(a, &ra));
    RANK_CHECK(ra == (rank == 4 ? 0 : rank == 1 ? 1 : rank == 3 ? 2 : MPIGPU_UNDEFINED));

    // Empty results are GROUP_EMPTY; freeing it leaves it valid.
    MPIGPU_Group none;
    API_OK(MPIGPU_Group_difference(a, a, &none));
    RANK_CHECK(none == MPIGPU_GROUP_EMPTY);
    API_OK(MPIGPU_Group_free(&none));
    RANK_CHECK(none == MPIGPU_GROUP_NULL);
    int esize = -1;
    API_OK(MPIGPU_Group_size(MPIGPU_GROUP_EMPTY, &esize));
    RANK_CHECK(esize == 0);

    // Ranges: (5, 0, -2) then (1, 1, 1) -> 5, 3, 1 ... then 1 again is an error.
    int r1[][3] = {{5, 0, -2}, {0, 0, 1}};
    MPIGPU_Group rg, rx;
    API_OK(MPIGPU_Group_range_incl(world, 2, r1, &rg));
    RANK_CHECK(Members(rg) == (std::vector<int>{5, 3, 1, 0}));
    API_OK(MPIGPU_Group_range_excl(world, 2, r1, &rx));
    RANK_CHECK(Members(rx) == (std::vector<int>{2, 4}));
    // Range with an empty span (first > last with a positive stride) names nothing.
    int r2[][3] = {{3, 1, 1}};
    MPIGPU_Group rempty;
    API_OK(MPIGPU_Group_range_incl(world, 1, r2, &rempty));
    RANK_CHECK(rempty == MPIGPU_GROUP_EMPTY);

    // translate_ranks: PROC_NULL stays, non-members are UNDEFINED.
    const int from[] = {0, 1, 2, MPIGPU_PROC_NULL};
    int to[4];
    API_OK(MPIGPU_Group_translate_ranks(a, 4 - 1, from, b, to));
    RANK_CHECK(to[0] == MPIGPU_UNDEFINED && to[1] == 2 && to[2] == 0);
    API_OK(MPIGPU_Group_translate_ranks(a, 1, from + 3, b, to + 3));
    RANK_CHECK(to[3] == MPIGPU_PROC_NULL);

    // compare: IDENT (same order), SIMILAR (same members), UNEQUAL.
    MPIGPU_Group a2, a3;
    API_OK(MPIGPU_Group_incl(world, 3, std::vector<int>{4, 1, 3}.data(), &a2));
    API_OK(MPIGPU_Group_incl(world, 3, std::vector<int>{1, 3, 4}.data(), &a3));
    int cmp = -1;
    API_OK(MPIGPU_Group_compare(a, a2, &cmp));
    RANK_CHECK(cmp == MPIGPU_IDENT);
    API_OK(MPIGPU_Group_compare(a, a3, &cmp));
    RANK_CHECK(cmp == MPIGPU_SIMILAR);
    API_OK(MPIGPU_Group_compare(a, b, &cmp));
    RANK_CHECK(cmp == MPIGPU_UNEQUAL);

    // Errors (returned: WORLD's handler).
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    MPIGPU_Group bad;
    API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Group_incl(world, 2, std::vector<int>{1, 1}.data(), &bad));
    API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Group_incl(world, 1, std::vector<int>{6}.data(), &bad));
    API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Group_excl(world, 1, std::vector<int>{-1}.data(), &bad));
    int r3[][3] = {{0, 4, 2}, {2, 3, 1}};  // 2 twice
    API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Group_range_incl(world, 2, r3, &bad));
    int r4[][3] = {{0, 4, 0}};
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Group_range_incl(world, 1, r4, &bad));
    API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Group_translate_ranks(a, 1, std::vector<int>{3}.data(), b, to));
    MPIGPU_Group freed = a2;
    API_OK(MPIGPU_Group_free(&a2));
    API_FAILS(MPIGPU_ERR_GROUP, MPIGPU_Group_free(&a2));  // GROUP_NULL now
    (void)freed;
    API_FAILS(MPIGPU_ERR_GROUP, MPIGPU_Group_size(MPIGPU_GROUP_NULL, &size));
    API_FAILS(MPIGPU_ERR_GROUP, MPIGPU_Group_size(12345, &size));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Group_size(world, nullptr));

    for (MPIGPU_Group* g : {&world, &a, &b, &u, &i, &d, &e, &rg, &rx, &a3}) {
      API_OK(MPIGPU_Group_free(g));
      RANK_CHECK(*g == MPIGPU_GROUP_NULL);
    }
  });
  EXPECT_EQ(r, "");
}

TEST(ApiGroupTest, ManyGroupsFreedAndMade) {
  // Slots are reused: 100000 make/free cycles stay small and every handle stays correct.
  std::string r = RunApiJob(2, [](int rank) {
    MPIGPU_Group world;
    API_OK(MPIGPU_Comm_group(kWorld, &world));
    for (int k = 0; k < 100000; ++k) {
      MPIGPU_Group g;
      const int which = k % 2;
      API_OK(MPIGPU_Group_incl(world, 1, &which, &g));
      int gr = -5;
      API_OK(MPIGPU_Group_rank(g, &gr));
      RANK_CHECK(gr == (rank == which ? 0 : MPIGPU_UNDEFINED));
      API_OK(MPIGPU_Group_free(&g));
    }
    API_OK(MPIGPU_Group_free(&world));
  });
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

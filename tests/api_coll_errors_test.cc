// Collectives whose ranks' arguments disagree (docs/collective-errors.md) on 2, 3 and 4 forked
// ranks, with MPIGPU_COLL_CHECK off and on: no rank waits for ever (a hang is killed at
// RunJob's deadline and fails the test), the ranks that receive a message of the wrong size
// fail, with the check on every rank fails, and WORLD works afterwards (no message of the
// failed collective is left to match a later one).
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

bool IsErrorClass(int rc) { return rc > MPIGPU_SUCCESS && rc <= MPIGPU_ERR_LASTCODE; }

// The rank's outcome: an error class where `must_fail` (or the check is on), else success or
// an error class.
void ExpectOutcome(int rc, bool must_fail, bool check) {
  if (must_fail || check) {
    if (!IsErrorClass(rc))
      std::fprintf(stderr, "expected an error class, got %d (%s)\n", rc, ErrorText(rc).c_str());
    RANK_CHECK(IsErrorClass(rc));
  } else {
    RANK_CHECK(rc == MPIGPU_SUCCESS || IsErrorClass(rc));
  }
}

// A correct Allreduce on WORLD: what the failed collective left behind would match it.
void WorldStillWorks(int rank, int n) {
  std::vector<int> in(6), out(6, -1);
  for (int i = 0; i < 6; ++i) in[i] = rank * 10 + i;
  API_OK(MPIGPU_Allreduce(in.data(), MPIGPU_BUF_HOST, out.data(), MPIGPU_BUF_HOST, 6, MPIGPU_INT,
                          MPIGPU_SUM, kWorld));
  for (int i = 0; i < 6; ++i) RANK_CHECK(out[i] == 10 * n * (n - 1) / 2 + n * i);
  API_OK(MPIGPU_Barrier(kWorld));
}

// body(rank, n, check) on n = 2, 3, 4 ranks, with MPIGPU_COLL_CHECK off and on (only on when
// `check_only`), WORLD returning errors; then WorldStillWorks.
void OnTwoToFourRanks(const std::function<void(int, int, bool)>& body, bool check_only = false) {
  for (int check = check_only ? 1 : 0; check < 2; ++check) {
    for (int n = 2; n <= 4; ++n) {
      std::string r = RunJob(n, [&](int) {
        setenv("MPIGPU_COLL_CHECK", check ? "1" : "0", 1);
        return RunApiRank([&](int rank) {
          API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
          body(rank, n, check != 0);
          WorldStillWorks(rank, n);
        });
      });
      EXPECT_EQ(r, "") << n << " ranks, MPIGPU_COLL_CHECK=" << check;
    }
  }
}

// Alltoallv where rank 0 sends rank 1 20 ints and rank 1 expects 10 (10 between every other
// pair); blocking or nonblocking.
int MismatchedAlltoallv(int rank, int n, bool nonblocking) {
  std::vector<int> sendcounts(n, 10), sdispls(n), recvcounts(n, 10), rdispls(n);
  if (rank == 0) sendcounts[1] = 20;
  for (int p = 0; p < n; ++p) sdispls[p] = 20 * p, rdispls[p] = 10 * p;
  std::vector<int> sbuf(20 * n, rank), rbuf(10 * n, -1);
  if (!nonblocking)
    return MPIGPU_Alltoallv(sbuf.data(), MPIGPU_BUF_HOST, sendcounts.data(), sdispls.data(),
                            MPIGPU_INT, rbuf.data(), MPIGPU_BUF_HOST, recvcounts.data(),
                            rdispls.data(), MPIGPU_INT, kWorld);
  MPIGPU_Request q = MPIGPU_REQUEST_NULL;
  const int rc = MPIGPU_Ialltoallv(sbuf.data(), MPIGPU_BUF_HOST, sendcounts.data(),
                                   sdispls.data(), MPIGPU_INT, rbuf.data(), MPIGPU_BUF_HOST,
                                   recvcounts.data(), rdispls.data(), MPIGPU_INT, kWorld, &q);
  if (rc != MPIGPU_SUCCESS) return rc;
  return MPIGPU_Wait(&q, MPIGPU_STATUS_IGNORE);
}

TEST(CollErrorsTest, AlltoallvWithTooLongABlockFailsWhereItArrivesAndHangsNoRank) {
  for (bool nonblocking : {false, true}) {
    OnTwoToFourRanks([nonblocking](int rank, int n, bool check) {
      const int rc = MismatchedAlltoallv(rank, n, nonblocking);
      // Unchecked, rank 1 sees the truncation; the check stops every rank before data moves.
      if (!check && rank == 1) RANK_CHECK(rc == MPIGPU_ERR_TRUNCATE);
      ExpectOutcome(rc, rank == 1, check);
    });
  }
}

TEST(CollErrorsTest, AllreduceWithACountOfFourAgainstEightFailsOnEveryRank) {
  for (int odd_one : {0, -1}) {  // rank 0, or the last rank
    OnTwoToFourRanks([odd_one](int rank, int n, bool check) {
      const int odd = odd_one < 0 ? n - 1 : odd_one;
      const int count = rank == odd ? 4 : 8;
      std::vector<int> in(count, 1), out(count, 0);
      const int rc = MPIGPU_Allreduce(in.data(), MPIGPU_BUF_HOST, out.data(), MPIGPU_BUF_HOST,
                                      count, MPIGPU_INT, MPIGPU_SUM, kWorld);
      // Every contribution reaches rank 0, whose result (or error marker) reaches every rank.
      ExpectOutcome(rc, true, check);
    });
  }
}

TEST(CollErrorsTest, AllreduceWithCountZeroOnOneRankHangsNoRank) {
  OnTwoToFourRanks([](int rank, int n, bool check) {
    const int count = rank == n - 1 ? 0 : 3;
    std::vector<int> in(3, 1), out(3, 0);
    const int rc = MPIGPU_Allreduce(in.data(), MPIGPU_BUF_HOST, out.data(), MPIGPU_BUF_HOST,
                                    count, MPIGPU_INT, MPIGPU_SUM, kWorld);
    ExpectOutcome(rc, true, check);
  });
}

TEST(CollErrorsTest, BcastWhoseRootSendsFewerElementsFailsOnEveryReceiver) {
  for (int root_pick : {0, -1}) {
    OnTwoToFourRanks([root_pick](int rank, int n, bool check) {
      const int root = root_pick < 0 ? n - 1 : root_pick;
      std::vector<double> buf(10, rank);
      const int rc = MPIGPU_Bcast(buf.data(), MPIGPU_BUF_HOST, rank == root ? 5 : 10,
                                  MPIGPU_DOUBLE, root, kWorld);
      // A receiver gets 40 bytes where it posted 80 (or the marker of a parent that did).
      ExpectOutcome(rc, rank != root, check);
    });
  }
}

TEST(CollErrorsTest, ReduceWithAShortCountOnANonRootFailsAtTheRoot) {
  OnTwoToFourRanks([](int rank, int n, bool check) {
    const int count = rank == n - 1 ? 2 : 6;
    std::vector<long> in(6, rank), out(6, 0);
    const int rc = MPIGPU_Reduce(in.data(), MPIGPU_BUF_HOST, out.data(), MPIGPU_BUF_HOST, count,
                                 MPIGPU_LONG, MPIGPU_SUM, 0, kWorld);
    // Every contribution flows towards the root.
    ExpectOutcome(rc, rank == 0, check);
  });
}

TEST(CollErrorsTest, BcastWhoseRanksDisagreeOnTheRootFailsOnEveryRankWhenChecked) {
  OnTwoToFourRanks(
      [](int rank, int n, bool) {
        // Rank 0 names itself; the others name rank 1. On 4 ranks also the pattern that waits
        // for ever unchecked: ranks 0..2 name rank 1, rank 3 names rank 0.
        int root = rank == 0 ? 0 : 1;
        if (n == 4) root = rank == 3 ? 0 : 1;
        std::vector<int> buf(4, rank);
        const int rc = MPIGPU_Bcast(buf.data(), MPIGPU_BUF_HOST, 4, MPIGPU_INT, root, kWorld);
        RANK_CHECK(rc == MPIGPU_ERR_OTHER);
        RANK_CHECK(ErrorText(rc).find("MPIGPU_COLL_CHECK") != std::string::npos);
      },
      true);
}

TEST(CollErrorsTest, AgreeingArgumentsPassTheCheck) {
  OnTwoToFourRanks([](int rank, int n, bool) {
    // Derived and predefined types of one signature; a v-form with an empty block.
    std::vector<int> buf(8, rank == 1 ? 5 : 0);
    MPIGPU_Datatype two;
    API_OK(MPIGPU_Type_contiguous(2, MPIGPU_INT, &two));
    API_OK(MPIGPU_Type_commit(&two));
    if (rank == 1) API_OK(MPIGPU_Bcast(buf.data(), MPIGPU_BUF_HOST, 8, MPIGPU_INT, 1, kWorld));
    else API_OK(MPIGPU_Bcast(buf.data(), MPIGPU_BUF_HOST, 4, two, 1, kWorld));
    for (int v : buf) RANK_CHECK(v == 5);
    API_OK(MPIGPU_Type_free(&two));
    std::vector<int> counts(n), displs(n);
    for (int p = 0; p < n; ++p) counts[p] = p == 0 ? 0 : 1, displs[p] = p;
    std::vector<int> all(n, -1);
    const int mine = rank * 3;
    API_OK(MPIGPU_Allgatherv(&mine, MPIGPU_BUF_HOST, rank == 0 ? 0 : 1, MPIGPU_INT, all.data(),
                             MPIGPU_BUF_HOST, counts.data(), displs.data(), MPIGPU_INT, kWorld));
    for (int p = 1; p < n; ++p) RANK_CHECK(all[p] == 3 * p);
  });
}

}  // namespace
}  // namespace mpigpu::testing

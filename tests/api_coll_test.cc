// Communicators and collectives of the public API between forked ranks: dup/split isolation
// and rank translation, and Barrier/Bcast/Reduce/Allreduce on 1..8 ranks checked against the
// serial result.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"
#include "memcopy/pattern.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

TEST(ApiCommTest, DupAndSplitIsolateMessages) {
  std::string r = RunApiJob(4, [](int rank) {
    MPIGPU_Comm dup;
    API_OK(MPIGPU_Comm_dup(kWorld, &dup));
    int size = 0, drank = -1;
    API_OK(MPIGPU_Comm_size(dup, &size));
    API_OK(MPIGPU_Comm_rank(dup, &drank));
    RANK_CHECK(size == 4 && drank == rank);
    // Same tag and peers on two communicators: each receive gets its own comm's message, even
    // when the other one was sent first.
    if (rank == 0) {
      int a = 111, b = 222;
      API_OK(MPIGPU_Send(&a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 5, dup));
      API_OK(MPIGPU_Send(&b, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 5, kWorld));
    } else if (rank == 1) {
      int b = 0, a = 0;
      API_OK(MPIGPU_Recv(&b, MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_ANY_SOURCE, MPIGPU_ANY_TAG,
                         kWorld, MPIGPU_STATUS_IGNORE));
      API_OK(MPIGPU_Recv(&a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 5, dup, MPIGPU_STATUS_IGNORE));
      RANK_CHECK(a == 111 && b == 222);
    }
    // Split by parity, keys reversed: comm rank order follows the key.
    MPIGPU_Comm half;
    API_OK(MPIGPU_Comm_split(kWorld, rank % 2, -rank, &half));
    int hsize = 0, hrank = -1;
    API_OK(MPIGPU_Comm_size(half, &hsize));
    API_OK(MPIGPU_Comm_rank(half, &hrank));
    RANK_CHECK(hsize == 2 && hrank == (rank < 2 ? 1 : 0));
    // Within each half, comm rank 0 (world 2 or 3) sends to comm rank 1 (world 0 or 1); the
    // status names the comm rank. Both halves use the same tag at the same time.
    if (hrank == 0) {
      int v = rank;
      API_OK(MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 9, half));
    } else {
      int v = -1;
      MPIGPU_Status st;
      API_OK(MPIGPU_Recv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_ANY_SOURCE, 9, half, &st));
      RANK_CHECK(v == rank + 2 && st.MPIGPU_SOURCE == 0);
    }
    // A collective on one half, with the other half idle.
    int sum = 0, mine = rank;
    API_OK(MPIGPU_Allreduce(&mine, MPIGPU_BUF_HOST, &sum, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                            MPIGPU_SUM, half));
    RANK_CHECK(sum == (rank % 2 == 0 ? 0 + 2 : 1 + 3));
    // Color UNDEFINED gives COMM_NULL; the others get a comm of the remaining ranks.
    MPIGPU_Comm some;
    API_OK(MPIGPU_Comm_split(dup, rank == 3 ? MPIGPU_UNDEFINED : 0, 0, &some));
    if (rank == 3) {
      RANK_CHECK(some == MPIGPU_COMM_NULL);
    } else {
      API_OK(MPIGPU_Comm_size(some, &size));
      RANK_CHECK(size == 3);
      API_OK(MPIGPU_Barrier(some));
      API_OK(MPIGPU_Comm_free(&some));
      RANK_CHECK(some == MPIGPU_COMM_NULL);
    }
    // A freed communicator is no longer valid.
    MPIGPU_Comm stale = half;
    API_OK(MPIGPU_Comm_free(&half));
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Comm_rank(stale, &hrank));
    API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Barrier(stale));
    API_OK(MPIGPU_Barrier(dup));
    API_OK(MPIGPU_Comm_free(&dup));
  });
  EXPECT_EQ(r, "");
}

// Contribution of `rank` at element i: small integers, so every op is exact in every type.
int64_t Contribution(int rank, int i, MPIGPU_Op op) {
  return op == MPIGPU_PROD ? (rank + i) % 3 + 1 : (rank * 7 + i * 3) % 101;
}

template <class T>
void CheckReduceOfType(int rank, int n, MPIGPU_Datatype type, int count) {
  for (MPIGPU_Op op : {MPIGPU_SUM, MPIGPU_MIN, MPIGPU_MAX, MPIGPU_PROD}) {
    std::vector<T> in(count), out(count, T(-1)), want(count);
    for (int i = 0; i < count; ++i) {
      in[i] = static_cast<T>(Contribution(rank, i, op));
      T acc = static_cast<T>(Contribution(0, i, op));
      for (int r = 1; r < n; ++r) {
        const T x = static_cast<T>(Contribution(r, i, op));
        acc = op == MPIGPU_SUM ? T(acc + x)
              : op == MPIGPU_PROD ? T(acc * x)
              : op == MPIGPU_MIN ? std::min(acc, x)
                                 : std::max(acc, x);
      }
      want[i] = acc;
    }
    API_OK(MPIGPU_Allreduce(in.data(), MPIGPU_BUF_HOST, out.data(), MPIGPU_BUF_HOST, count, type,
                            op, kWorld));
    RANK_CHECK(std::memcmp(out.data(), want.data(), count * sizeof(T)) == 0);
    const int root = n - 1;
    std::fill(out.begin(), out.end(), T(-1));
    API_OK(MPIGPU_Reduce(in.data(), MPIGPU_BUF_HOST, rank == root ? out.data() : nullptr,
                         MPIGPU_BUF_HOST, count, type, op, root, kWorld));
    if (rank == root) RANK_CHECK(std::memcmp(out.data(), want.data(), count * sizeof(T)) == 0);
  }
}

void Collectives(int rank, int n) {
  for (int i = 0; i < 3; ++i) API_OK(MPIGPU_Barrier(kWorld));
  // Bcast from every root: a small eager message, a rendezvous one, and a vector type.
  for (int root = 0; root < n; ++root) {
    for (size_t bytes : {size_t{40}, size_t{200000}}) {
      std::vector<unsigned char> buf(bytes, 0);
      if (rank == root) FillPattern(buf.data(), bytes, 50 + root);
      API_OK(MPIGPU_Bcast(buf.data(), MPIGPU_BUF_HOST, static_cast<int>(bytes / 8), MPIGPU_DOUBLE,
                          root, kWorld));
      RANK_CHECK(FirstMismatch(buf.data(), bytes, 50 + root) == -1);
    }
  }
  MPIGPU_Datatype every_other;
  API_OK(MPIGPU_Type_vector(500, 1, 2, MPIGPU_INT, &every_other));
  API_OK(MPIGPU_Type_commit(&every_other));
  std::vector<int> v(1000, -1);
  if (rank == 0)
    for (int i = 0; i < 1000; ++i) v[i] = i;
  API_OK(MPIGPU_Bcast(v.data(), MPIGPU_BUF_HOST, 1, every_other, 0, kWorld));
  for (int i = 0; i < 1000; ++i) RANK_CHECK(v[i] == (i % 2 == 0 || rank == 0 ? i : -1));
  API_OK(MPIGPU_Type_free(&every_other));
  // Reductions: every op on several types; one count is above the eager limit.
  CheckReduceOfType<int>(rank, n, MPIGPU_INT, 37);
  CheckReduceOfType<double>(rank, n, MPIGPU_DOUBLE, 20000);
  CheckReduceOfType<float>(rank, n, MPIGPU_FLOAT, 5);
  CheckReduceOfType<uint64_t>(rank, n, MPIGPU_UINT64_T, 3);
  CheckReduceOfType<short>(rank, n, MPIGPU_SHORT, 9);
  CheckReduceOfType<unsigned char>(rank, n, MPIGPU_BYTE, 11);
  // Count 0 is legal.
  API_OK(MPIGPU_Allreduce(nullptr, MPIGPU_BUF_HOST, nullptr, MPIGPU_BUF_HOST, 0, MPIGPU_INT,
                          MPIGPU_SUM, kWorld));
}

TEST(ApiCollTest, CollectivesOnOneToEightRanks) {
  for (int n = 1; n <= 8; ++n) {
    std::string r = RunApiJob(n, [n](int rank) { Collectives(rank, n); }, 120);
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

}  // namespace
}  // namespace mpigpu::testing

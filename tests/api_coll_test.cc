// Communicators and collectives of the public API between forked ranks: dup/split isolation
// and rank translation, Barrier/Bcast/Reduce/Allreduce on 1..8 ranks checked against the
// serial result, every other collective (tests/coll_suite.h) on 1..5 ranks in host memory,
// the predefined ops of every class through Allreduce, and the collectives' argument errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/coll_suite.h"
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
  CheckReduceOfType<unsigned char>(rank, n, MPIGPU_UINT8_T, 11);
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

TEST(ApiCollTest, EveryCollectiveOnOneToFiveRanks) {
  for (int n = 1; n <= 5; ++n) {
    std::string r = RunApiJob(n, [n](int rank) { RunCollSuite(rank, n, HostMem()); }, 240);
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

// Element-wise a op b on host values, the reference for the ops below.
template <class T>
T Ref(MPIGPU_Op op, T a, T b) {
  switch (op) {
    case MPIGPU_BAND: return a & b;
    case MPIGPU_BOR: return a | b;
    case MPIGPU_BXOR: return a ^ b;
    case MPIGPU_LAND: return (a != 0) && (b != 0);
    case MPIGPU_LOR: return (a != 0) || (b != 0);
    default: return (a != 0) != (b != 0);  // LXOR
  }
}

template <class T>
void CheckBitAndLogicOps(int rank, int n, MPIGPU_Datatype type) {
  const int count = 6;
  for (MPIGPU_Op op : {MPIGPU_BAND, MPIGPU_BOR, MPIGPU_BXOR, MPIGPU_LAND, MPIGPU_LOR,
                       MPIGPU_LXOR}) {
    auto val = [](int r, int i) { return static_cast<T>(i == 0 ? 0 : (r * 37 + i * 11) & 0x7f); };
    std::vector<T> in(count), out(count), want(count);
    for (int i = 0; i < count; ++i) {
      in[i] = val(rank, i);
      want[i] = val(0, i);
      for (int r = 1; r < n; ++r) want[i] = Ref<T>(op, want[i], val(r, i));
    }
    API_OK(MPIGPU_Allreduce(in.data(), MPIGPU_BUF_HOST, out.data(), MPIGPU_BUF_HOST, count, type,
                            op, kWorld));
    RANK_CHECK(out == want);
  }
}

struct DoubleInt {
  double v;
  int i;
};

void OpsOfEveryClass(int rank, int n) {
  CheckBitAndLogicOps<int>(rank, n, MPIGPU_INT);
  CheckBitAndLogicOps<unsigned char>(rank, n, MPIGPU_UNSIGNED_CHAR);
  CheckBitAndLogicOps<int64_t>(rank, n, MPIGPU_INT64_T);
  // BYTE takes the bitwise ops only.
  unsigned char b = static_cast<unsigned char>(1 << rank), bor = 0;
  API_OK(MPIGPU_Allreduce(&b, MPIGPU_BUF_HOST, &bor, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, MPIGPU_BOR,
                          kWorld));
  RANK_CHECK(bor == (1 << n) - 1);
#ifdef MPIGPU_DOUBLE_INT
  // MINLOC/MAXLOC: values repeat across ranks, so ties pick the smaller rank.
  DoubleInt mine[2] = {{static_cast<double>(rank % 2), rank}, {-1.0 * (rank / 2), rank}};
  DoubleInt mn[2], mx[2];
  API_OK(MPIGPU_Allreduce(mine, MPIGPU_BUF_HOST, mn, MPIGPU_BUF_HOST, 2, MPIGPU_DOUBLE_INT,
                          MPIGPU_MINLOC, kWorld));
  API_OK(MPIGPU_Allreduce(mine, MPIGPU_BUF_HOST, mx, MPIGPU_BUF_HOST, 2, MPIGPU_DOUBLE_INT,
                          MPIGPU_MAXLOC, kWorld));
  RANK_CHECK(mn[0].v == 0 && mn[0].i == 0);
  RANK_CHECK(mx[0].v == (n > 1 ? 1 : 0) && mx[0].i == (n > 1 ? 1 : 0));
  RANK_CHECK(mn[1].v == -1.0 * ((n - 1) / 2) && mn[1].i == ((n - 1) / 2) * 2);
  RANK_CHECK(mx[1].v == 0 && mx[1].i == 0);
  int pair[2] = {10 - rank, rank}, pout[2];
  API_OK(MPIGPU_Allreduce(pair, MPIGPU_BUF_HOST, pout, MPIGPU_BUF_HOST, 1, MPIGPU_2INT,
                          MPIGPU_MINLOC, kWorld));
  RANK_CHECK(pout[0] == 10 - (n - 1) && pout[1] == n - 1);
#endif
#ifdef MPIGPU_C_DOUBLE_COMPLEX
  double z[2] = {1.0 + rank, 1.0}, zp[2];  // product of (r+1 + i)
  API_OK(MPIGPU_Allreduce(z, MPIGPU_BUF_HOST, zp, MPIGPU_BUF_HOST, 1, MPIGPU_C_DOUBLE_COMPLEX,
                          MPIGPU_PROD, kWorld));
  double re = 1, im = 0;
  for (int r = 0; r < n; ++r) {
    const double a = re * (1.0 + r) - im, b = re + im * (1.0 + r);
    re = a, im = b;
  }
  RANK_CHECK(zp[0] == re && zp[1] == im);
#endif
}

TEST(ApiCollTest, PredefinedOpsOfEveryClass) {
  for (int n : {1, 3, 4}) {
    std::string r = RunApiJob(n, [n](int rank) { OpsOfEveryClass(rank, n); });
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

// Errors every rank detects before communicating (so the job stays in step), and a truncation
// only the root sees.
void CollErrors(int rank, int n) {
  API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
  int a[8] = {0}, b[64] = {0};
  float f = 1, g = 0;
  API_FAILS(MPIGPU_ERR_ROOT, MPIGPU_Gather(a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, b,
                                           MPIGPU_BUF_HOST, 1, MPIGPU_INT, n, kWorld));
  API_FAILS(MPIGPU_ERR_ROOT, MPIGPU_Reduce(a, MPIGPU_BUF_HOST, b, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                                           MPIGPU_SUM, -1, kWorld));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Allreduce(&f, MPIGPU_BUF_HOST, &g, MPIGPU_BUF_HOST, 1,
                                            MPIGPU_FLOAT, MPIGPU_BAND, kWorld));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Allreduce(a, MPIGPU_BUF_HOST, b, MPIGPU_BUF_HOST, 1,
                                            MPIGPU_INT, MPIGPU_MINLOC, kWorld));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Allreduce(a, MPIGPU_BUF_HOST, b, MPIGPU_BUF_HOST, 1,
                                            MPIGPU_INT, MPIGPU_REPLACE, kWorld));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Reduce_local(a, MPIGPU_BUF_HOST, b, MPIGPU_BUF_HOST, 1,
                                               MPIGPU_BYTE, MPIGPU_SUM));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Scan(a, MPIGPU_BUF_HOST, b, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                                       12345, kWorld));
  MPIGPU_Op op;
  API_OK(MPIGPU_Op_create(MatMulFn, 1, &op));
  MPIGPU_Op stale = op;
  API_OK(MPIGPU_Op_free(&op));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Op_free(&stale));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Allreduce(a, MPIGPU_BUF_HOST, b, MPIGPU_BUF_HOST, 1,
                                            MPIGPU_INT, stale, kWorld));
  MPIGPU_Op sum = MPIGPU_SUM;
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Op_free(&sum));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Op_create(nullptr, 1, &op));
  API_FAILS(MPIGPU_ERR_COUNT, MPIGPU_Allgather(a, MPIGPU_BUF_HOST, -1, MPIGPU_INT, b,
                                               MPIGPU_BUF_HOST, -1, MPIGPU_INT, kWorld));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Allgatherv(a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, b,
                                              MPIGPU_BUF_HOST, nullptr, nullptr, MPIGPU_INT,
                                              kWorld));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Allreduce(a, MPIGPU_BUF_HOST, MPIGPU_IN_PLACE,
                                             MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_SUM, kWorld));
  API_FAILS(MPIGPU_ERR_TYPE, MPIGPU_Bcast(a, MPIGPU_BUF_HOST, 1, 999, 0, kWorld));
  // Gather into blocks of 1 int what every rank sends as 2: the root's receives truncate.
  const int rc = MPIGPU_Gather(a, MPIGPU_BUF_HOST, 2, MPIGPU_INT, b, MPIGPU_BUF_HOST, 1,
                               MPIGPU_INT, 0, kWorld);
  RANK_CHECK(rc == (rank == 0 ? MPIGPU_ERR_TRUNCATE : MPIGPU_SUCCESS));
  // The job is still in step.
  int one = 1, total = 0;
  API_OK(MPIGPU_Allreduce(&one, MPIGPU_BUF_HOST, &total, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                          MPIGPU_SUM, kWorld));
  RANK_CHECK(total == n);
}

TEST(ApiCollTest, ArgumentErrors) {
  for (int n : {1, 3}) {
    // Unchecked: the check makes every rank fail a mismatch (api_coll_errors_test.cc).
    std::string r = RunJob(n, [n](int) {
      setenv("MPIGPU_COLL_CHECK", "0", 1);
      return RunApiRank([n](int rank) { CollErrors(rank, n); });
    });
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

}  // namespace
}  // namespace mpigpu::testing

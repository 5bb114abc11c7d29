// Host reductions: every op x every predefined type, byte-exact against a reference computed
// independently; wrap-around; unaligned buffers; bad op/type/buffer.
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "mpigpu_api/datatype.h"
#include "mpigpu_api/mpigpu.h"
#include "mpigpu_api/ops.h"

namespace mpigpu {
namespace {

// Reference result of a op b, computed in a wide type (integers modulo 2^bits, as ApplyOp
// promises, via uint64_t; floating point directly).
template <class T>
T Reference(MPIGPU_Op op, T a, T b) {
  if (op == MPIGPU_MIN) return a < b ? a : b;
  if (op == MPIGPU_MAX) return a < b ? b : a;
  if constexpr (std::is_integral<T>::value) {
    const uint64_t ua = static_cast<uint64_t>(static_cast<int64_t>(a));
    const uint64_t ub = static_cast<uint64_t>(static_cast<int64_t>(b));
    return static_cast<T>(op == MPIGPU_SUM ? ua + ub : ua * ub);
  } else {
    return op == MPIGPU_SUM ? a + b : a * b;
  }
}

// Values mixing signs, zero, and the extremes (so SUM/PROD wrap for integers).
template <class T>
std::vector<T> Values() {
  std::vector<T> v = {T(0), T(1), T(2), T(3), T(7), T(100), std::numeric_limits<T>::max(),
                      std::numeric_limits<T>::lowest()};
  if (std::is_signed<T>::value) {
    v.push_back(static_cast<T>(-1));
    v.push_back(static_cast<T>(-5));
  }
  return v;
}

template <class T>
void CheckAllOps(MPIGPU_Datatype type) {
  SCOPED_TRACE(TypeName(type));
  const std::vector<T> vals = Values<T>();
  // Every pair (a, b): inout holds a's, in holds b's.
  std::vector<T> a, b;
  for (T x : vals) {
    for (T y : vals) {
      a.push_back(x);
      b.push_back(y);
    }
  }
  const size_t n = a.size();
  for (MPIGPU_Op op : {MPIGPU_SUM, MPIGPU_MIN, MPIGPU_MAX, MPIGPU_PROD}) {
    SCOPED_TRACE(OpName(op));
    std::vector<T> want(n);
    for (size_t i = 0; i < n; ++i) want[i] = Reference(op, a[i], b[i]);
    // Unaligned: the arrays start one byte into their storage.
    std::vector<unsigned char> inout(n * sizeof(T) + 1), in(n * sizeof(T) + 1);
    std::memcpy(inout.data() + 1, a.data(), n * sizeof(T));
    std::memcpy(in.data() + 1, b.data(), n * sizeof(T));
    ASSERT_EQ(ApplyOp(op, type, inout.data() + 1, in.data() + 1, n), MPIGPU_SUCCESS);
    EXPECT_EQ(std::memcmp(inout.data() + 1, want.data(), n * sizeof(T)), 0);
    // `in` is read only.
    EXPECT_EQ(std::memcmp(in.data() + 1, b.data(), n * sizeof(T)), 0);
  }
}

// The types ApplyOp has a row for (ops.cc: arithmetic C types but bool). long double is left
// out of this byte-exact check: 6 of its 16 bytes are padding a result need not preserve.
template <class T>
void CheckIfArithmetic(MPIGPU_Datatype type) {
  if constexpr (std::is_arithmetic<T>::value && !std::is_same<T, bool>::value &&
                !std::is_same<T, long double>::value) {
    CheckAllOps<T>(type);
  }
}

TEST(ApiOpsTest, EveryOpOnEveryPredefinedType) {
#define CHECK_TYPE(handle, ctype) CheckIfArithmetic<ctype>(handle);
  MPIGPU_FOR_EACH_PREDEFINED_TYPE(CHECK_TYPE)
#undef CHECK_TYPE
}

TEST(ApiOpsTest, IntegerOverflowWrapsAround) {
  int32_t a[2] = {INT32_MAX, INT32_MIN};
  const int32_t b[2] = {1, -1};
  ASSERT_EQ(ApplyOp(MPIGPU_SUM, MPIGPU_INT32_T, a, b, 2), MPIGPU_SUCCESS);
  EXPECT_EQ(a[0], INT32_MIN);
  EXPECT_EQ(a[1], INT32_MAX);
  uint16_t c[1] = {65535};
  const uint16_t d[1] = {65535};
  ASSERT_EQ(ApplyOp(MPIGPU_PROD, MPIGPU_UINT16_T, c, d, 1), MPIGPU_SUCCESS);
  EXPECT_EQ(c[0], 1);
}

TEST(ApiOpsTest, FloatingPointIsExact) {
  double a[3] = {1.5, -2.0, 1e300};
  const double b[3] = {0.25, 3.0, 1e300};
  ASSERT_EQ(ApplyOp(MPIGPU_PROD, MPIGPU_DOUBLE, a, b, 3), MPIGPU_SUCCESS);
  EXPECT_EQ(a[0], 0.375);
  EXPECT_EQ(a[1], -6.0);
  EXPECT_TRUE(a[2] > 1e308);  // inf
  float f[2] = {1.0f, -3.0f};
  const float g[2] = {-1.0f, 2.5f};
  ASSERT_EQ(ApplyOp(MPIGPU_MIN, MPIGPU_FLOAT, f, g, 2), MPIGPU_SUCCESS);
  EXPECT_EQ(f[0], -1.0f);
  EXPECT_EQ(f[1], -3.0f);
}

TEST(ApiOpsTest, BadOpTypeOrBufferGivesErrors) {
  int a[1] = {1};
  const int b[1] = {2};
  for (MPIGPU_Op bad : {MPIGPU_OP_NULL, 4, 100, INT_MIN}) {
    EXPECT_EQ(ApplyOp(bad, MPIGPU_INT, a, b, 1), MPIGPU_ERR_OP) << bad;
    EXPECT_FALSE(IsValidOp(bad));
  }
  MPIGPU_Datatype derived;
  ASSERT_EQ(MPIGPU_Type_contiguous(2, MPIGPU_INT, &derived), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_commit(&derived), MPIGPU_SUCCESS);
  for (MPIGPU_Datatype bad : {derived, MPIGPU_DATATYPE_NULL, MPIGPU_NUM_PREDEFINED_TYPES, -9}) {
    EXPECT_EQ(ApplyOp(MPIGPU_SUM, bad, a, b, 1), MPIGPU_ERR_TYPE) << bad;
  }
  EXPECT_EQ(ApplyOp(MPIGPU_SUM, MPIGPU_INT, nullptr, b, 1), MPIGPU_ERR_BUFFER);
  EXPECT_EQ(ApplyOp(MPIGPU_SUM, MPIGPU_INT, a, nullptr, 1), MPIGPU_ERR_BUFFER);
  EXPECT_EQ(ApplyOp(MPIGPU_SUM, MPIGPU_INT, nullptr, nullptr, 0), MPIGPU_SUCCESS);
  EXPECT_EQ(a[0], 1);  // untouched by the failed calls
  ASSERT_EQ(MPIGPU_Type_free(&derived), MPIGPU_SUCCESS);
}

}  // namespace
}  // namespace mpigpu

#include "mpigpu_api/ops.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "mpigpu_api/datatype.h"
#include "mpigpu_api/errors.h"

namespace mpigpu {
namespace {

// Integer arithmetic goes through an unsigned type at least as wide as `unsigned`: wrap-around
// instead of signed-overflow UB, and no promotion of unsigned short to (signed) int.
template <class T, bool = std::is_integral<T>::value>
struct ArithOf {
  using type = T;
};
template <class T>
struct ArithOf<T, true> {
  using type = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
};
template <class T>
using Arith = typename ArithOf<T>::type;

struct Sum {
  template <class T>
  static T Apply(T a, T b) {
    return static_cast<T>(static_cast<Arith<T>>(a) + static_cast<Arith<T>>(b));
  }
};
struct Prod {
  template <class T>
  static T Apply(T a, T b) {
    return static_cast<T>(static_cast<Arith<T>>(a) * static_cast<Arith<T>>(b));
  }
};
struct Min {
  template <class T>
  static T Apply(T a, T b) { return b < a ? b : a; }
};
struct Max {
  template <class T>
  static T Apply(T a, T b) { return a < b ? b : a; }
};

// memcpy loads and stores: packed receive buffers and ring units carry no alignment promise.
template <class OpT, class T>
void Reduce(void* inout, const void* in, size_t count) {
  char* io = static_cast<char*>(inout);
  const char* src = static_cast<const char*>(in);
  for (size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, io + i * sizeof(T), sizeof(T));
    std::memcpy(&b, src + i * sizeof(T), sizeof(T));
    a = OpT::Apply(a, b);
    std::memcpy(io + i * sizeof(T), &a, sizeof(T));
  }
}

using ReduceFn = void (*)(void*, const void*, size_t);
constexpr int kNumOps = 4;

// Row for one C type, in op handle order (MPIGPU_SUM, MIN, MAX, PROD).
static_assert(MPIGPU_SUM == 0 && MPIGPU_MIN == 1 && MPIGPU_MAX == 2 && MPIGPU_PROD == 3,
              "kReduce rows are indexed by op handle");
struct OpRow {
  ReduceFn fn[kNumOps];
};
// The arithmetic types; the other predefined types (bool, complex, pairs) have no row yet:
// ApplyOp refuses them (MPIGPU_ERR_OP).
template <class T>
constexpr OpRow RowFor() {
  if constexpr (std::is_arithmetic<T>::value && !std::is_same<T, bool>::value) {
    return OpRow{{Reduce<Sum, T>, Reduce<Min, T>, Reduce<Max, T>, Reduce<Prod, T>}};
  } else {
    return OpRow{{nullptr, nullptr, nullptr, nullptr}};
  }
}

#define MPIGPU_OP_ROW(handle, ctype) RowFor<ctype>(),
constexpr OpRow kReduce[] = {MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_OP_ROW)};
#undef MPIGPU_OP_ROW
static_assert(sizeof(kReduce) / sizeof(kReduce[0]) == MPIGPU_NUM_PREDEFINED_TYPES,
              "one row per predefined type");

constexpr const char* kOpName[kNumOps] = {"MPIGPU_SUM", "MPIGPU_MIN", "MPIGPU_MAX",
                                          "MPIGPU_PROD"};

}  // namespace

bool IsValidOp(MPIGPU_Op op) { return op >= 0 && op < kNumOps; }

const char* OpName(MPIGPU_Op op) { return IsValidOp(op) ? kOpName[op] : "invalid"; }

int ApplyOp(MPIGPU_Op op, MPIGPU_Datatype basic_type, void* inout, const void* in,
            size_t count) {
  if (!IsValidOp(op)) {
    return SetLastError(MPIGPU_ERR_OP, "op " + std::to_string(op) + " is not a valid op");
  }
  if (!IsPredefinedType(basic_type)) {
    return SetLastError(MPIGPU_ERR_TYPE, std::string(OpName(op)) + ": datatype " +
                                             std::to_string(basic_type) +
                                             " is not a predefined type");
  }
  if (count > 0 && (inout == nullptr || in == nullptr)) {
    return SetLastError(MPIGPU_ERR_BUFFER, std::string(OpName(op)) + ": null buffer");
  }
  const ReduceFn fn = kReduce[basic_type].fn[op];
  if (fn == nullptr) {
    return SetLastError(MPIGPU_ERR_OP, std::string(OpName(op)) + " is not defined for " +
                                           TypeName(basic_type));
  }
  fn(inout, in, count);
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu

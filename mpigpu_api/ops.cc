#include "mpigpu_api/ops.h"

#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "mpigpu_api/datatype.h"
#include "mpigpu_api/errors.h"

namespace mpigpu {
namespace {

// MPI's type classes for reductions (MPI 4.0, 6.9.2). CHAR counts as a C integer, as in MPICH.
enum class Cls { kNone, kCInt, kFInt, kFloat, kLogical, kComplex, kByte, kPair };

// Which ops each class takes, as a bit mask over op handles.
constexpr unsigned Bit(MPIGPU_Op op) { return 1u << op; }
constexpr unsigned kArith = Bit(MPIGPU_SUM) | Bit(MPIGPU_PROD);
constexpr unsigned kOrder = Bit(MPIGPU_MIN) | Bit(MPIGPU_MAX);
constexpr unsigned kLogic = Bit(MPIGPU_LAND) | Bit(MPIGPU_LOR) | Bit(MPIGPU_LXOR);
constexpr unsigned kBits = Bit(MPIGPU_BAND) | Bit(MPIGPU_BOR) | Bit(MPIGPU_BXOR);
constexpr unsigned kLoc = Bit(MPIGPU_MINLOC) | Bit(MPIGPU_MAXLOC);

unsigned OpsOf(Cls c) {
  switch (c) {
    case Cls::kCInt: return kArith | kOrder | kLogic | kBits;
    case Cls::kFInt: return kArith | kOrder | kBits;
    case Cls::kFloat: return kArith | kOrder;
    case Cls::kLogical: return kLogic;
    case Cls::kComplex: return kArith;
    case Cls::kByte: return kBits;
    case Cls::kPair: return kLoc;
    case Cls::kNone: break;
  }
  return 0;
}

// Integer arithmetic goes through an unsigned type at least as wide as `unsigned`: wrap-around
// instead of signed-overflow UB, and no promotion of unsigned short to (signed) int.
template <class T>
using Arith = std::common_type_t<std::make_unsigned_t<T>, unsigned>;

template <class T>
struct IsComplex : std::false_type {};
template <class T>
struct IsComplex<std::complex<T>> : std::true_type {};

// a op b for scalar element type T; only the ops valid for T's class are ever asked for, and
// only those compile for T.
template <class T>
T Combine(MPIGPU_Op op, T a, T b) {
  if constexpr (std::is_same<T, bool>::value) {
    switch (op) {
      case MPIGPU_LAND: return a && b;
      case MPIGPU_LOR: return a || b;
      default: return a != b;  // LXOR
    }
  } else if constexpr (std::is_integral<T>::value) {
    switch (op) {
      case MPIGPU_SUM: return static_cast<T>(static_cast<Arith<T>>(a) + static_cast<Arith<T>>(b));
      case MPIGPU_PROD: return static_cast<T>(static_cast<Arith<T>>(a) * static_cast<Arith<T>>(b));
      case MPIGPU_MIN: return b < a ? b : a;
      case MPIGPU_MAX: return a < b ? b : a;
      case MPIGPU_LAND: return static_cast<T>(a != 0 && b != 0);
      case MPIGPU_LOR: return static_cast<T>(a != 0 || b != 0);
      case MPIGPU_LXOR: return static_cast<T>((a != 0) != (b != 0));
      case MPIGPU_BAND: return static_cast<T>(a & b);
      case MPIGPU_BOR: return static_cast<T>(a | b);
      default: return static_cast<T>(a ^ b);  // BXOR
    }
  } else if constexpr (IsComplex<T>::value) {
    return op == MPIGPU_SUM ? a + b : a * b;
  } else {  // floating point
    switch (op) {
      case MPIGPU_SUM: return a + b;
      case MPIGPU_PROD: return a * b;
      case MPIGPU_MIN: return b < a ? b : a;
      default: return a < b ? b : a;  // MAX
    }
  }
}

// memcpy loads and stores: packed receive buffers carry no alignment promise. The op is
// switched on inside the loop; the compiler hoists it (one loop per op).
template <class T>
void ReduceScalar(MPIGPU_Op op, char* io, const char* src, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    T a, b;
    std::memcpy(&a, io + i * sizeof(T), sizeof(T));
    std::memcpy(&b, src + i * sizeof(T), sizeof(T));
    a = Combine<T>(op, a, b);
    std::memcpy(io + i * sizeof(T), &a, sizeof(T));
  }
}

// Value-index pairs, packed: value at 0, index right after it (no padding: the packed form
// carries the type's data bytes only).
template <class V, class I>
void ReducePair(MPIGPU_Op op, char* io, const char* src, size_t count) {
  constexpr size_t kElem = sizeof(V) + sizeof(I);
  for (size_t k = 0; k < count; ++k) {
    char* a = io + k * kElem;
    const char* b = src + k * kElem;
    V av, bv;
    I ai, bi;
    std::memcpy(&av, a, sizeof(V));
    std::memcpy(&bv, b, sizeof(V));
    std::memcpy(&ai, a + sizeof(V), sizeof(I));
    std::memcpy(&bi, b + sizeof(V), sizeof(I));
    const bool take_b = op == MPIGPU_MINLOC ? bv < av : av < bv;
    if (take_b) {
      std::memcpy(a, b, kElem);
    } else if (!(av < bv) && !(bv < av) && bi < ai) {
      std::memcpy(a + sizeof(V), &bi, sizeof(I));  // equal values: the smaller index
    }
  }
}

using ReduceFn = void (*)(MPIGPU_Op, char*, const char*, size_t);
struct TypeOps {
  Cls cls = Cls::kNone;
  size_t elem = 0;
  ReduceFn fn = nullptr;
};

// Handles named in this build's mpigpu.h (the newer ones are compiled in when it has them).
TypeOps OpsForType(MPIGPU_Datatype t) {
#define S(h, T, c) \
  case h: return TypeOps{Cls::c, sizeof(T), ReduceScalar<T>};
#define P(h, V, I) \
  case h: return TypeOps{Cls::kPair, sizeof(V) + sizeof(I), ReducePair<V, I>};
  switch (t) {
    S(MPIGPU_BYTE, unsigned char, kByte)
    S(MPIGPU_CHAR, char, kCInt)
    S(MPIGPU_SIGNED_CHAR, signed char, kCInt)
    S(MPIGPU_UNSIGNED_CHAR, unsigned char, kCInt)
    S(MPIGPU_SHORT, short, kCInt)
    S(MPIGPU_UNSIGNED_SHORT, unsigned short, kCInt)
    S(MPIGPU_INT, int, kCInt)
    S(MPIGPU_UNSIGNED, unsigned, kCInt)
    S(MPIGPU_LONG, long, kCInt)
    S(MPIGPU_UNSIGNED_LONG, unsigned long, kCInt)
    S(MPIGPU_LONG_LONG, long long, kCInt)
    S(MPIGPU_UNSIGNED_LONG_LONG, unsigned long long, kCInt)
    S(MPIGPU_FLOAT, float, kFloat)
    S(MPIGPU_DOUBLE, double, kFloat)
    S(MPIGPU_INT8_T, int8_t, kCInt)
    S(MPIGPU_INT16_T, int16_t, kCInt)
    S(MPIGPU_INT32_T, int32_t, kCInt)
    S(MPIGPU_INT64_T, int64_t, kCInt)
    S(MPIGPU_UINT8_T, uint8_t, kCInt)
    S(MPIGPU_UINT16_T, uint16_t, kCInt)
    S(MPIGPU_UINT32_T, uint32_t, kCInt)
    S(MPIGPU_UINT64_T, uint64_t, kCInt)
#ifdef MPIGPU_LONG_DOUBLE
    S(MPIGPU_LONG_DOUBLE, long double, kFloat)
    S(MPIGPU_C_BOOL, bool, kLogical)
    S(MPIGPU_C_FLOAT_COMPLEX, std::complex<float>, kComplex)
    S(MPIGPU_C_DOUBLE_COMPLEX, std::complex<double>, kComplex)
    S(MPIGPU_C_LONG_DOUBLE_COMPLEX, std::complex<long double>, kComplex)
    S(MPIGPU_AINT, MPIGPU_Aint, kCInt)
    S(MPIGPU_OFFSET, int64_t, kCInt)
    S(MPIGPU_COUNT, int64_t, kCInt)
#endif
#ifdef MPIGPU_FLOAT_INT
    P(MPIGPU_FLOAT_INT, float, int)
    P(MPIGPU_DOUBLE_INT, double, int)
    P(MPIGPU_LONG_INT, long, int)
    P(MPIGPU_2INT, int, int)
    P(MPIGPU_SHORT_INT, short, int)
    P(MPIGPU_LONG_DOUBLE_INT, long double, int)
#endif
#ifdef MPIGPU_CXX_BOOL
    S(MPIGPU_CXX_BOOL, bool, kLogical)
    S(MPIGPU_CXX_FLOAT_COMPLEX, std::complex<float>, kComplex)
    S(MPIGPU_CXX_DOUBLE_COMPLEX, std::complex<double>, kComplex)
    S(MPIGPU_CXX_LONG_DOUBLE_COMPLEX, std::complex<long double>, kComplex)
#endif
#ifdef MPIGPU_INTEGER
    S(MPIGPU_INTEGER, int, kFInt)
    S(MPIGPU_REAL, float, kFloat)
    S(MPIGPU_DOUBLE_PRECISION, double, kFloat)
    S(MPIGPU_LOGICAL, int, kLogical)
    S(MPIGPU_COMPLEX, std::complex<float>, kComplex)
    S(MPIGPU_DOUBLE_COMPLEX, std::complex<double>, kComplex)
    P(MPIGPU_2INTEGER, int, int)
    P(MPIGPU_2REAL, float, float)
    P(MPIGPU_2DOUBLE_PRECISION, double, double)
    S(MPIGPU_INTEGER1, int8_t, kFInt)
    S(MPIGPU_INTEGER2, int16_t, kFInt)
    S(MPIGPU_INTEGER4, int32_t, kFInt)
    S(MPIGPU_INTEGER8, int64_t, kFInt)
    S(MPIGPU_REAL4, float, kFloat)
    S(MPIGPU_REAL8, double, kFloat)
    S(MPIGPU_REAL16, long double, kFloat)
    S(MPIGPU_COMPLEX8, std::complex<float>, kComplex)
    S(MPIGPU_COMPLEX16, std::complex<double>, kComplex)
    S(MPIGPU_COMPLEX32, std::complex<long double>, kComplex)
#endif
    default: break;
  }
#undef S
#undef P
  return TypeOps{};
}

constexpr const char* kOpName[kNumPredefinedOps] = {
    "MPIGPU_SUM",  "MPIGPU_MIN",  "MPIGPU_MAX",  "MPIGPU_PROD",   "MPIGPU_LAND",
    "MPIGPU_LOR",  "MPIGPU_LXOR", "MPIGPU_BAND", "MPIGPU_BOR",    "MPIGPU_BXOR",
    "MPIGPU_MINLOC", "MPIGPU_MAXLOC", "MPIGPU_REPLACE", "MPIGPU_NO_OP"};

// User ops by handle - kFirstUserOp; a freed slot keeps fn == nullptr (handles are not reused),
// once no holder keeps it.
struct Registry {
  std::mutex mu;
  std::vector<UserOp> ops;
};
Registry& Reg() {
  static Registry* r = new Registry();  // never destroyed: calls may come during exit
  return *r;
}

}  // namespace

bool LookupUserOp(MPIGPU_Op op, UserOp* out) {
  if (op < kFirstUserOp) return false;
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  const size_t i = static_cast<size_t>(op - kFirstUserOp);
  if (i >= r.ops.size() || r.ops[i].fn == nullptr) return false;
  if (out != nullptr) *out = r.ops[i];
  return true;
}

int CreateUserOp(MPIGPU_User_function* fn, bool commute, MPIGPU_Op* out) {
  if (fn == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null user function");
  if (out == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null op pointer");
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  if (r.ops.size() >= static_cast<size_t>(INT32_MAX - kFirstUserOp))
    return SetLastError(MPIGPU_ERR_INTERN, "too many user ops");
  r.ops.push_back(UserOp{fn, commute});
  *out = kFirstUserOp + static_cast<MPIGPU_Op>(r.ops.size() - 1);
  return MPIGPU_SUCCESS;
}

int FreeUserOp(MPIGPU_Op* op) {
  if (op == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null op pointer");
  if (IsPredefinedOp(*op))
    return SetLastError(MPIGPU_ERR_OP, std::string("predefined op ") + OpName(*op) +
                                           " cannot be freed");
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  const size_t i = static_cast<size_t>(*op) - kFirstUserOp;
  if (*op < kFirstUserOp || i >= r.ops.size() || r.ops[i].fn == nullptr || r.ops[i].freed)
    return SetLastError(MPIGPU_ERR_OP, "op " + std::to_string(*op) + " is not a live user op");
  if (r.ops[i].keeps > 0) r.ops[i].freed = true;
  else r.ops[i].fn = nullptr;
  *op = MPIGPU_OP_NULL;
  return MPIGPU_SUCCESS;
}

namespace {
// The kept op's slot, or null (predefined or not a live user op).
UserOp* KeptSlot(Registry& r, MPIGPU_Op op) {
  if (op < kFirstUserOp) return nullptr;
  const size_t i = static_cast<size_t>(op - kFirstUserOp);
  return i < r.ops.size() && r.ops[i].fn != nullptr ? &r.ops[i] : nullptr;
}
}  // namespace

void KeepUserOp(MPIGPU_Op op) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  if (UserOp* u = KeptSlot(r, op)) ++u->keeps;
}

void DropUserOp(MPIGPU_Op op) {
  Registry& r = Reg();
  std::lock_guard<std::mutex> g(r.mu);
  UserOp* u = KeptSlot(r, op);
  if (u == nullptr || u->keeps == 0) return;
  if (--u->keeps == 0 && u->freed) u->fn = nullptr;
}

bool IsValidOp(MPIGPU_Op op) { return IsPredefinedOp(op) || LookupUserOp(op, nullptr); }

const char* OpName(MPIGPU_Op op) {
  if (IsPredefinedOp(op)) return kOpName[op];
  return LookupUserOp(op, nullptr) ? "user op" : "invalid";
}

bool IsCommutativeOp(MPIGPU_Op op) {
  if (IsPredefinedOp(op)) return true;
  UserOp u;
  return LookupUserOp(op, &u) && u.commute;
}

size_t OpElementBytes(MPIGPU_Datatype basic_type) { return OpsForType(basic_type).elem; }

int CheckOpForType(MPIGPU_Op op, MPIGPU_Datatype basic_type) {
  if (!IsPredefinedOp(op))
    return SetLastError(MPIGPU_ERR_OP, "op " + std::to_string(op) + " is not a predefined op");
  if (op == MPIGPU_REPLACE || op == MPIGPU_NO_OP)
    return SetLastError(MPIGPU_ERR_OP, std::string(OpName(op)) +
                                           " is for one-sided accumulates, not collectives");
  if (!IsPredefinedType(basic_type))
    return SetLastError(MPIGPU_ERR_TYPE, std::string(OpName(op)) + ": datatype " +
                                             std::to_string(basic_type) +
                                             " is not a predefined type");
  if ((OpsOf(OpsForType(basic_type).cls) & Bit(op)) == 0)
    return SetLastError(MPIGPU_ERR_OP, std::string(OpName(op)) + " is not defined for " +
                                           TypeName(basic_type));
  return MPIGPU_SUCCESS;
}

int ApplyOp(MPIGPU_Op op, MPIGPU_Datatype basic_type, void* inout, const void* in,
            size_t count) {
  if (int rc = CheckOpForType(op, basic_type); rc != MPIGPU_SUCCESS) return rc;
  if (count > 0 && (inout == nullptr || in == nullptr))
    return SetLastError(MPIGPU_ERR_BUFFER, std::string(OpName(op)) + ": null buffer");
  OpsForType(basic_type).fn(op, static_cast<char*>(inout), static_cast<const char*>(in), count);
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu

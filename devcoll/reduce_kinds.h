// What the device reduction kernels (device_reduce.h) combine: the op and the packed element
// kind, in the kernels' own terms so that this package stays below the API. The API maps its
// predefined ops and types onto these (mpigpu_api/coll_device.cc); MPI's rules of which op is
// defined for which type are checked there, before any kernel is asked.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace mpigpu::devcoll {

enum class Op : uint8_t {
  kSum, kProd, kMin, kMax,
  kLand, kLor, kLxor,
  kBand, kBor, kBxor,
  kMinloc, kMaxloc,
  kReplace,  // inout = in (one-sided accumulates)
  kNoOp,     // inout unchanged
};

// Packed elements: scalars as their C types, complex as (re, im), pairs as value then index
// with no padding between them (MPI's packed stream). long double has no device form (CUDA
// computes it as double): its types have no Elem and stay on the host.
enum class Elem : uint8_t {
  kNone,
  kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64,
  kF32, kF64,
  kBool,  // one byte, 0 or not
  kC32, kC64,  // complex float / double
  kPairF32I32, kPairF64I32, kPairI64I32, kPairI32I32, kPairI16I32,  // MINLOC/MAXLOC pairs
  kPairF32F32, kPairF64F64,                                         // Fortran 2REAL, 2DOUBLE
};

// Bytes of one packed element; 0 for kNone.
size_t ElemBytes(Elem e);
// "i32", "pair<f64,i32>", ... for messages.
const char* ElemName(Elem e);
const char* OpName(Op op);
// Whether the kernels define `op` on `e` (MPI's classes: arithmetic and order on numbers,
// logical and bitwise on integers and bool, SUM/PROD on complex, MINLOC/MAXLOC on pairs;
// REPLACE and NO_OP on everything).
bool Supports(Op op, Elem e);

// The Elem of a C type (kNone where the device has none).
template <class T>
constexpr Elem ElemOf() {
  if constexpr (std::is_same<T, bool>::value) {
    return Elem::kBool;
  } else if constexpr (std::is_integral<T>::value) {
    constexpr bool s = std::is_signed<T>::value;
    switch (sizeof(T)) {
      case 1: return s ? Elem::kI8 : Elem::kU8;
      case 2: return s ? Elem::kI16 : Elem::kU16;
      case 4: return s ? Elem::kI32 : Elem::kU32;
      case 8: return s ? Elem::kI64 : Elem::kU64;
      default: return Elem::kNone;  // __int128
    }
  } else if constexpr (std::is_same<T, float>::value) {
    return Elem::kF32;
  } else if constexpr (std::is_same<T, double>::value) {
    return Elem::kF64;
  } else if constexpr (std::is_same<T, std::complex<float>>::value) {
    return Elem::kC32;
  } else if constexpr (std::is_same<T, std::complex<double>>::value) {
    return Elem::kC64;
  } else {
    return Elem::kNone;  // long double, its complex, anything else
  }
}

// The Elem of a value-index pair (value type V, index type I).
template <class V, class I>
constexpr Elem PairElemOf() {
  constexpr Elem v = ElemOf<V>(), i = ElemOf<I>();
  if (i == Elem::kI32) {
    switch (v) {
      case Elem::kF32: return Elem::kPairF32I32;
      case Elem::kF64: return Elem::kPairF64I32;
      case Elem::kI64: return Elem::kPairI64I32;
      case Elem::kI32: return Elem::kPairI32I32;
      case Elem::kI16: return Elem::kPairI16I32;
      default: return Elem::kNone;
    }
  }
  if (v == Elem::kF32 && i == Elem::kF32) return Elem::kPairF32F32;
  if (v == Elem::kF64 && i == Elem::kF64) return Elem::kPairF64F64;
  return Elem::kNone;
}

}  // namespace mpigpu::devcoll

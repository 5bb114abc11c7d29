#include "devcoll/reduce_kinds.h"

namespace mpigpu::devcoll {

size_t ElemBytes(Elem e) {
  switch (e) {
    case Elem::kNone: return 0;
    case Elem::kI8: case Elem::kU8: case Elem::kBool: return 1;
    case Elem::kI16: case Elem::kU16: return 2;
    case Elem::kI32: case Elem::kU32: case Elem::kF32: return 4;
    case Elem::kI64: case Elem::kU64: case Elem::kF64: case Elem::kC32: return 8;
    case Elem::kC64: return 16;
    case Elem::kPairF32I32: case Elem::kPairI32I32: case Elem::kPairF32F32: return 8;
    case Elem::kPairF64I32: case Elem::kPairI64I32: return 12;
    case Elem::kPairI16I32: return 6;
    case Elem::kPairF64F64: return 16;
  }
  return 0;
}

const char* ElemName(Elem e) {
  switch (e) {
    case Elem::kNone: return "none";
    case Elem::kI8: return "i8";
    case Elem::kU8: return "u8";
    case Elem::kI16: return "i16";
    case Elem::kU16: return "u16";
    case Elem::kI32: return "i32";
    case Elem::kU32: return "u32";
    case Elem::kI64: return "i64";
    case Elem::kU64: return "u64";
    case Elem::kF32: return "f32";
    case Elem::kF64: return "f64";
    case Elem::kBool: return "bool";
    case Elem::kC32: return "c32";
    case Elem::kC64: return "c64";
    case Elem::kPairF32I32: return "pair<f32,i32>";
    case Elem::kPairF64I32: return "pair<f64,i32>";
    case Elem::kPairI64I32: return "pair<i64,i32>";
    case Elem::kPairI32I32: return "pair<i32,i32>";
    case Elem::kPairI16I32: return "pair<i16,i32>";
    case Elem::kPairF32F32: return "pair<f32,f32>";
    case Elem::kPairF64F64: return "pair<f64,f64>";
  }
  return "none";
}

const char* OpName(Op op) {
  static const char* const kNames[] = {"sum",  "prod", "min",  "max",    "land",   "lor",
                                       "lxor", "band", "bor",  "bxor",   "minloc", "maxloc",
                                       "replace", "no_op"};
  const unsigned i = static_cast<unsigned>(op);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "invalid";
}

bool Supports(Op op, Elem e) {
  if (e == Elem::kNone) return false;
  if (op == Op::kReplace || op == Op::kNoOp) return true;
  const bool pair = e >= Elem::kPairF32I32;
  const bool cplx = e == Elem::kC32 || e == Elem::kC64;
  const bool flt = e == Elem::kF32 || e == Elem::kF64;
  const bool boolean = e == Elem::kBool;
  const bool integer = !pair && !cplx && !flt && !boolean;
  switch (op) {
    case Op::kSum: case Op::kProd: return integer || flt || cplx;
    case Op::kMin: case Op::kMax: return integer || flt;
    case Op::kLand: case Op::kLor: case Op::kLxor: return integer || boolean;
    case Op::kBand: case Op::kBor: case Op::kBxor: return integer;
    case Op::kMinloc: case Op::kMaxloc: return pair;
    default: return false;
  }
}

}  // namespace mpigpu::devcoll

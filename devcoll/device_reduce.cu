// The device reduction kernels (device_reduce.h): one grid-stride kernel per (element, op)
// that MPI defines, chosen on the host by two switches.
#include "devcoll/device_reduce.h"

#include <cstdint>
#include <cstring>
#include <string>

#include "memcopy/memcopy.h"

namespace mpigpu::devcoll {
namespace {

struct C32 { float re, im; };
struct C64 { double re, im; };
template <class V, class I>
struct Pair { V v; I i; };  // packed: read and written member by member, never as a struct

// Integer arithmetic in an unsigned type at least as wide as unsigned: wrap-around, no UB.
template <class T>
struct Wide { using type = unsigned; };
template <> struct Wide<int64_t> { using type = unsigned long long; };
template <> struct Wide<uint64_t> { using type = unsigned long long; };

template <Op op, class T>
__device__ __forceinline__ T Apply(T a, T b) {
  if constexpr (op == Op::kReplace) {
    return b;
  } else if constexpr (std::is_same<T, bool>::value) {
    if constexpr (op == Op::kLand) return a && b;
    else if constexpr (op == Op::kLor) return a || b;
    else return a != b;  // kLxor
  } else if constexpr (std::is_integral<T>::value) {
    using W = typename Wide<T>::type;
    if constexpr (op == Op::kSum) return static_cast<T>(static_cast<W>(a) + static_cast<W>(b));
    else if constexpr (op == Op::kProd) return static_cast<T>(static_cast<W>(a) * static_cast<W>(b));
    else if constexpr (op == Op::kMin) return b < a ? b : a;
    else if constexpr (op == Op::kMax) return a < b ? b : a;
    else if constexpr (op == Op::kLand) return static_cast<T>(a != 0 && b != 0);
    else if constexpr (op == Op::kLor) return static_cast<T>(a != 0 || b != 0);
    else if constexpr (op == Op::kLxor) return static_cast<T>((a != 0) != (b != 0));
    else if constexpr (op == Op::kBand) return static_cast<T>(a & b);
    else if constexpr (op == Op::kBor) return static_cast<T>(a | b);
    else return static_cast<T>(a ^ b);  // kBxor
  } else if constexpr (std::is_same<T, C32>::value || std::is_same<T, C64>::value) {
    if constexpr (op == Op::kSum) return T{a.re + b.re, a.im + b.im};
    // No fused multiply-add: the host's (a.re*b.re - a.im*b.im) rounds each product.
    else return T{__dsub_rn(__dmul_rn(a.re, b.re), __dmul_rn(a.im, b.im)),
                  __dadd_rn(__dmul_rn(a.re, b.im), __dmul_rn(a.im, b.re))};
  } else {  // float, double
    if constexpr (op == Op::kSum) return a + b;
    else if constexpr (op == Op::kProd) return a * b;
    else if constexpr (op == Op::kMin) return b < a ? b : a;
    else return a < b ? b : a;  // kMax
  }
}

// Complex float: products in float, without fusing.
template <>
__device__ __forceinline__ C32 Apply<Op::kProd, C32>(C32 a, C32 b) {
  return C32{__fsub_rn(__fmul_rn(a.re, b.re), __fmul_rn(a.im, b.im)),
             __fadd_rn(__fmul_rn(a.re, b.im), __fmul_rn(a.im, b.re))};
}

template <class T>
__device__ __forceinline__ T Load(const unsigned char* p, bool aligned) {
  if (aligned) return *reinterpret_cast<const T*>(p);
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}
template <class T>
__device__ __forceinline__ void Store(unsigned char* p, T v, bool aligned) {
  if (aligned) *reinterpret_cast<T*>(p) = v;
  else memcpy(p, &v, sizeof(T));
}

template <Op op, class T>
__global__ void ScalarKernel(unsigned char* io, const unsigned char* in, size_t n, bool aligned) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n;
       i += size_t{gridDim.x} * blockDim.x) {
    const size_t at = i * sizeof(T);
    Store<T>(io + at, Apply<op, T>(Load<T>(io + at, aligned), Load<T>(in + at, aligned)), aligned);
  }
}

// Value then index, packed (sizeof(V) + sizeof(I) bytes an element): byte-wise access.
template <Op op, class V, class I>
__global__ void PairKernel(unsigned char* io, const unsigned char* in, size_t n) {
  constexpr size_t kElem = sizeof(V) + sizeof(I);
  for (size_t k = blockIdx.x * size_t{blockDim.x} + threadIdx.x; k < n;
       k += size_t{gridDim.x} * blockDim.x) {
    unsigned char* a = io + k * kElem;
    const unsigned char* b = in + k * kElem;
    if constexpr (op == Op::kReplace) {
      for (size_t j = 0; j < kElem; ++j) a[j] = b[j];
    } else {
      V av, bv;
      I ai, bi;
      memcpy(&av, a, sizeof(V));
      memcpy(&bv, b, sizeof(V));
      memcpy(&ai, a + sizeof(V), sizeof(I));
      memcpy(&bi, b + sizeof(V), sizeof(I));
      const bool take_b = op == Op::kMinloc ? bv < av : av < bv;
      if (take_b) {
        memcpy(a, &bv, sizeof(V));
        memcpy(a + sizeof(V), &bi, sizeof(I));
      } else if (!(av < bv) && !(bv < av) && bi < ai) {
        memcpy(a + sizeof(V), &bi, sizeof(I));
      }
    }
  }
}

constexpr int kThreads = 256;

unsigned Blocks(size_t n) {
  const size_t want = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(want < 2048 ? (want ? want : 1) : 2048);
}

struct Launch {
  unsigned char* io;
  const unsigned char* in;
  size_t n;
  cudaStream_t stream;
};

template <Op op, class T>
void RunScalar(const Launch& l) {
  const bool aligned = reinterpret_cast<uintptr_t>(l.io) % alignof(T) == 0 &&
                       reinterpret_cast<uintptr_t>(l.in) % alignof(T) == 0;
  ScalarKernel<op, T><<<Blocks(l.n), kThreads, 0, l.stream>>>(l.io, l.in, l.n, aligned);
}

template <Op op, class V, class I>
void RunPair(const Launch& l) {
  PairKernel<op, V, I><<<Blocks(l.n), kThreads, 0, l.stream>>>(l.io, l.in, l.n);
}

// Only the ops Supports() allows reach these; the others compile to nothing.
template <class T>
void ScalarOp(Op op, const Launch& l) {
  constexpr bool kInt = std::is_integral<T>::value && !std::is_same<T, bool>::value;
  constexpr bool kBool = std::is_same<T, bool>::value;
  constexpr bool kCplx = std::is_same<T, C32>::value || std::is_same<T, C64>::value;
  constexpr bool kFloat = std::is_floating_point<T>::value;
  switch (op) {
    case Op::kReplace: return RunScalar<Op::kReplace, T>(l);
    case Op::kSum: if constexpr (kInt || kFloat || kCplx) return RunScalar<Op::kSum, T>(l); break;
    case Op::kProd: if constexpr (kInt || kFloat || kCplx) return RunScalar<Op::kProd, T>(l); break;
    case Op::kMin: if constexpr (kInt || kFloat) return RunScalar<Op::kMin, T>(l); break;
    case Op::kMax: if constexpr (kInt || kFloat) return RunScalar<Op::kMax, T>(l); break;
    case Op::kLand: if constexpr (kInt || kBool) return RunScalar<Op::kLand, T>(l); break;
    case Op::kLor: if constexpr (kInt || kBool) return RunScalar<Op::kLor, T>(l); break;
    case Op::kLxor: if constexpr (kInt || kBool) return RunScalar<Op::kLxor, T>(l); break;
    case Op::kBand: if constexpr (kInt) return RunScalar<Op::kBand, T>(l); break;
    case Op::kBor: if constexpr (kInt) return RunScalar<Op::kBor, T>(l); break;
    case Op::kBxor: if constexpr (kInt) return RunScalar<Op::kBxor, T>(l); break;
    default: break;
  }
}

template <class V, class I>
void PairOp(Op op, const Launch& l) {
  switch (op) {
    case Op::kMinloc: return RunPair<Op::kMinloc, V, I>(l);
    case Op::kMaxloc: return RunPair<Op::kMaxloc, V, I>(l);
    case Op::kReplace: return RunPair<Op::kReplace, V, I>(l);
    default: break;
  }
}

}  // namespace

Status ReduceOnDevice(Op op, Elem e, void* inout, const void* in, size_t n,
                      cudaStream_t stream) {
  if (!Supports(op, e))
    return Status(Err::kInvalidArg, std::string("device reduction: ") + OpName(op) +
                                        " is not defined on " + ElemName(e));
  if (n == 0 || op == Op::kNoOp) return Status::Ok();
  if (inout == nullptr || in == nullptr)
    return Status(Err::kInvalidArg, "device reduction: null buffer");
  const Launch l{static_cast<unsigned char*>(inout), static_cast<const unsigned char*>(in), n,
                 stream};
  switch (e) {
    case Elem::kI8: ScalarOp<int8_t>(op, l); break;
    case Elem::kU8: ScalarOp<uint8_t>(op, l); break;
    case Elem::kI16: ScalarOp<int16_t>(op, l); break;
    case Elem::kU16: ScalarOp<uint16_t>(op, l); break;
    case Elem::kI32: ScalarOp<int32_t>(op, l); break;
    case Elem::kU32: ScalarOp<uint32_t>(op, l); break;
    case Elem::kI64: ScalarOp<int64_t>(op, l); break;
    case Elem::kU64: ScalarOp<uint64_t>(op, l); break;
    case Elem::kF32: ScalarOp<float>(op, l); break;
    case Elem::kF64: ScalarOp<double>(op, l); break;
    case Elem::kBool: ScalarOp<bool>(op, l); break;
    case Elem::kC32: ScalarOp<C32>(op, l); break;
    case Elem::kC64: ScalarOp<C64>(op, l); break;
    case Elem::kPairF32I32: PairOp<float, int32_t>(op, l); break;
    case Elem::kPairF64I32: PairOp<double, int32_t>(op, l); break;
    case Elem::kPairI64I32: PairOp<int64_t, int32_t>(op, l); break;
    case Elem::kPairI32I32: PairOp<int32_t, int32_t>(op, l); break;
    case Elem::kPairI16I32: PairOp<int16_t, int32_t>(op, l); break;
    case Elem::kPairF32F32: PairOp<float, float>(op, l); break;
    case Elem::kPairF64F64: PairOp<double, double>(op, l); break;
    case Elem::kNone: break;
  }
  MPIGPU_CUDA_CHECK(cudaGetLastError());
  return Status::Ok();
}

}  // namespace mpigpu::devcoll

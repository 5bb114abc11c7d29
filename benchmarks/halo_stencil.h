// The halo application's 9-point stencil arithmetic, shared by the CPU sweep (halo_grid.cc) and the
// CUDA kernel (halo_kernel.cu), so both run the same operations in the same order:
//   new = (wc*C + wa*(((N + S) + E) + W)) + wd*(((NE + NW) + SE) + SW)
// Every add and multiply is rounded on its own: on the device through __fadd_rn/__fmul_rn
// (__dadd_rn/__dmul_rn), which nvcc never fuses into an FMA; on the host the code that
// instantiates this header is built with -ffp-contract=off. CPU and GPU results are therefore
// bit-identical, and --check demands exact equality.
//
// 17 flops per point per iteration are reported (SHOC Stencil2D's count: 9 multiplies and 8 adds,
// as if each neighbour had its own weight); the factored form above executes 11.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define HALO_HD __host__ __device__
#else
#define HALO_HD
#endif

namespace mpigpu::halo {

constexpr int kFlopsPerPoint = 17;

// Centre, cardinal and diagonal weights. 0.4 + 4*0.1 + 4*0.05 = 1: the update is an average, so
// values stay in [0, 1) for any iteration count; none of them is a power of two, so every
// multiply rounds and a fused multiply-add would show up as a difference.
template <typename T>
struct Weights {
  T center = T(0.4);
  T cardinal = T(0.1);
  T diagonal = T(0.05);
};

// Half-open rectangle [i0, i1) x [j0, j1) of local cells (row i, column j) to update.
struct Region {
  int i0 = 0, i1 = 0, j0 = 0, j1 = 0;
  bool empty() const { return i0 >= i1 || j0 >= j1; }
  int64_t cells() const { return empty() ? 0 : int64_t{i1 - i0} * (j1 - j0); }
};

HALO_HD inline float Add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
HALO_HD inline float Mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
HALO_HD inline double Add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
HALO_HD inline double Mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}

// The new value of cell `idx` of a row-major array with `pitch` elements per row. Row i-1 is
// north, column j+1 is east.
template <typename T>
HALO_HD inline T StencilPoint(const T* in, int64_t idx, int64_t pitch, Weights<T> wt) {
  const T* north = in + idx - pitch;
  const T* mid = in + idx;
  const T* south = in + idx + pitch;
  const T cardinal = Add(Add(Add(north[0], south[0]), mid[1]), mid[-1]);     // N + S + E + W
  const T diagonal = Add(Add(Add(north[1], north[-1]), south[1]), south[-1]);  // NE+NW+SE+SW
  return Add(Add(Mul(wt.center, mid[0]), Mul(wt.cardinal, cardinal)), Mul(wt.diagonal, diagonal));
}

}  // namespace mpigpu::halo

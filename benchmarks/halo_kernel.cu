#include "benchmarks/halo_kernel.h"

namespace mpigpu::halo {
namespace {

// One thread per cell: x runs along a row (coalesced), y over rows.
constexpr int kBlockX = 32, kBlockY = 8;

template <typename T>
__global__ void StencilKernel(const T* __restrict__ in, T* __restrict__ out, int64_t pitch,
                              Region r, Weights<T> wt) {
  const int j = r.j0 + static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  const int i = r.i0 + static_cast<int>(blockIdx.y * blockDim.y + threadIdx.y);
  if (i >= r.i1 || j >= r.j1) return;
  const int64_t idx = i * pitch + j;
  out[idx] = StencilPoint(in, idx, pitch, wt);
}

template <typename T>
cudaError_t Launch(const T* in, T* out, int64_t pitch, Region r, Weights<T> wt,
                   cudaStream_t stream) {
  if (r.empty()) return cudaSuccess;
  const dim3 block(kBlockX, kBlockY);
  const dim3 grid((r.j1 - r.j0 + kBlockX - 1) / kBlockX, (r.i1 - r.i0 + kBlockY - 1) / kBlockY);
  if (grid.y > 65535) return cudaErrorInvalidConfiguration;  // more than 524,280 rows
  StencilKernel<T><<<grid, block, 0, stream>>>(in, out, pitch, r, wt);
  return cudaGetLastError();
}

}  // namespace

cudaError_t LaunchStencil(const float* in, float* out, int64_t pitch, Region r, Weights<float> wt,
                          cudaStream_t stream) {
  return Launch(in, out, pitch, r, wt, stream);
}

cudaError_t LaunchStencil(const double* in, double* out, int64_t pitch, Region r,
                          Weights<double> wt, cudaStream_t stream) {
  return Launch(in, out, pitch, r, wt, stream);
}

}  // namespace mpigpu::halo

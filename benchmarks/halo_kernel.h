// The halo application's CUDA step: one 9-point stencil update of a region of a device array, with
// the arithmetic of halo_stencil.h (bit-identical to the CPU sweep).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "benchmarks/halo_stencil.h"

namespace mpigpu::halo {

// Enqueues out[cell] = StencilPoint(in, cell) for every cell of `r` on `stream`; `in` and `out`
// are distinct device arrays with `pitch` elements per row. Returns the launch's error.
cudaError_t LaunchStencil(const float* in, float* out, int64_t pitch, Region r, Weights<float> wt,
                          cudaStream_t stream);
cudaError_t LaunchStencil(const double* in, double* out, int64_t pitch, Region r,
                          Weights<double> wt, cudaStream_t stream);

}  // namespace mpigpu::halo

// Reductions of device memory by CUDA kernels: inout[i] = inout[i] op in[i] over packed
// elements (reduce_kinds.h), the same results as the host's ApplyOp (mpigpu_api/ops.h):
// integer SUM/PROD wrap around, MIN/MAX of NaN follow `<`, logical ops give 0 or 1,
// MINLOC/MAXLOC keep the smaller index on equal values.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "devcoll/reduce_kinds.h"
#include "memcopy/status.h"

namespace mpigpu::devcoll {

// Launches the combine of `n` packed elements of `e` on `stream` of the current device and
// returns without waiting. inout and in are device memory of that device (or mapped peer memory
// it can reach); any alignment (unaligned or packed pairs are read byte-wise). Errors:
// kInvalidArg (op not defined on e, null buffer with n > 0), kCuda (launch failed).
Status ReduceOnDevice(Op op, Elem e, void* inout, const void* in, size_t n,
                      cudaStream_t stream);

}  // namespace mpigpu::devcoll

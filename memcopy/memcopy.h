// Parameterized memcpy: one copy entry point that is told where both buffers live.
//
// Copy() never asks the driver about a pointer. Host-to-host copies run at once on the calling
// thread (memcpy, or non-temporal stores from MPIGPU_MEMCPY_NT_THRESHOLD up, so a large copy
// does not evict the cache the peer's data will be read from). Copies that touch a device are
// enqueued on `stream` with the explicit cudaMemcpyKind (peer copies with cudaMemcpyPeerAsync)
// and complete when the stream does; the caller synchronises.
//
// The paper's other two strategies stay selectable (CopyWithStrategy) so benchmarks can compare
// them: kUvaDefault hands every copy to cudaMemcpyAsync(cudaMemcpyDefault), kQuery calls
// cudaPointerGetAttributes on both pointers and then copies with the kind it found.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "memcopy/config.h"
#include "memcopy/memloc.h"
#include "memcopy/status.h"

namespace mpigpu {

// A failed CUDA call as a Status with `code` (kCuda unless the caller knows better): "what:
// CUDA's error string". The error is also taken out of the runtime's last-error state, so the
// application's next cudaGetLastError() does not report mpigpu's failure (a sticky error, a
// lost context, stays sticky whatever is done).
Status CudaFailure(const std::string& what, cudaError_t e, Err code = Err::kCuda);

// CUDA runtime call -> CudaFailure with the call's text.
#define MPIGPU_CUDA_CHECK(call)                                                     \
  do {                                                                              \
    cudaError_t _e = (call);                                                        \
    if (_e != cudaSuccess) return ::mpigpu::CudaFailure(#call, _e);                 \
  } while (0)

// Copies `bytes` from src (at src_loc) to dst (at dst_loc). Invalid arguments (null pointer with
// bytes > 0, a device location with a negative ordinal) give kInvalidArg; nothing is copied.
Status Copy(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc, size_t bytes,
            cudaStream_t stream);

// Strided copy of `height` rows of `width` bytes; rows start `dpitch` / `spitch` bytes apart
// (the shape of a vector datatype). Device copies use one cudaMemcpy2DAsync, never a row loop.
Status Copy2D(void* dst, MemLoc dst_loc, size_t dpitch, const void* src, MemLoc src_loc,
              size_t spitch, size_t width, size_t height, cudaStream_t stream);

// Copy() with an explicit strategy (benchmarks). kParameterized is Copy() itself; the other two
// ignore the locations (that is their point) except to route host-host copies in kQuery.
Status CopyWithStrategy(CopyStrategy strategy, void* dst, MemLoc dst_loc, const void* src,
                        MemLoc src_loc, size_t bytes, cudaStream_t stream);

// Host-to-host copy as Copy() does it: memcpy below `nt_threshold`, streaming stores above.
void HostCopy(void* dst, const void* src, size_t bytes, size_t nt_threshold);
// Streaming (non-temporal) store copy, any alignment; falls back to memcpy off x86-64.
void StreamingCopy(void* dst, const void* src, size_t bytes);

// Number of usable CUDA devices; 0 where there is no GPU or no driver (never an error).
int CudaDeviceCount();

}  // namespace mpigpu

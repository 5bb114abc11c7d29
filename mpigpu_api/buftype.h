// Buffer-type tags (MPIGPU_BUF_*) -> MemLoc, without asking the driver about the pointer.
#pragma once

#include "memcopy/memloc.h"
#include "mpigpu_api/mpigpu.h"

namespace mpigpu {

// ResolveBuftype of every tag but MPIGPU_BUF_HOST (GPU tags and invalid ones).
int ResolveGpuBuftype(MPIGPU_Buftype buftype, MemLoc* loc);

// *loc = where memory tagged `buftype` lives: MPIGPU_BUF_HOST -> host, MPIGPU_BUF_GPU -> the
// calling thread's current device (cudaGetDevice), MPIGPU_BUF_GPU_DEVICE(n) -> device n.
// Errors (detail recorded with SetLastError): MPIGPU_ERR_BUFFER (not a tag, or device n does not
// exist), MPIGPU_ERR_NO_GPU (a GPU tag where no CUDA device is usable), MPIGPU_ERR_OTHER
// (cudaGetDevice failed).
// Inline for host memory, the tag of every small message; the GPU tags ask CUDA anyway.
inline int ResolveBuftype(MPIGPU_Buftype buftype, MemLoc* loc) {
  if (buftype != MPIGPU_BUF_HOST) return ResolveGpuBuftype(buftype, loc);
  *loc = MemLoc::Host();
  return MPIGPU_SUCCESS;
}

// The check itself, whatever the configuration says.
int CheckBufferLocationNow(const void* ptr, MemLoc loc);
// GetApiConfig().check_buffers.
bool CheckBuffersEnabled();
// With MPIGPU_CHECK_BUFFERS (default on in debug builds): asks the driver where `ptr` lives and
// returns MPIGPU_ERR_BUFFER (with a detail naming both) for a host pointer tagged GPU, a device
// pointer tagged host, or a pointer on another device than the tag names. Managed memory passes
// either tag. Off (the default in -c opt builds) it costs nothing: the tag is trusted.
inline int CheckBufferLocation(const void* ptr, MemLoc loc) {
  // Read once (the configuration never changes): GetConfig costs a pthread_once per call.
  static const bool enabled = CheckBuffersEnabled();
  return enabled ? CheckBufferLocationNow(ptr, loc) : MPIGPU_SUCCESS;
}

}  // namespace mpigpu

// Buffer-type tags (MPIGPU_BUF_*) -> MemLoc, without asking the driver about the pointer.
#pragma once

#include "memcopy/memloc.h"
#include "mpigpu_api/mpigpu.h"

namespace mpigpu {

// *loc = where memory tagged `buftype` lives: MPIGPU_BUF_HOST -> host, MPIGPU_BUF_GPU -> the
// calling thread's current device (cudaGetDevice), MPIGPU_BUF_GPU_DEVICE(n) -> device n.
// Errors (detail recorded with SetLastError): MPIGPU_ERR_BUFFER (not a tag, or device n does not
// exist), MPIGPU_ERR_NO_GPU (a GPU tag where no CUDA device is usable), MPIGPU_ERR_OTHER
// (cudaGetDevice failed).
int ResolveBuftype(MPIGPU_Buftype buftype, MemLoc* loc);

// With MPIGPU_CHECK_BUFFERS (default on in debug builds): asks the driver where `ptr` lives and
// returns MPIGPU_ERR_BUFFER (with a detail naming both) for a host pointer tagged GPU, a device
// pointer tagged host, or a pointer on another device than the tag names. Managed memory passes
// either tag. Off (the default in -c opt builds) it costs nothing: the tag is trusted.
int CheckBufferLocation(const void* ptr, MemLoc loc);
// The check itself, whatever the configuration says.
int CheckBufferLocationNow(const void* ptr, MemLoc loc);

}  // namespace mpigpu

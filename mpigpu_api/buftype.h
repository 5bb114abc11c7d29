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

// Hook for the optional check that a pointer really lives where its tag says (the
// MPIGPU_CHECK_BUFFERS variable of a later issue, which will query cudaPointerGetAttributes).
// Off the fast path by design: it accepts everything until that check exists.
inline int CheckBufferLocation(const void* /*ptr*/, MemLoc /*loc*/) { return MPIGPU_SUCCESS; }

}  // namespace mpigpu

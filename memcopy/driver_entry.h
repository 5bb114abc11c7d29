// DriverEntry: a CUDA driver API function, found through the runtime that every program here
// already loads (cudaGetDriverEntryPointByVersion), so that nothing links libcuda itself and a
// machine without a driver still starts. `version` is the CUDA version whose semantics the
// caller wants (e.g. 12000: the v2 stream memory operations).
#pragma once

#include <cuda_runtime_api.h>

#include "memcopy/status.h"

namespace mpigpu {

// Whether a runtime error means "no usable GPU here" (no device, no or a mismatched driver)
// rather than a failed call.
bool IsNoGpu(cudaError_t r);

// The raw lookup: *fn = the entry point, or Status kNoGpu (no driver or device) / kCuda (this
// driver lacks it); *fn stays null on failure, and the runtime's last error is cleared.
Status FindDriverEntryRaw(const char* name, int version, void** fn);

template <class Fn>
Status FindDriverEntry(const char* name, int version, Fn* fn) {
  void* p = nullptr;
  Status st = FindDriverEntryRaw(name, version, &p);
  *fn = reinterpret_cast<Fn>(p);
  return st;
}

}  // namespace mpigpu

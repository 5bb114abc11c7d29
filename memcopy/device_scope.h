// DeviceScope: makes a device current for a scope and gives the caller's device back after it.
//
// Streams, events, kernel launches and default-stream copies act on the calling thread's current
// device, yet mpigpu must not change which device the application's own CUDA calls go to. Every
// layer that needs a device for a moment (the copy engines, the resident copier, the default-
// stream order, the API's default-stream copies) takes it through this one scope:
//   - host memory (MemLoc::Host()) or a negative ordinal: nothing, not even a CUDA call;
//   - the device is current already: one cudaGetDevice, no cudaSetDevice, nothing to restore;
//   - else cudaSetDevice(device), and the destructor sets the caller's device again.
// When the current device cannot be read or set, nothing is changed or restored and ok() is
// false; status() then names the failed call. Callers that must not go on return status();
// others go on and let the CUDA call that follows report (the API's copies).
//
// Header only, so nvcc-compiled files (transport/lmt/device_copier.cu) use it too, and inline: the
// copy engines take it on every issued copy.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "memcopy/memcopy.h"
#include "memcopy/memloc.h"
#include "memcopy/status.h"

namespace mpigpu {

class DeviceScope {
 public:
  // Device `device`; a negative ordinal does nothing.
  explicit DeviceScope(int device) : device_(device) {
    if (device < 0) return;
    int current = -1;
    error_ = cudaGetDevice(&current);
    if (error_ != cudaSuccess || current == device) return;
    error_ = cudaSetDevice(device);
    if (error_ == cudaSuccess) saved_ = current;
    else set_failed_ = true;
  }
  // `loc`'s device; nothing for host memory.
  explicit DeviceScope(MemLoc loc) : DeviceScope(loc.is_device() ? int{loc.device} : -1) {}
  ~DeviceScope() {
    if (saved_ >= 0) (void)cudaSetDevice(saved_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

  bool ok() const { return error_ == cudaSuccess; }
  // Ok, or the failed call as a CudaFailure: "cudaGetDevice: ..." or "cudaSetDevice(N): ..."
  // (kCuda; the error is also taken out of the runtime's last-error state).
  Status status() const {
    if (ok()) return Status::Ok();
    return CudaFailure(set_failed_ ? "cudaSetDevice(" + std::to_string(device_) + ")"
                                   : std::string("cudaGetDevice"),
                       error_);
  }

 private:
  int device_;
  int saved_ = -1;  // the caller's device, to be restored; -1 when nothing was switched
  cudaError_t error_ = cudaSuccess;
  bool set_failed_ = false;
};

}  // namespace mpigpu

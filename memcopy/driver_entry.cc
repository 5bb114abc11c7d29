#include "memcopy/driver_entry.h"

#include <string>

#include "memcopy/memcopy.h"

namespace mpigpu {

bool IsNoGpu(cudaError_t r) {
  return r == cudaErrorNoDevice || r == cudaErrorInsufficientDriver ||
         r == cudaErrorSystemDriverMismatch || r == cudaErrorCompatNotSupportedOnDevice;
}

Status FindDriverEntryRaw(const char* name, int version, void** fn) {
  *fn = nullptr;
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t r =
      cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &found);
  if (r != cudaSuccess) {
    return CudaFailure(std::string("cudaGetDriverEntryPointByVersion(") + name + ")", r,
                       IsNoGpu(r) ? Err::kNoGpu : Err::kCuda);
  }
  if (found != cudaDriverEntryPointSuccess || p == nullptr)
    return Status(Err::kCuda, std::string("the CUDA driver has no ") + name + " (version " +
                                  std::to_string(version) + ", query result " +
                                  std::to_string(static_cast<int>(found)) + ")");
  *fn = p;
  return Status::Ok();
}

}  // namespace mpigpu

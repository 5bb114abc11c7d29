#include "mpigpu_api/buftype.h"

#include <cuda_runtime_api.h>

#include <cstdio>
#include <string>

#include "mpigpu_api/api_config.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/errors.h"

namespace mpigpu {

int ResolveGpuBuftype(MPIGPU_Buftype buftype, MemLoc* loc) {
  if (!MPIGPU_BUFTYPE_IS_VALID(buftype)) {
    return SetLastError(MPIGPU_ERR_BUFFER,
                        "buffer type " + std::to_string(buftype) +
                            " is not MPIGPU_BUF_HOST, MPIGPU_BUF_GPU or MPIGPU_BUF_GPU_DEVICE(n)");
  }
  const int ndev = CudaDeviceCount();  // cached after the first call
  if (ndev == 0) {
    return SetLastError(MPIGPU_ERR_NO_GPU,
                        "buffer type names device memory but no CUDA device is usable");
  }
  if (buftype == MPIGPU_BUF_GPU) {
    int dev = -1;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) {
      return ReturnCode(CudaFailure("cudaGetDevice", e));
    }
    *loc = MemLoc::Device(dev);
    return MPIGPU_SUCCESS;
  }
  const int dev = buftype - MPIGPU_BUF_GPU_DEVICE(0);
  if (dev >= ndev) {
    return SetLastError(MPIGPU_ERR_BUFFER, "MPIGPU_BUF_GPU_DEVICE(" + std::to_string(dev) +
                                               ") names a device that does not exist (" +
                                               std::to_string(ndev) + " visible)");
  }
  *loc = MemLoc::Device(dev);
  return MPIGPU_SUCCESS;
}

bool CheckBuffersEnabled() { return GetApiConfig().check_buffers; }

int CheckBufferLocationNow(const void* ptr, MemLoc loc) {
  if (ptr == nullptr || CudaDeviceCount() == 0) return MPIGPU_SUCCESS;  // nothing to ask
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
    (void)cudaGetLastError();  // unknown to CUDA: plain host memory
    a.type = cudaMemoryTypeUnregistered;
  }
  if (a.type == cudaMemoryTypeManaged) return MPIGPU_SUCCESS;
  const bool on_device = a.type == cudaMemoryTypeDevice;
  char where[64];
  std::snprintf(where, sizeof where, "%p", ptr);
  if (loc.is_device() && !on_device)
    return SetLastError(MPIGPU_ERR_BUFFER, std::string("buffer ") + where +
                                               " is host memory but is tagged as GPU memory (" +
                                               loc.ToString() + ")");
  if (loc.is_host() && on_device)
    return SetLastError(MPIGPU_ERR_BUFFER, std::string("buffer ") + where + " is memory of cuda:" +
                                               std::to_string(a.device) +
                                               " but is tagged MPIGPU_BUF_HOST");
  if (loc.is_device() && a.device != loc.device)
    return SetLastError(MPIGPU_ERR_BUFFER, std::string("buffer ") + where + " is memory of cuda:" +
                                               std::to_string(a.device) + " but is tagged " +
                                               loc.ToString());
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu

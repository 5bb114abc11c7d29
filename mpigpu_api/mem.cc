// MPIGPU_Alloc_mem / MPIGPU_Free_mem: host memory that copies to and from device memory at DMA
// speed (pinned where a CUDA device is usable). See mpigpu.h.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <unordered_map>

#include "memcopy/memcopy.h"
#include "mpigpu_api/errors.h"
#include "mpigpu_api/mpigpu.h"

namespace {

// Every live allocation and whether CUDA pinned it (it decides how the memory goes back).
struct Allocations {
  std::mutex mu;
  std::unordered_map<void*, bool> pinned;
};

Allocations& TheAllocations() {
  static Allocations* a = new Allocations();  // never destroyed: frees may come during exit
  return *a;
}

}  // namespace

extern "C" int MPIGPU_Alloc_mem(size_t size, void* baseptr) {
  if (baseptr == nullptr)
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Alloc_mem: baseptr is null");
  void** out = static_cast<void**>(baseptr);
  *out = nullptr;
  const size_t bytes = size == 0 ? 1 : size;
  void* p = nullptr;
  bool pinned = false;
  // Portable: pinned for every device's context, not only the current one.
  if (mpigpu::CudaDeviceCount() > 0) {
    if (cudaHostAlloc(&p, bytes, cudaHostAllocPortable) == cudaSuccess) pinned = true;
    else (void)cudaGetLastError();  // fall back to pageable memory
  }
  if (!pinned && posix_memalign(&p, 4096, bytes) != 0) {
    return mpigpu::SetLastError(MPIGPU_ERR_OTHER, "MPIGPU_Alloc_mem: out of memory for " +
                                                      std::to_string(size) + " bytes");
  }
  Allocations& a = TheAllocations();
  std::lock_guard<std::mutex> lock(a.mu);
  a.pinned[p] = pinned;
  *out = p;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Free_mem(void* base) {
  if (base == nullptr) return MPIGPU_SUCCESS;
  bool pinned = false;
  {
    Allocations& a = TheAllocations();
    std::lock_guard<std::mutex> lock(a.mu);
    auto it = a.pinned.find(base);
    if (it == a.pinned.end()) {
      return mpigpu::SetLastError(MPIGPU_ERR_ARG,
                                  "MPIGPU_Free_mem: memory not from MPIGPU_Alloc_mem (or freed)");
    }
    pinned = it->second;
    a.pinned.erase(it);
  }
  if (!pinned) {
    std::free(base);
    return MPIGPU_SUCCESS;
  }
  const cudaError_t e = cudaFreeHost(base);
  if (e != cudaSuccess)
    return mpigpu::ReturnCode(mpigpu::CudaFailure("MPIGPU_Free_mem: cudaFreeHost", e));
  return MPIGPU_SUCCESS;
}

#include "internode/ib/ib_dmabuf.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "memcopy/device_scope.h"
#include "memcopy/driver_entry.h"
#include "memcopy/memcopy.h"

namespace mpigpu::internode {
namespace {

// The driver calls this needs, through the runtime's entry points (no link against libcuda:
// a binary starts on machines without a GPU driver).
struct DriverCalls {
  PFN_cuMemGetHandleForAddressRange_v11070 get_handle = nullptr;
  PFN_cuMemGetAddressRange_v3020 get_range = nullptr;
  PFN_cuDeviceGetAttribute_v2000 get_attribute = nullptr;
  bool ok() const { return get_handle && get_range && get_attribute; }
};

const DriverCalls& Driver() {
  static const DriverCalls calls = [] {
    DriverCalls c;
    (void)FindDriverEntry("cuMemGetHandleForAddressRange", 11070, &c.get_handle);
    (void)FindDriverEntry("cuMemGetAddressRange", 3020, &c.get_range);
    (void)FindDriverEntry("cuDeviceGetAttribute", 2000, &c.get_attribute);
    return c;
  }();
  return calls;
}

}  // namespace

Status ExportDmabuf(const void* ptr, size_t len, int* fd, uint64_t* offset) {
  *fd = -1;
  *offset = 0;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess || a.type != cudaMemoryTypeDevice) {
    (void)cudaGetLastError();
    return Status(Err::kInvalidArg, "dma-buf: not device memory");
  }
  const DriverCalls& d = Driver();
  if (!d.ok()) return Status(Err::kNoGpu, "dma-buf: the CUDA driver has no dma-buf export");
  int supported = 0;
  if (d.get_attribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, a.device) !=
          CUDA_SUCCESS ||
      supported == 0)
    return Status(Err::kNoGpu, "dma-buf: GPU " + std::to_string(a.device) +
                                   " cannot export dma-bufs (needs the open kernel modules)");
  // The export covers whole host pages of one allocation: round the range out to pages, which
  // stay inside it (allocations are aligned to the GPU's granularity, far above a page).
  CUdeviceptr base = 0;
  size_t size = 0;
  const auto p = reinterpret_cast<CUdeviceptr>(ptr);
  if (d.get_range(&base, &size, p) != CUDA_SUCCESS)
    return Status(Err::kCuda, "dma-buf: cuMemGetAddressRange failed");
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t lo = p & ~(page - 1);
  const uint64_t hi = std::min<uint64_t>((p + len + page - 1) & ~(page - 1), base + size);
  if (lo < base || hi < p + len)
    return Status(Err::kInvalidArg, "dma-buf: the range leaves its allocation");
  int out = -1;
  const CUresult rc = d.get_handle(&out, static_cast<CUdeviceptr>(lo), hi - lo,
                                   CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
  if (rc != CUDA_SUCCESS || out < 0)
    return Status(Err::kCuda, "dma-buf: cuMemGetHandleForAddressRange failed (CUresult " +
                                  std::to_string(static_cast<int>(rc)) + ")");
  *fd = out;
  *offset = p - lo;
  return Status::Ok();
}

Status RegisterDeviceMemory(const IbDevice& dev, void* ptr, size_t len, ibv_mr** mr) {
  *mr = nullptr;
  if (!dev.dmabuf() || dev.api().ibv_reg_dmabuf_mr == nullptr)
    return Status(Err::kNoGpu, "dma-buf: " + dev.name() + " takes no dma-buf registrations");
  int fd = -1;
  uint64_t offset = 0;
  MPIGPU_RETURN_IF_ERROR(ExportDmabuf(ptr, len, &fd, &offset));
  *mr = dev.api().ibv_reg_dmabuf_mr(
      dev.pd(), offset, len, reinterpret_cast<uint64_t>(ptr), fd,
      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
  const int err = errno;
  ::close(fd);  // the region holds its own reference to the dma-buf
  if (*mr == nullptr)
    return Status(Err::kSystem, "dma-buf: ibv_reg_dmabuf_mr of " + std::to_string(len) +
                                    " bytes: " + std::strerror(err));
  return Status::Ok();
}

Status FlushRdmaWrites(int device) {
  DeviceScope scope(device);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  MPIGPU_CUDA_CHECK(cudaDeviceFlushGPUDirectRDMAWrites(
      cudaFlushGPUDirectRDMAWritesTargetCurrentDevice, cudaFlushGPUDirectRDMAWritesToOwner));
  return Status::Ok();
}

}  // namespace mpigpu::internode

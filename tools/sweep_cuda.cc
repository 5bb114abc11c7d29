#include "tools/sweep_cuda.h"

#include <stdlib.h>

#include <algorithm>
#include <cstring>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"
#include "memcopy/pattern.h"
#include "perf/api_check.h"

namespace mpigpu {
namespace sweep {

using ::mpigpu::testing::PatternByte;  // memcopy/pattern.h: the tests' pattern too

Status Buffer::Alloc(Loc loc, size_t bytes, bool pinned_host) {
  Free();
  loc_ = loc;
  pinned_ = pinned_host && loc == Loc::kHost;
  bytes_ = std::max<size_t>(bytes, 1);
  if (loc == Loc::kHost) {
    if (pinned_) {
      PERF_API(MPIGPU_Alloc_mem(bytes_, &ptr_));
    } else if (posix_memalign(&ptr_, 4096, bytes_) != 0) {
      return Status(Err::kNoMemory, "out of host memory");
    }
    std::memset(ptr_, 0, bytes_);  // touch the pages before timing
  } else {
    MPIGPU_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
    MPIGPU_CUDA_CHECK(cudaMemset(ptr_, 0, bytes_));
    // cudaMemset is asynchronous and mpigpu copies on its own non-blocking streams: it must
    // land before a receive can write here.
    MPIGPU_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return Status::Ok();
}

Status Buffer::Fill(size_t slot_bytes, const std::vector<uint32_t>& seeds) {
  const size_t total = slot_bytes * seeds.size();
  std::vector<uint8_t> host(loc_ == Loc::kDevice ? total : 0);
  uint8_t* p = loc_ == Loc::kDevice ? host.data() : static_cast<uint8_t*>(ptr_);
  for (size_t k = 0; k < seeds.size(); ++k)
    ::mpigpu::testing::FillPattern(p + k * slot_bytes, slot_bytes, seeds[k]);
  if (loc_ == Loc::kDevice && total > 0) {
    MPIGPU_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), total, cudaMemcpyHostToDevice));
    // A pageable H2D cudaMemcpy may return before its DMA lands, and mpigpu's non-blocking
    // streams do not wait for it: the data (or the poison) must be there before the MPIGPU call.
    MPIGPU_CUDA_CHECK(cudaDeviceSynchronize());
  }
  return Status::Ok();
}

Status Buffer::Verify(size_t slot_bytes, const std::vector<uint32_t>& seeds, Mismatch* m) const {
  *m = Mismatch();
  const size_t total = slot_bytes * seeds.size();
  std::vector<uint8_t> host(loc_ == Loc::kDevice ? total : 0);
  const uint8_t* p = static_cast<const uint8_t*>(ptr_);
  if (loc_ == Loc::kDevice) {
    if (total > 0)
      MPIGPU_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, total, cudaMemcpyDeviceToHost));
    p = host.data();
  }
  for (size_t k = 0; k < seeds.size(); ++k) {
    const long long i = ::mpigpu::testing::FirstMismatch(p + k * slot_bytes, slot_bytes, seeds[k]);
    if (i >= 0) {
      m->slot = static_cast<int>(k);
      m->byte = i;
      m->got = p[k * slot_bytes + i];
      m->want = PatternByte(seeds[k], static_cast<uint64_t>(i));
      break;
    }
  }
  return Status::Ok();
}

void Buffer::Free() {
  if (ptr_ == nullptr) return;
  if (pinned_) MPIGPU_Free_mem(ptr_);
  else if (loc_ == Loc::kHost) free(ptr_);
  else cudaFree(ptr_);
  ptr_ = nullptr;
}

cudaError_t PinnedBuffer::Alloc(size_t bytes) {
  return cudaMallocHost(&ptr_, std::max<size_t>(bytes, 1));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ == nullptr) return;
  DeviceScope on(device_);
  cudaFree(ptr_);
}

cudaError_t DeviceBuffer::Alloc(int device, size_t bytes) {
  device_ = device;
  DeviceScope on(device);
  if (!on.ok()) return cudaErrorInvalidDevice;
  return cudaMalloc(&ptr_, std::max<size_t>(bytes, 1));
}

cudaError_t Stream::Create(int device) {
  DeviceScope on(device);
  if (!on.ok()) return cudaErrorInvalidDevice;
  return cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking);
}

std::string DeviceName(int device) {
  if (device < 0) return "host";
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) return "GPU " + std::to_string(device);
  return std::string(p.name) + ", GPU " + std::to_string(device);
}

}  // namespace sweep
}  // namespace mpigpu

// mpigpu-sweep's memory and streams: the measured message buffers (host or device, with the -c
// pattern), and the CUDA RAII pieces the limit and peer columns use.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memcopy/status.h"
#include "mpigpu_api/mpigpu.h"
#include "tools/sweep_options.h"

namespace mpigpu {
namespace sweep {

// Where a buffer's slots first differ from their seeds' pattern (memcopy/pattern.h).
struct Mismatch {
  int slot = -1;  // -1: every slot holds its pattern
  long long byte = 0;
  int got = 0, want = 0;
};

// A buffer in host (pageable, page aligned: what an application has; or pinned through
// MPIGPU_Alloc_mem) or device memory.
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { Free(); }

  Status Alloc(Loc loc, size_t bytes, bool pinned_host = false);

  void* ptr() const { return ptr_; }
  char* at(size_t offset) const { return static_cast<char*>(ptr_) + offset; }
  MPIGPU_Buftype tag() const { return loc_ == Loc::kHost ? MPIGPU_BUF_HOST : MPIGPU_BUF_GPU; }

  // Slot k (of `slot_bytes` bytes) gets seed seeds[k].
  Status Fill(size_t slot_bytes, const std::vector<uint32_t>& seeds);
  // The first slot that does not hold its seed's pattern (m->slot -1 when all do).
  Status Verify(size_t slot_bytes, const std::vector<uint32_t>& seeds, Mismatch* m) const;

 private:
  void Free();

  void* ptr_ = nullptr;
  Loc loc_ = Loc::kHost;
  bool pinned_ = false;  // from MPIGPU_Alloc_mem
  size_t bytes_ = 0;
};

// Pinned host memory (the staging buffers and the limit copies' host side).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
  }
  cudaError_t Alloc(size_t bytes);
  void* ptr() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

// Memory on one device, allocated and freed with that device current.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  cudaError_t Alloc(int device, size_t bytes);
  void* ptr() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
  int device_ = 0;
};

// A non-blocking stream on one device.
class Stream {
 public:
  Stream() = default;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream() {
    if (s_ != nullptr) cudaStreamDestroy(s_);
  }
  cudaError_t Create(int device);
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// "NAME, GPU n", or "host" for device -1.
std::string DeviceName(int device);

}  // namespace sweep
}  // namespace mpigpu

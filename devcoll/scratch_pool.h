// Device scratch for collectives, kept between calls. A cudaMalloc costs tens of microseconds
// and a cudaFree synchronises the whole device; a collective that allocated its staging per
// call would pay both every time, and every fresh allocation is a new CUDA IPC export for the
// peers that map it. Blocks come in power-of-two classes (at least 64 KiB) per device; a
// released block goes back to its class's free list (at most kKeepPerClass kept, the rest
// freed), so a loop of equal collectives reuses the same few allocations.
//
// Thread-safe. The pool is never destroyed (collectives may run during exit); blocks kept at
// exit are the driver's to reclaim.
#pragma once

#include <cstddef>
#include <memory>

#include "memcopy/status.h"

namespace mpigpu::devcoll {

constexpr int kKeepPerClass = 4;

class ScratchBlock {
 public:
  ScratchBlock(void* ptr, int device, size_t bytes) : ptr_(ptr), device_(device), bytes_(bytes) {}
  ~ScratchBlock();  // back to the pool
  ScratchBlock(const ScratchBlock&) = delete;
  ScratchBlock& operator=(const ScratchBlock&) = delete;
  unsigned char* data() const { return static_cast<unsigned char*>(ptr_); }
  int device() const { return device_; }
  size_t bytes() const { return bytes_; }  // the class size: at least what was asked

 private:
  void* ptr_;
  int device_;
  size_t bytes_;
};

// A block of at least `bytes` on `device` (kept or newly allocated there); the caller's current
// device is left as it was. Errors: kInvalidArg (negative device), kCuda (allocation failed).
Status TakeScratch(int device, size_t bytes, std::shared_ptr<ScratchBlock>* out);

// Blocks the pool holds now (kept, not taken), for tests.
size_t KeptScratchBlocks();

}  // namespace mpigpu::devcoll

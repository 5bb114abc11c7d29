// CopyEngine: where the pipeline's copies run. The pipeline issues copies, groups them with Mark()
// into one piece of work (a ring unit: head + strided middle + tail), and polls that piece later.
//
// Contract (every implementation):
//   - Copies are told both locations (the parameterized copy, //memcopy); an engine never asks the
//     driver where memory is.
//   - Pieces complete in the order they were marked, so a done ticket implies every earlier one
//     is done (one CUDA stream gives this for free).
//   - Poll and Wait never block on anything but the engine's own copies; Poll never blocks.
//   - A ticket that completed may be polled again: it stays done.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "memcopy/memloc.h"
#include "memcopy/status.h"
#include "memreg/reg_cache.h"

namespace mpigpu {

// A piece of work; tickets of one engine count up from 1.
using Ticket = uint64_t;

class CopyEngine {
 public:
  virtual ~CopyEngine() = default;
  // Issues a copy of `bytes` (may complete at once or later).
  virtual Status Issue(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc,
                       size_t bytes) = 0;
  // Issues a strided copy: `height` rows of `width` bytes, `dpitch` / `spitch` apart.
  virtual Status Issue2D(void* dst, MemLoc dst_loc, size_t dpitch, const void* src,
                         MemLoc src_loc, size_t spitch, size_t width, size_t height) = 0;
  // Closes the copies issued since the last Mark into one piece; `*out` names it.
  virtual Status Mark(Ticket* out) = 0;
  // `*done` = the piece and all earlier ones completed. Never blocks.
  virtual Status Poll(Ticket t, bool* done) = 0;
  // Blocks until the piece completed.
  virtual Status Wait(Ticket t) = 0;
};

// Host memory on both sides: copies run at once on the calling thread (mpigpu::Copy, so large
// copies use streaming stores); every piece is done when marked. A device location is kInvalidArg.
class HostCopyEngine final : public CopyEngine {
 public:
  Status Issue(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc, size_t bytes) override;
  Status Issue2D(void* dst, MemLoc dst_loc, size_t dpitch, const void* src, MemLoc src_loc,
                 size_t spitch, size_t width, size_t height) override;
  Status Mark(Ticket* out) override;
  Status Poll(Ticket t, bool* done) override;
  Status Wait(Ticket t) override;

 private:
  Ticket last_ = 0;
};

// One non-blocking CUDA stream on one device. Copies go to the stream (mpigpu::Copy / Copy2D with
// their explicit kinds); Mark records an event (cudaEventDisableTiming, from a pool that grows
// to the number of pieces in flight and is reused); Poll = cudaEventQuery. The caller's current
// device is left as it was. A host-to-host copy runs at once on the CPU (as Copy does), so it is
// not ordered after earlier copies on the stream: pieces must not overlap in memory (the
// pipeline's never do: each unit is its own range).
// Pageable host memory (memreg/pin_cache.h): a host<->device copy from MPIGPU_PIN_CACHE_MIN bytes
// asks the pin cache, which pins a range on its second use; the piece holds the pin until it
// retires (Poll/Wait saw it done, or the engine is destroyed after synchronising).
class CudaCopyEngine final : public CopyEngine {
 public:
  CudaCopyEngine() = default;
  ~CudaCopyEngine() override;
  CudaCopyEngine(CudaCopyEngine&& other) noexcept;
  CudaCopyEngine& operator=(CudaCopyEngine&& other) noexcept;
  CudaCopyEngine(const CudaCopyEngine&) = delete;
  CudaCopyEngine& operator=(const CudaCopyEngine&) = delete;

  // Err::kNoGpu when there is no usable CUDA device; kInvalidArg for a bad ordinal.
  static Status Create(int device, CudaCopyEngine* out);

  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }

  Status Issue(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc, size_t bytes) override;
  Status Issue2D(void* dst, MemLoc dst_loc, size_t dpitch, const void* src, MemLoc src_loc,
                 size_t spitch, size_t width, size_t height) override;
  Status Mark(Ticket* out) override;
  Status Poll(Ticket t, bool* done) override;
  Status Wait(Ticket t) override;

 private:
  struct Piece {
    Ticket ticket;
    cudaEvent_t event;
    std::vector<memreg::Region*> pins;  // held until the piece retired
  };
  // Asks the pin cache about the host side of a host<->device copy of [p, p + len).
  void MaybePin(MemLoc dst_loc, MemLoc src_loc, const void* dst, const void* src, size_t len);
  void ReleasePins(std::vector<memreg::Region*>* pins);
  Status CheckReady() const;
  // The in-flight piece for t, or nullptr when t already completed; kInvalidArg for a ticket
  // never handed out.
  Status Find(Ticket t, const Piece** out) const;
  // Returns the events of every piece up to t to the pool (t and earlier completed).
  void RetireThrough(Ticket t);
  void Destroy();

  int device_ = -1;
  cudaStream_t stream_ = nullptr;
  Ticket last_ = 0;
  std::deque<Piece> in_flight_;      // consecutive tickets, oldest first
  std::vector<cudaEvent_t> free_;    // recorded events whose pieces retired
  std::vector<memreg::Region*> pending_pins_;  // issued since the last Mark
};

}  // namespace mpigpu

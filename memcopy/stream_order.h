// DefaultStreamOrder: orders what mpigpu does next after the program's work on the legacy
// default stream. A device send waits for it first (transport/engine.cc): mpigpu copies on its
// own non-blocking streams, and its resident kernel and its peers read device memory directly,
// so none of them is ordered after that work by itself (`cudaMemcpy` from pageable memory may
// return before its DMA lands; a kernel launched with <<<...>>> runs later).
//
// Three equivalent checks, and which is cheapest depends on the node (one H200, 2026-11-24, stream
// idle, us per call; benchmarks/results/2026-11-24-default-stream-order-h200/): cudaStreamQuery on
// the legacy stream, then a synchronisation only when work is pending, 0.37 alone but 1.52 under
// MPS (where it asks the server); cudaStreamSynchronize, 0.48 alone, 0.29 under MPS; an event
// recorded on it and waited for, 0.85 and 0.54. The first Wait times each (16 calls, well under 100
// us once) and keeps the cheapest for the process. While a kernel of ours is resident (the copier),
// every one of them costs 1.4-2 us, with or without MPS, however often that kernel polls (one H200,
// 2026-11-24 and 2026-11-25). Tried and measured on one H200 on 2026-11-25, neither helps
// (benchmarks/results/2026-11-25-stream-order-h200/): enqueueing a stream write for GPU-side
// ordering costs as much (cuStreamWriteValue32: 1.2-1.8 us); waiting after the RTS went out, with
// the receiver's copy held by a fence word until then, made small D->D messages 0.5-0.8 us slower
// (the resident kernel sees the word only through PCIe round trips).
//
// One thread at a time (the engine's). By CUDA's rules the legacy default stream waits for every
// blocking stream (made by cudaStreamCreate without cudaStreamNonBlocking), so each of these
// checks also waits for the work on those: a send issued while a kernel runs on such a stream
// waits for that kernel (it cannot overlap it). Streams made with cudaStreamNonBlocking are not
// covered: the program synchronises their work itself, as with any CUDA-aware MPI.
#pragma once

#include <cuda_runtime_api.h>

#include <map>

#include "memcopy/memloc.h"
#include "memcopy/status.h"

namespace mpigpu {

class DefaultStreamOrder {
 public:
  enum class Way { kUnchosen, kQuery, kSync, kEvent };

  DefaultStreamOrder() = default;
  ~DefaultStreamOrder();
  DefaultStreamOrder(const DefaultStreamOrder&) = delete;
  DefaultStreamOrder& operator=(const DefaultStreamOrder&) = delete;

  // Returns once the work issued before now on the legacy default stream of `loc`'s device is
  // done; nothing to do for host memory.
  Status Wait(MemLoc loc);

  Way way() const { return way_; }
  // What `way` cost per call when the ways were timed (us; 0 before).
  double cost_us(Way way) const { return cost_us_[static_cast<int>(way)]; }
  static const char* Name(Way way);

 private:
  Status WaitOn(int device, Way way);
  Status Choose(int device);

  Way way_ = Way::kUnchosen;
  double cost_us_[4] = {};
  std::map<int, cudaEvent_t> events_;  // per device, made on first use
};

}  // namespace mpigpu

// DefaultStreamOrder: orders what mpigpu does next after the program's work on the legacy
// default stream. A device send waits for it first (transport/engine.cc): mpigpu copies on its
// own non-blocking streams, and its resident kernel and its peers read device memory directly,
// so none of them is ordered after that work by itself (`cudaMemcpy` from pageable memory may
// return before its DMA lands; a kernel launched with <<<...>>> runs later).
//
// Two equivalent checks, and which is cheaper depends on the node (run 40, one H200, stream
// idle): cudaStreamQuery on the legacy stream (a synchronisation only when work is pending)
// costs 0.24 us alone and 1.66 us under MPS, where it asks the server; an event recorded on it
// and waited for costs 0.49 us and 0.90 us under MPS. The first Wait times both (16 calls each,
// ~50 us once) and keeps the cheaper for the process.
//
// One thread at a time (the engine's). Work the program put on streams of its own is not covered:
// that stays the program's to synchronise, as with any CUDA-aware MPI.
#pragma once

#include <cuda_runtime_api.h>

#include <map>

#include "memcopy/memloc.h"
#include "memcopy/status.h"

namespace mpigpu {

class DefaultStreamOrder {
 public:
  enum class Way { kUnchosen, kQuery, kEvent };

  DefaultStreamOrder() = default;
  ~DefaultStreamOrder();
  DefaultStreamOrder(const DefaultStreamOrder&) = delete;
  DefaultStreamOrder& operator=(const DefaultStreamOrder&) = delete;

  // Returns once the work issued before now on the legacy default stream of `loc`'s device is
  // done; nothing to do for host memory.
  Status Wait(MemLoc loc);

  Way way() const { return way_; }
  // What each way cost per call when they were timed (us; 0 before).
  double query_us() const { return query_us_; }
  double event_us() const { return event_us_; }

 private:
  Status WaitOn(int device, Way way);
  Status Choose(int device);

  Way way_ = Way::kUnchosen;
  double query_us_ = 0, event_us_ = 0;
  std::map<int, cudaEvent_t> events_;  // per device, made on first use
};

}  // namespace mpigpu

// The pin cache's settings (MPIGPU_PIN_CACHE*), declared here where they are used and registered
// in the one registry (memcopy/params.h) that mpigpu-info prints and MPIGPU_Init checks.
// MPIGPU_PIN_CACHE is also read, with the same words, by the memory hooks at load (memhooks.cc),
// before the registry exists: on there (set, or unset where a GPU is) keeps the own-mapping
// table; off (and the ibverbs cache not wanted: MPIGPU_IB_REG_CACHE=0, or unset with no RDMA
// device) means no tracking and no logging.
#pragma once

#include <cstddef>

#include "memcopy/params.h"

namespace mpigpu::memreg {

struct PinCacheConfig {
  bool enabled = true;             // pin reused pageable host buffers (0: never pin)
  size_t max_mb = 2048;            // pinned bytes the cache may hold, in MiB
  size_t max_entries = 1024;       // pinned ranges the cache may hold
  size_t min_bytes = 256 << 10;    // copies below this are never pinned (nor remembered)
};

const PinCacheConfig& GetPinCacheConfig();
const Params<PinCacheConfig>& PinCacheParams();

}  // namespace mpigpu::memreg

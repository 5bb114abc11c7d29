// The registration cache's settings (MPIGPU_IB_REG_CACHE*), declared here where they are used and
// registered in the one registry (memcopy/params.h) that mpigpu-info prints and MPIGPU_Init
// checks. MPIGPU_IB_REG_CACHE is also read, with the same words, by the memory hooks at load
// (memhooks.cc), before the registry exists: off there (and MPIGPU_PIN_CACHE off or no GPU) means
// no logging; unset, the hooks start where an RDMA device is.
#pragma once

#include <cstddef>

#include "memcopy/params.h"

namespace mpigpu::memreg {

struct RegCacheConfig {
  bool enabled = true;          // keep registrations between uses (0: register per use)
  size_t max_mb = 2048;         // registered bytes the cache may hold, in MiB
  size_t max_entries = 4096;    // registrations the cache may hold
};

const RegCacheConfig& GetRegCacheConfig();
const Params<RegCacheConfig>& RegCacheParams();

}  // namespace mpigpu::memreg

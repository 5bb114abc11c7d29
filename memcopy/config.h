// memcopy's settings (MPIGPU_DEBUG, MPIGPU_MEMCPY_*), declared here where they are used and
// registered with every other component's in the one registry (memcopy/params.h), which
// mpigpu-info prints and MPIGPU_Init checks.
#pragma once

#include <cstddef>

#include "memcopy/log.h"
#include "memcopy/params.h"

namespace mpigpu {

enum class CopyStrategy : int {
  kParameterized = 0,  // the location travels with the pointer; no driver query (default)
  kUvaDefault = 1,     // cudaMemcpyDefault for every copy; the driver works out the kind
  kQuery = 2,          // cudaPointerGetAttributes on both pointers, then the explicit kind
};

struct MemcopyConfig {
  LogLevel debug = LogLevel::kWarn;
  CopyStrategy memcpy_strategy = CopyStrategy::kParameterized;
  size_t memcpy_nt_threshold = 0;  // host copies of at least this many bytes use streaming stores
};

// The environment's values, read once (the log level is set then).
const MemcopyConfig& GetMemcopyConfig();
// The table, for tests and tools (Parse with a lookup of their own).
const Params<MemcopyConfig>& MemcopyParams();

}  // namespace mpigpu

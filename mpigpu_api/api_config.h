// The API's settings (MPIGPU_CHECK_BUFFERS, MPIGPU_COLL_CHECK, MPIGPU_YIELD,
// MPIGPU_ASYNC_PROGRESS), declared here where they are used and registered with every other
// component's in the one registry (memcopy/params.h), which mpigpu-info prints and MPIGPU_Init
// checks.
#pragma once

#include "memcopy/params.h"

namespace mpigpu {

// MPIGPU_YIELD: whether ranks waiting for a message yield the CPU (sched_yield) when idle.
enum class YieldMode : int {
  kAuto = 0,  // when the node is oversubscribed: more local ranks than CPUs available to the job
  kOn = 1,
  kOff = 2,
};

struct ApiConfig {
  bool check_buffers = false;          // verify each buffer's tag with cudaPointerGetAttributes
  bool coll_check = false;             // collectives check their ranks' arguments (coll_check.h)
  YieldMode yield = YieldMode::kAuto;  // waiting ranks yield the CPU when idle (wait_policy.h)
  bool async_progress = false;  // a thread applies one-sided operations (win.cc)
};

// The environment's values, read once (defaults where refused: ConfigStatus says why).
const ApiConfig& GetApiConfig();
// The table, for tests and tools (Parse with a lookup of their own).
const Params<ApiConfig>& ApiParams();

}  // namespace mpigpu

#include "mpigpu_api/wait_policy.h"

#include <sched.h>
#include <unistd.h>

#include "memcopy/params.h"

namespace mpigpu::api {

int YieldAfterRounds(YieldMode mode, long local_ranks, long cpus) {
  switch (mode) {
    case YieldMode::kOff: return kNeverYield;
    case YieldMode::kOn: return kRoundsBeforeYield;
    case YieldMode::kAuto: break;
  }
  return cpus < 1 || local_ranks > cpus ? kRoundsBeforeYield : kRoundsBeforeLateYield;
}

long JobCpus() {
  if (const int n = LauncherInt("MPIGPU_JOB_CPUS"); n > 0) return n;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return sysconf(_SC_NPROCESSORS_ONLN);
}

}  // namespace mpigpu::api

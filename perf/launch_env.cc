#include "perf/launch_env.h"

#include <cstdlib>

#include "memcopy/params.h"

namespace mpigpu::perf {
namespace {

int Read(const char* name, int fallback) {
  const int v = LauncherInt(name);
  return v >= 0 ? v : fallback;
}

}  // namespace

LaunchEnv ReadLaunchEnv() {
  LaunchEnv e;
  e.launched = std::getenv("MPIGPU_RANK") != nullptr;
  e.rank = Read("MPIGPU_RANK", 0);
  e.size = Read("MPIGPU_SIZE", 1);
  e.local_rank = Read("MPIGPU_LOCAL_RANK", Read("LOCAL_RANK", e.rank));
  e.local_size = Read("MPIGPU_LOCAL_SIZE", e.size);
  return e;
}

}  // namespace mpigpu::perf

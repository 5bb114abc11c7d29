// CPU binding of the launcher's ranks, planned with hwloc before any rank starts.
//
// The plan holds a ready cpu_set_t per rank: the forked child applies it with sched_setaffinity
// (a plain system call, safe between fork and exec even if the launcher has threads, e.g. from
// the CUDA runtime) before execvp, so the program starts bound, every thread included.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

#include "memcopy/status.h"
#include "tools/launcher.h"

namespace mpigpu {
namespace launcher {

struct RankBinding {
  bool bound = false;
  cpu_set_t cpus;        // valid when bound
  std::string cpu_list;  // "0-3,8" (hwloc list syntax, OS indexes); empty when not bound
  std::string where;     // "core 0; numa 0", "numa 1 near GPU 0 (0000:1b:00.0)", ...
};

struct BindingPlan {
  BindTo policy = BindTo::kNone;  // the policy in effect (kAuto resolved)
  std::vector<RankBinding> ranks;
};

// Plans the binding of ranks 0..nranks-1 (local ranks: one node). kAuto resolves to none when
// nranks exceeds the cores, else numa when GPUs are visible, else core. A topology that cannot be
// read gives an error for an explicit core/numa request, and no binding for kAuto.
Status PlanBindings(BindTo requested, int nranks, BindingPlan* plan);

// One line for --report-bindings: "bound to cpus 0-1 (core 0; numa 0)" or "not bound".
std::string DescribeBinding(const RankBinding& b);

}  // namespace launcher
}  // namespace mpigpu

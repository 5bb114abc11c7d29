// When a waiting rank gives its CPU away (MPIGPU_YIELD). A wait polls the engine in rounds; from
// a certain round on, each round ends with sched_yield:
//   - oversubscribed (this node's ranks outnumber the CPUs the job may use) or MPIGPU_YIELD=on:
//     from kRoundsBeforeYield, since the peer may need our CPU (earlier, a yield only delays
//     noticing the peer);
//   - otherwise (auto): from kRoundsBeforeLateYield, so a rank that waits long stops competing
//     with a peer that outside load keeps off a CPU, while a short wait (a ping-pong's) never
//     yields;
//   - MPIGPU_YIELD=off: never.
#pragma once

#include "mpigpu_api/api_config.h"

namespace mpigpu::api {

constexpr int kRoundsBeforeYield = 64;
constexpr int kRoundsBeforeLateYield = 2048;
constexpr int kNeverYield = 1 << 30;

// The first round that yields, for MPIGPU_YIELD = `mode`, `local_ranks` ranks on this node and
// `cpus` CPUs available to the job (< 1: unknown, counted as oversubscribed).
int YieldAfterRounds(YieldMode mode, long local_ranks, long cpus);

// CPUs available to the job: MPIGPU_JOB_CPUS (mpigpurun: the CPUs it was allowed to use before
// it bound the ranks), else this process's own affinity mask.
long JobCpus();

}  // namespace mpigpu::api

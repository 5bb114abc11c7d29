// A rank's place in its job as the launcher exports it (mpigpurun: MPIGPU_RANK, MPIGPU_SIZE,
// MPIGPU_LOCAL_RANK, MPIGPU_LOCAL_SIZE), for what a measuring program must know before
// MPIGPU_Init: which rank reports bad input, which GPU the rank takes.
#pragma once

namespace mpigpu::perf {

struct LaunchEnv {
  bool launched = false;  // MPIGPU_RANK is set (else a one-rank job without a launcher)
  int rank = 0;           // MPIGPU_RANK
  int size = 1;           // MPIGPU_SIZE
  int local_rank = 0;     // MPIGPU_LOCAL_RANK, else LOCAL_RANK, else the rank
  int local_size = 1;     // MPIGPU_LOCAL_SIZE, else the size
};

// Reads the variables (atoi: a malformed value reads as 0; mpigpurun writes plain numbers).
LaunchEnv ReadLaunchEnv();

}  // namespace mpigpu::perf

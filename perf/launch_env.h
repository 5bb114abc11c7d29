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

// Reads the variables with LauncherInt (memcopy/params.h): a value that is not plain decimal
// digits counts as unset, like every MPIGPU_* number (mpigpurun writes plain digits).
LaunchEnv ReadLaunchEnv();

}  // namespace mpigpu::perf

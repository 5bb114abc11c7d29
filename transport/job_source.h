// Where this process learns its job: the one place that knows the launchers.
//   mpigpurun's variables (MPIGPU_RANK, MPIGPU_SIZE, MPIGPU_JOBID, MPIGPU_NODE_MAP) when set;
//   else a PMIx launcher's server when PMIX_RANK and PMIX_NAMESPACE are set (Open MPI's mpirun,
//     srun --mpi=pmix, prterun: internode/pmix), which also becomes the job's Bootstrap
//     (JobInfo::launcher_boot);
//   else a job of one rank.
// The engine then needs no launcher-specific code: it takes the JobInfo as it is.
#pragma once

#include "memcopy/status.h"
#include "transport/local_job.h"

namespace mpigpu::transport {

Status JobFromLauncher(JobInfo* out);

}  // namespace mpigpu::transport

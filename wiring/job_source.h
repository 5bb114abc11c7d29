// Where this process learns its job, and how it exchanges with the ranks beyond its node: the
// one place that knows the launchers.
//   mpigpurun's variables (MPIGPU_RANK, MPIGPU_SIZE, MPIGPU_JOBID, MPIGPU_NODE_MAP) when set;
//   else a PMIx launcher's server when PMIX_RANK and PMIX_NAMESPACE are set (Open MPI's mpirun,
//     srun --mpi=pmix, prterun: internode/pmix), which also becomes the job's Bootstrap
//     (JobInfo::launcher_boot);
//   else a job of one rank.
// The engine then needs no launcher-specific code: it takes the JobInfo as it is, and the
// bootstrap BootstrapFor chooses.
#pragma once

#include <memory>

#include "memcopy/status.h"
#include "transport/core/bootstrap.h"
#include "transport/local_job.h"

namespace mpigpu::wiring {

Status JobFromLauncher(transport::JobInfo* out);

// The job's exchange beyond this node: the launcher's own (PMIx) where it has one; none (null:
// the node's segment serves) for a job on one node; else mpigpurun's boot server.
Status BootstrapFor(const transport::JobInfo& job, std::shared_ptr<transport::Bootstrap>* out);

}  // namespace mpigpu::wiring

#include "transport/job_source.h"

#include <cstdlib>

#include "internode/pmix/pmix_bootstrap.h"

namespace mpigpu::transport {

Status JobFromLauncher(JobInfo* out) {
  // mpigpurun's variables win: a job it started inside an allocation that a PMIx launcher made
  // is mpigpurun's job.
  if (std::getenv("MPIGPU_RANK") == nullptr && internode::PmixBootstrap::Launched())
    return internode::PmixBootstrap::Start(out);
  return JobInfo::FromEnvironment(out);
}

}  // namespace mpigpu::transport

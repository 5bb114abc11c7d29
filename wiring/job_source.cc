#include "wiring/job_source.h"

#include <cstdlib>

#include "internode/boot/boot_client.h"
#include "internode/pmix/pmix_bootstrap.h"

namespace mpigpu::wiring {

Status JobFromLauncher(transport::JobInfo* out) {
  // mpigpurun's variables win: a job it started inside an allocation that a PMIx launcher made
  // is mpigpurun's job.
  if (std::getenv("MPIGPU_RANK") == nullptr && internode::PmixBootstrap::Launched())
    return internode::PmixBootstrap::Start(out);
  return transport::JobInfo::FromEnvironment(out);
}

Status BootstrapFor(const transport::JobInfo& job, std::shared_ptr<transport::Bootstrap>* out) {
  out->reset();
  if (job.launcher_boot) {
    *out = job.launcher_boot;
    return Status::Ok();
  }
  if (!job.SpansNodes()) return Status::Ok();
  std::unique_ptr<transport::Bootstrap> boot;
  MPIGPU_RETURN_IF_ERROR(transport::BootClient::FromEnvironment(job, &boot));
  *out = std::move(boot);
  return Status::Ok();
}

}  // namespace mpigpu::wiring

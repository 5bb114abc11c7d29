// How the layers above the transport get this process's Messenger (transport/core/messenger.h):
// the engine joins the job. Kept apart from engine.h so the API depends on the interface and
// this one function, not on the engine's class.
#pragma once

#include <memory>

#include "memcopy/status.h"
#include "transport/core/messenger.h"
#include "transport/local_job.h"

namespace mpigpu::transport {

// Joins the job described by `job` (creating or attaching its segment), waiting up to
// MPIGPU_BOOTSTRAP_TIMEOUT for the other ranks; *out is this process's transport.
Status CreateMessenger(const JobInfo& job, std::unique_ptr<Messenger>* out);

}  // namespace mpigpu::transport

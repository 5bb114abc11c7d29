// The transport assembled: the engine with this build's back-ends (wiring/backends.h) and the
// bootstrap its launcher chooses (wiring/job_source.h). What the layers above, tests and
// benchmarks call to join a job.
#pragma once

#include <memory>

#include "memcopy/status.h"
#include "transport/core/assembly.h"
#include "transport/core/messenger.h"
#include "transport/engine.h"
#include "transport/local_job.h"

namespace mpigpu::wiring {

// This build's back-ends and bootstraps, behind the interface the engine takes.
const transport::Assembly& Parts();

// Joins the job described by `job` (creating or attaching its segment), waiting up to
// MPIGPU_BOOTSTRAP_TIMEOUT for the other ranks: transport::Engine::Create with Parts().
Status StartEngine(const transport::JobInfo& job, std::unique_ptr<transport::Engine>* out);

// The same, as the interface the API holds (transport/core/messenger.h).
Status CreateMessenger(const transport::JobInfo& job,
                       std::unique_ptr<transport::Messenger>* out);

}  // namespace mpigpu::wiring

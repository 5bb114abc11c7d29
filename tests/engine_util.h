// Helpers of the engine tests' ranks: join the job the test's RunJob described, and wrap a host
// buffer.
#pragma once

#include <cstdio>
#include <memory>

#include "tests/multiproc.h"
#include "transport/engine.h"
#include "wiring/start.h"

namespace mpigpu::testing {

// In a rank: the engine of the job in this process's environment (rank check on failure).
inline std::unique_ptr<transport::Engine> JoinJob() {
  transport::JobInfo job;
  Status st = transport::JobInfo::FromEnvironment(&job);
  RANK_CHECK(st.ok());
  std::unique_ptr<transport::Engine> e;
  st = wiring::StartEngine(job, &e);
  if (!st.ok()) std::fprintf(stderr, "join: %s\n", st.ToString().c_str());
  RANK_CHECK(st.ok());
  return e;
}

inline transport::UserBuffer HostBuffer(void* p, size_t n) {
  return transport::UserBuffer{p, MemLoc::Host(), Layout::Contiguous(n)};
}

}  // namespace mpigpu::testing

// The public API's environment: Init (the device, the transport, WORLD and SELF), Finalize,
// Initialized/Finalized, Abort and Wtime.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "memcopy/config.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/api_entry.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/errors.h"
#include "transport/local_job.h"
#include "wiring/job_source.h"
#include "wiring/start.h"

namespace mpigpu::api {
namespace {

void SelectDevice(int local_rank) {
  // mpigpurun leaves the choice to the program: local rank mod visible devices, unless the
  // program already made another device current.
  const int n = CudaDeviceCount();
  int cur = 0;
  if (n <= 1 || cudaGetDevice(&cur) != cudaSuccess || cur != 0) return;
  cudaError_t e = cudaSetDevice(local_rank % n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // reported here, not left for the application
    std::fprintf(stderr, "mpigpu: rank %d: cudaSetDevice(%d): %s\n", RankForMessages(),
                 local_rank % n, cudaGetErrorString(e));
  }
}

}  // namespace
}  // namespace mpigpu::api

namespace {

int DoInit() {
  State& s = GetState();
  if (s.initialized)
    // MPI: an initialization after the first is erroneous, class MPI_ERR_OTHER.
    return SetLastError(MPIGPU_ERR_OTHER, s.finalized ? "called after MPIGPU_Finalize"
                                                      : "called twice");
  // A refused MPIGPU_* value (malformed, out of range, or a ring too large for /dev/shm): the
  // message names the variable, its value and the allowed range.
  if (const mpigpu::Status& cfg = mpigpu::ConfigStatus(); !cfg.ok())
    return mpigpu::ReturnCode(cfg, MPIGPU_ERR_ARG);
  mpigpu::transport::JobInfo job;
  mpigpu::Status st = mpigpu::wiring::JobFromLauncher(&job);  // mpigpurun, PMIx or none
  // The GPU first: the engine publishes each rank's device when it joins.
  const int local = mpigpu::LauncherInt("MPIGPU_LOCAL_RANK");
  if (st.ok()) mpigpu::api::SelectDevice(local >= 0 ? local : job.LocalRank());
  if (st.ok()) st = mpigpu::wiring::CreateMessenger(job, &s.engine);
  if (!st.ok()) return mpigpu::ReturnCode(st, MPIGPU_ERR_OTHER);
  const int local_size = mpigpu::LauncherInt("MPIGPU_LOCAL_SIZE");
  s.yield_after = mpigpu::api::YieldAfterRounds(
      mpigpu::GetApiConfig().yield, local_size > 0 ? local_size : job.LocalSize(),
      mpigpu::api::JobCpus());

  const int n = s.engine->size(), me = s.engine->rank();
  mpigpu::api::CommData& world = *s.comms[MPIGPU_COMM_WORLD];
  world.group.resize(n);
  world.from_world.resize(n);
  for (int r = 0; r < n; ++r) world.group[r] = world.from_world[r] = r;
  world.rank = me;
  s.node = job.node();
  world.ctx_p2p = mpigpu::api::kWorldP2pContext;
  world.ctx_coll = mpigpu::api::kWorldP2pContext + 1;
  mpigpu::api::CommData& self = *s.comms[MPIGPU_COMM_SELF];
  self.group.assign(1, me);
  self.from_world.assign(n, -1);
  self.from_world[me] = 0;
  self.rank = 0;
  self.ctx_p2p = mpigpu::api::kSelfP2pContext;
  self.ctx_coll = mpigpu::api::kSelfP2pContext + 1;
  for (const mpigpu::api::CommData* c : {&world, &self}) mpigpu::api::DeclareContexts(*c);
  s.initialized = true;
  return MPIGPU_SUCCESS;
}

int DoFinalize() {
  State& s = GetState();
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  (void)mpigpu::api::ProgressOnce();
  size_t pending = s.detached.size();
  for (const ApiRequest* r : s.requests) pending += r->live() && !mpigpu::api::P2PDone(r);
  if (pending > 0)
    std::fprintf(stderr,
                 "mpigpu: rank %d: MPIGPU_Finalize: %zu request(s) still pending (never completed "
                 "with MPIGPU_Wait/Test); they are abandoned\n",
                 s.engine->rank(), pending);
  mpigpu::Status st = s.engine->Finalize();
  // The API's objects go; the engine's requests are released to it.
  for (ApiRequest* r : s.requests) {
    if (r->op) s.engine->Release(r->op);
    delete r;
  }
  s.requests.clear();
  s.detached.clear();
  s.spare.clear();
  s.engine.reset();
  s.finalized = true;
  if (!st.ok()) return mpigpu::ReturnCode(st, MPIGPU_ERR_OTHER);
  return MPIGPU_SUCCESS;
}

}  // namespace

// ---- environment ----

extern "C" int MPIGPU_Init(int* /*argc*/, char*** /*argv*/) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Init", kWorld, DoInit());
}

extern "C" int MPIGPU_Finalize(void) {
  Lock lk(GetState().mu);
  // MPI: COMM_SELF's attributes are deleted first, while their callbacks may still call in.
  if (CheckActive() == MPIGPU_SUCCESS) {
    const CommPtr self = GetState().comms[MPIGPU_COMM_SELF];
    if (int rc = mpigpu::api::DeleteCommAttrs(lk, MPIGPU_COMM_SELF, self); rc != MPIGPU_SUCCESS)
      return Finish("MPIGPU_Finalize", kWorld, rc);
  }
  return Finish("MPIGPU_Finalize", kWorld, DoFinalize());
}

extern "C" int MPIGPU_Initialized(int* flag) {
  Lock lk(GetState().mu);
  if (flag == nullptr)
    return Finish("MPIGPU_Initialized", kWorld, SetLastError(MPIGPU_ERR_ARG, "null flag"));
  *flag = GetState().initialized ? 1 : 0;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Finalized(int* flag) {
  Lock lk(GetState().mu);
  if (flag == nullptr)
    return Finish("MPIGPU_Finalized", kWorld, SetLastError(MPIGPU_ERR_ARG, "null flag"));
  *flag = GetState().finalized ? 1 : 0;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Abort(MPIGPU_Comm comm, int errorcode) {
  Lock lk(GetState().mu);
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return Finish("MPIGPU_Abort", comm, rc);
  std::fflush(stdout);
  std::fprintf(stderr, "MPIGPU_Abort(%d) called by rank %d\n", errorcode,
               GetState().engine->rank());
  std::fflush(stderr);
  _exit(errorcode);  // the launcher ends the other ranks
}

extern "C" double MPIGPU_Wtime(void) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

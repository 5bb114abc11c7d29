// The API's process-wide state and what every call shares: the state's making, the checks'
// error paths, finishing a call (its error handler), empty statuses and the pause of a wait.
// See api_internal.h for the locking and error conventions.
#include <cuda_runtime_api.h>
#include <sched.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "memcopy/config.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {

int SyncDefaultStream() {
  cudaError_t e = cudaStreamSynchronize(nullptr);
  if (e != cudaSuccess)
    return ReturnCode(CudaFailure("cudaStreamSynchronize", e));
  return MPIGPU_SUCCESS;
}

State* MakeState() {
  auto* s = new State();
  s->comms.resize(2);
  s->comms[MPIGPU_COMM_WORLD] = std::make_shared<CommData>();
  s->comms[MPIGPU_COMM_SELF] = std::make_shared<CommData>();
  s->comms[MPIGPU_COMM_WORLD]->name = "MPI_COMM_WORLD";
  s->comms[MPIGPU_COMM_SELF]->name = "MPI_COMM_SELF";
  return s;
}

int RankForMessages() {
  State& s = GetState();
  if (s.engine) return s.engine->rank();
  // Before the engine exists (a failed MPIGPU_Init): the launcher's word, mpigpurun's or any
  // PMIx launcher's (mpirun, srun --mpi=pmix), so each rank's message names it.
  int r = mpigpu::LauncherInt("MPIGPU_RANK");
  if (r < 0) r = mpigpu::LauncherInt("PMIX_RANK");
  return r < 0 ? 0 : r;
}

// ---- shared helpers (api_internal.h) ----

int InactiveError() {
  return SetLastError(MPIGPU_ERR_NOT_INITIALIZED, GetState().initialized
                                                      ? "called after MPIGPU_Finalize"
                                                      : "called before MPIGPU_Init");
}

int RequestError(MPIGPU_Request h) {
  if (h == MPIGPU_REQUEST_NULL)
    return SetLastError(MPIGPU_ERR_REQUEST, "request is MPIGPU_REQUEST_NULL");
  const uintptr_t v = HandleValue(h);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%#llx", static_cast<unsigned long long>(v));
  const std::vector<ApiRequest*>& t = GetState().requests;
  const uint32_t slot = HandleSlot(v), gen = HandleGen(v);
  // A handle this process made has a slot that exists and a generation at most the slot's.
  // The window only chooses the message: a forged value is refused either way.
  constexpr uint32_t kStaleWindow = 1u << 30;
  if (slot < t.size() && HandleGen(t[slot]->key) - gen < kStaleWindow) {
    const ApiRequest& r = *t[slot];
    const char* what = v != r.key ? "was completed or freed (a copy of an old handle?)"
                       : r.detached ? "was freed with MPIGPU_Request_free"
                                    : "was completed or freed";
    return SetLastError(MPIGPU_ERR_REQUEST, std::string("request handle ") + hex +
                                                " is stale: its request " + what);
  }
  return SetLastError(MPIGPU_ERR_REQUEST,
                      std::string("request handle ") + hex +
                          " is not a request of this process (never made, or corrupted)");
}

int CommError(MPIGPU_Comm handle) {
  return SetLastError(MPIGPU_ERR_COMM, handle == MPIGPU_COMM_NULL
                                           ? std::string("communicator is MPIGPU_COMM_NULL")
                                           : "communicator " + std::to_string(handle) +
                                                 " is not valid (freed or never created)");
}

CommPtr LookupComm(MPIGPU_Comm handle) {
  const CommPtr* c = BorrowComm(handle);
  return c ? *c : nullptr;
}

MPIGPU_Errhandler HandlerOf(MPIGPU_Comm handle) {
  State& s = GetState();
  if (handle >= 0 && static_cast<size_t>(handle) < s.comms.size() && s.comms[handle])
    return s.comms[handle]->errhandler;
  return s.comms[MPIGPU_COMM_WORLD]->errhandler;
}

int FinishWith(const char* fn, MPIGPU_Errhandler handler, int rc) {
  if (rc == MPIGPU_SUCCESS) return rc;
  const std::string detail = LastErrorDetail(rc);
  SetLastError(rc, detail.empty() ? std::string(fn) : std::string(fn) + ": " + detail);
  if (handler != MPIGPU_ERRORS_ARE_FATAL) return rc;  // RETURN, or the MPI layer's handlers
  const char* name = ErrorClassName(rc);
  std::fflush(stdout);
  std::fprintf(stderr, "mpigpu: rank %d: %s: %s (%s)%s%s\n", RankForMessages(), fn,
               ErrorClassText(rc) ? ErrorClassText(rc) : "unknown error", name ? name : "?",
               detail.empty() ? "" : ": ", detail.c_str());
  std::fflush(stderr);
  _exit(1);  // the launcher ends the other ranks
}

int NullBufferError(int count) {
  return SetLastError(MPIGPU_ERR_BUFFER, "null buffer with count " + std::to_string(count));
}

int PeerError(const CommData& comm, int peer) {
  return SetLastError(MPIGPU_ERR_RANK, "rank " + std::to_string(peer) +
                                           " is not in communicator of size " +
                                           std::to_string(comm.size()));
}

int TagError(int tag, bool recv) {
  return SetLastError(MPIGPU_ERR_TAG, "tag " + std::to_string(tag) + " is outside 0.." +
                                          std::to_string(MPIGPU_TAG_UB) +
                                          (recv ? " (or MPIGPU_ANY_TAG)" : ""));
}

void EmptyStatus(MPIGPU_Status* status, int source) {
  if (status == MPIGPU_STATUS_IGNORE) return;
  status->MPIGPU_SOURCE = source;
  status->MPIGPU_TAG = MPIGPU_ANY_TAG;
  status->MPIGPU_ERROR = MPIGPU_SUCCESS;
  status->count_bytes = 0;
  status->cancelled = 0;
}

void PauseUnlocked(Lock& lk, int round) {
  lk.unlock();  // let other threads of the process call in
  if (YieldsAfter(round)) sched_yield();  // oversubscribed: let the peer run
  lk.lock();
}

}  // namespace mpigpu::api

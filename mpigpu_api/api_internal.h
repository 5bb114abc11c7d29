// The core behind the public C API (mpigpu.h): process-wide state and the internal operations
// shared by api.cc (environment, point to point, completion), comm.cc (communicators) and
// coll.cc (collectives). Not part of the public interface.
//
// Locking: one mutex (State::mu) guards the state and the engine (which expects one caller at a
// time). Every public call holds it; blocking calls drop it between progress rounds
// (ProgressUntil), so other threads of the process can call in while one waits.
//
// Errors: internal functions return an error class and record the detail with SetLastError
// (without the call's name); the public entry point passes the class through Finish(), which
// names the call in the detail and applies the communicator's error handler.
#pragma once

#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "memcopy/memloc.h"
#include "mpigpu_api/datatype.h"
#include "mpigpu_api/mpigpu.h"
#include "transport/engine.h"

namespace mpigpu::api {

// A communicator: an ordered group of world ranks and two context ids (point to point and
// collectives), so messages of different communicators, or of a collective and a user's
// point-to-point call, never match each other.
struct CommData {
  std::vector<int> group;       // world rank of each comm rank
  std::vector<int> from_world;  // comm rank of each world rank; -1 for non-members
  int rank = -1;                // this process's comm rank
  int ctx_p2p = 0;
  int ctx_coll = 0;
  MPIGPU_Errhandler errhandler = MPIGPU_ERRORS_ARE_FATAL;

  int size() const { return static_cast<int>(group.size()); }
};
using CommPtr = std::shared_ptr<CommData>;

// Context ids of the predefined communicators; later ones are agreed on by their members.
constexpr int kWorldP2pContext = 0;
constexpr int kSelfP2pContext = 2;
constexpr int kFirstFreeContext = 4;

// A typed user buffer resolved for the transport.
struct TypedBuf {
  void* ptr = nullptr;
  MemLoc loc = MemLoc::Host();
  TypeDesc desc;
};

}  // namespace mpigpu::api

// The object behind an MPIGPU_Request handle.
struct mpigpu_request {
  mpigpu::transport::Request* op = nullptr;  // engine request; null: complete since creation
  mpigpu::api::CommPtr comm;                 // source translation and error handler
  bool recv = false;
  bool proc_null = false;  // completes at once with a PROC_NULL status
  int peer = 0;            // as the caller gave them (comm rank or a wildcard)
  int tag = 0;
  // Datatypes the transport cannot describe as one regular layout travel packed: a send packs
  // into `staging` before it starts; a receive lands in `staging` and is unpacked into `user`
  // when it completes.
  bool staged = false;
  std::vector<unsigned char> staging;
  mpigpu::api::TypedBuf user;
  bool detached = false;  // MPIGPU_Request_free'd: completed by the progress loop
  bool live = false;      // a handle the user holds (MPIGPU_Isend/Irecv), not yet completed
};

namespace mpigpu::api {

using Lock = std::unique_lock<std::mutex>;

struct State {
  std::mutex mu;
  bool initialized = false;
  bool finalized = false;
  std::unique_ptr<transport::Engine> engine;
  // By handle; null once freed (handles are not reused, so a stale one is caught). WORLD and
  // SELF exist from the start, so their error handlers can be set before MPIGPU_Init.
  std::vector<CommPtr> comms;
  int next_context = kFirstFreeContext;   // lowest context id this process has not used
  // Waits give the CPU away between polls only when this node's ranks outnumber its online
  // CPUs (else a yield only delays noticing the peer); set by Init.
  bool yield_in_waits = true;
  // Every request object ever made, kept until Finalize: a handle is checked against this set
  // before it is dereferenced, and the user's live ones carry `live`. Blocking calls and
  // collectives use request objects the user never sees; they are never live.
  std::unordered_set<mpigpu_request*> made;
  std::vector<mpigpu_request*> spare;     // completed objects kept for reuse
  std::vector<mpigpu_request*> detached;  // freed by the user, still in flight
};
State* MakeState();
// Inline: every call asks for it, and a call per question costs more than the question.
inline State& GetState() {
  static State* state = MakeState();  // never destroyed: calls may come during exit
  return *state;
}

// MPIGPU_SUCCESS between Init and Finalize, else MPIGPU_ERR_NOT_INITIALIZED (detail recorded).
int CheckActive();
// The communicator behind `handle`, or null (detail recorded, class MPIGPU_ERR_COMM).
CommPtr LookupComm(MPIGPU_Comm handle);
// Error handler of `handle` (WORLD's if the handle is not a valid communicator).
MPIGPU_Errhandler HandlerOf(MPIGPU_Comm handle);

// Finishes a public call that produced `rc`: on failure, names `fn` in the detail and applies
// `handler` (ERRORS_ARE_FATAL prints "mpigpu: rank R: fn: ..." and ends the process with
// status 1). Returns rc.
int FinishWith(const char* fn, MPIGPU_Errhandler handler, int rc);
inline int Finish(const char* fn, MPIGPU_Comm comm, int rc) {
  return rc == MPIGPU_SUCCESS ? rc : FinishWith(fn, HandlerOf(comm), rc);
}

// Resolves (buf, buftype, count, datatype). Errors: COUNT, TYPE, BUFFER, NO_GPU.
int ResolveTypedBuf(const void* buf, MPIGPU_Buftype buftype, int count,
                    MPIGPU_Datatype datatype, TypedBuf* out);
// The error (class RANK, detail recorded) of a peer CheckPeer refuses.
int PeerError(const CommData& comm, int peer);
// The error (class TAG, detail recorded) of a tag CheckTag refuses.
int TagError(int tag, bool recv);
// Validates a peer rank of `comm`: 0..size-1 or PROC_NULL (and ANY_SOURCE when `recv`).
// Inline, as CheckTag: every point-to-point call checks, and the checks are a few compares.
inline int CheckPeer(const CommData& comm, int peer, bool recv) {
  if ((peer >= 0 && peer < comm.size()) || peer == MPIGPU_PROC_NULL ||
      (recv && peer == MPIGPU_ANY_SOURCE))
    return MPIGPU_SUCCESS;
  return PeerError(comm, peer);
}
// Validates a tag: 0..MPIGPU_TAG_UB (and ANY_TAG when `recv`).
inline int CheckTag(int tag, bool recv) {
  if ((tag >= 0 && tag <= MPIGPU_TAG_UB) || (recv && tag == MPIGPU_ANY_TAG)) return MPIGPU_SUCCESS;
  return TagError(tag, recv);
}

// Starts a send or receive of `buf` with comm rank `peer` (or PROC_NULL / ANY_SOURCE) on
// context `ctx`. Arguments must already be valid. *out is a started request, not yet a live
// handle (see State::made).
int StartP2P(bool recv, const TypedBuf& buf, CommPtr comm, int peer, int tag, int ctx,
             mpigpu_request** out);
// Frees a request whose operation must still complete (the progress loop finishes it).
void Detach(mpigpu_request* r);
// True once `r` can be completed without blocking.
// Tells the engine which ranks take part in c's contexts (failures of others leave them alone).
void DeclareContexts(const CommData& c);
bool P2PDone(const mpigpu_request* r);
// Completes a done request: unpacks a staged receive, fills *status (may be null), frees r.
// Returns the operation's error class (TRUNCATE, PROC_FAILED, ...).
int CompleteP2P(mpigpu_request* r, MPIGPU_Status* status);
// Progress until r is done, then CompleteP2P. If progress fails, r is detached (the progress
// loop completes it later) and the error returned.
int WaitP2P(Lock& lk, mpigpu_request* r, MPIGPU_Status* status);

// One round of engine progress, then completion of detached requests that are done.
int ProgressOnce();
// Progress rounds until done() holds, dropping the lock between rounds.
template <class Pred>
int ProgressUntil(Lock& lk, Pred done);

// Collective helpers over `comm`'s collective context (every member calls them in order).
// Gathers `k` ints from every rank: (*all)[r * k + i] is rank r's mine[i].
int AllgatherInts(Lock& lk, const CommPtr& comm, const std::vector<int>& mine,
                  std::vector<int>* all);

// Makes `loc`'s device current for the scope (CUDA copies on the default stream run on the
// current device); nothing for host memory.
class DeviceScope {
 public:
  explicit DeviceScope(MemLoc loc);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int saved_ = 0;
  bool active_ = false;
};
// cudaStreamSynchronize of the current device's default stream; OTHER on failure.
int SyncDefaultStream();

// Fills a status for an empty (null request) or a PROC_NULL completion.
void EmptyStatus(MPIGPU_Status* status, int source);

// ---- template definitions ----

void YieldBetweenRounds(Lock& lk, int round);

template <class Pred>
int ProgressUntil(Lock& lk, Pred done) {
  for (int round = 0; !done(); ++round) {
    if (int rc = ProgressOnce(); rc != MPIGPU_SUCCESS) return rc;
    if (done()) break;
    YieldBetweenRounds(lk, round);
  }
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu::api

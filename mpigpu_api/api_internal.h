// The core behind the public C API (mpigpu.h): process-wide state and the internal operations
// shared by api_state.cc (the state, shared checks and errors), api_env.cc (environment),
// api_p2p.cc (point to point), api_completion.cc (completion), comm.cc (communicators) and
// coll.cc (collectives). Not part of the public interface.
//
// Locking: one mutex (State::mu, an ApiMutex) guards the state and the engine (which expects one
// caller at a time). Every public call holds it; blocking calls drop it every few progress rounds
// (ProgressUntil), so other threads of the process can call in while one waits.
//
// Errors: internal functions return an error class and record the detail with SetLastError
// (without the call's name); the public entry point passes the class through Finish(), which
// names the call in the detail and applies the communicator's error handler.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>  // std::unique_lock
#include <string>
#include <utility>
#include <vector>

#include "mpigpu_api/api_config.h"
#include "memcopy/memloc.h"
#include "mpigpu_api/api_mutex.h"
#include "mpigpu_api/buftype.h"
#include "mpigpu_api/datatype.h"
#include "mpigpu_api/errors.h"
#include "mpigpu_api/mpigpu.h"
#include "mpigpu_api/wait_policy.h"
#include "transport/core/messenger.h"
#include "transport/core/request.h"

namespace mpigpu::api {

class CollSched;        // coll_sched.h
struct PersistentColl;  // coll_persistent.cc

// A communicator: an ordered group of world ranks and two context ids (point to point and
// collectives), so messages of different communicators, or of a collective and a user's
// point-to-point call, never match each other.
//
// An intercommunicator (inter) addresses the remote group: `group` and `from_world` are the
// remote group's, so point-to-point calls and statuses name remote ranks unchanged, while
// `local_group` holds the local one, which `rank` indexes.
struct Topology;  // comm_objects.h
struct CommData {
  std::vector<int> group;       // world rank of each comm rank (remote rank: intercomm)
  std::vector<int> from_world;  // comm rank of each world rank; -1 for non-members
  int rank = -1;                // this process's comm rank (in the local group)
  int ctx_p2p = 0;
  int ctx_coll = 0;
  MPIGPU_Errhandler errhandler = MPIGPU_ERRORS_ARE_FATAL;
  bool inter = false;
  std::vector<int> local_group;  // intercomm only: world rank of each local rank
  std::shared_ptr<CommData> local_comm;  // intercomm only: over local_group, own contexts
  std::string name;
  std::shared_ptr<const Topology> topo;  // null: none (topologies never change once made)
  // Attributes in the order they were set: (keyval, value).
  std::vector<std::pair<int, void*>> attrs;

  int size() const { return static_cast<int>(group.size()); }
  // The group this process belongs to (Comm_size, Comm_group).
  const std::vector<int>& my_group() const { return inter ? local_group : group; }
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

// The object behind a request: a user's (MPIGPU_Isend/Irecv) or an internal one (collectives,
// Send/Recv of packed buffers or PROC_NULL, Sendrecv). Objects are recycled (a ping-pong should
// not pay an allocation per message) and live until Finalize at a fixed slot of
// State::requests.
struct ApiRequest {
  transport::Request* op = nullptr;  // engine request; null: complete since creation
  CommPtr comm;                      // source translation and error handler
  bool recv = false;
  bool proc_null = false;  // completes at once with a PROC_NULL status
  int peer = 0;            // as the caller gave them (comm rank or a wildcard)
  int tag = 0;
  // Datatypes the transport cannot describe as one regular layout travel packed: a send packs
  // into `staging` before it starts; a receive lands in `staging` and is unpacked into `user`
  // when it completes. Both are set only when staged.
  bool staged = false;
  std::vector<unsigned char> staging;
  TypedBuf user;
  bool detached = false;  // MPIGPU_Request_free'd: completed by the progress loop
  // A nonblocking collective (op stays null): done when its schedule is.
  std::shared_ptr<CollSched> sched;
  // A persistent collective (MPIGPU_<coll>_init): `sched` is its current run, null while it is
  // inactive; completion makes it inactive again and keeps the user's handle valid.
  std::shared_ptr<PersistentColl> persist;
  // The handle of this use of the object: (gen + kHandleSalt) << 32 | (slot + 1), where slot
  // is the object's fixed index in State::requests and gen counts its uses (see below).
  uintptr_t key = 0;
  // The handle the user holds for this request: `key`, or 0 when the user holds none (an
  // internal request, or one the user freed). Only a handle equal to it reaches the object.
  uintptr_t handle = 0;

  bool live() const { return handle != 0; }
};

// ---- request handles ----
// An MPIGPU_Request is not a pointer: its value is (gen + kHandleSalt) << 32 | (slot + 1), an
// index into State::requests and the generation of the object's use it was made for. Recycling
// an object adds 1 to the generation (ApiRequest::key), so the handles of its earlier uses, and
// copies of them, never name it again (until 2^32 uses of this one object). A handle is
// resolved by a bounds check and one compare (LookupRequest), never by dereferencing it: a stale
// copy (its request completed or freed, the object perhaps serving another request now) or a
// forged value gives MPIGPU_ERR_REQUEST and touches nothing. The salt keeps small integers
// (1, 2, ...) from being valid handles; the low half is never 0, so no handle is REQUEST_NULL.
static_assert(sizeof(uintptr_t) == 8 && sizeof(MPIGPU_Request) == 8,
              "request handles pack a slot and a generation into 64 bits");
constexpr uint32_t kHandleSalt = 0x6d706775;  // "mpgu"
constexpr uintptr_t kHandleGenUnit = uintptr_t{1} << 32;

inline uintptr_t HandleValue(MPIGPU_Request h) { return reinterpret_cast<uintptr_t>(h); }
inline MPIGPU_Request HandleFromValue(uintptr_t v) { return reinterpret_cast<MPIGPU_Request>(v); }
// The key of the first use of the object at `slot`.
inline uintptr_t FirstKey(uint32_t slot) {
  return static_cast<uintptr_t>(1 + kHandleSalt) << 32 | (static_cast<uintptr_t>(slot) + 1);
}
inline uint32_t HandleSlot(uintptr_t v) { return static_cast<uint32_t>(v) - 1; }
inline uint32_t HandleGen(uintptr_t v) { return static_cast<uint32_t>(v >> 32) - kHandleSalt; }

using Lock = std::unique_lock<ApiMutex>;

struct State {
  ApiMutex mu;
  bool initialized = false;
  bool finalized = false;
  std::unique_ptr<transport::Messenger> engine;  // the transport, through its interface
  // By handle; null once freed (handles are not reused, so a stale one is caught). WORLD and
  // SELF exist from the start, so their error handlers can be set before MPIGPU_Init.
  std::vector<CommPtr> comms;
  int next_context = kFirstFreeContext;   // lowest context id this process has not used
  int next_nb_context = 1 << 29;  // the same for Comm_idup's range (comm_objects.h)
  int node = 0;  // this process's node (JobInfo::node), for Comm_split_type
  // From which polling round of a wait the CPU is given away (sched_yield) between polls; set
  // by Init from MPIGPU_YIELD (YieldAfterRounds).
  int yield_after = 0;
  // Every request object ever made, by slot (see ApiRequest::key), kept until Finalize: handles
  // are resolved through it (LookupRequest). Internal requests (collectives, Send/Recv of
  // packed buffers or PROC_NULL) are in it too but have no handle.
  std::vector<ApiRequest*> requests;
  std::vector<ApiRequest*> spare;     // completed objects kept for reuse
  std::vector<ApiRequest*> detached;  // freed by the user, still in flight
  // Nonblocking collectives not yet done, advanced by every progress round.
  std::vector<std::shared_ptr<CollSched>> coll_scheds;
  // Some window exists: progress rounds take in one-sided operations (win_target.cc).
  bool rma_active = false;
};
State* MakeState();
// Inline: every call asks for it, and a call per question costs more than the question.
inline State& GetState() {
  static State* state = MakeState();  // never destroyed: calls may come during exit
  return *state;
}

// The request the user's handle `h` names, or null when `h` is null, stale (its request was
// completed or freed) or not a handle at all. Never dereferences anything `h` points at: a
// bounds check on the slot, then the slot's current handle compared with `h`.
inline ApiRequest* LookupRequest(MPIGPU_Request h) {
  const uintptr_t v = HandleValue(h);
  const uint32_t slot = HandleSlot(v);  // REQUEST_NULL: 2^32 - 1, out of range
  const std::vector<ApiRequest*>& t = GetState().requests;
  if (slot >= t.size()) return nullptr;
  ApiRequest* r = t[slot];
  return r->handle == v ? r : nullptr;
}
// The error (class MPIGPU_ERR_REQUEST, detail recorded) of a handle LookupRequest refused.
[[gnu::cold]] int RequestError(MPIGPU_Request h);
// The request behind the user's handle `h`, or null (detail recorded, class REQUEST).
inline ApiRequest* CheckedRequest(MPIGPU_Request h) {
  ApiRequest* r = LookupRequest(h);
  if (r == nullptr) RequestError(h);
  return r;
}

// Error paths are [[gnu::cold]]: kept out of the inline checks (and out of their callers'
// register saves), they leave the hot path a compare and a branch.
// The MPIGPU_ERR_NOT_INITIALIZED error of a call outside Init..Finalize (detail recorded).
[[gnu::cold]] int InactiveError();
// MPIGPU_SUCCESS between Init and Finalize, else MPIGPU_ERR_NOT_INITIALIZED (detail recorded).
inline int CheckActive() {
  const State& s = GetState();
  return s.initialized && !s.finalized ? MPIGPU_SUCCESS : InactiveError();
}

// The error (class MPIGPU_ERR_COMM, detail recorded) of a handle that names no communicator.
[[gnu::cold]] int CommError(MPIGPU_Comm handle);
// The slot of communicator `handle` in State::comms, or null (detail recorded, class
// MPIGPU_ERR_COMM). Borrowed, to spare the hot path a reference count: valid only until the
// lock is next dropped (Comm_free empties slots, Comm_split may move them). Copy the CommPtr to
// keep the communicator longer.
inline const CommPtr* BorrowComm(MPIGPU_Comm handle) {
  const std::vector<CommPtr>& comms = GetState().comms;
  if (handle >= 0 && static_cast<size_t>(handle) < comms.size() && comms[handle])
    return &comms[handle];
  CommError(handle);
  return nullptr;
}
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

// The error (class BUFFER, detail recorded) of a null buffer with count > 0.
[[gnu::cold]] int NullBufferError(int count);
// Resolves (buf, buftype, count, datatype). Errors: COUNT, TYPE, BUFFER, NO_GPU.
// Inline, as its parts: every point-to-point call resolves its buffer.
inline int ResolveTypedBuf(const void* buf, MPIGPU_Buftype buftype, int count,
                           MPIGPU_Datatype datatype, TypedBuf* out) {
  if (int rc = DescribeForComm(datatype, count, &out->desc); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = ResolveBuftype(buftype, &out->loc); rc != MPIGPU_SUCCESS) return rc;
  // A null buffer holds nothing, unless the type's displacements are absolute addresses
  // (MPI_BOTTOM: a derived type whose data lies past the zero page).
  if (buf == nullptr && out->desc.total_bytes > 0 && out->desc.true_lb < 4096)
    return NullBufferError(count);
  if (int rc = CheckBufferLocation(buf, out->loc); rc != MPIGPU_SUCCESS) return rc;
  out->ptr = const_cast<void*>(buf);
  return MPIGPU_SUCCESS;
}
// The error (class RANK, detail recorded) of a peer CheckPeer refuses.
[[gnu::cold]] int PeerError(const CommData& comm, int peer);
// The error (class TAG, detail recorded) of a tag CheckTag refuses.
[[gnu::cold]] int TagError(int tag, bool recv);
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
// context `ctx`. Arguments must already be valid. *out is a started request without a user
// handle (see ApiRequest::handle); it holds a reference to `comm`.
int StartP2P(bool recv, const TypedBuf& buf, const CommPtr& comm, int peer, int tag, int ctx,
             ApiRequest** out, bool sync = false);
// Frees a request whose operation must still complete (the progress loop finishes it).
void Detach(ApiRequest* r);
// Tells the engine which ranks take part in c's contexts (failures of others leave them alone).
void DeclareContexts(const CommData& c);
// True once `r` can be completed without blocking. Inline: waits ask it every round, and the
// completion calls live in another file than the requests (api_completion.cc, api_p2p.cc).
bool CollSchedDone(const CollSched& s);
inline bool P2PDone(const ApiRequest* r) {
  return r->op != nullptr ? r->op->done() : r->sched == nullptr || CollSchedDone(*r->sched);
}
// Completes a done request: unpacks a staged receive, fills *status (may be null), frees r.
// Returns the operation's error class (TRUNCATE, PROC_FAILED, ...).
int CompleteP2P(ApiRequest* r, MPIGPU_Status* status);
// Progress until r is done, then CompleteP2P. If progress fails, r is detached (the progress
// loop completes it later) and the error returned.
int WaitP2P(Lock& lk, ApiRequest* r, MPIGPU_Status* status);

// Completes detached requests that are done (their errors have nobody to go to).
void ReapDetached();
// Takes in and applies the one-sided operations that arrived for every window (win_target.cc).
void ProgressWindows();
// Advances every nonblocking collective in State::coll_scheds; drops the done ones.
void AdvanceCollScheds();
// Makes a nonblocking collective's schedule the operation of a new user request (*request)
// and puts it into State::coll_scheds.
int StartCollRequest(std::shared_ptr<CollSched> sched, MPIGPU_Request* request);
// A new inactive persistent request for p (*request; coll_persistent.cc starts it).
int NewPersistentRequest(std::shared_ptr<PersistentColl> p, const CommPtr& comm,
                         MPIGPU_Request* request);
// Frees the object of an inactive persistent request (MPIGPU_Request_free).
void FreeInactiveRequest(ApiRequest* r);
// Completion of a persistent request: its run's error (SUCCESS when inactive), an empty
// status; it stays allocated, inactive (coll_persistent.cc).
int CompletePersistent(ApiRequest* r, MPIGPU_Status* status);
inline bool InactivePersistent(const ApiRequest* r) { return r->persist && !r->sched; }
// One round of engine progress, then completion of detached requests that are done. Inline:
// waits call it every round.
inline int ProgressOnce() {
  State& s = GetState();
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = ReturnCode(s.engine->Progress(), MPIGPU_ERR_INTERN); rc != MPIGPU_SUCCESS)
    return rc;
  if (!s.coll_scheds.empty()) AdvanceCollScheds();
  if (!s.detached.empty()) ReapDetached();
  if (s.rma_active) ProgressWindows();
  return MPIGPU_SUCCESS;
}

// Waits poll the engine in rounds and drop the lock every kRoundsPerUnlock-th round, so other
// threads of the process can call in (an unlock and a lock cost more than a poll). From round
// State::yield_after on (wait_policy.h), every round drops it and gives the CPU away.
constexpr int kRoundsPerUnlock = 8;
inline bool YieldsAfter(int round) { return round >= GetState().yield_after; }
// Whether the pause after polling round `round` (from 0) drops the lock.
inline bool PauseDropsLock(int round) {
  return round % kRoundsPerUnlock == kRoundsPerUnlock - 1 || YieldsAfter(round);
}
// Drops the lock, yields the CPU if YieldsAfter(round), takes the lock back.
void PauseUnlocked(Lock& lk, int round);

// Progress rounds until done() holds (see kRoundsPerUnlock). pin() runs once, before the lock is
// first dropped: whatever the caller borrowed under the lock (BorrowComm) must be kept then.
template <class Pred, class Pin>
int ProgressUntil(Lock& lk, Pred done, Pin pin);
template <class Pred>
int ProgressUntil(Lock& lk, Pred done) {
  return ProgressUntil(lk, done, [] {});
}

// Collective helpers over `comm`'s collective context (every member calls them in order).
// Gathers `k` ints from every rank: (*all)[r * k + i] is rank r's mine[i].
int AllgatherInts(Lock& lk, const CommPtr& comm, const std::vector<int>& mine,
                  std::vector<int>* all);

// cudaStreamSynchronize of the current device's default stream; OTHER on failure.
int SyncDefaultStream();

// The engine's names for a call's peer (a comm rank or ANY_SOURCE, not PROC_NULL) and tag (may
// be ANY_TAG).
inline int EnginePeer(const CommData& comm, int peer) {
  return peer == MPIGPU_ANY_SOURCE ? transport::kAnySource : comm.group[peer];
}
inline int EngineTag(int tag) { return tag == MPIGPU_ANY_TAG ? transport::kAnyTag : tag; }

// Rank for messages: the world rank once known, else the launcher's, else 0.
int RankForMessages();

// Fills a status for an empty (null request) or a PROC_NULL completion.
void EmptyStatus(MPIGPU_Status* status, int source);

// ---- template definitions ----

template <class Pred, class Pin>
int ProgressUntil(Lock& lk, Pred done, Pin pin) {
  bool pinned = false;
  for (int round = 0; !done(); ++round) {
    if (int rc = ProgressOnce(); rc != MPIGPU_SUCCESS) return rc;
    if (done()) break;
    if (!PauseDropsLock(round)) continue;
    if (!pinned) {
      pin();
      pinned = true;
    }
    PauseUnlocked(lk, round);
  }
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu::api

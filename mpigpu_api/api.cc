// The public API's environment (Init/Finalize/Abort/Wtime), error handling, point to point and
// completion calls. See api_internal.h for the locking and error conventions.
#include <cuda_runtime_api.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <unordered_set>

#include "memcopy/config.h"
#include "memcopy/device_scope.h"
#include "memcopy/log.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/buftype.h"
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
  return s;
}

namespace {

// Rank for messages: the world rank once known, else the launcher's, else 0.
int RankForMessages() {
  State& s = GetState();
  if (s.engine) return s.engine->rank();
  const int r = mpigpu::LauncherInt("MPIGPU_RANK");
  return r < 0 ? 0 : r;
}

// EngineLayout (below) of a non-contiguous buffer.
bool StridedEngineLayout(const TypedBuf& b, void** ptr, Layout* layout) {
  const TypeDesc& d = b.desc;
  TypePiece first;
  int pieces = 0;
  (void)ForEachPiece(d, [&](const TypePiece& p, size_t) {
    if (pieces++ == 0) first = p;
    return pieces < 2;
  });
  // The wire carries a vector's block length in 32 bits.
  if (pieces != 1 || first.block_bytes > UINT32_MAX) return false;
  *ptr = static_cast<char*>(b.ptr) + first.offset;
  *layout = first.nblocks == 1
                ? Layout::Contiguous(first.block_bytes)
                : Layout::Vector(first.nblocks, first.block_bytes, first.stride_bytes);
  return true;
}

// The transport moves one regular layout. Describes `b` that way (*ptr, *layout), or returns
// false when its pieces do not form one (the buffer then travels packed). Inline for the
// contiguous buffers of every small message.
inline bool EngineLayout(const TypedBuf& b, void** ptr, Layout* layout) {
  if (!b.desc.contiguous && b.desc.total_bytes != 0) return StridedEngineLayout(b, ptr, layout);
  *ptr = b.ptr;
  *layout = Layout::Contiguous(b.desc.total_bytes);
  return true;
}

// Copies packed bytes [0, bytes) between the typed buffer `b` and the contiguous host `packed`.
// Host: Pack/Unpack. Device: one strided copy per piece, then one synchronisation.
int MovePacked(const TypedBuf& b, unsigned char* packed, size_t bytes, bool pack) {
  if (bytes == 0) return MPIGPU_SUCCESS;
  if (b.loc.is_host())
    return pack ? Pack(b.desc, b.ptr, 0, bytes, packed) : Unpack(b.desc, packed, 0, bytes, b.ptr);
  DeviceScope scope(b.loc);  // default-stream copies run on the current device
  Status st;
  char* user = static_cast<char*>(b.ptr);
  (void)ForEachPiece(b.desc, 0, bytes, [&](const TypePiece& p, size_t pos) {
    if (pack)
      st = Copy2D(packed + pos, MemLoc::Host(), p.block_bytes, user + p.offset, b.loc,
                  p.stride_bytes, p.block_bytes, p.nblocks, nullptr);
    else
      st = Copy2D(user + p.offset, b.loc, p.stride_bytes, packed + pos, MemLoc::Host(),
                  p.block_bytes, p.block_bytes, p.nblocks, nullptr);
    return st.ok();
  });
  if (!st.ok()) return ReturnCode(st, MPIGPU_ERR_BUFFER);
  return SyncDefaultStream();
}

// The engine's names for a call's peer (a comm rank or ANY_SOURCE, not PROC_NULL) and tag (may
// be ANY_TAG).
inline int EnginePeer(const CommData& comm, int peer) {
  return peer == MPIGPU_ANY_SOURCE ? transport::kAnySource : comm.group[peer];
}
inline int EngineTag(int tag) { return tag == MPIGPU_ANY_TAG ? transport::kAnyTag : tag; }

// Starts the engine's half of a point-to-point call on context `ctx` of `comm`: `peer` is a comm
// rank or ANY_SOURCE (not PROC_NULL), `tag` may be ANY_TAG.
inline int StartOp(bool recv, const transport::UserBuffer& ub, const CommData& comm, int peer,
                   int tag, int ctx, transport::Request** op) {
  transport::Engine& e = *GetState().engine;
  const int world = EnginePeer(comm, peer);
  const int etag = EngineTag(tag);
  return ReturnCode(recv ? e.Irecv(ub, world, etag, ctx, op) : e.Isend(ub, world, etag, ctx, op),
                    MPIGPU_ERR_ARG);
}

// Fills *st (may be MPIGPU_STATUS_IGNORE) from the completed engine request `op` of a call that
// named `peer` and `tag` on `comm`. Returns the operation's error class (TRUNCATE, PROC_FAILED,
// ...), which is also st->MPIGPU_ERROR.
inline int OpStatus(const Status& status, const transport::MsgInfo& info, bool recv,
                    const CommData& comm, int peer, int tag, MPIGPU_Status* st) {
  const int rc = ReturnCode(status, MPIGPU_ERR_INTERN);
  if (st == MPIGPU_STATUS_IGNORE) return rc;
  // A receive that failed before a message matched has no envelope: it reports what was asked.
  const bool matched =
      recv && info.source >= 0 && info.source < static_cast<int>(comm.from_world.size());
  st->MPIGPU_SOURCE = matched ? comm.from_world[info.source] : peer;
  st->MPIGPU_TAG = matched ? info.tag : tag;
  st->MPIGPU_ERROR = rc;
  st->count_bytes = matched || !recv ? info.bytes : 0;
  st->cancelled = 0;
  return rc;
}
inline int OpStatus(const transport::Request& op, bool recv, const CommData& comm, int peer,
                    int tag, MPIGPU_Status* st) {
  return OpStatus(op.status(), op.info(), recv, comm, peer, tag, st);
}

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

// The objects behind an array of handles, resolved once by CheckRequests (null for null
// handles); held on the stack for the usual small arrays.
class RequestObjects {
 public:
  explicit RequestObjects(int count) {
    if (count > kInline) heap_.resize(count);
  }
  ApiRequest** get() { return heap_.empty() ? inline_ : heap_.data(); }

 private:
  static constexpr int kInline = 16;
  ApiRequest* inline_[kInline];
  std::vector<ApiRequest*> heap_;
};

// Validates count requests (null ones allowed, none twice) and resolves them into objs[i]. A
// bad one fails the whole call before anything is completed or freed; the detail names its
// index.
int CheckRequests(int count, MPIGPU_Request requests[], ApiRequest** objs) {
  if (count < 0)
    return SetLastError(MPIGPU_ERR_COUNT, "count " + std::to_string(count) + " is negative");
  if (count > 0 && requests == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null request array");
  // Small arrays (a halo exchange waits for 4 to 16) are searched for duplicates in place: a
  // set would cost an allocation per call.
  constexpr int kScanLimit = 16;
  std::unordered_set<MPIGPU_Request> seen;
  for (int i = 0; i < count; ++i) {
    objs[i] = nullptr;
    if (requests[i] == MPIGPU_REQUEST_NULL) continue;
    if ((objs[i] = LookupRequest(requests[i])) == nullptr) {
      const int rc = RequestError(requests[i]);
      return SetLastError(rc, "request " + std::to_string(i) + " of the array: " +
                                  LastErrorDetail(rc));
    }
    const bool twice = count <= kScanLimit
                           ? std::find(requests, requests + i, requests[i]) != requests + i
                           : !seen.insert(requests[i]).second;
    if (twice)
      return SetLastError(MPIGPU_ERR_REQUEST,
                          "request " + std::to_string(i) + " appears twice in the array");
  }
  return MPIGPU_SUCCESS;
}

}  // namespace

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
  if (handler == MPIGPU_ERRORS_RETURN) return rc;
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

namespace {

// Request objects are recycled: a ping-pong should not pay an allocation per message. They
// stay until Finalize (State::requests), so there are as many as requests were ever in flight
// at once.
ApiRequest* NewApiRequest() {
  State& s = GetState();
  if (s.spare.empty()) {
    auto* r = new ApiRequest();
    r->key = FirstKey(static_cast<uint32_t>(s.requests.size()));  // < 2^32 - 1 objects
    s.requests.push_back(r);
    return r;
  }
  ApiRequest* r = s.spare.back();
  s.spare.pop_back();
  return r;
}

// Makes a staged request afresh in place: frees the staging buffer (it may be large) and the
// type's pieces. Keeps the key.
[[gnu::noinline]] void RemakeApiRequest(ApiRequest* r) {
  const uintptr_t key = r->key;
  r->~ApiRequest();
  new (r) ApiRequest();
  r->key = key;
}

void RecycleApiRequest(ApiRequest* r) {
  if (r->staged) {
    RemakeApiRequest(r);
  } else {
    // Only these can differ from a fresh object's: StartP2P sets recv, peer and tag for every
    // use, and staging and user only when staged.
    r->comm.reset();  // the communicator may go now (Comm_free)
    r->op = nullptr;
    r->proc_null = r->detached = false;
    r->handle = 0;
  }
  r->key += kHandleGenUnit;  // a new generation: no handle of the request it served names it
  GetState().spare.push_back(r);
}

}  // namespace

int StartP2P(bool recv, const TypedBuf& buf, const CommPtr& comm, int peer, int tag, int ctx,
             ApiRequest** out) {
  std::unique_ptr<ApiRequest, void (*)(ApiRequest*)> r(NewApiRequest(), RecycleApiRequest);
  r->comm = comm;  // the communicator lives as long as the request (Comm_free may come first)
  r->recv = recv;
  r->peer = peer;
  r->tag = tag;
  if (peer == MPIGPU_PROC_NULL) {
    r->proc_null = true;
  } else {
    transport::UserBuffer ub;
    ub.loc = buf.loc;
    if (!EngineLayout(buf, &ub.ptr, &ub.layout)) {
      r->staged = true;
      r->user = buf;
      r->staging.resize(buf.desc.total_bytes);
      ub.ptr = r->staging.data();
      ub.loc = MemLoc::Host();
      ub.layout = Layout::Contiguous(buf.desc.total_bytes);
      if (!recv) {
        if (int rc = MovePacked(buf, r->staging.data(), buf.desc.total_bytes, true);
            rc != MPIGPU_SUCCESS)
          return rc;
      }
    }
    if (int rc = StartOp(recv, ub, *comm, peer, tag, ctx, &r->op); rc != MPIGPU_SUCCESS) return rc;
  }
  *out = r.release();
  return MPIGPU_SUCCESS;
}

void DeclareContexts(const CommData& c) {
  GetState().engine->SetContextMembers(c.ctx_p2p, c.group);
  GetState().engine->SetContextMembers(c.ctx_coll, c.group);
}

bool P2PDone(const ApiRequest* r) { return r->op == nullptr || r->op->done(); }

int CompleteP2P(ApiRequest* r, MPIGPU_Status* status) {
  State& s = GetState();
  int rc = MPIGPU_SUCCESS;
  MPIGPU_Status st;
  if (r->proc_null) {
    EmptyStatus(&st, MPIGPU_PROC_NULL);
  } else {
    rc = OpStatus(*r->op, r->recv, *r->comm, r->peer, r->tag, &st);
    // A truncated receive unpacks what fits; count_bytes is 0 when nothing arrived.
    if (r->staged && r->recv && (rc == MPIGPU_SUCCESS || rc == MPIGPU_ERR_TRUNCATE)) {
      const size_t n = std::min(st.count_bytes, r->user.desc.total_bytes);
      int urc = MovePacked(r->user, r->staging.data(), n, false);
      if (rc == MPIGPU_SUCCESS) rc = st.MPIGPU_ERROR = urc;
    }
    if (s.engine) s.engine->Release(r->op);
  }
  if (status != MPIGPU_STATUS_IGNORE) *status = st;
  RecycleApiRequest(r);
  return rc;
}

int WaitP2P(Lock& lk, ApiRequest* r, MPIGPU_Status* status) {
  if (int rc = ProgressUntil(lk, [r] { return P2PDone(r); }); rc != MPIGPU_SUCCESS) {
    Detach(r);
    return rc;
  }
  return CompleteP2P(r, status);
}

void Detach(ApiRequest* r) {
  r->handle = 0;  // the user's handle is stale from now on
  r->detached = true;
  GetState().detached.push_back(r);
}

void ReapDetached() {
  State& s = GetState();
  auto& d = s.detached;
  for (size_t i = 0; i < d.size();) {
    if (P2PDone(d[i])) {
      ApiRequest* r = d[i];
      d[i] = d.back();
      d.pop_back();
      if (int rc = CompleteP2P(r, nullptr); rc != MPIGPU_SUCCESS)
        MPIGPU_WARN("a request freed with MPIGPU_Request_free failed: %s",
                    ErrorMessage(rc).c_str());
    } else {
      ++i;
    }
  }
}

void PauseUnlocked(Lock& lk, int round) {
  lk.unlock();  // let other threads of the process call in
  if (YieldsAfter(round)) sched_yield();  // oversubscribed: let the peer run
  lk.lock();
}

}  // namespace mpigpu::api

// ---- C API ----

using mpigpu::SetLastError;
using mpigpu::api::ApiRequest;
using mpigpu::api::CheckActive;
using mpigpu::api::CommPtr;
using mpigpu::api::Finish;
using mpigpu::api::FinishWith;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
using mpigpu::api::State;
using mpigpu::api::TypedBuf;

namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

int DoInit() {
  State& s = GetState();
  if (s.initialized)
    return SetLastError(MPIGPU_ERR_INTERN, s.finalized ? "called after MPIGPU_Finalize"
                                                       : "called twice");
  // A refused MPIGPU_* value (malformed, out of range, or a ring too large for /dev/shm): the
  // message names the variable, its value and the allowed range.
  if (const mpigpu::Status& cfg = mpigpu::ConfigStatus(); !cfg.ok())
    return mpigpu::ReturnCode(cfg, MPIGPU_ERR_ARG);
  mpigpu::transport::JobInfo job;
  mpigpu::Status st = mpigpu::transport::JobInfo::FromEnvironment(&job);
  // The GPU first: the engine publishes each rank's device when it joins.
  const int local = mpigpu::LauncherInt("MPIGPU_LOCAL_RANK");
  if (st.ok()) mpigpu::api::SelectDevice(local >= 0 ? local : job.rank);
  if (st.ok()) st = mpigpu::transport::Engine::Create(job, &s.engine);
  if (!st.ok()) return mpigpu::ReturnCode(st, MPIGPU_ERR_OTHER);
  const int local_size = mpigpu::LauncherInt("MPIGPU_LOCAL_SIZE");
  s.yield_after = mpigpu::api::YieldAfterRounds(
      mpigpu::GetApiConfig().yield, local_size > 0 ? local_size : s.engine->size(),
      mpigpu::api::JobCpus());

  const int n = s.engine->size(), me = s.engine->rank();
  mpigpu::api::CommData& world = *s.comms[MPIGPU_COMM_WORLD];
  world.group.resize(n);
  world.from_world.resize(n);
  for (int r = 0; r < n; ++r) world.group[r] = world.from_world[r] = r;
  world.rank = me;
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

// *c (borrowed, see BorrowComm) and *tb for a call on `comm` with (buf, bt, count, dt).
int ResolveCommAndBuf(MPIGPU_Comm comm, const CommPtr** c, const void* buf, MPIGPU_Buftype bt,
                      int count, MPIGPU_Datatype dt, TypedBuf* tb) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (!(*c = mpigpu::api::BorrowComm(comm))) return MPIGPU_ERR_COMM;
  return mpigpu::api::ResolveTypedBuf(buf, bt, count, dt, tb);
}

// Validates one point-to-point call: *c (borrowed, see BorrowComm) and *tb.
inline int CheckP2P(bool recv, const void* buf, MPIGPU_Buftype bt, int count,
                    MPIGPU_Datatype dt, int peer, int tag, MPIGPU_Comm comm, const CommPtr** c,
                    TypedBuf* tb) {
  if (int rc = ResolveCommAndBuf(comm, c, buf, bt, count, dt, tb); rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = mpigpu::api::CheckPeer(***c, peer, recv); rc != MPIGPU_SUCCESS) return rc;
  return mpigpu::api::CheckTag(tag, recv);
}

// Validates and starts one point-to-point operation on comm's point-to-point context.
int DoStart(bool recv, const void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt,
            int peer, int tag, MPIGPU_Comm comm, ApiRequest** out) {
  const CommPtr* c = nullptr;
  TypedBuf tb;
  if (int rc = CheckP2P(recv, buf, bt, count, dt, peer, tag, comm, &c, &tb); rc != MPIGPU_SUCCESS)
    return rc;
  return mpigpu::api::StartP2P(recv, tb, *c, peer, tag, (*c)->ctx_p2p, out);
}

// How many times a blocking receive looks for its message before it posts a request (a few µs):
// a ping-pong's answer comes within that.
constexpr int kRecvNowSpins = 4096;

// Send and Recv. A buffer the engine moves in place needs no request object: the engine's
// request is started, waited for and released here. Packed buffers and PROC_NULL take the
// path of nonblocking calls (StartP2P, WaitP2P).
int DoBlocking(Lock& lk, bool recv, const void* buf, MPIGPU_Buftype bt, int count,
               MPIGPU_Datatype dt, int peer, int tag, MPIGPU_Comm comm, MPIGPU_Status* status) {
  const CommPtr* slot = nullptr;
  TypedBuf tb;
  if (int rc = CheckP2P(recv, buf, bt, count, dt, peer, tag, comm, &slot, &tb);
      rc != MPIGPU_SUCCESS)
    return rc;
  mpigpu::transport::UserBuffer ub;
  ub.loc = tb.loc;
  if (peer == MPIGPU_PROC_NULL || !mpigpu::api::EngineLayout(tb, &ub.ptr, &ub.layout)) {
    ApiRequest* r = nullptr;
    if (int rc = mpigpu::api::StartP2P(recv, tb, *slot, peer, tag, (*slot)->ctx_p2p, &r);
        rc != MPIGPU_SUCCESS)
      return rc;
    return mpigpu::api::WaitP2P(lk, r, status);
  }
  const mpigpu::api::CommData& c = **slot;
  State& s = GetState();
  // A small host message that can go or come at once needs no request at all. The receive
  // looks for its message a while before it posts (less when ranks share CPUs).
  if (!recv && s.engine->TrySendNow(ub, c.group[peer], tag, c.ctx_p2p)) return MPIGPU_SUCCESS;
  if (recv && peer != MPIGPU_ANY_SOURCE) {
    mpigpu::transport::MsgInfo info;
    mpigpu::Status st;
    const int spins = s.yield_after <= mpigpu::api::kRoundsBeforeYield
                          ? mpigpu::api::kRoundsBeforeYield
                          : kRecvNowSpins;
    if (s.engine->TryRecvNow(ub, c.group[peer], mpigpu::api::EngineTag(tag), c.ctx_p2p, spins,
                             &info, &st))
      return mpigpu::api::OpStatus(st, info, true, c, peer, tag, status);
  }
  mpigpu::transport::Request* op = nullptr;
  if (int rc = mpigpu::api::StartOp(recv, ub, c, peer, tag, c.ctx_p2p, &op); rc != MPIGPU_SUCCESS)
    return rc;
  // Comm_free may come while the lock is dropped: c is kept from then on.
  CommPtr keep;
  if (int rc = mpigpu::api::ProgressUntil(
          lk, [op] { return op->done(); }, [&] { keep = *slot; });
      rc != MPIGPU_SUCCESS) {
    if (s.engine) s.engine->Release(op);  // freed when it completes (with the engine if finalized)
    return rc;
  }
  const int rc = mpigpu::api::OpStatus(*op, recv, c, peer, tag, status);
  s.engine->Release(op);
  return rc;
}

int DoNonblocking(bool recv, const void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt,
                  int peer, int tag, MPIGPU_Comm comm, MPIGPU_Request* request) {
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  *request = MPIGPU_REQUEST_NULL;
  ApiRequest* r = nullptr;
  if (int rc = DoStart(recv, buf, bt, count, dt, peer, tag, comm, &r); rc != MPIGPU_SUCCESS)
    return rc;
  r->handle = r->key;  // the user holds it now
  *request = mpigpu::api::HandleFromValue(r->handle);
  return MPIGPU_SUCCESS;
}

int DoSendrecv(Lock& lk, const void* sbuf, MPIGPU_Buftype sbt, int scount, MPIGPU_Datatype stype,
               int dest, int stag, void* rbuf, MPIGPU_Buftype rbt, int rcount,
               MPIGPU_Datatype rtype, int source, int rtag, MPIGPU_Comm comm,
               MPIGPU_Status* status) {
  // Validate both halves before starting either, so a bad argument sends nothing.
  const CommPtr* slot = nullptr;  // borrowed: c is used only before the first wait
  TypedBuf stb, rtb;
  if (int rc = ResolveCommAndBuf(comm, &slot, sbuf, sbt, scount, stype, &stb);
      rc != MPIGPU_SUCCESS)
    return rc;
  const CommPtr& c = *slot;
  if (int rc = mpigpu::api::ResolveTypedBuf(rbuf, rbt, rcount, rtype, &rtb); rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = mpigpu::api::CheckPeer(*c, dest, false); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = mpigpu::api::CheckPeer(*c, source, true); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = mpigpu::api::CheckTag(stag, false); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = mpigpu::api::CheckTag(rtag, true); rc != MPIGPU_SUCCESS) return rc;
  ApiRequest *rr = nullptr, *sr = nullptr;
  if (int rc = mpigpu::api::StartP2P(true, rtb, c, source, rtag, c->ctx_p2p, &rr);
      rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = mpigpu::api::StartP2P(false, stb, c, dest, stag, c->ctx_p2p, &sr);
      rc != MPIGPU_SUCCESS) {
    mpigpu::api::Detach(rr);
    return rc;
  }
  int src = mpigpu::api::WaitP2P(lk, sr, MPIGPU_STATUS_IGNORE);
  int rrc = mpigpu::api::WaitP2P(lk, rr, status);
  return rrc != MPIGPU_SUCCESS ? rrc : src;
}

int DoWait(Lock& lk, MPIGPU_Request* request, MPIGPU_Status* status, MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  if (*request == MPIGPU_REQUEST_NULL) {
    mpigpu::api::EmptyStatus(status, MPIGPU_ANY_SOURCE);
    return MPIGPU_SUCCESS;
  }
  const MPIGPU_Request handle = *request;
  ApiRequest* r = mpigpu::api::CheckedRequest(handle);
  if (r == nullptr) return MPIGPU_ERR_REQUEST;
  *h = r->comm->errhandler;
  // Another thread may complete or free the request while the lock is dropped (a wait on a
  // copy of the handle): the wait then ends, and the handle is stale.
  const uintptr_t v = r->handle;
  if (int rc = mpigpu::api::ProgressUntil(
          lk, [r, v] { return r->handle != v || mpigpu::api::P2PDone(r); });
      rc != MPIGPU_SUCCESS)
    return rc;
  if (r->handle != v) return mpigpu::api::RequestError(handle);
  *request = MPIGPU_REQUEST_NULL;
  return mpigpu::api::CompleteP2P(r, status);
}

// Whether `r`, the object resolved for handle `h` (null for a null handle), can complete
// without blocking. A handle gone stale while the lock was dropped (another thread completed or
// freed its request) counts as done: completing it then reports the error.
inline bool ObjectDone(const ApiRequest* r, MPIGPU_Request h) {
  return r == nullptr || r->handle != mpigpu::api::HandleValue(h) || mpigpu::api::P2PDone(r);
}

bool AllDone(int count, MPIGPU_Request requests[], ApiRequest* const* objs) {
  for (int i = 0; i < count; ++i)
    if (!ObjectDone(objs[i], requests[i])) return false;
  return true;
}

// Completes every request of the array (all done; objs from CheckRequests); the first error
// wins. statuses may be null.
int CompleteAll(int count, MPIGPU_Request requests[], ApiRequest* const* objs,
                MPIGPU_Status statuses[], MPIGPU_Errhandler* h) {
  int first = MPIGPU_SUCCESS;
  for (int i = 0; i < count; ++i) {
    MPIGPU_Status* st = statuses == MPIGPU_STATUSES_IGNORE ? nullptr : &statuses[i];
    ApiRequest* r = objs[i];
    if (r == nullptr) {
      mpigpu::api::EmptyStatus(st, MPIGPU_ANY_SOURCE);
      continue;
    }
    if (r->handle != mpigpu::api::HandleValue(requests[i])) {  // see ObjectDone
      const int rc = mpigpu::api::RequestError(requests[i]);
      if (st != nullptr) st->MPIGPU_ERROR = rc;
      if (first == MPIGPU_SUCCESS) first = rc;
      continue;
    }
    MPIGPU_Errhandler rh = r->comm->errhandler;
    int rc = mpigpu::api::CompleteP2P(r, st);
    requests[i] = MPIGPU_REQUEST_NULL;
    if (rc != MPIGPU_SUCCESS && first == MPIGPU_SUCCESS) {
      first = rc;
      *h = rh;
    }
  }
  if (first != MPIGPU_SUCCESS)  // the detail of the first failure, not of a later one
    SetLastError(first, mpigpu::LastErrorDetail(first));
  return first;
}

int DoWaitall(Lock& lk, int count, MPIGPU_Request requests[], MPIGPU_Status statuses[],
              MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  mpigpu::api::RequestObjects objs(count);
  if (int rc = mpigpu::api::CheckRequests(count, requests, objs.get()); rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = mpigpu::api::ProgressUntil(lk, [&] { return AllDone(count, requests, objs.get()); });
      rc != MPIGPU_SUCCESS)
    return rc;
  return CompleteAll(count, requests, objs.get(), statuses, h);
}

int DoTestall(int count, MPIGPU_Request requests[], int* flag, MPIGPU_Status statuses[],
              MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (flag == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null flag");
  *flag = 0;
  mpigpu::api::RequestObjects objs(count);
  if (int rc = mpigpu::api::CheckRequests(count, requests, objs.get()); rc != MPIGPU_SUCCESS)
    return rc;
  if (!AllDone(count, requests, objs.get())) {
    if (int rc = mpigpu::api::ProgressOnce(); rc != MPIGPU_SUCCESS) return rc;
    if (!AllDone(count, requests, objs.get())) return MPIGPU_SUCCESS;
  }
  *flag = 1;
  return CompleteAll(count, requests, objs.get(), statuses, h);
}

int DoWaitany(Lock& lk, int count, MPIGPU_Request requests[], int* index, MPIGPU_Status* status,
              MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (index == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null index");
  *index = MPIGPU_UNDEFINED;
  mpigpu::api::RequestObjects objs_of(count);
  ApiRequest** objs = objs_of.get();
  if (int rc = mpigpu::api::CheckRequests(count, requests, objs); rc != MPIGPU_SUCCESS) return rc;
  bool any = false;
  for (int i = 0; i < count; ++i) any |= requests[i] != MPIGPU_REQUEST_NULL;
  if (!any) {
    mpigpu::api::EmptyStatus(status, MPIGPU_ANY_SOURCE);
    return MPIGPU_SUCCESS;
  }
  int found = -1;
  auto one_done = [&] {
    for (int i = 0; i < count; ++i)
      if (objs[i] != nullptr && ObjectDone(objs[i], requests[i])) {
        found = i;
        return true;
      }
    return false;
  };
  if (int rc = mpigpu::api::ProgressUntil(lk, one_done); rc != MPIGPU_SUCCESS) return rc;
  *index = found;
  ApiRequest* r = objs[found];
  if (r->handle != mpigpu::api::HandleValue(requests[found]))  // see ObjectDone
    return mpigpu::api::RequestError(requests[found]);
  *h = r->comm->errhandler;
  requests[found] = MPIGPU_REQUEST_NULL;
  return mpigpu::api::CompleteP2P(r, status);
}

int DoTest(MPIGPU_Request* request, int* flag, MPIGPU_Status* status, MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (request == nullptr || flag == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null request pointer or flag");
  *flag = 0;
  if (*request == MPIGPU_REQUEST_NULL) {
    *flag = 1;
    mpigpu::api::EmptyStatus(status, MPIGPU_ANY_SOURCE);
    return MPIGPU_SUCCESS;
  }
  ApiRequest* r = mpigpu::api::CheckedRequest(*request);
  if (r == nullptr) return MPIGPU_ERR_REQUEST;
  *h = r->comm->errhandler;
  if (!mpigpu::api::P2PDone(r)) {
    if (int rc = mpigpu::api::ProgressOnce(); rc != MPIGPU_SUCCESS) return rc;
    if (!mpigpu::api::P2PDone(r)) return MPIGPU_SUCCESS;
  }
  *flag = 1;
  *request = MPIGPU_REQUEST_NULL;
  return mpigpu::api::CompleteP2P(r, status);
}

// Iprobe; with `block`, until a message is there.
int DoProbe(Lock& lk, int source, int tag, MPIGPU_Comm comm, int* flag, MPIGPU_Status* status,
            bool block) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = mpigpu::api::LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (!block && flag == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null flag");
  if (int rc = mpigpu::api::CheckPeer(*c, source, true); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = mpigpu::api::CheckTag(tag, true); rc != MPIGPU_SUCCESS) return rc;
  if (flag) *flag = 0;
  if (source == MPIGPU_PROC_NULL) {
    if (flag) *flag = 1;
    mpigpu::api::EmptyStatus(status, MPIGPU_PROC_NULL);
    return MPIGPU_SUCCESS;
  }
  const int world = mpigpu::api::EnginePeer(*c, source);
  const int etag = mpigpu::api::EngineTag(tag);
  bool found = false;
  mpigpu::transport::MsgInfo info;
  for (int round = 0;; ++round) {
    mpigpu::Status st = GetState().engine->Iprobe(world, etag, c->ctx_p2p, &found, &info);
    if (!st.ok()) return mpigpu::ReturnCode(st, MPIGPU_ERR_INTERN);
    if (found || !block) break;
    if (!mpigpu::api::PauseDropsLock(round)) continue;
    mpigpu::api::PauseUnlocked(lk, round);
    if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  }
  if (!found) return MPIGPU_SUCCESS;
  if (flag) *flag = 1;
  if (status != MPIGPU_STATUS_IGNORE) {
    mpigpu::api::EmptyStatus(status, c->from_world[info.source]);
    status->MPIGPU_TAG = info.tag;
    status->count_bytes = info.bytes;
  }
  return MPIGPU_SUCCESS;
}

int DoGetCount(const MPIGPU_Status* status, MPIGPU_Datatype datatype, int* count) {
  if (status == nullptr || count == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null status or count");
  mpigpu::TypeInfo info;
  if (int rc = mpigpu::LookupType(datatype, &info); rc != MPIGPU_SUCCESS) return rc;
  const size_t bytes = status->count_bytes;
  if (info.size == 0) {
    *count = bytes == 0 ? 0 : MPIGPU_UNDEFINED;
  } else if (bytes % info.size != 0 || bytes / info.size > static_cast<size_t>(INT_MAX)) {
    *count = MPIGPU_UNDEFINED;
  } else {
    *count = static_cast<int>(bytes / info.size);
  }
  return MPIGPU_SUCCESS;
}

int DoRequestFree(MPIGPU_Request* request, MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  ApiRequest* r = mpigpu::api::CheckedRequest(*request);
  if (r == nullptr) return MPIGPU_ERR_REQUEST;
  *h = r->comm->errhandler;
  *request = MPIGPU_REQUEST_NULL;
  if (mpigpu::api::P2PDone(r)) (void)mpigpu::api::CompleteP2P(r, nullptr);
  else mpigpu::api::Detach(r);
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

// ---- point to point ----

extern "C" int MPIGPU_Send(const void* buf, MPIGPU_Buftype buftype, int count,
                           MPIGPU_Datatype datatype, int dest, int tag, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Send", comm,
                DoBlocking(lk, false, buf, buftype, count, datatype, dest, tag, comm, nullptr));
}

extern "C" int MPIGPU_Recv(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                           int source, int tag, MPIGPU_Comm comm, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Recv", comm,
                DoBlocking(lk, true, buf, buftype, count, datatype, source, tag, comm, status));
}

extern "C" int MPIGPU_Isend(const void* buf, MPIGPU_Buftype buftype, int count,
                            MPIGPU_Datatype datatype, int dest, int tag, MPIGPU_Comm comm,
                            MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Isend", comm,
                DoNonblocking(false, buf, buftype, count, datatype, dest, tag, comm, request));
}

extern "C" int MPIGPU_Irecv(void* buf, MPIGPU_Buftype buftype, int count,
                            MPIGPU_Datatype datatype, int source, int tag, MPIGPU_Comm comm,
                            MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Irecv", comm,
                DoNonblocking(true, buf, buftype, count, datatype, source, tag, comm, request));
}

extern "C" int MPIGPU_Sendrecv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                               MPIGPU_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                               MPIGPU_Buftype recvbuftype, int recvcount,
                               MPIGPU_Datatype recvtype, int source, int recvtag,
                               MPIGPU_Comm comm, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Sendrecv", comm,
                DoSendrecv(lk, sendbuf, sendbuftype, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvbuftype, recvcount, recvtype, source, recvtag, comm, status));
}

// ---- completion ----
// Errors of completion calls go to the handler of the request's communicator (WORLD's when
// the request itself is bad).

namespace {

// The handler of a completion call's errors until a request names its communicator's.
constexpr MPIGPU_Errhandler kWorldsHandler = MPIGPU_ERRHANDLER_NULL;

int FinishCompletion(const char* fn, MPIGPU_Errhandler h, int rc) {
  if (rc == MPIGPU_SUCCESS) return rc;
  return FinishWith(fn, h == kWorldsHandler ? mpigpu::api::HandlerOf(kWorld) : h, rc);
}

}  // namespace

extern "C" int MPIGPU_Wait(MPIGPU_Request* request, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoWait(lk, request, status, &h);
  return FinishCompletion("MPIGPU_Wait", h, rc);
}

extern "C" int MPIGPU_Waitall(int count, MPIGPU_Request requests[], MPIGPU_Status statuses[]) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoWaitall(lk, count, requests, statuses, &h);
  return FinishCompletion("MPIGPU_Waitall", h, rc);
}

extern "C" int MPIGPU_Waitany(int count, MPIGPU_Request requests[], int* index,
                              MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoWaitany(lk, count, requests, index, status, &h);
  return FinishCompletion("MPIGPU_Waitany", h, rc);
}

extern "C" int MPIGPU_Test(MPIGPU_Request* request, int* flag, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoTest(request, flag, status, &h);
  return FinishCompletion("MPIGPU_Test", h, rc);
}

extern "C" int MPIGPU_Testall(int count, MPIGPU_Request requests[], int* flag,
                              MPIGPU_Status statuses[]) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoTestall(count, requests, flag, statuses, &h);
  return FinishCompletion("MPIGPU_Testall", h, rc);
}

extern "C" int MPIGPU_Probe(int source, int tag, MPIGPU_Comm comm, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Probe", comm, DoProbe(lk, source, tag, comm, nullptr, status, true));
}

extern "C" int MPIGPU_Iprobe(int source, int tag, MPIGPU_Comm comm, int* flag,
                             MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iprobe", comm, DoProbe(lk, source, tag, comm, flag, status, false));
}

extern "C" int MPIGPU_Get_count(const MPIGPU_Status* status, MPIGPU_Datatype datatype,
                                int* count) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Get_count", kWorld, DoGetCount(status, datatype, count));
}

extern "C" int MPIGPU_Request_free(MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = kWorldsHandler;
  const int rc = DoRequestFree(request, &h);
  return FinishCompletion("MPIGPU_Request_free", h, rc);
}

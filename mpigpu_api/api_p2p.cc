// The public API's point to point: request objects (recycled), starting a send or receive
// (staging the datatypes the transport cannot describe as one layout), completing it, and the
// calls Send/Recv/Isend/Irecv/Sendrecv. See api_internal.h for the conventions.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>

#include "memcopy/log.h"
#include "mpigpu_api/api_calls.h"
#include "mpigpu_api/api_entry.h"
#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_sched.h"
#include "mpigpu_api/errors.h"
#include "pipeline/pack.h"

namespace mpigpu::api {
namespace {

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

// Copies packed bytes [0, bytes) between the typed buffer `b` and the contiguous host `packed`
// (PackPieces: memcpy per block in host memory; one strided default-stream copy per piece and
// one synchronisation for a device buffer).
int MovePacked(const TypedBuf& b, unsigned char* packed, size_t bytes, bool pack) {
  if (bytes == 0) return MPIGPU_SUCCESS;
  const Status st = PackPieces(pack ? PackDir::kPack : PackDir::kUnpack, b.desc.shape(), b.ptr,
                               b.loc, 0, bytes, packed, MemLoc::Host());
  return b.loc.is_host() ? PackerCode(st) : ReturnCode(st, MPIGPU_ERR_BUFFER);
}

// Starts the engine's half of a point-to-point call on context `ctx` of `comm`: `peer` is a comm
// rank or ANY_SOURCE (not PROC_NULL), `tag` may be ANY_TAG.
inline int StartOp(bool recv, const transport::UserBuffer& ub, const CommData& comm, int peer,
                   int tag, int ctx, transport::Request** op, bool sync = false) {
  transport::Messenger& e = *GetState().engine;
  const int world = EnginePeer(comm, peer);
  const int etag = EngineTag(tag);
  return ReturnCode(recv   ? e.Irecv(ub, world, etag, ctx, op)
                    : sync ? e.Issend(ub, world, etag, ctx, op)
                           : e.Isend(ub, world, etag, ctx, op),
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
  const int rc = OpStatus(op.status(), op.info(), recv, comm, peer, tag, st);
  if (st != MPIGPU_STATUS_IGNORE && op.cancelled()) st->cancelled = 1;
  return rc;
}

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
    r->sched.reset();
    r->persist.reset();
    r->op = nullptr;
    r->proc_null = r->detached = false;
    r->handle = 0;
  }
  r->key += kHandleGenUnit;  // a new generation: no handle of the request it served names it
  GetState().spare.push_back(r);
}

}  // namespace

int StartP2P(bool recv, const TypedBuf& buf, const CommPtr& comm, int peer, int tag, int ctx,
             ApiRequest** out, bool sync) {
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
    if (int rc = StartOp(recv, ub, *comm, peer, tag, ctx, &r->op, sync); rc != MPIGPU_SUCCESS)
      return rc;
  }
  *out = r.release();
  return MPIGPU_SUCCESS;
}

void DeclareContexts(const CommData& c) {
  GetState().engine->SetContextMembers(c.ctx_p2p, c.group);
  GetState().engine->SetContextMembers(c.ctx_coll, c.group);
}

int CompleteP2P(ApiRequest* r, MPIGPU_Status* status) {
  if (__builtin_expect(r->persist != nullptr, 0)) return CompletePersistent(r, status);
  State& s = GetState();
  int rc = MPIGPU_SUCCESS;
  MPIGPU_Status st;
  if (r->proc_null) {
    EmptyStatus(&st, MPIGPU_PROC_NULL);
  } else if (r->sched) {
    EmptyStatus(&st, MPIGPU_ANY_SOURCE);
    rc = st.MPIGPU_ERROR = CollSchedResult(*r->sched);
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

int StartCollRequest(std::shared_ptr<CollSched> sched, MPIGPU_Request* request) {
  ApiRequest* r = NewApiRequest();
  r->comm = sched->comm();
  r->sched = sched;
  GetState().coll_scheds.push_back(std::move(sched));
  r->handle = r->key;  // the user holds it now
  *request = HandleFromValue(r->handle);
  return MPIGPU_SUCCESS;
}

int NewPersistentRequest(std::shared_ptr<PersistentColl> p, const CommPtr& comm,
                         MPIGPU_Request* request) {
  ApiRequest* r = NewApiRequest();
  r->comm = comm;
  r->persist = std::move(p);
  r->handle = r->key;  // the user holds it until Request_free
  *request = HandleFromValue(r->handle);
  return MPIGPU_SUCCESS;
}

void FreeInactiveRequest(ApiRequest* r) { RecycleApiRequest(r); }

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

}  // namespace mpigpu::api

namespace {

// *c (borrowed, see BorrowComm) and *tb for a call on `comm` with (buf, bt, count, dt).
// Inline: every point-to-point call resolves its buffer (GCC left it out of line once api.cc
// was split, +65 instructions per Send + Recv under callgrind).
inline int ResolveCommAndBuf(MPIGPU_Comm comm, const CommPtr** c, const void* buf, MPIGPU_Buftype bt,
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

// How many times a blocking receive looks for its message before it posts a request (a few µs):
// a ping-pong's answer comes within that.
constexpr int kRecvNowSpins = 4096;

}  // namespace

// The calls' bodies (api_calls.h): out of the anonymous namespace, as the MPI layer runs them.
namespace mpigpu::api {

int StartChecked(bool recv, const void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt,
                 int peer, int tag, MPIGPU_Comm comm, ApiRequest** out, bool sync) {
  const CommPtr* c = nullptr;
  TypedBuf tb;
  if (int rc = CheckP2P(recv, buf, bt, count, dt, peer, tag, comm, &c, &tb); rc != MPIGPU_SUCCESS)
    return rc;
  return mpigpu::api::StartP2P(recv, tb, *c, peer, tag, (*c)->ctx_p2p, out, sync);
}

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

}  // namespace mpigpu::api

// ---- point to point ----
// The bodies are api_calls.h's inline calls (the MPI layer runs them too).

extern "C" int MPIGPU_Send(const void* buf, MPIGPU_Buftype buftype, int count,
                           MPIGPU_Datatype datatype, int dest, int tag, MPIGPU_Comm comm) {
  return mpigpu::api::Send(buf, buftype, count, datatype, dest, tag, comm);
}

extern "C" int MPIGPU_Recv(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                           int source, int tag, MPIGPU_Comm comm, MPIGPU_Status* status) {
  return mpigpu::api::Recv(buf, buftype, count, datatype, source, tag, comm, status);
}

extern "C" int MPIGPU_Isend(const void* buf, MPIGPU_Buftype buftype, int count,
                            MPIGPU_Datatype datatype, int dest, int tag, MPIGPU_Comm comm,
                            MPIGPU_Request* request) {
  return mpigpu::api::Isend(buf, buftype, count, datatype, dest, tag, comm, request);
}

// Synchronous sends: started like Isend, by rendezvous, so they complete only once the receiver
// has matched them.
extern "C" int MPIGPU_Ssend(const void* buf, MPIGPU_Buftype buftype, int count,
                            MPIGPU_Datatype datatype, int dest, int tag, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  ApiRequest* r = nullptr;
  int rc = mpigpu::api::StartChecked(false, buf, buftype, count, datatype, dest, tag, comm, &r,
                                     true);
  if (rc == MPIGPU_SUCCESS) rc = mpigpu::api::WaitP2P(lk, r, MPIGPU_STATUS_IGNORE);
  return Finish("MPIGPU_Ssend", comm, rc);
}

extern "C" int MPIGPU_Issend(const void* buf, MPIGPU_Buftype buftype, int count,
                             MPIGPU_Datatype datatype, int dest, int tag, MPIGPU_Comm comm,
                             MPIGPU_Request* request) {
  return mpigpu::api::Issend(buf, buftype, count, datatype, dest, tag, comm, request);
}

extern "C" int MPIGPU_Irecv(void* buf, MPIGPU_Buftype buftype, int count,
                            MPIGPU_Datatype datatype, int source, int tag, MPIGPU_Comm comm,
                            MPIGPU_Request* request) {
  return mpigpu::api::Irecv(buf, buftype, count, datatype, source, tag, comm, request);
}

extern "C" int MPIGPU_Sendrecv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                               MPIGPU_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                               MPIGPU_Buftype recvbuftype, int recvcount,
                               MPIGPU_Datatype recvtype, int source, int recvtag,
                               MPIGPU_Comm comm, MPIGPU_Status* status) {
  return mpigpu::api::Sendrecv(sendbuf, sendbuftype, sendcount, sendtype, dest, sendtag, recvbuf,
                               recvbuftype, recvcount, recvtype, source, recvtag, comm, status);
}

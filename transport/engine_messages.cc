// The engine's message paths: sending (the per-destination FIFO, the blocking shortcuts),
// arrivals (matching, eager delivery, the rendezvous handed to a back-end, control messages
// routed to theirs) and the services back-ends ask for (LmtHost).
#include <algorithm>
#include <cstring>
#include <utility>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"
#include "transport/core/wire_ids.h"
#include "transport/engine.h"

namespace mpigpu::transport {
namespace {

// The errors of arrivals, out of the hot function's way.
[[gnu::cold]] Status BadPayload(const MsgHeader& h, size_t len) {
  return Status(Err::kInternal, "message from rank " + std::to_string(h.src) + " has a payload of " +
                                    std::to_string(len) + " bytes that does not fit its header");
}

[[gnu::cold]] Status UnknownMessage(const MsgHeader& h) {
  if (h.type == MsgType::kCtl)
    return Status(Err::kInternal, "control message for unknown back-end " +
                                      std::to_string(h.lmt) + " from rank " + std::to_string(h.src));
  return Status(Err::kInternal, "message of unknown type " +
                                    std::to_string(static_cast<int>(h.type)) + " from rank " +
                                    std::to_string(h.src));
}

// What a back-end's capabilities rule out before it is asked: a device buffer on either side, a
// strided layout on either side.
bool CapsAllow(const LmtCaps& c, const Request& req) {
  const RtsBody rts = BodyOf<RtsBody>(req.rts());
  if (!c.has(LmtCaps::kDeviceBuffers) && (!rts.loc.is_host() || !req.buf().loc.is_host())) return false;
  if (!c.has(LmtCaps::kStrided) && (!rts.contiguous || !req.buf().layout.contiguous())) return false;
  return true;
}

}  // namespace

// An eager message of buf's packed bytes to `dst` (no request yet).
Engine::OutMsg Engine::Eager(int dst, int tag, int context, const UserBuffer& buf) const {
  OutMsg m;
  m.dst = dst;
  m.payload.user = &buf;
  m.payload.len = m.hdr.bytes = buf.layout.packed_bytes();
  m.hdr.type = MsgType::kEager;
  m.hdr.src = rank_;
  m.hdr.tag = tag;
  m.hdr.context = context;
  return m;
}

Status Engine::SendOrQueue(OutMsg& msg) {
  std::deque<OutMsg>& q = pending_[msg.dst];
  if (q.empty() && TrySend(msg)) return Status::Ok();
  q.push_back(msg);  // behind earlier messages to the same rank: order is kept
  ++pending_count_;
  return Status::Ok();
}

bool Engine::TrySend(OutMsg& msg) {
  if (msg.inline_len > 0) {  // set here: a queued message is a copy
    msg.payload.bytes = msg.inline_payload.data();
    msg.payload.len = msg.inline_len;
  }
  Status copy_error;
  if (!chan_[msg.dst]->TrySend(msg.dst, &msg.hdr, msg.payload, &copy_error)) return false;
  if (!copy_error.ok()) {  // consumed: the request carries the error
    if (msg.req != nullptr) Complete(msg.req, std::move(copy_error));
    return true;
  }
  if (msg.hdr.type != MsgType::kCtl) {
    if (msg.req != nullptr) msg.req->number_ = sent_to_[msg.dst];
    ++sent_to_[msg.dst];
  }
  if (msg.req != nullptr) {
    if (msg.hdr.type == MsgType::kEager) {
      msg.req->sent_eager_ = true;
      Complete(msg.req, Status::Ok());
    } else {
      waiting_sends_.insert(msg.req);  // an RTS: answers may name it now
    }
  }
  return true;
}

void Engine::FlushPending() {
  for (int dst = 0; dst < size_ && pending_count_ > 0; ++dst) {
    std::deque<OutMsg>& q = pending_[dst];
    while (!q.empty() && TrySend(q.front())) {
      q.pop_front();
      --pending_count_;
    }
  }
}

bool Engine::TrySendNow(const UserBuffer& buf, int dst, int tag, int context) {
  const size_t bytes = buf.layout.packed_bytes();
  // Anything else (errors included) is Isend's to decide.
  if (finalized_ || !RankValid(dst, false) || tag < 0 || !buf.loc.is_host() ||
      !buf.layout.contiguous() || bytes > EagerMax(dst) || (bytes > 0 && buf.ptr == nullptr) ||
      peer_failed_[dst] || !pending_[dst].empty())
    return false;
  if (chan_[dst]->TrySendEagerNow(dst, tag, context, buf.ptr, bytes)) {
    ++sent_to_[dst];
    return true;
  }
  OutMsg msg = Eager(dst, tag, context, buf);
  return TrySend(msg);  // false: no room; nothing was sent
}

bool Engine::TryRecvNow(const UserBuffer& buf, int src, int tag, int context, int spins,
                        MsgInfo* info, Status* st) {
  const size_t capacity = buf.layout.packed_bytes();
  if (finalized_ || !RankValid(src, false) || (tag < 0 && tag != kAnyTag) || !buf.loc.is_host() ||
      !buf.layout.contiguous() || (capacity > 0 && buf.ptr == nullptr) || peer_failed_[src])
    return false;
  // A posted receive or an unexpected message may come first in MPI's order: then the full path
  // decides. Nothing here changes that while the channel looks (no Progress).
  if (!posted_.empty() || !unexpected_.empty()) return false;
  if (!chan_[src]->TryRecvEagerNow(src, tag, context, buf.ptr, capacity, spins, info))
    return false;  // not this receive's message
  ++arrived_from_[src];
  *st = TruncationOf(*info, capacity);
  return true;
}

bool Engine::ArrivalsPending() const {
  for (Channel* c : channels_)
    if (c->Pending()) return true;
  return false;
}

Status Engine::Deliver(const MsgHeader& h, const unsigned char* payload, size_t len) {
  switch (h.type) {
    case MsgType::kEager:
    case MsgType::kRts: {
      if (h.type == MsgType::kEager ? h.bytes != len : len > kCtlPayloadMax)
        return BadPayload(h, len);
      const uint64_t number = arrived_from_[h.src]++;
      Request* req = posted_.FindAndRemove(MatchKey{h.context, h.src, h.tag});
      if (req == nullptr) {
        auto* u = new Unexpected();
        u->key = MatchKey{h.context, h.src, h.tag};
        u->hdr = h;
        u->number = number;
        u->payload.assign(payload, payload + len);  // eager data, or the RTS's offer
        unexpected_.PushBack(u);
        return Status::Ok();
      }
      if (req->peer_ == kAnySource) {
        req->peer_ = h.src;
        ++outstanding_[h.src];
      }
      if (h.type == MsgType::kEager) DeliverEager(req, h, payload);
      else StartRendezvousRecv(req, h, payload);
      return Status::Ok();
    }
    case MsgType::kCtl:
      if (LmtBackend* b = by_wire_id_[h.lmt]) return b->OnControl(h, payload, len);
      if (h.lmt == kWireIdCore) return OnCoreControl(h);
      break;
  }
  return UnknownMessage(h);
}

// Copies what fits of an eager message into the receive's buffer and completes it: the copy's
// error, else kTruncate when the message was longer.
void Engine::DeliverEager(Request* req, const MsgHeader& h, const void* payload) {
  req->info_ = MsgInfo{h.src, h.tag, h.bytes};
  const size_t n = std::min<size_t>(h.bytes, req->bytes_);
  Status st = UnpackDelivered(h.src, req->buf_, 0, n, payload);
  Complete(req, st.ok() ? TruncationOf(req->info_, req->bytes_) : std::move(st));
}

void Engine::StartRendezvousRecv(Request* req, const MsgHeader& h, const unsigned char* offer) {
  req->info_ = MsgInfo{h.src, h.tag, h.bytes};
  req->rts_ = h;
  req->state_ = Request::State::kLmt;
  req->lmt_index_ = -1;
  OfferToLmts(req, h.lmt != kNoLmt ? offer : nullptr);
}

void Engine::OfferToLmts(Request* req, const unsigned char* offer) {
  const std::vector<LmtBackend*>& path = *lmt_path_[req->info_.source];
  for (int i = req->lmt_index_ + 1; i < static_cast<int>(path.size()); ++i) {
    req->lmt_index_ = i;
    LmtBackend* b = path[i];
    if (!CapsAllow(b->caps(), *req)) continue;
    if (b->StartRecv(req, b->caps().wire_id == req->rts_.lmt ? offer : nullptr)) return;
  }
  // Not reached: every list ends with a universal back-end (MakeBackends checks).
  Complete(req, Status(Err::kInternal, "no back-end carries this message"));
}

void Engine::FallBack(Request* req) {
  req->lmt_ = nullptr;
  req->op_.reset();
  OfferToLmts(req, nullptr);
}

Request* Engine::WaitingSend(uint64_t id) {
  auto* req = reinterpret_cast<Request*>(id);
  if (waiting_sends_.count(req) == 0 || req->state_ != Request::State::kWaitCts) return nullptr;
  return req;
}

void Engine::SendControl(int dst, MsgHeader h, const void* payload, size_t len) {
  OutMsg m;
  m.dst = dst;
  m.hdr = h;
  m.hdr.type = MsgType::kCtl;
  m.hdr.src = rank_;
  m.inline_len = std::min(len, kCtlPayloadMax);
  if (len > 0) std::memcpy(m.inline_payload.data(), payload, m.inline_len);
  (void)SendOrQueue(m);
}

bool Engine::TrySendData(int dst, MsgHeader h, const Payload& p, Status* copy_error) {
  if (!pending_[dst].empty()) return false;  // the pair's order: what waits goes first
  h.type = MsgType::kCtl;
  h.src = rank_;
  return chan_[dst]->TrySend(dst, &h, p, copy_error);
}

PayloadPlace Engine::PlacePayload(const MsgHeader& h, size_t len) {
  if (h.type != MsgType::kCtl) return {};
  LmtBackend* b = by_wire_id_[h.lmt];
  return b != nullptr ? b->PlacePayload(h, len) : PayloadPlace{};
}

size_t Engine::ChannelPayloadMax(int peer) const { return chan_[peer]->caps().max_payload; }

Status Engine::CopierFor(MemLoc loc, CopyEngine** out) {
  if (loc.is_host()) {
    *out = &host_copier_;
    return Status::Ok();
  }
  auto& slot = cuda_copiers_[loc.device];
  if (!slot) {
    auto engine = std::make_unique<CudaCopyEngine>();
    MPIGPU_RETURN_IF_ERROR(CudaCopyEngine::Create(loc.device, engine.get()));
    slot = std::move(engine);
  }
  *out = slot.get();
  return Status::Ok();
}

// Copies packed bytes [offset, offset + n) of `user` (a device or strided buffer) to or from
// `plain` (host memory: a channel's payload) and returns when the copy is complete.
Status Engine::CopyPackedByEngine(PackDir dir, const UserBuffer& user, size_t offset, size_t n,
                                  void* plain) {
  CopyEngine* copier = nullptr;
  MPIGPU_RETURN_IF_ERROR(CopierFor(user.loc, &copier));
  Status st = CopyPacked(*copier, dir, user.ptr, user.loc, user.layout, offset, n, plain,
                         MemLoc::Host());
  // Waited for even after a failure: with `plain` pinned, a piece already issued would still
  // read or write the channel's memory after it went back to its pool.
  Ticket t = 0;
  Status done = copier->Mark(&t);
  if (done.ok()) done = copier->Wait(t);
  st.KeepFirst(std::move(done));
  return st;
}

}  // namespace mpigpu::transport

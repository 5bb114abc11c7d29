// The engine's requests: sends and receives started, probes, waits, completion, progress, peer
// liveness and failure, finalize. Its start (the back-ends, the job segment, the bootstrap):
// engine_start.cc; the message paths (sending, arrivals, the services back-ends ask for):
// engine_messages.cc.
#include "transport/engine.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

#include "memcopy/clock.h"
#include "memcopy/log.h"
#include "memcopy/memcopy.h"
#include "transport/launcher_link.h"

namespace mpigpu::transport {
// kInvalidArg unless `rank` is a rank of this job (or kAnySource, where `any_ok`).
Status Engine::CheckRank(int rank, const char* role, bool any_ok) const {
  if (RankValid(rank, any_ok)) return Status::Ok();
  return Status(Err::kInvalidArg, std::string(role) + " rank " + std::to_string(rank) +
                                      " is not in [0, " + std::to_string(size_) + ")");
}

// The arguments every request shares: checked, then a fresh request that holds them.
Status Engine::StartRequest(Request::Kind kind, const UserBuffer& buf, int peer, int tag,
                            int context, Request** out) {
  const bool send = kind == Request::Kind::kSend;
  *out = nullptr;
  if (finalized_) return Status(Err::kInvalidArg, send ? "send after finalize" : "receive after finalize");
  if (!RankValid(peer, !send)) return CheckRank(peer, send ? "destination" : "source", !send);
  if (tag < 0 && (send || tag != kAnyTag))
    return Status(Err::kInvalidArg, std::string(send ? "send" : "receive") + " tag " +
                                        std::to_string(tag) + " is not valid");
  if (buf.layout.count > 1) MPIGPU_RETURN_IF_ERROR(buf.layout.Validate());  // one block is valid
  const size_t bytes = buf.layout.packed_bytes();
  if (bytes > 0 && buf.ptr == nullptr)
    return Status(Err::kInvalidArg, std::to_string(bytes) + "-byte " + (send ? "send" : "receive") +
                                        " with a null buffer");
  Request* req = NewRequest();
  req->kind_ = kind;
  req->peer_ = peer;
  req->tag_ = tag;
  req->context_ = context;
  req->buf_ = buf;
  req->bytes_ = bytes;
  if (peer != kAnySource) ++outstanding_[peer];
  *out = req;
  return Status::Ok();
}

Status Engine::Isend(const UserBuffer& buf, int dst, int tag, int context, Request** out) {
  return StartSend(buf, dst, tag, context, false, out);
}

Status Engine::Issend(const UserBuffer& buf, int dst, int tag, int context, Request** out) {
  return StartSend(buf, dst, tag, context, true, out);
}

bool Engine::CancelRecv(Request* req) {
  if (req == nullptr || req->kind_ != Request::Kind::kRecv || req->done_ ||
      !posted_.Contains(req))
    return false;
  posted_.Remove(req);
  req->cancelled_ = true;
  Complete(req, Status::Ok());
  return true;
}

Status Engine::StartSend(const UserBuffer& buf, int dst, int tag, int context, bool sync,
                         Request** out) {
  MPIGPU_RETURN_IF_ERROR(StartRequest(Request::Kind::kSend, buf, dst, tag, context, out));
  Request* req = *out;
  const size_t bytes = req->bytes_;
  req->info_ = MsgInfo{dst, tag, bytes};
  if (peer_failed_[dst]) {
    Complete(req, Status(Err::kPeerFailed, "rank " + std::to_string(dst) + " has failed"));
    return Status::Ok();
  }
  // Every path below reads the buffer off the default stream (see memcopy/stream_order.h).
  if (bytes > 0 && buf.loc.is_device() && config_->default_stream_order) {
    Status st = default_stream_.Wait(buf.loc);
    if (!st.ok()) {
      Complete(req, std::move(st));
      return Status::Ok();
    }
  }
  OutMsg msg = Eager(dst, tag, context, req->buf_);
  msg.req = req;
  msg.hdr.sreq = reinterpret_cast<uint64_t>(req);
  // A back-end may want this message whatever its size, with an offer in the RTS (a CUDA IPC
  // handle: the receiver pulls the buffer in one copy instead of two staged ones).
  if (bytes > 0) {
    for (LmtBackend* b : *offerers_[dst][buf.loc.is_device()]) {
      msg.inline_len = b->Offer(req, msg.inline_payload.data());
      if (msg.inline_len > 0) {
        msg.hdr.lmt = b->caps().wire_id;
        break;
      }
    }
  }
  // A synchronous send's RTS is answered only once a receive matched it.
  if (sync || bytes > EagerMax(dst) || msg.inline_len > 0) {
    msg.hdr.type = MsgType::kRts;
    msg.payload = Payload{};
    RtsBody body{};
    body.addr = reinterpret_cast<uint64_t>(buf.ptr);
    body.loc = buf.loc;
    body.contiguous = buf.layout.contiguous();
    body.block = buf.layout.contiguous() ? 0 : static_cast<uint32_t>(buf.layout.block);
    SetBody(&msg.hdr, body);
    req->state_ = Request::State::kWaitCts;
  }
  return SendOrQueue(msg);
}

Status Engine::Irecv(const UserBuffer& buf, int src, int tag, int context, Request** out) {
  MPIGPU_RETURN_IF_ERROR(StartRequest(Request::Kind::kRecv, buf, src, tag, context, out));
  Request* req = *out;
  req->state_ = Request::State::kPosted;

  req->key = MatchKey{context, src, tag};
  // The oldest unexpected message that matches, in arrival order.
  if (Unexpected* u = unexpected_.FindAndRemove(req->key)) {
    if (src == kAnySource) {
      req->peer_ = u->hdr.src;
      ++outstanding_[u->hdr.src];
    }
    if (u->hdr.type == MsgType::kEager) DeliverEager(req, u->hdr, u->payload.data());
    else StartRendezvousRecv(req, u->hdr, u->payload.data());
    delete u;
    return Status::Ok();
  }
  if (src != kAnySource && peer_failed_[src]) {
    Complete(req, Status(Err::kPeerFailed, "rank " + std::to_string(src) + " has failed"));
    return Status::Ok();
  }
  posted_.PushBack(req);
  return Status::Ok();
}

Status Engine::Iprobe(int src, int tag, int context, bool* found, MsgInfo* info) {
  *found = false;
  MPIGPU_RETURN_IF_ERROR(CheckRank(src, "source", true));
  // A probe waits on its source like a receive: the peer check watches it while the probe runs
  // (a blocking probe calls this again and again, so the check comes round during one of them).
  probing_ = src;
  Status progressed = Progress();
  probing_ = kNotProbing;
  MPIGPU_RETURN_IF_ERROR(progressed);
  if (const Unexpected* u = unexpected_.Find(MatchKey{context, src, tag})) {
    *found = true;
    *info = MsgInfo{u->hdr.src, u->hdr.tag, u->hdr.bytes};
    return Status::Ok();
  }
  // Nothing matches, and the rank (any member of the context, for kAnySource) that could send it
  // has failed: as a receive would, the probe fails instead of waiting for ever.
  for (int r = 0; r < size_; ++r) {
    if (!peer_failed_[r] || (src != kAnySource && r != src)) continue;
    if (src == kAnySource && !ContextHas(context, r)) continue;
    return Status(Err::kPeerFailed, "rank " + std::to_string(r) + " has failed");
  }
  return Status::Ok();
}

bool Engine::ContextHas(int context, int rank) const {
  auto it = context_members_.find(context);
  return it == context_members_.end() || it->second[rank];
}

// Requests are recycled: a ping-pong should not pay an allocation per message.
Request* Engine::NewRequest() {
  if (free_requests_.empty()) return new Request();
  Request* req = free_requests_.back();
  free_requests_.pop_back();
  return req;
}

void Engine::FreeRequest(Request* req) {
  if (free_requests_.size() >= 1024) {
    delete req;
    return;
  }
  req->~Request();  // made afresh in place: no temporary to build and move from
  new (req) Request();
  free_requests_.push_back(req);
}

void Engine::Idle() {
  for (auto& b : backends_->lmts) b->Idle();
}

void Engine::Release(Request* req) {
  if (req == nullptr) return;
  if (req->done()) FreeRequest(req);
  else req->released_ = true;  // freed when it completes (and its cancel, if any, is answered)
}

void Engine::Complete(Request* req, Status st) {
  if (req->done_) return;
  req->status_.KeepFirst(std::move(st));
  // The back-ends forget it first (they may look at its state), the offerer before the carrier.
  if (req->offer_lmt_ != nullptr) req->offer_lmt_->Finished(req);
  if (req->lmt_ != nullptr && req->lmt_ != req->offer_lmt_) req->lmt_->Finished(req);
  req->offer_lmt_ = req->lmt_ = nullptr;
  if (req->kind_ == Request::Kind::kSend && req->state_ != Request::State::kQueued)
    waiting_sends_.erase(req);  // eager ones never were
  req->state_ = Request::State::kDone;
  req->done_ = true;
  req->op_.reset();
  req->offer_op_.reset();
  if (req->peer_ >= 0) --outstanding_[req->peer_];
  if (req->released_ && !req->cancel_pending_) FreeRequest(req);
}

Status Engine::Wait(Request* req, double timeout_s) {
  const double deadline = timeout_s < 0 ? -1 : MonotonicSeconds() + timeout_s;
  while (!req->done()) {
    MPIGPU_RETURN_IF_ERROR(Progress());
    if (deadline > 0 && MonotonicSeconds() > deadline) return Status(Err::kTimeout, "request did not complete");
  }
  return Status::Ok();
}

Status Engine::Progress() {
  if (in_progress_) return Status::Ok();
  in_progress_ = true;
  Status st = PollArrivals();
  if (st.ok() && pending_count_ > 0) FlushPending();
  if (st.ok() && !busy_.empty()) st = ProgressBackends();
  // Peers are checked every ~20 ms; the clock is read only every 256th call, since reading it
  // can cost more than the rest of an idle progress call.
  if ((++progress_calls_ & 255) == 0) {
    const double now = MonotonicSeconds();
    if (now >= next_peer_check_) {
      next_peer_check_ = now + 0.02;
      CheckPeers();
      for (auto& b : backends_->lmts) b->Tick();
      if (st.ok() && !drain_error_.ok()) st = std::exchange(drain_error_, Status());
    }
  }
  in_progress_ = false;
  return st;
}

void Engine::Busy(LmtBackend* b) {
  if (b->listed_busy) return;
  b->listed_busy = true;
  busy_.push_back(b);
}

// Advances the busy back-ends; one that says it is idle leaves the list until it calls Busy.
Status Engine::ProgressBackends() {
  Status first;
  for (size_t i = 0; i < busy_.size();) {
    LmtBackend* b = busy_[i];
    bool busy = true;
    first.KeepFirst(b->Progress(&busy));
    if (busy) {
      ++i;
      continue;
    }
    b->listed_busy = false;
    busy_.erase(busy_.begin() + static_cast<long>(i));
  }
  return first;
}

bool Engine::PeerAlive(int rank) {
  if (rank < 0 || rank >= size_ || peer_failed_[rank]) return false;
  if (rank == rank_) return true;
  if (job_.info().SameNode(rank)) return job_.Alive(rank);
  return chan_[rank]->Peer(rank, /*probe=*/true) != PeerState::kLost;
}

bool Engine::PeerFinalized(int rank) {
  if (job_.info().SameNode(rank)) return job_.Finalized(rank);
  return chan_[rank]->Peer(rank, /*probe=*/false) == PeerState::kFinalized;
}

void Engine::SetContextMembers(int context, const std::vector<int>& world_ranks) {
  std::vector<bool>& members = context_members_[context];
  members.assign(size_, false);
  for (int r : world_ranks)
    if (r >= 0 && r < size_) members[r] = true;
}

void Engine::CheckPeers() {
  // mpigpurun died (SIGKILL, or its boot server closed): nobody else would end this rank.
  if (boot_->LauncherGone()) EndBecauseLauncherGone(rank_);
  bool any_source_waiting = probing_ == kAnySource;
  posted_.ForEach([&](Request* r) { any_source_waiting |= r->peer_ == kAnySource; });
  // The launcher's word first: it names the rank and says how it ended. Asked for only while a
  // rank on another node is waited on (this node's are seen through the segment).
  bool remote_waited = any_source_waiting && job_.info().SpansNodes();
  if (probing_ >= 0) remote_waited |= !job_.info().SameNode(probing_);
  for (int r = 0; r < size_ && !remote_waited; ++r)
    remote_waited = outstanding_[r] > 0 && !job_.info().SameNode(r);
  boot_->Ended(remote_waited, &ended_);
  for (const EndedRank& e : ended_) {
    if (e.rank < 0 || e.rank >= size_ || e.rank == rank_ || peer_failed_[e.rank]) continue;
    // A rank on another node may have sent messages that are still on their way on its
    // connection, which closes only behind them: that close decides, unless it does not come
    // within kEndedGrace s (its host gone too). This node's ranks' messages are in the segment.
    if (!job_.info().SameNode(e.rank)) {
      const double now = MonotonicSeconds();
      double& told = ended_told_[e.rank];
      if (told == 0) told = now;
      if (now - told < kEndedGrace && PeerAlive(e.rank)) continue;
    }
    TakeArrivalsBeforeFailing();
    FailPeer(e.rank, "rank " + std::to_string(e.rank) + " ended without finalizing (" + e.why + ")");
  }
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || peer_failed_[r]) continue;
    const bool waited_on = outstanding_[r] > 0 || probing_ == r;
    if (!waited_on && !any_source_waiting) continue;
    if (!waited_on && PeerFinalized(r))
      continue;
    if (PeerAlive(r)) continue;
    TakeArrivalsBeforeFailing();
    FailPeer(r, job_.info().SameNode(r)
                    ? "rank " + std::to_string(r) + " (pid " + std::to_string(job_.pid(r)) +
                          ") died"
                    : "rank " + std::to_string(r) + " (node " +
                          std::to_string(job_.info().NodeOf(r)) + ") is lost");
  }
}

// What a peer sent before it died may have arrived after this progress call last looked: take
// it in first, so that no receive or probe fails while its message is waiting.
// (At least one pass: the last message may sit where Pending does not look.)
void Engine::TakeArrivalsBeforeFailing() {
  for (int budget = 1 << 14; budget > 0; --budget) {
    Status st = PollArrivals();
    if (!st.ok()) {
      drain_error_.KeepFirst(std::move(st));  // Progress returns it
      break;
    }
    if (!ArrivalsPending()) break;
  }
}

void Engine::FailPeer(int rank, const std::string& why) {
  if (rank < 0 || rank >= size_ || peer_failed_[rank]) return;
  peer_failed_[rank] = true;
  MPIGPU_WARN("%s: failing the requests that depend on it", why.c_str());
  const Status st(Err::kPeerFailed, why);
  std::deque<OutMsg> pending;
  pending.swap(pending_[rank]);
  pending_count_ -= pending.size();
  for (OutMsg& m : pending)
    if (m.req != nullptr) Complete(m.req, st);
  for (auto& b : backends_->lmts) b->FailPeer(rank, st);
  posted_.ForEach([&](Request* r) {
    if (r->peer_ == rank || (r->peer_ == kAnySource && ContextHas(r->context_, rank))) {
      posted_.Remove(r);
      Complete(r, st);
    }
  });
  // Sends waiting for an answer from the dead peer (Complete edits the set: copy first).
  std::vector<Request*> waiting(waiting_sends_.begin(), waiting_sends_.end());
  for (Request* r : waiting)
    if (r->peer_ == rank) Complete(r, st);
  EndCancels(rank, st);
}

bool Engine::InjectFault(const std::string& what) {
  for (auto& b : backends_->lmts)
    if (b->InjectFault(what)) return true;
  return false;
}

TransportStats Engine::stats() const {
  TransportStats s;
  for (auto& b : backends_->lmts) b->AddStats(&s);
  for (auto& c : backends_->channels) c->AddStats(&s);
  return s;
}

const char* Engine::OfferingLmt(int peer, MemLoc loc, size_t bytes) const {
  if (peer < 0 || peer >= size_) return nullptr;
  for (LmtBackend* b : *offerers_[peer][loc.is_device()])
    if (b->Offers(peer, loc, bytes)) return b->caps().name;
  return nullptr;
}

std::vector<std::string> Engine::LmtPath(int peer) const {
  std::vector<std::string> names;
  if (peer < 0 || peer >= size_) return names;
  for (LmtBackend* b : *lmt_path_[peer]) names.push_back(b->caps().name);
  return names;
}

Status Engine::Finalize() {
  if (finalized_) return Status::Ok();
  const double deadline = MonotonicSeconds() + config_->bootstrap_timeout_s;
  Status st;
  // 0. Receives nobody matched are abandoned (the program never waited for them).
  posted_.ForEach([&](Request* r) {
    posted_.Remove(r);
    Complete(r, Status(Err::kInvalidArg, "receive still posted at finalize: cancelled"));
  });
  // 1. Our sends must finish: peers may still need our buffers (CMA, ring). Copies we run for a
  // peer count too: its send waits for their answer.
  auto sends_busy = [&] {
    if (pending_count_ > 0 || !waiting_sends_.empty() || !cancelling_.empty()) return true;
    for (auto& b : backends_->lmts)
      if (b->Serving()) return true;
    return false;
  };
  while (st.ok() && sends_busy() && MonotonicSeconds() < deadline) st = Progress();
  // 2. Say we are done, and wait for every peer on this node to say so (or die), serving their
  // messages: they may still use our shared memory. Peers on other nodes share none: what we
  // sent them is flushed by their channel's Close.
  job_.MarkFinalized();
  const Status departed = boot_->Depart();  // the ranks on other nodes wait for this word
  for (int r = 0; r < size_ && st.ok(); ++r) {
    if (!job_.info().SameNode(r)) continue;
    while (r != rank_ && !job_.Finalized(r) && PeerAlive(r) && MonotonicSeconds() < deadline) {
      st = Progress();
      if (!st.ok()) break;
    }
  }
  // 3. The ranks on other nodes: the bootstrap says when each has finalized or ended without it,
  // whether or not this rank ever talked to it.
  std::vector<int> gone;
  bool all_left = false;
  st.KeepFirst(departed);
  while (st.ok() && MonotonicSeconds() < deadline) {
    st = boot_->Departed(&all_left, &gone);
    if (!st.ok() || all_left) break;
    st = Progress();
  }
  if (st.ok() && !all_left)
    st = Status(Err::kTimeout, "finalize: peers did not finish within MPIGPU_BOOTSTRAP_TIMEOUT");
  // A job in which a rank died (or left without finalizing) did not end well: say so. A rank on
  // another node counts when its connection closed without a goodbye, or the bootstrap says so.
  std::vector<bool> gone_rank(size_, false);
  for (int r : gone) gone_rank[r] = true;
  auto ended_badly = [&](int r) {
    if (peer_failed_[r] || gone_rank[r]) return true;
    if (job_.info().SameNode(r)) return !job_.Finalized(r);
    return chan_[r]->Peer(r, /*probe=*/false) == PeerState::kLost;
  };
  std::string dead;
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && ended_badly(r)) dead += (dead.empty() ? "" : ", ") + std::to_string(r);
  if (!dead.empty())
    st.KeepFirst(Status(Err::kPeerFailed, "finalize: rank(s) " + dead +
                                              " failed or left without finalizing"));
  finalized_ = true;
  for (auto& b : backends_->lmts) st.KeepFirst(b->Close());
  for (auto& c : backends_->channels) st.KeepFirst(c->Close());
  LauncherLinkFinalized(rank_);  // mpigpurun: this rank finalized
  return st;
}

}  // namespace mpigpu::transport

#include "transport/lmt/cma_lmt.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "memcopy/log.h"
#include "ringbuf/populate.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {

struct CmaLmt::CoopOp : LmtOp {
  uint32_t gen = 0;     // the transfer's generation in the pair's slot
  uint64_t remote = 0;  // the peer's buffer address
  uint64_t total = 0;   // bytes to transfer
  size_t chunk = 0;
};

SegmentNeeds CmaLmt::Needs(const TransportConfig&, int nranks) const {
  return SegmentNeeds{0, sizeof(CmaSlot) * static_cast<size_t>(nranks) * nranks};
}

Status CmaLmt::Attach(LmtHost* host, char*, char* sparse) {
  host_ = host;
  rank_ = host->rank();
  size_ = host->size();
  slots_ = reinterpret_cast<CmaSlot*>(sparse);
  gen_.assign(size_, 0);
  wait_.resize(size_);
  recv_active_.assign(size_, nullptr);
  return Status::Ok();
}

void CmaLmt::SendFin(int src, uint64_t sreq, bool failed) {
  host_->SendControl(src, ControlHeader(kWireIdCma, kFin, sreq, failed ? kCopyError : 0), nullptr, 0);
}

bool CmaLmt::StartRecv(Request* req, const unsigned char*) {
  const RtsBody rts = BodyOf<RtsBody>(req->rts());
  if (!ok_) return false;  // host buffers, contiguous: the engine checked (kCaps)
  const int src = req->info().source;
  const size_t n = std::min<size_t>(req->info().bytes, req->bytes());
  const size_t chunk = host_->config().cma_chunk;
  // Large ones are shared with the sender, once one plain copy showed the kernel allows it.
  if (verified_ && chunk > 0 && n >= 2 * chunk) {
    auto op = std::make_unique<CoopOp>();
    op->total = n;
    op->chunk = chunk;
    op->remote = rts.addr;
    host_->Carry(req, this, std::move(op));
    wait_[src].push_back(req);
    TryStartCoop(src);
    return true;
  }
  const size_t done = CmaCopy(true, host_->job().pid(src), static_cast<char*>(req->buf().ptr),
                              rts.addr, n);
  const int err = errno;
  if (done == 0 && (err == EPERM || err == ENOSYS || err == EFAULT)) {
    ok_ = false;
    MPIGPU_INFO("process_vm_readv is refused (%s): large host messages use the next back-end",
                std::strerror(err));
    return false;
  }
  host_->Carry(req, this, nullptr);  // complete below: a plain copy keeps no state
  if (done == n) {
    verified_ = true;
    SendFin(src, req->rts().sreq, false);
    host_->Complete(req, TruncationOf(req->info(), req->bytes()));
    return true;
  }
  SendFin(src, req->rts().sreq, true);  // the send ends too instead of waiting for a FIN
  host_->Complete(req, err == ESRCH ? PeerDied(src)
                                    : SysError("process_vm_readv from the sender's buffer", err));
  return true;
}

// The receiver runs one cooperative copy per source at a time (the pair's slot).
void CmaLmt::TryStartCoop(int src) {
  while (recv_active_[src] == nullptr && !wait_[src].empty()) {
    Request* req = wait_[src].front();
    wait_[src].pop_front();
    // The pair's slot lives in the segment's sparse tail: memory first (this side touches it
    // first; the sender only after our kGo).
    Status st = PopulateForWrite(SlotOf(src, rank_), sizeof(CmaSlot),
                                 "the copy slot of rank " + std::to_string(src));
    if (!st.ok()) {
      const uint64_t sreq = req->rts().sreq;
      host_->Complete(req, st);
      SendFin(src, sreq, true);
      continue;
    }
    CoopOp* op = req->op<CoopOp>();
    uint32_t gen = ++gen_[src];
    if (gen == 0) gen = ++gen_[src];  // 0 never names a transfer
    op->gen = gen;
    CmaBegin(SlotOf(src, rank_), gen);
    recv_active_[src] = req;
    active_.push_back(req);
    host_->Busy(this);
    MsgHeader go = ControlHeader(kWireIdCma, kGo);
    go.sreq = req->rts().sreq;
    go.bytes = op->total;
    SetBody(&go, CmaGo{reinterpret_cast<uint64_t>(req->buf().ptr), static_cast<uint32_t>(op->chunk), gen});
    host_->SendControl(src, go, nullptr, 0);
  }
}

Status CmaLmt::OnControl(const MsgHeader& h, const unsigned char*, size_t) {
  // The id names one of our sends waiting for this answer; anything else is a stale or corrupt
  // message and is dropped rather than trusted.
  Request* req = host_->WaitingSend(h.sreq);
  if (req == nullptr || req->peer() != h.src || (h.op != kFin && h.op != kGo)) {
    MPIGPU_WARN("dropping a CMA message (op %d) from rank %d for no waiting send", h.op, h.src);
    return Status::Ok();
  }
  if (h.op == kFin) {
    host_->Complete(req, (h.flags & kCopyError) ? PeerCopyError(h.src) : Status::Ok());
    return Status::Ok();
  }
  const CmaGo go = BodyOf<CmaGo>(h);
  if (go.chunk == 0 || h.bytes > req->bytes()) {
    host_->Complete(req, Status(Err::kInternal, "malformed cooperative-copy request"));
    return Status::Ok();
  }
  auto op = std::make_unique<CoopOp>();
  op->gen = go.gen;
  op->remote = go.addr;
  op->total = h.bytes;
  op->chunk = go.chunk;
  host_->Carry(req, this, std::move(op));
  active_.push_back(req);
  host_->Busy(this);
  return Status::Ok();
}

// Both sides: copy the chunks left, then see whether the transfer is complete.
Status CmaLmt::Advance(Request* req, bool* done) {
  const bool recv = !req->is_send();
  const int peer = req->peer();
  const CoopOp* op = req->op<CoopOp>();
  CmaSlot* slot = recv ? SlotOf(peer, rank_) : SlotOf(rank_, peer);
  Status st = CmaCopyChunks(slot, op->gen, recv, host_->job().pid(peer),
                            static_cast<char*>(req->buf().ptr), op->remote, op->total, op->chunk);
  if (!st.ok()) return host_->job().Alive(peer) ? st : PeerDied(peer);
  if (int err = CmaFailed(slot, op->gen)) return SysError("the peer's cooperative copy", err);
  *done = CmaFinished(slot, op->gen, op->total);
  return Status::Ok();
}

Status CmaLmt::Progress(bool* busy) {
  for (auto it = active_.begin(); it != active_.end();) {
    Request* req = *it;
    bool done = false;
    Status st = Advance(req, &done);
    if (!done && st.ok()) {
      ++it;
      continue;
    }
    it = active_.erase(it);
    const bool recv = !req->is_send();
    const int peer = req->peer();
    host_->Complete(req, recv && st.ok() ? TruncationOf(req->info(), req->bytes()) : st);
    if (recv) TryStartCoop(peer);  // Finished freed the pair's slot
  }
  *busy = !active_.empty();
  return Status::Ok();
}

void CmaLmt::Finished(Request* req) {
  // A plain copy holds no state here (it completed inside StartRecv): only a cooperative one,
  // which carries its CoopOp until now, can sit in the lists below. Every large host receive
  // passes here, so the plain case costs no list walks.
  if (req->op<CoopOp>() == nullptr) return;
  active_.remove(req);
  const int peer = req->peer();
  if (peer < 0 || req->is_send()) return;
  if (recv_active_[peer] == req) recv_active_[peer] = nullptr;
  wait_[peer].erase(std::remove(wait_[peer].begin(), wait_[peer].end(), req), wait_[peer].end());
}

void CmaLmt::FailPeer(int rank, const Status& why) {
  std::deque<Request*> waiting;
  waiting.swap(wait_[rank]);
  for (Request* r : waiting) host_->Complete(r, why);
  std::vector<Request*> running;
  for (Request* r : active_)
    if (r->peer() == rank) running.push_back(r);
  for (Request* r : running) host_->Complete(r, why);
}

}  // namespace mpigpu::transport

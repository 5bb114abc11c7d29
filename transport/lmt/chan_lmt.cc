#include "transport/lmt/chan_lmt.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "memcopy/log.h"

namespace mpigpu::transport {

struct ChanLmt::SendOp : LmtOp {
  uint64_t rreq = 0;
  uint64_t total = 0;
  uint64_t sent = 0;
};

struct ChanLmt::RecvOp : LmtOp {
  uint64_t id = 0;
  uint64_t total = 0;
  uint64_t got = 0;
};

Status ChanLmt::Attach(LmtHost* host, char*, char*) {
  host_ = host;
  return Status::Ok();
}

bool ChanLmt::StartRecv(Request* req, const unsigned char*) {
  const int src = req->info_.source;
  auto op = std::make_unique<RecvOp>();
  op->id = ++next_id_;
  op->total = std::min<uint64_t>(req->info_.bytes, req->bytes_);
  MsgHeader cts = ControlHeader(kWireIdChan, kCts);
  cts.sreq = req->rts_.sreq;
  cts.bytes = op->total;
  SetBody(&cts, ChanRef{op->id, 0});
  const bool empty = op->total == 0;
  req->lmt_ = this;
  if (!empty) recvs_[op->id] = req;
  req->op_ = std::move(op);
  host_->SendControl(src, cts, nullptr, 0);
  if (empty) host_->Complete(req, TruncationOf(req->info_, req->bytes_));
  return true;
}

void ChanLmt::SendAbort(int dst, uint64_t rreq) {
  MsgHeader h = ControlHeader(kWireIdChan, kAbort);
  SetBody(&h, ChanRef{rreq, 0});
  host_->SendControl(dst, h, nullptr, 0);
}

Status ChanLmt::OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) {
  const ChanRef ref = BodyOf<ChanRef>(h);
  if (h.op == kCts) {
    // The id names one of our sends waiting for this answer; anything else is dropped.
    Request* req = host_->WaitingSend(h.sreq);
    if (req == nullptr || req->peer_ != h.src) {
      MPIGPU_WARN("dropping a CTS from rank %d for no waiting send", h.src);
      return Status::Ok();
    }
    if (h.bytes > req->bytes_) {
      host_->Complete(req, Status(Err::kInternal, "CTS for more bytes than the send has"));
      return Status::Ok();
    }
    auto op = std::make_unique<SendOp>();
    op->rreq = ref.rreq;
    op->total = h.bytes;
    req->state_ = Request::State::kLmt;
    req->lmt_ = this;
    req->op_ = std::move(op);
    if (h.bytes == 0) {
      host_->Complete(req, Status::Ok());
      return Status::Ok();
    }
    sends_.push_back(req);
    host_->Busy(this);
    return Status::Ok();
  }
  auto it = recvs_.find(ref.rreq);
  if (it == recvs_.end() || it->second->info_.source != h.src) return Status::Ok();  // failed before
  Request* req = it->second;
  RecvOp* op = req->op<RecvOp>();
  if (h.op == kAbort) {
    host_->Complete(req, PeerCopyError(h.src));
    return Status::Ok();
  }
  if (h.op != kData || ref.offset != op->got || len > op->total - op->got) {
    host_->Complete(req, Status(Err::kInternal, "rank " + std::to_string(h.src) +
                                                    " sent data out of order or beyond the message"));
    return Status::Ok();
  }
  Status st = host_->UnpackDelivered(h.src, req->buf_, ref.offset, len, payload);
  op->got += len;
  if (!st.ok() || op->got == op->total)
    host_->Complete(req, st.ok() ? TruncationOf(req->info_, req->bytes_) : st);
  return Status::Ok();
}

Status ChanLmt::Progress(bool* busy) {
  for (auto it = sends_.begin(); it != sends_.end();) {
    Request* req = *it;
    SendOp* op = req->op<SendOp>();
    const size_t chunk = std::min(host_->ChannelPayloadMax(req->peer_), kChunk);
    Status err;
    while (op->sent < op->total) {
      const size_t len = std::min<uint64_t>(chunk, op->total - op->sent);
      MsgHeader h = ControlHeader(kWireIdChan, kData);
      SetBody(&h, ChanRef{op->rreq, op->sent});
      if (!host_->TrySendData(req->peer_, h, req->buf_, op->sent, len, &err)) break;
      if (!err.ok()) break;
      op->sent += len;
    }
    if (err.ok() && op->sent < op->total) {
      ++it;
      continue;
    }
    it = sends_.erase(it);
    if (!err.ok()) SendAbort(req->peer_, op->rreq);
    host_->Complete(req, err);
  }
  *busy = !sends_.empty();
  return Status::Ok();
}

void ChanLmt::Finished(Request* req) {
  if (req->is_send()) {
    sends_.remove(req);
  } else if (const RecvOp* op = req->op<RecvOp>()) {
    recvs_.erase(op->id);
  }
}

void ChanLmt::FailPeer(int rank, const Status& why) {
  std::vector<Request*> failed;
  for (Request* r : sends_)
    if (r->peer_ == rank) failed.push_back(r);
  for (auto& [id, r] : recvs_)
    if (r->info_.source == rank) failed.push_back(r);
  for (Request* r : failed) host_->Complete(r, why);
}

}  // namespace mpigpu::transport

#include "internode/ib/ib_lmt.h"

#include <algorithm>

#include "internode/ib/ib_config.h"
#include "internode/ib/ib_dmabuf.h"
#include "memcopy/log.h"
#include "transport/transport_config.h"

namespace mpigpu::internode {

using transport::Request;

struct IbLmt::SendOp : transport::LmtOp {
  IbRegistrar* reg = nullptr;
  IbRegion region;
  IbLmt* lmt = nullptr;
  int peer = -1;
  uint32_t fin = 0;  // waiting for the FIN WRITE with this immediate (0: for kFin)
  ~SendOp() override {
    if (fin != 0) {
      lmt->fin_sends_.erase(fin);
      --lmt->fin_out_[peer];
    }
    reg->Release(&region);
  }
};

struct IbLmt::RecvOp : transport::LmtOp {
  IbRegistrar* reg = nullptr;
  IbRegion region;
  uint32_t id = 0;
  IbOffer offer{};
  uint64_t total = 0;   // bytes to read (the receive's capacity may truncate)
  uint64_t posted = 0;  // bytes whose READs are posted
  int inflight = 0;
  bool fin_posted = false;  // the FIN WRITE (offer.fin != 0)
  bool failed = false;
  std::string why;
  ~RecvOp() override { reg->Release(&region); }
};

IbLmt::IbLmt(IbLinks* links) : links_(links), reg_(&links->device()) {
  if (links->device().dmabuf()) caps_.flags |= transport::LmtCaps::kDeviceBuffers | transport::LmtCaps::kOffersDevice;
  links_->SetReadDone([this](uint64_t cookie, bool ok, const std::string& why) {
    OnRead(cookie, ok, why);
  });
  links_->SetFinDone([this](int peer, uint32_t fin) { OnFin(peer, fin); });
}

Status IbLmt::Attach(transport::LmtHost* host, char*, char*) {
  host_ = host;
  return Status::Ok();
}

bool IbLmt::Offers(int peer, MemLoc loc, size_t bytes) const {
  return (loc.is_host() || DeviceOk()) &&
         bytes > std::min(host_->config().eager_limit, host_->ChannelPayloadMax(peer));
}

Status IbLmt::Register(const Request& req, size_t len, IbRegion* out) {
  if (req.buf().loc.is_host()) {
    Status st = reg_.Acquire(req.buf().ptr, len, out);
    if (!st.ok() && !warned_)
      MPIGPU_WARN("ibverbs: %s: large messages go as frames", st.ToString().c_str());
    warned_ = warned_ || !st.ok();
    return st;
  }
  Status st = RegisterDeviceMemory(links_->device(), req.buf().ptr, len, &out->mr);
  if (st.ok()) {
    out->own = true;
    return st;
  }
  device_failed_ = true;
  MPIGPU_INFO("ibverbs: GPUDirect RDMA off, device buffers go staged: %s",
              st.ToString().c_str());
  return st;
}

size_t IbLmt::Offer(Request* req, unsigned char* offer) {
  if (!req->buf().layout.contiguous() || !Offers(req->peer(), req->buf().loc, req->bytes())) return 0;
  auto op = std::make_unique<SendOp>();
  op->reg = &reg_;
  if (!Register(*req, req->bytes(), &op->region).ok()) return 0;
  IbOffer o{reinterpret_cast<uint64_t>(req->buf().ptr), req->bytes(), op->region.mr->rkey, 0};
  if (GetIbConfig().fin_imm && fin_out_[req->peer()] < IbLinks::kFinSlots) {
    if (++next_fin_ == 0) ++next_fin_;
    o.fin = op->fin = next_fin_;
    op->lmt = this;
    op->peer = req->peer();
    ++fin_out_[req->peer()];
    fin_sends_[o.fin] = req;
  }
  std::memcpy(offer, &o, sizeof o);
  host_->Offered(req, this, std::move(op));
  return sizeof o;
}

bool IbLmt::StartRecv(Request* req, const unsigned char* offer) {
  if (offer == nullptr || !req->buf().layout.contiguous()) return false;
  if (!req->buf().loc.is_host() && !DeviceOk()) return false;
  auto op = std::make_unique<RecvOp>();
  op->reg = &reg_;
  std::memcpy(&op->offer, offer, sizeof op->offer);
  if (op->offer.len != req->info().bytes) return false;  // not an offer of this message
  op->total = std::min<uint64_t>(op->offer.len, req->bytes());
  if (op->total > 0) {
    if (!Register(*req, op->total, &op->region).ok()) return false;
  }
  op->id = ++next_id_;
  RecvOp* raw = op.get();
  host_->Carry(req, this, std::move(op));
  if (raw->total == 0) {
    Finish(req);
    return true;
  }
  recvs_[raw->id] = req;
  posting_.push_back(req);
  host_->Busy(this);
  return true;
}

Status IbLmt::Progress(bool* busy) {
  const uint64_t chunk = GetIbConfig().chunk;
  for (size_t i = 0; i < posting_.size();) {
    Request* req = posting_[i];
    RecvOp* op = req->op<RecvOp>();
    bool posted = true;
    while (op->posted < op->total && !op->failed && posted) {
      const uint64_t len = std::min(chunk, op->total - op->posted);
      Status st = links_->PostRead(req->info().source,
                                   static_cast<char*>(req->buf().ptr) + op->posted,
                                   op->region.mr->lkey, op->offer.addr + op->posted,
                                   op->offer.rkey, static_cast<uint32_t>(len), op->id, &posted);
      if (!st.ok()) {
        op->failed = true;
        op->why = st.message();
        break;
      }
      if (posted) {
        op->posted += len;
        ++op->inflight;
      }
    }
    if (op->posted < op->total && !op->failed) {
      ++i;
      continue;
    }
    if (!op->failed && op->offer.fin != 0 && !op->fin_posted) {
      Status st = links_->PostFin(req->info().source, op->offer.fin, &op->fin_posted);
      if (!st.ok()) {
        op->failed = true;
        op->why = st.message();
      } else if (!op->fin_posted) {
        ++i;  // no room on the send queue now
        continue;
      }
    }
    posting_.erase(posting_.begin() + static_cast<long>(i));
    if (op->inflight == 0) Finish(req);  // the READs completed before the FIN went
  }
  *busy = !posting_.empty();
  return Status::Ok();
}

void IbLmt::OnRead(uint64_t cookie, bool ok, const std::string& why) {
  auto it = recvs_.find(static_cast<uint32_t>(cookie));
  if (it == recvs_.end()) return;  // failed or finished before
  Request* req = it->second;
  RecvOp* op = req->op<RecvOp>();
  --op->inflight;
  if (!ok && !op->failed) {
    op->failed = true;
    op->why = why;
  }
  if (op->inflight == 0 &&
      (op->failed || (op->posted == op->total && (op->offer.fin == 0 || op->fin_posted)))) {
    posting_.erase(std::remove(posting_.begin(), posting_.end(), req), posting_.end());
    Finish(req);
  }
}

// The READs are done (or failed): tell the sender (unless the FIN WRITE did), complete the
// receive.
void IbLmt::Finish(Request* req) {
  RecvOp* op = req->op<RecvOp>();
  if (op->failed || !op->fin_posted) {  // no FIN WRITE went (none offered, or nothing to READ)
    transport::MsgHeader fin = transport::ControlHeader(transport::kWireIdIb, kFin, req->rts().sreq,
                                                        op->failed ? kFailed : 0);
    host_->SendControl(req->info().source, fin, nullptr, 0);
  }
  Status done = op->failed ? Status(Err::kPeerFailed, "ibverbs: RDMA READ from " + op->why)
                           : transport::TruncationOf(req->info(), req->bytes());
  // Data READ into GPU memory: visible to the GPU's later work before the receive completes.
  if (!op->failed && op->total > 0 && req->buf().loc.is_device())
    done.KeepFirst(FlushRdmaWrites(req->buf().loc.device));
  host_->Complete(req, std::move(done));
}

// The FIN WRITE of a send's offer arrived: its buffer was read.
void IbLmt::OnFin(int peer, uint32_t fin) {
  auto it = fin_sends_.find(fin);
  if (it == fin_sends_.end() || it->second->peer() != peer) {
    MPIGPU_WARN("ibverbs: dropping a FIN WRITE (%u) from rank %d for no waiting send", fin, peer);
    return;
  }
  host_->Complete(it->second, Status::Ok());
}

Status IbLmt::OnControl(const transport::MsgHeader& h, const unsigned char*, size_t) {
  if (h.op != kFin) return Status::Ok();
  Request* req = host_->WaitingSend(h.sreq);
  if (req == nullptr || req->peer() != h.src || req->offerer() != this) {
    MPIGPU_WARN("ibverbs: dropping a FIN from rank %d for no waiting send", h.src);
    return Status::Ok();
  }
  host_->Complete(req, (h.flags & kFailed) ? transport::PeerCopyError(h.src) : Status::Ok());
  return Status::Ok();
}

void IbLmt::Finished(Request* req) {
  if (req->is_send()) return;  // its SendOp (offer_op_) releases the registration
  if (const RecvOp* op = req->op<RecvOp>()) {
    recvs_.erase(op->id);
    posting_.erase(std::remove(posting_.begin(), posting_.end(), req), posting_.end());
  }
}

void IbLmt::FailPeer(int rank, const Status& why) {
  std::vector<Request*> failed;
  for (auto& [id, r] : recvs_)
    if (r->info().source == rank) failed.push_back(r);
  for (Request* r : failed) host_->Complete(r, why);
}

}  // namespace mpigpu::internode

#include "transport/lmt/chan_lmt.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <vector>

#include "memcopy/log.h"
#include "pipeline/pipeline.h"
#include "ringbuf/lmt_ring.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {

// kStageChunks chunks of `unit` bytes as a private LmtRing: the pipeline engine fills or drains
// them, the channel sends or reads them. Pinned for device buffers; plain memory for strided
// host ones (host copies need no pinning, and no GPU need exist).
struct ChanLmt::Stage {
  void* mem = nullptr;
  size_t bytes = 0;
  size_t unit = 0;
  bool pinned = false;
  LmtRing ring;
  ~Stage() {
    if (mem == nullptr) return;
    if (pinned) (void)cudaFreeHost(mem);
    else std::free(mem);
  }
  char* chunk(size_t slot) const { return ring.unit_data(slot, unit); }
};

struct ChanLmt::SendOp : LmtOp {
  uint64_t rreq = 0;
  uint64_t total = 0;
  uint64_t sent = 0;
  size_t unit = 0;
  size_t fill = 0;
  uint64_t frames = 0;  // sent so far
  uint64_t units = 0;   // in the message
  bool lend = false;    // contiguous host: frames lent from the user buffer
  bool staged = false;  // device memory: staged through chunks (pipe made on its turn)
  std::unique_ptr<Stage> stage;
  std::unique_ptr<LmtSender> pipe;
  CopyEngine* copier = nullptr;
  int lent_slot = -1;  // the chunk the channel may still read
};

struct ChanLmt::RecvOp : LmtOp {
  enum class Mode { kPlaceUser, kStaged, kUnpack };
  uint64_t id = 0;
  uint64_t total = 0;
  uint64_t got = 0;
  size_t unit = 0;
  size_t fill = 0;
  uint64_t frames = 0;  // arrived so far
  Mode mode = Mode::kUnpack;
  std::unique_ptr<Stage> stage;
  std::unique_ptr<LmtReceiver> pipe;
  CopyEngine* copier = nullptr;
};

ChanLmt::ChanLmt() = default;
ChanLmt::~ChanLmt() = default;

Status ChanLmt::Attach(LmtHost* host, char*, char*) {
  host_ = host;
  return Status::Ok();
}

bool ChanLmt::InjectFault(const std::string& what) {
  if (what == "chan-stage-copy") return inject_copy_failure_ = true;
  return false;
}

Status ChanLmt::TakeStage(size_t unit, bool pinned, std::unique_ptr<Stage>* out) {
  const size_t capacity = kStageChunks * unit;
  const size_t bytes = LmtRing::BytesFor(capacity, kStageChunks);
  std::unique_ptr<Stage> s;
  for (auto it = pool_.begin(); it != pool_.end(); ++it) {
    if ((*it)->unit != unit || (*it)->pinned != pinned) continue;
    s = std::move(*it);
    pool_.erase(it);
    break;
  }
  if (!s) {
    s = std::make_unique<Stage>();
    s->pinned = pinned;
    if (pinned) {
      // Portable: the copy engines of every device may use it.
      const cudaError_t e = cudaHostAlloc(&s->mem, bytes, cudaHostAllocPortable);
      if (e != cudaSuccess) {
        s->mem = nullptr;
        return Status(Err::kNoMemory, std::string("chan: cannot pin ") + std::to_string(bytes) +
                                          " bytes of staging chunks: " + cudaGetErrorString(e));
      }
    } else if (posix_memalign(&s->mem, LmtRing::kDataAlign, bytes) != 0) {
      s->mem = nullptr;
      return Status(Err::kNoMemory, "chan: no memory for " + std::to_string(bytes) +
                                        " bytes of staging chunks");
    }
    s->bytes = bytes;
    s->unit = unit;
  }
  // Formatted afresh each time: every chunk empty.
  MPIGPU_RETURN_IF_ERROR(LmtRing::Format(s->mem, s->bytes, capacity, kStageChunks, &s->ring));
  *out = std::move(s);
  return Status::Ok();
}

void ChanLmt::GiveStage(std::unique_ptr<Stage> stage) {
  if (stage) pool_.push_back(std::move(stage));
}

// A staged transfer ends: the channel stops reading its chunks (a send's lent one is copied),
// copies still in flight finish (local copies: bounded), and the chunks go back to the pool.
void ChanLmt::Unstage(Request* req, std::unique_ptr<Stage> stage, CopyEngine* copier,
                      bool in_flight, bool lent) {
  if (!stage) return;
  if (lent) host_->SettleChannel(req->peer());
  if (in_flight && copier != nullptr) {
    Ticket t = 0;
    Status st = copier->Mark(&t);
    if (st.ok()) st = copier->Wait(t);
    if (!st.ok()) {  // the device failed: its copies may not be trusted to have stopped
      MPIGPU_WARN("chan: staging chunks dropped after a failed copy engine (%s)",
                  st.message().c_str());
      stage->mem = nullptr;  // leaked rather than reused or freed under a copy
      return;
    }
  }
  GiveStage(std::move(stage));
}

// Device memory on either side: chunks as large as the ring's device units (about half the
// message, between MPIGPU_LMT_UNIT_GPU_MIN and MPIGPU_LMT_UNIT_GPU), at most the channel's
// payload, so the CUDA calls each chunk costs (a copy, an event, its polls; under MPS several
// microseconds of the one progress thread that also drives the socket) are paid per 0.5-1 MiB
// instead of per 256 KiB. Host memory keeps kChunk frames: lent and placed, they cost no copy.
size_t ChanLmt::UnitFor(int peer, uint64_t total, bool device) const {
  const size_t most = host_->ChannelPayloadMax(peer);
  if (!device) return std::min(most, kChunk);
  const TransportConfig& c = host_->config();
  return std::min(most, LmtGpuUnit(total, c.lmt_unit_gpu_min, c.lmt_unit_gpu));
}

bool ChanLmt::StartRecv(Request* req, const unsigned char*) {
  const int src = req->info().source;
  auto op = std::make_unique<RecvOp>();
  op->id = ++next_id_;
  op->total = std::min<uint64_t>(req->info().bytes, req->bytes());
  const RtsBody rts = BodyOf<RtsBody>(req->rts());
  op->unit = UnitFor(src, op->total, rts.loc.is_device() || req->buf().loc.is_device());
  const Layout sender_shape =
      rts.block == 0 ? Layout::Contiguous(req->info().bytes)
                     : Layout::Vector(req->info().bytes / rts.block, rts.block, rts.block + 1);
  op->fill = LmtFillBlock(sender_shape, req->buf().layout, op->unit);
  const bool places = host_->ChannelCapsFor(src).has(ChannelCaps::kPlaces);
  const UserBuffer& buf = req->buf();
  if (buf.loc.is_host() && buf.layout.contiguous()) {
    op->mode = places ? RecvOp::Mode::kPlaceUser : RecvOp::Mode::kUnpack;
  } else if (places && op->total > 0) {
    // Device memory: chunks read from the socket, copied H2D behind the reads; the chunks are
    // taken when its first frame comes (StartStagedRecv), so posted receives hold none.
    op->mode = RecvOp::Mode::kStaged;
  }
  MsgHeader cts = ControlHeader(kWireIdChan, kCts);
  cts.sreq = req->rts().sreq;
  cts.bytes = op->total;
  SetBody(&cts, CtsBody{op->id, static_cast<uint32_t>(op->unit), static_cast<uint32_t>(op->fill)});
  const bool empty = op->total == 0;
  if (!empty) recvs_[op->id] = req;
  host_->Carry(req, this, std::move(op));
  host_->SendControl(src, cts, nullptr, 0);
  if (empty) host_->Complete(req, TruncationOf(req->info(), req->bytes()));
  return true;
}

// A staged receive's first frame is here: its chunks and its H2D pipeline. Without them (no
// pinned memory) it unpacks each frame as it is delivered instead.
void ChanLmt::StartStagedRecv(Request* req) {
  RecvOp* op = req->op<RecvOp>();
  const UserBuffer& buf = req->buf();
  Status st = TakeStage(op->unit, buf.loc.is_device(), &op->stage);
  if (st.ok()) st = host_->CopierFor(buf.loc, &op->copier);
  auto pipe = std::make_unique<LmtReceiver>();
  if (st.ok()) {
    LmtParams params;
    params.total_bytes = op->total;
    params.unit_bytes = op->unit;
    params.fill_block = op->fill;
    params.max_pending = kStageChunks;
    st = LmtReceiver::Create(&op->stage->ring, op->copier,
                             LmtBuffer{buf.ptr, buf.loc, buf.layout}, params, pipe.get());
  }
  if (!st.ok()) {
    MPIGPU_INFO("chan: no staging for a receive from rank %d (%s): unpacking each frame",
                req->info().source, st.message().c_str());
    GiveStage(std::move(op->stage));
    op->mode = RecvOp::Mode::kUnpack;
    return;
  }
  op->pipe = std::move(pipe);
  staged_recvs_.push_back(req);
}

// A staged send's turn (the first of its destination's): its chunks and its D2H pipeline.
Status ChanLmt::StartStagedSend(Request* req) {
  SendOp* op = req->op<SendOp>();
  const UserBuffer& buf = req->buf();
  MPIGPU_RETURN_IF_ERROR(TakeStage(op->unit, buf.loc.is_device(), &op->stage));
  MPIGPU_RETURN_IF_ERROR(host_->CopierFor(buf.loc, &op->copier));
  auto pipe = std::make_unique<LmtSender>();
  LmtParams params;
  params.total_bytes = op->total;
  params.unit_bytes = op->unit;
  params.fill_block = op->fill;
  params.max_pending = kStageChunks;
  MPIGPU_RETURN_IF_ERROR(LmtSender::Create(&op->stage->ring, op->copier,
                                           LmtBuffer{buf.ptr, buf.loc, buf.layout}, params,
                                           pipe.get()));
  op->pipe = std::move(pipe);
  return Status::Ok();
}

void ChanLmt::SendAbort(int dst, uint64_t rreq) {
  MsgHeader h = ControlHeader(kWireIdChan, kAbort);
  SetBody(&h, ChanRef{rreq, 0});
  host_->SendControl(dst, h, nullptr, 0);
}

PayloadPlace ChanLmt::PlacePayload(const MsgHeader& h, size_t len) {
  if (h.op != kData) return {};
  const ChanRef ref = BodyOf<ChanRef>(h);
  auto it = recvs_.find(ref.rreq);
  if (it == recvs_.end() || it->second->info().source != h.src) return {};
  Request* req = it->second;
  RecvOp* op = req->op<RecvOp>();
  // Anything unexpected is delivered as usual and judged by OnControl.
  if (ref.offset != op->got || len > op->total - op->got) return {};
  switch (op->mode) {
    case RecvOp::Mode::kPlaceUser:
      return {static_cast<unsigned char*>(req->buf().ptr) + ref.offset, false};
    case RecvOp::Mode::kStaged: {
      if (len != LmtUnitLen(op->total, op->unit, op->fill, op->frames)) return {};
      if (!op->pipe) {
        StartStagedRecv(req);
        if (!op->pipe) return {};  // unpacked on delivery instead
      }
      const size_t slot = op->frames % kStageChunks;
      if (op->stage->ring.unit_len(slot) != 0) return {nullptr, true};  // H2D behind: wait
      return {reinterpret_cast<unsigned char*>(op->stage->chunk(slot)), false};
    }
    case RecvOp::Mode::kUnpack:
      break;
  }
  return {};
}

Status ChanLmt::OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) {
  if (h.op == kCts) {
    const CtsBody cts = BodyOf<CtsBody>(h);
    // The id names one of our sends waiting for this answer; anything else is dropped.
    Request* req = host_->WaitingSend(h.sreq);
    if (req == nullptr || req->peer() != h.src) {
      MPIGPU_WARN("dropping a CTS from rank %d for no waiting send", h.src);
      return Status::Ok();
    }
    auto op = std::make_unique<SendOp>();
    op->rreq = cts.rreq;
    op->total = h.bytes;
    op->unit = cts.unit;
    op->fill = cts.fill_block;
    SendOp* o = op.get();
    host_->Carry(req, this, std::move(op));
    if (h.bytes > req->bytes() || cts.unit == 0 ||
        cts.unit > host_->ChannelPayloadMax(req->peer()) || cts.fill_block > cts.unit) {
      host_->Complete(req, Status(Err::kInternal, "rank " + std::to_string(h.src) +
                                                      " answered with a CTS this send cannot "
                                                      "follow"));
      SendAbort(h.src, cts.rreq);
      return Status::Ok();
    }
    if (h.bytes == 0) {
      host_->Complete(req, Status::Ok());
      return Status::Ok();
    }
    o->units = LmtUnitCount(o->total, o->unit, o->fill);
    // Contiguous host memory is lent frame by frame; device memory is staged (D2H into chunks
    // ahead of the socket) when its turn comes (Progress).
    o->lend = req->buf().loc.is_host() && req->buf().layout.contiguous();
    o->staged = !o->lend;
    sends_.push_back(req);
    host_->Busy(this);
    return Status::Ok();
  }
  const ChanRef ref = BodyOf<ChanRef>(h);
  auto it = recvs_.find(ref.rreq);
  if (it == recvs_.end() || it->second->info().source != h.src) return Status::Ok();  // failed before
  Request* req = it->second;
  RecvOp* op = req->op<RecvOp>();
  if (h.op == kAbort) {
    host_->Complete(req, PeerCopyError(h.src));
    return Status::Ok();
  }
  const bool staged = op->mode == RecvOp::Mode::kStaged;
  const size_t slot = op->frames % kStageChunks;
  if (h.op != kData || ref.offset != op->got || len > op->total - op->got ||
      (staged && payload != reinterpret_cast<const unsigned char*>(op->stage->chunk(slot)))) {
    host_->Complete(req, Status(Err::kInternal, "rank " + std::to_string(h.src) +
                                                    " sent data out of order or beyond the message"));
    return Status::Ok();
  }
  op->got += len;
  ++op->frames;
  if (staged) {  // the chunk is full: its H2D copy may start
    op->stage->ring.publish(slot, len);
    host_->Busy(this);
    return Status::Ok();
  }
  Status st;
  const bool in_place = op->mode == RecvOp::Mode::kPlaceUser &&
                        payload == static_cast<const unsigned char*>(req->buf().ptr) + ref.offset;
  if (!in_place) st = host_->UnpackDelivered(h.src, req->buf(), ref.offset, len, payload);
  if (!st.ok() || op->got == op->total)
    host_->Complete(req, st.ok() ? TruncationOf(req->info(), req->bytes()) : st);
  return Status::Ok();
}

Status ChanLmt::ProgressStagedSend(Request* req, bool* done) {
  SendOp* op = req->op<SendOp>();
  Stage& s = *op->stage;
  *done = false;
  for (int pass = 0; pass < 2; ++pass) {
    bool published = false;
    MPIGPU_RETURN_IF_ERROR(op->pipe->Progress(&published));
    if (inject_copy_failure_ && op->pipe->units_retired() > 0) {
      inject_copy_failure_ = false;
      return Status(Err::kInternal, "chan staging copy failure injected by a test");
    }
    bool released = false;
    for (;;) {
      if (op->lent_slot >= 0) {
        if (host_->ChannelLends(req->peer(), s.chunk(op->lent_slot), s.unit)) break;
        s.ring.release_unit(static_cast<size_t>(op->lent_slot));
        op->lent_slot = -1;
        released = true;
      }
      if (op->frames == op->units) break;
      const size_t slot = op->frames % kStageChunks;
      const uint64_t len = s.ring.unit_len(slot);
      if (len == 0) break;  // its D2H copy is still running
      MsgHeader h = ControlHeader(kWireIdChan, kData);
      SetBody(&h, ChanRef{op->rreq, op->sent});
      Payload p;
      p.bytes = s.chunk(slot);
      p.len = len;
      p.lend = true;
      Status err;
      if (!host_->TrySendData(req->peer(), h, p, &err)) break;
      MPIGPU_RETURN_IF_ERROR(err);
      op->lent_slot = static_cast<int>(slot);
      ++op->frames;
      op->sent += len;
    }
    if (!released) break;  // else the freed chunks take the next D2H copies at once
  }
  *done = op->frames == op->units && op->lent_slot < 0;
  return Status::Ok();
}

bool ChanLmt::ProgressSend(Request* req) {
  SendOp* op = req->op<SendOp>();
  Status err;
  bool done = false;
  if (op->staged) {
    if (!op->pipe) err = StartStagedSend(req);
    if (err.ok()) err = ProgressStagedSend(req, &done);
  } else {
    while (op->sent < op->total) {
      const size_t len = LmtUnitLen(op->total, op->unit, op->fill, op->frames);
      MsgHeader h = ControlHeader(kWireIdChan, kData);
      SetBody(&h, ChanRef{op->rreq, op->sent});
      Payload p;
      if (op->lend) {
        p.bytes = static_cast<const unsigned char*>(req->buf().ptr) + op->sent;
        p.lend = true;
      } else {
        p.user = &req->buf();
        p.offset = op->sent;
      }
      p.len = len;
      if (!host_->TrySendData(req->peer(), h, p, &err)) break;
      if (!err.ok()) break;
      op->sent += len;
      ++op->frames;
    }
    // Done once the socket took the last lent byte of the buffer.
    done = op->sent == op->total &&
           !(op->lend && host_->ChannelLends(req->peer(), req->buf().ptr, op->total));
  }
  if (err.ok() && !done) return false;
  if (!err.ok()) SendAbort(req->peer(), op->rreq);
  host_->Complete(req, err);
  return true;
}

Status ChanLmt::Progress(bool* busy) {
  // One staged send per destination at a time, in the order their CTS came: a window of device
  // sends holds one set of chunks per peer, and its frames do not interleave.
  staging_to_.clear();
  for (auto it = sends_.begin(); it != sends_.end();) {
    Request* req = *it++;  // completing it takes it off the list
    const bool staged = req->op<SendOp>()->staged;
    if (staged && staging_to_.count(req->peer()) > 0) continue;
    if (!ProgressSend(req) && staged) staging_to_.insert(req->peer());
  }
  for (auto it = staged_recvs_.begin(); it != staged_recvs_.end();) {
    Request* req = *it++;
    RecvOp* op = req->op<RecvOp>();
    bool done = false;
    Status st = op->pipe->Progress(&done);
    if (st.ok() && inject_copy_failure_ && op->pipe->units_retired() > 0) {
      inject_copy_failure_ = false;
      st = Status(Err::kInternal, "chan staging copy failure injected by a test");
    }
    if (!st.ok()) host_->Complete(req, st);
    else if (done) host_->Complete(req, TruncationOf(req->info(), req->bytes()));
  }
  *busy = !sends_.empty() || !staged_recvs_.empty();
  return Status::Ok();
}

void ChanLmt::Finished(Request* req) {
  if (req->is_send()) {
    sends_.remove(req);
    SendOp* op = req->op<SendOp>();
    if (op == nullptr) return;
    if (op->stage) {
      const bool in_flight = op->pipe && op->pipe->units_issued() > op->pipe->units_retired();
      Unstage(req, std::move(op->stage), op->copier, in_flight, op->lent_slot >= 0);
    } else if (op->lend && host_->ChannelLends(req->peer(), req->buf().ptr, op->total)) {
      host_->SettleChannel(req->peer());  // failed while lent: the buffer is the caller's again
    }
  } else if (RecvOp* op = req->op<RecvOp>()) {
    recvs_.erase(op->id);
    if (op->mode == RecvOp::Mode::kStaged) {
      staged_recvs_.remove(req);
      const bool in_flight = op->pipe && op->pipe->units_issued() > op->pipe->units_retired();
      Unstage(req, std::move(op->stage), op->copier, in_flight, false);
    }
  }
}

void ChanLmt::FailPeer(int rank, const Status& why) {
  std::vector<Request*> failed;
  for (Request* r : sends_)
    if (r->peer() == rank) failed.push_back(r);
  for (auto& [id, r] : recvs_)
    if (r->info().source == rank) failed.push_back(r);
  for (Request* r : failed) host_->Complete(r, why);
}

Status ChanLmt::Close() {
  pool_.clear();
  return Status::Ok();
}

}  // namespace mpigpu::transport

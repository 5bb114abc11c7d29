#include "transport/lmt/ring_lmt.h"

#include <algorithm>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"
#include "pipeline/pipeline.h"
#include "ringbuf/numa.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {
namespace {

// A ring transfer that fails because another one on the same ring failed part-way.
Status RingBroken(int sender, int receiver) {
  return Status(Err::kInternal, "the shared ring from rank " + std::to_string(sender) +
                                    " to rank " + std::to_string(receiver) +
                                    " failed in a transfer (see the first error)");
}

template <typename C>
void Erase(C& c, Request* req) {
  c.erase(std::remove(c.begin(), c.end(), req), c.end());
}

}  // namespace

// A request's pipeline (set once its transfer is set up).
struct RingLmt::RingOp : LmtOp {
  std::unique_ptr<LmtPipelineBase> pipe;
};

RingLmt::~RingLmt() {
  for (auto& [key, pair] : rings_)
    if (pair->pinned) (void)UnpinHostRange(pair->ring.data());
}

Status RingLmt::Attach(LmtHost* host, char*, char*) {
  host_ = host;
  rank_ = host->rank();
  const int n = host->size();
  wait_.resize(n);
  recv_active_.assign(n, nullptr);
  recv_next_.assign(n, nullptr);
  send_active_.assign(n, nullptr);
  send_queue_.resize(n);
  return Status::Ok();
}

bool RingLmt::InjectFault(const std::string& what) {
  if (what == "ring-copy") return inject_failure_ = true;
  if (what == "ring-setup") return inject_setup_failure_ = true;
  return false;
}

bool RingLmt::StartRecv(Request* req, const unsigned char*) {
  const int src = req->info().source;
  host_->Carry(req, this, std::make_unique<RingOp>());
  wait_[src].push_back(req);
  TryStartRecv(src);
  return true;
}

void RingLmt::SendFail(int src, uint64_t sreq) {
  MsgHeader h = ControlHeader(kWireIdRing, kFail);
  h.sreq = sreq;
  host_->SendControl(src, h, nullptr, 0);
}

void RingLmt::SendAbort(int peer, bool as_receiver) {
  MsgHeader h = ControlHeader(kWireIdRing, kAbort);
  if (as_receiver) h.flags = kFromReceiver;
  host_->SendControl(peer, h, nullptr, 0);
}

void RingLmt::Activate(Request* req) {
  active_.push_back(req);
  host_->Busy(this);
}

// A transfer with the unit size of the active one is chained (see ringbuf/lmt_ring.h); any other
// waits for the active one to finish.
void RingLmt::TryStartRecv(int src) {
  const TransportConfig& c = host_->config();
  while (!wait_[src].empty() && recv_next_[src] == nullptr) {
    Request* req = wait_[src].front();
    Request* active = recv_active_[src];
    const RtsBody rts = BodyOf<RtsBody>(req->rts());
    const bool gpu = req->buf().loc.is_device() || rts.loc.is_device();
    RingPair* pair = nullptr;
    Status st = RingFor(src, rank_, gpu, 0, &pair);
    const uint64_t total = std::min<uint64_t>(req->info().bytes, req->bytes());
    size_t unit = gpu ? LmtGpuUnit(total, c.lmt_unit_gpu_min, c.lmt_unit_gpu) : c.lmt_unit_host;
    unit = std::min(unit, pair ? pair->ring.capacity() : unit);
    if (st.ok() && pair->broken) {
      wait_[src].pop_front();
      const uint64_t sreq = req->rts().sreq;
      host_->Complete(req, RingBroken(src, rank_));
      SendFail(src, sreq);
      continue;
    }
    const bool chained = pair != nullptr && pair->chain_unit == unit;
    if (active != nullptr && st.ok() && !chained) return;  // another unit size: wait for the drain
    wait_[src].pop_front();
    Layout sender_shape = rts.block == 0 ? Layout::Contiguous(req->info().bytes)
                                         : Layout::Vector(req->info().bytes / rts.block, rts.block,
                                                          rts.block + 1);
    LmtParams params;
    params.total_bytes = total;
    params.unit_bytes = unit;
    params.fill_block = LmtFillBlock(sender_shape, req->buf().layout, unit);
    params.max_pending = c.lmt_max_pending;
    params.first_slot = chained ? pair->chain_slot : 0;
    CopyEngine* copier = nullptr;
    if (st.ok()) st = host_->CopierFor(req->buf().loc, &copier);
    auto receiver = std::make_unique<LmtReceiver>();
    if (st.ok())
      st = LmtReceiver::Create(&pair->ring, copier,
                               LmtBuffer{req->buf().ptr, req->buf().loc, req->buf().layout}, params,
                               receiver.get());
    if (!st.ok()) {
      const uint64_t sreq = req->rts().sreq;
      host_->Complete(req, st);
      SendFail(src, sreq);  // the sender waits for a CTS: it fails now instead
      continue;
    }
    pair->chain_unit = unit;
    pair->chain_slot = (params.first_slot + receiver->units_total()) % pair->ring.UnitsFor(unit);
    req->op<RingOp>()->pipe = std::move(receiver);
    if (active == nullptr) {
      recv_active_[src] = req;
      Activate(req);
    } else {
      recv_next_[src] = req;  // waits until the active transfer completes
    }
    MsgHeader cts = ControlHeader(kWireIdRing, kCts);
    cts.sreq = req->rts().sreq;
    cts.bytes = total;
    RingCts body{static_cast<uint32_t>(unit), static_cast<uint32_t>(params.fill_block),
                 static_cast<uint32_t>(params.first_slot), req->buf().loc, pair->token};
    SetBody(&cts, body);
    if (chained) {
      cts.flags = kChained;
      MPIGPU_TRACE("ring %d->%d: transfer of %llu bytes chained at unit %zu%s", src, rank_,
                   static_cast<unsigned long long>(total), params.first_slot,
                   active != nullptr ? " while the previous one drains" : "");
    }
    host_->SendControl(src, cts, nullptr, 0);
  }
}

Status RingLmt::OnControl(const MsgHeader& h, const unsigned char*, size_t) {
  if (h.op == kAbort) {
    if (h.flags & kFromReceiver) FailSends(h.src, RingBroken(rank_, h.src));
    else AbortRecv(h.src, RingBroken(h.src, rank_));
    return Status::Ok();
  }
  // The id names one of our sends waiting for this answer; anything else is a stale or corrupt
  // message and is dropped rather than trusted.
  Request* req = host_->WaitingSend(h.sreq);
  if (req == nullptr || req->peer() != h.src || (h.op != kCts && h.op != kFail)) {
    MPIGPU_WARN("dropping a ring message (op %d) from rank %d for no waiting send", h.op, h.src);
    return Status::Ok();
  }
  if (h.op == kFail) {
    host_->Complete(req, PeerCopyError(h.src));
    return Status::Ok();
  }
  Status st = StartSend(req, h);
  if (!st.ok()) {  // the receiver waits for this one's units
    host_->Complete(req, st);
    FailSends(h.src, RingBroken(rank_, h.src));
    SendAbort(h.src, false);
  }
  return Status::Ok();
}

Status RingLmt::StartSend(Request* req, const MsgHeader& h) {
  const RingCts cts = BodyOf<RingCts>(h);
  const bool gpu = req->buf().loc.is_device() || cts.loc.is_device();
  host_->Carry(req, this, std::make_unique<RingOp>());
  RingPair* pair = nullptr;
  MPIGPU_RETURN_IF_ERROR(RingFor(rank_, req->peer(), gpu, cts.token, &pair));
  CopyEngine* copier = nullptr;
  MPIGPU_RETURN_IF_ERROR(host_->CopierFor(req->buf().loc, &copier));
  LmtParams params;
  params.total_bytes = h.bytes;
  params.unit_bytes = cts.unit;
  params.fill_block = cts.fill_block;
  params.max_pending = host_->config().lmt_max_pending;
  params.first_slot = cts.first_slot;
  params.wait_drained = (h.flags & kChained) == 0;
  auto sender = std::make_unique<LmtSender>();
  MPIGPU_RETURN_IF_ERROR(LmtSender::Create(
      &pair->ring, copier, LmtBuffer{req->buf().ptr, req->buf().loc, req->buf().layout}, params,
      sender.get()));
  req->op<RingOp>()->pipe = std::move(sender);
  // One transfer per ring at a time: a chained CTS can arrive while the previous one still runs.
  if (send_active_[req->peer()] != nullptr) {
    send_queue_[req->peer()].push_back(req);
    return Status::Ok();
  }
  send_active_[req->peer()] = req;
  Activate(req);
  return Status::Ok();
}

// The ring src -> dst, mapped on first use; nothing is kept when making it fails (a later
// transfer tries again). The receiver creates it under a fresh random token, which its CTS
// carries; the sender attaches under the CTS's token.
Status RingLmt::RingFor(int src, int dst, bool pin, uint64_t token, RingPair** out) {
  const TransportConfig& c = host_->config();
  auto found = rings_.find({src, dst});
  if (found == rings_.end()) {
    auto pair = std::make_unique<RingPair>();
    // Capacity: MPIGPU_LMT_UNITS of the largest GPU unit when a GPU exists (so GPU transfers get
    // their large units), else of the host unit. Flags for as many of the smallest unit as fit.
    const bool gpu = CudaDeviceCount() > 0;
    const size_t unit = gpu ? c.lmt_unit_gpu : c.lmt_unit_host;
    const size_t smallest = gpu ? std::min(c.lmt_unit_gpu_min, unit) : unit;
    const size_t capacity = unit * c.lmt_units;
    const size_t flags = std::max<size_t>(c.lmt_units, capacity / smallest);
    const size_t bytes = LmtRing::BytesFor(capacity, flags);
    if (bytes == 0) return Status(Err::kInvalidArg, "MPIGPU_LMT_UNITS / unit sizes out of range");
    if (inject_setup_failure_) {
      inject_setup_failure_ = false;
      return Status(Err::kNoMemory, "ring set-up failure injected by a test");
    }
    const std::string& jobid = host_->job().jobid();
    if (dst == rank_) {  // the receiver makes the ring; the sender attaches after the CTS
      MPIGPU_RETURN_IF_ERROR(RandomToken(&pair->token));
      const std::string name = RingSegmentName(jobid, src, dst, pair->token);
      // Pages near the receiver's GPU: its H2D copies read them (MPIGPU_NUMA_PLACE).
      int node = -1;
      int device = 0;
      if (c.numa_place && CudaDeviceCount() > 0 && cudaGetDevice(&device) == cudaSuccess)
        node = NumaNodeOfGpu(device);
      MPIGPU_RETURN_IF_ERROR(
          ShmSegment::Create(name, bytes, src == dst ? 1 : 2, &pair->region, node));
      Status st = LmtRing::Format(pair->region.payload(), bytes, capacity, flags, &pair->ring);
      if (!st.ok()) {
        (void)pair->region.Unlink();
        return st;
      }
      pair->creator = true;
    } else {
      pair->token = token;
      const std::string name = RingSegmentName(jobid, src, dst, token);
      MPIGPU_RETURN_IF_ERROR(ShmSegment::Attach(name, &pair->region, BootstrapTimeoutMs(c),
                                                [this, dst] { return host_->PeerAlive(dst); }));
      MPIGPU_RETURN_IF_ERROR(
          LmtRing::Attach(pair->region.payload(), pair->region.payload_bytes(), &pair->ring));
      (void)pair->region.Unlink();  // both sides have it now
    }
    found = rings_.emplace(std::make_pair(src, dst), std::move(pair)).first;
  }
  RingPair* pair = found->second.get();
  if (pin && !pair->pinned && c.pin_shm) {
    Status st = PinHostRange(pair->ring.data(), pair->ring.capacity());
    if (st.ok()) pair->pinned = true;
    else MPIGPU_INFO("ring %d->%d stays unpinned: %s", src, dst, st.ToString().c_str());
  }
  *out = pair;
  return Status::Ok();
}

// The ring from `src` failed part-way (here or on the sender's side): its units may stay in it,
// and a chained transfer would take them for its own. The transfers in flight on it fail, and
// the ring is retired: later ring transfers from `src` fail too (TryStartRecv).
void RingLmt::AbortRecv(int src, const Status& why) {
  if (auto it = rings_.find({src, rank_}); it != rings_.end()) it->second->broken = true;
  if (Request* a = std::exchange(recv_active_[src], nullptr)) host_->Complete(a, why);
  if (Request* next = std::exchange(recv_next_[src], nullptr)) host_->Complete(next, why);
  TryStartRecv(src);
}

// The sending side of the same: the transfer to `dst` and those queued behind it fail.
void RingLmt::FailSends(int dst, const Status& why) {
  if (Request* a = std::exchange(send_active_[dst], nullptr)) host_->Complete(a, why);
  std::deque<Request*> queued;
  queued.swap(send_queue_[dst]);
  for (Request* r : queued) host_->Complete(r, why);
}

// A transfer ended (done or failed): the pair's next one starts; a failed one retires the ring.
void RingLmt::Retire(Request* req, const Status& st) {
  const bool recv = !req->is_send();
  const int peer = req->peer();
  const bool held = recv ? recv_active_[peer] == req : send_active_[peer] == req;
  host_->Complete(req, recv && st.ok() ? TruncationOf(req->info(), req->bytes()) : st);
  if (!held) return;
  if (recv) {
    recv_active_[peer] = nullptr;
    if (!st.ok()) {
      AbortRecv(peer, RingBroken(peer, rank_));
      SendAbort(peer, true);
    } else if ((recv_active_[peer] = std::exchange(recv_next_[peer], nullptr))) {
      Activate(recv_active_[peer]);  // the chained transfer starts draining
    }
    TryStartRecv(peer);  // maybe another gets its CTS
  } else {
    send_active_[peer] = nullptr;
    if (!st.ok()) {
      FailSends(peer, RingBroken(rank_, peer));
      SendAbort(peer, false);
    } else if (!send_queue_[peer].empty()) {
      send_active_[peer] = send_queue_[peer].front();
      send_queue_[peer].pop_front();
      Activate(send_active_[peer]);
    }
  }
}

Status RingLmt::Progress(bool* busy) {
  // A snapshot: retiring one transfer may complete others (Finished takes them out of active_).
  std::vector<Request*> snap(active_.begin(), active_.end());
  for (Request* req : snap) {
    if (std::find(active_.begin(), active_.end(), req) == active_.end()) continue;
    bool done = false;
    Status st = req->op<RingOp>()->pipe->Progress(&done);
    if (st.ok() && inject_failure_ && !req->is_send() && req->op<RingOp>()->pipe->units_retired() > 0) {
      inject_failure_ = false;
      st = Status(Err::kInternal, "ring copy failure injected by a test");
    }
    if (done || !st.ok()) {
      active_.remove(req);
      Retire(req, st);
    }
  }
  *busy = !active_.empty();
  return Status::Ok();
}

void RingLmt::Finished(Request* req) {
  const int peer = req->peer();
  active_.remove(req);
  if (peer < 0) return;
  if (recv_active_[peer] == req) recv_active_[peer] = nullptr;
  if (recv_next_[peer] == req) recv_next_[peer] = nullptr;
  if (send_active_[peer] == req) send_active_[peer] = nullptr;
  Erase(wait_[peer], req);
  Erase(send_queue_[peer], req);
}

void RingLmt::FailPeer(int rank, const Status& why) {
  std::deque<Request*> waiting;
  waiting.swap(wait_[rank]);
  for (Request* r : waiting) host_->Complete(r, why);
  FailSends(rank, why);
  if (Request* next = std::exchange(recv_next_[rank], nullptr)) host_->Complete(next, why);
  if (Request* a = std::exchange(recv_active_[rank], nullptr)) host_->Complete(a, why);
}

Status RingLmt::Close() {
  for (auto& [key, pair] : rings_)
    if (pair->creator) (void)pair->region.Unlink();
  return Status::Ok();
}

}  // namespace mpigpu::transport

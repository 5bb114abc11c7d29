// The shared ring (the paper's pipeline, chained transfers, abort) and the cooperative CMA copy:
// starting, advancing and retiring large transfers.
#include "transport/engine.h"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"
#include "ringbuf/numa.h"
#include "ringbuf/populate.h"
#include "transport/engine_internal.h"

namespace mpigpu::transport {

// The ring from `src` failed part-way (here or on the sender's side): its units may stay in it,
// and a chained transfer would take them for its own. The transfers in flight on it fail, and
// the ring is retired: later ring transfers from `src` fail too (TryStartRingRecv).
void Engine::AbortRecvRing(int src, const Status& why) {
  if (auto it = rings_.find({src, rank_}); it != rings_.end()) it->second->broken = true;
  if (Request* a = lmt_recv_active_[src]; a != nullptr && !a->coop_) {
    lmt_recv_active_[src] = nullptr;
    lmt_active_.remove(a);
    Complete(a, why);
  }
  if (Request* next = std::exchange(lmt_recv_next_[src], nullptr)) Complete(next, why);
  TryStartRingRecv(src);
}

// The sending side of the same: the ring transfer to `dst` and those queued behind it fail.
void Engine::FailRingSends(int dst, const Status& why) {
  if (Request* a = std::exchange(lmt_send_active_[dst], nullptr)) {
    lmt_active_.remove(a);
    Complete(a, why);
  }
  std::deque<Request*> queued;
  queued.swap(lmt_send_queue_[dst]);
  for (Request* r : queued) Complete(r, why);
}

void Engine::SendRingAbort(int peer, bool as_receiver) {
  OutMsg abort = Control(peer, MsgType::kRingAbort);
  if (as_receiver) abort.hdr.flags = kFlagRingReceiver;
  (void)SendOrQueue(abort);
}

// The receiver runs one large transfer per source at a time (ring or cooperative CMA): both use
// per-pair shared state. A ring transfer with the unit size of the active one is chained (see
// ringbuf/lmt_ring.h): its CTS goes out at once, so the sender refills the units the active
// transfer frees and the ring does not run dry between messages; it starts draining when the
// active one completes (lmt_recv_next_). Any other transfer waits for the active one to finish.
void Engine::TryStartRingRecv(int src) {
  while (!lmt_wait_[src].empty() && lmt_recv_next_[src] == nullptr) {
    Request* req = lmt_wait_[src].front();
    Request* active = lmt_recv_active_[src];
    if (req->coop_ || (active != nullptr && active->coop_)) {
      if (active != nullptr) return;
      lmt_wait_[src].pop_front();
      StartCoopRecv(req, src);
      continue;
    }
    const bool gpu = req->buf_.loc.is_device() || req->peer_loc_.is_device();
    RingPair* pair = nullptr;
    Status st = RingFor(src, rank_, gpu, 0, &pair);
    const uint64_t total = std::min<uint64_t>(req->info_.bytes, req->bytes_);
    size_t unit = gpu ? LmtGpuUnit(total, config_->lmt_unit_gpu_min, config_->lmt_unit_gpu)
                      : config_->lmt_unit_host;
    unit = std::min(unit, pair ? pair->ring.capacity() : unit);
    if (st.ok() && pair->broken) {
      lmt_wait_[src].pop_front();
      const uint64_t cookie = req->peer_cookie_;
      Complete(req, RingBroken(src, rank_));
      TellCopyFailed(src, cookie);
      continue;
    }
    const bool chained = pair != nullptr && pair->chain_unit == unit;
    if (active != nullptr && st.ok() && !chained) return;  // another unit size: wait for the drain
    lmt_wait_[src].pop_front();
    Layout sender_shape = req->peer_block_ == 0
                              ? Layout::Contiguous(req->info_.bytes)
                              : Layout::Vector(req->info_.bytes / req->peer_block_, req->peer_block_,
                                               req->peer_block_ + 1);
    LmtParams params;
    params.total_bytes = total;
    params.unit_bytes = unit;
    params.fill_block = LmtFillBlock(sender_shape, req->buf_.layout, unit);
    params.max_pending = config_->lmt_max_pending;
    params.first_slot = chained ? pair->chain_slot : 0;
    CopyEngine* copier = nullptr;
    if (st.ok()) st = CopierFor(req->buf_.loc, &copier);
    auto receiver = std::make_unique<LmtReceiver>();
    if (st.ok())
      st = LmtReceiver::Create(&pair->ring, copier,
                               LmtBuffer{req->buf_.ptr, req->buf_.loc, req->buf_.layout}, params,
                               receiver.get());
    if (!st.ok()) {
      const uint64_t cookie = req->peer_cookie_;
      Complete(req, st);
      TellCopyFailed(src, cookie);  // the sender waits for a CTS: it fails now instead
      continue;
    }
    pair->chain_unit = unit;
    pair->chain_slot = (params.first_slot + receiver->units_total()) % pair->ring.UnitsFor(unit);
    req->lmt_ = std::move(receiver);
    if (active == nullptr) {
      req->state_ = Request::State::kLmt;
      lmt_recv_active_[src] = req;
      lmt_active_.push_back(req);
    } else {
      lmt_recv_next_[src] = req;  // stays kLmtWait until the active transfer completes
    }
    OutMsg cts = Control(src, MsgType::kCts);
    cts.hdr.sreq = req->peer_cookie_;
    cts.hdr.bytes = total;
    cts.hdr.unit = static_cast<uint32_t>(unit);
    cts.hdr.block = static_cast<uint32_t>(params.fill_block);
    cts.hdr.addr = params.first_slot;
    SetRingToken(&cts.hdr, pair->token);
    if (chained) {
      cts.hdr.flags = kFlagChained;
      MPIGPU_TRACE("ring %d->%d: transfer of %llu bytes chained at unit %zu%s", src, rank_,
                   static_cast<unsigned long long>(total), params.first_slot,
                   active != nullptr ? " while the previous one drains" : "");
    }
    cts.hdr.loc = req->buf_.loc;
    (void)SendOrQueue(cts);
  }
}

void Engine::StartCoopRecv(Request* req, int src) {
  // The pair's slot lives in the segment's sparse tail: memory first (this side touches it first;
  // the sender only after our CmaGo).
  if (Status st = PopulateForWrite(CmaSlotOf(src, rank_), sizeof(CmaSlot),
                                   "the copy slot of rank " + std::to_string(src));
      !st.ok()) {
    const uint64_t cookie = req->peer_cookie_;
    Complete(req, st);
    TellCopyFailed(src, cookie);
    return;
  }
  uint32_t gen = ++cma_gen_[src];
  if (gen == 0) gen = ++cma_gen_[src];  // 0 never names a transfer
  req->gen_ = gen;
  CmaBegin(CmaSlotOf(src, rank_), gen);
  req->state_ = Request::State::kLmt;
  lmt_recv_active_[src] = req;
  lmt_active_.push_back(req);
  OutMsg go = Control(src, MsgType::kCmaGo);
  go.hdr.sreq = req->peer_cookie_;
  go.hdr.addr = reinterpret_cast<uint64_t>(req->buf_.ptr);
  go.hdr.bytes = req->total_;
  go.hdr.unit = static_cast<uint32_t>(req->chunk_);
  go.hdr.block = gen;
  (void)SendOrQueue(go);
}

// Both sides: copy the chunks left, then see whether the transfer is complete.
Status Engine::AdvanceCma(Request* req, bool* done) {
  const bool recv = req->kind_ == Request::Kind::kRecv;
  const int peer = req->peer_;
  CmaSlot* slot = recv ? CmaSlotOf(peer, rank_) : CmaSlotOf(rank_, peer);
  Status st = CmaCopyChunks(slot, req->gen_, recv, job_.pid(peer), static_cast<char*>(req->buf_.ptr),
                            recv ? req->peer_addr_ : req->remote_, req->total_, req->chunk_);
  if (!st.ok()) return job_.Alive(peer) ? st : PeerDied(peer);
  if (int err = CmaFailed(slot, req->gen_)) return SysError("the peer's cooperative copy", err);
  *done = CmaFinished(slot, req->gen_, req->total_);
  return Status::Ok();
}

Status Engine::StartRingSend(Request* req, const MsgHeader& cts) {
  const bool gpu = req->buf_.loc.is_device() || cts.loc.is_device();
  RingPair* pair = nullptr;
  MPIGPU_RETURN_IF_ERROR(RingFor(rank_, req->peer_, gpu, RingToken(cts), &pair));
  CopyEngine* copier = nullptr;
  MPIGPU_RETURN_IF_ERROR(CopierFor(req->buf_.loc, &copier));
  LmtParams params;
  params.total_bytes = cts.bytes;
  params.unit_bytes = cts.unit;
  params.fill_block = cts.block;
  params.max_pending = config_->lmt_max_pending;
  params.first_slot = cts.addr;
  params.wait_drained = (cts.flags & kFlagChained) == 0;
  auto sender = std::make_unique<LmtSender>();
  MPIGPU_RETURN_IF_ERROR(LmtSender::Create(
      &pair->ring, copier, LmtBuffer{req->buf_.ptr, req->buf_.loc, req->buf_.layout}, params,
      sender.get()));
  req->lmt_ = std::move(sender);
  // One transfer per ring at a time: a chained CTS can arrive while the previous one still runs.
  if (lmt_send_active_[req->peer_] != nullptr) {
    req->state_ = Request::State::kLmtWait;
    lmt_send_queue_[req->peer_].push_back(req);
    return Status::Ok();
  }
  req->state_ = Request::State::kLmt;
  lmt_send_active_[req->peer_] = req;
  lmt_active_.push_back(req);
  return Status::Ok();
}

// The ring src -> dst, mapped on first use; nothing is kept when making it fails (a later
// transfer tries again). The receiver creates it under a fresh random token, which its CTS
// carries; the sender attaches under the CTS's token.
Status Engine::RingFor(int src, int dst, bool pin, uint64_t token, RingPair** out) {
  auto found = rings_.find({src, dst});
  if (found == rings_.end()) {
    auto pair = std::make_unique<RingPair>();
    // Capacity: MPIGPU_LMT_UNITS of the largest GPU unit when a GPU exists (so GPU transfers get
    // their large units), else of the host unit. Flags for as many of the smallest unit as fit.
    const bool gpu = CudaDeviceCount() > 0;
    const size_t unit = gpu ? config_->lmt_unit_gpu : config_->lmt_unit_host;
    const size_t smallest = gpu ? std::min(config_->lmt_unit_gpu_min, unit) : unit;
    const size_t capacity = unit * config_->lmt_units;
    const size_t flags = std::max<size_t>(config_->lmt_units, capacity / smallest);
    const size_t bytes = LmtRing::BytesFor(capacity, flags);
    if (bytes == 0) return Status(Err::kInvalidArg, "MPIGPU_LMT_UNITS / unit sizes out of range");
    if (inject_ring_setup_failure_) {
      inject_ring_setup_failure_ = false;
      return Status(Err::kNoMemory, "ring set-up failure injected by a test");
    }
    if (dst == rank_) {  // the receiver makes the ring; the sender attaches after the CTS
      MPIGPU_RETURN_IF_ERROR(RandomToken(&pair->token));
      const std::string name = RingSegmentName(job_.jobid(), src, dst, pair->token);
      // Pages near the receiver's GPU: its H2D copies read them (MPIGPU_NUMA_PLACE).
      int node = -1;
      int device = 0;
      if (config_->numa_place && CudaDeviceCount() > 0 && cudaGetDevice(&device) == cudaSuccess)
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
      const std::string name = RingSegmentName(job_.jobid(), src, dst, token);
      MPIGPU_RETURN_IF_ERROR(ShmSegment::Attach(name, &pair->region, BootstrapTimeoutMs(*config_),
                                                [this, dst] { return PeerAlive(dst); }));
      MPIGPU_RETURN_IF_ERROR(
          LmtRing::Attach(pair->region.payload(), pair->region.payload_bytes(), &pair->ring));
      (void)pair->region.Unlink();  // both sides have it now
    }
    found = rings_.emplace(std::make_pair(src, dst), std::move(pair)).first;
  }
  RingPair* pair = found->second.get();
  if (pin && !pair->pinned && config_->pin_shm) {
    Status st = PinHostRange(pair->ring.data(), pair->ring.capacity());
    if (st.ok()) pair->pinned = true;
    else MPIGPU_INFO("ring %d->%d stays unpinned: %s", src, dst, st.ToString().c_str());
  }
  *out = pair;
  return Status::Ok();
}

Status Engine::AdvanceLmts() {
  for (auto it = lmt_active_.begin(); it != lmt_active_.end();) {
    Request* req = *it;
    bool done = false;
    Status st;
    if (req->done_) {
    } else if (req->state_ == Request::State::kIpcCopy) {
      if (req->on_gpu_copier_) st = gpu_copier_.Poll(req->ticket_, &done);
      else st = req->ipc_copier_->Poll(req->ticket_, &done);
      if (done || !st.ok()) {
        (void)ipc_cache_->Release(req->peer_, req->ipc_);
        // Tell the peer its buffer is free (pull) or ours is filled (put); or that the copy
        // failed, so that its request ends too instead of waiting for us. A copy that notifies
        // the peer stored the send's token when it finished; if the kernel faulted, the token
        // tells whether it got that far (a dead kernel stores nothing more).
        const bool recv = req->kind_ == Request::Kind::kRecv;
        if (!req->notifies_peer_ || (!st.ok() && !PeerTokenStored(*req))) {
          OutMsg note = Control(req->peer_, recv ? MsgType::kFin : MsgType::kPutDone);
          if (recv) note.hdr.sreq = req->peer_cookie_;
          else note.hdr.addr = req->peer_req_;
          if (!st.ok()) note.hdr.flags = kFlagCopyError;
          (void)SendOrQueue(note);
        }
      }
    } else if (req->coop_) {
      st = AdvanceCma(req, &done);
    } else {
      st = req->lmt_->Progress(&done);
      if (st.ok() && inject_ring_failure_ && req->kind_ == Request::Kind::kRecv &&
          req->lmt_->units_retired() > 0) {
        inject_ring_failure_ = false;
        st = Status(Err::kInternal, "ring copy failure injected by a test");
      }
    }
    if (req->done_ || done || !st.ok()) {
      it = lmt_active_.erase(it);
      const bool recv = req->kind_ == Request::Kind::kRecv;
      const int peer = req->peer_;
      const bool held_pair = recv && lmt_recv_active_[peer] == req;  // ring or cooperative CMA
      const bool held_ring = !recv && lmt_send_active_[peer] == req;
      const bool ring_failed = !st.ok() && !req->coop_ && req->lmt_ != nullptr;
      if (!req->done_) Complete(req, recv && st.ok() ? TruncationOf(req->info_, req->bytes_) : st);
      if (held_pair) {  // the chained next transfer starts draining; maybe another gets its CTS
        lmt_recv_active_[peer] = nullptr;
        if (ring_failed) {
          AbortRecvRing(peer, RingBroken(peer, rank_));
          SendRingAbort(peer, true);
        } else if ((lmt_recv_active_[peer] = std::exchange(lmt_recv_next_[peer], nullptr))) {
          Activate(lmt_recv_active_[peer]);
        }
        TryStartRingRecv(peer);
      }
      if (held_ring) {
        lmt_send_active_[peer] = nullptr;
        if (ring_failed) {
          FailRingSends(peer, RingBroken(rank_, peer));
          SendRingAbort(peer, false);
        } else if (!lmt_send_queue_[peer].empty()) {
          lmt_send_active_[peer] = lmt_send_queue_[peer].front();
          lmt_send_queue_[peer].pop_front();
          Activate(lmt_send_active_[peer]);
        }
      }
    } else {
      ++it;
    }
  }
  return Status::Ok();
}

}  // namespace mpigpu::transport

// Eager messages and the arrival path: fastboxes (opened per pair on first use) and cells, the
// blocking shortcuts, in-order delivery of each pair's messages, and the dispatch of every message
// type.
#include "transport/engine.h"

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
#include "transport/engine_internal.h"

namespace mpigpu::transport {

// A control message (no request, no payload) from this rank to `dst`.
Engine::OutMsg Engine::Control(int dst, MsgType type) const {
  OutMsg m;
  m.dst = dst;
  m.hdr.type = type;
  m.hdr.src = rank_;
  return m;
}

// An eager message of buf's packed bytes to `dst` (no request yet).
Engine::OutMsg Engine::Eager(int dst, int tag, int context, const UserBuffer& buf) const {
  OutMsg m = Control(dst, MsgType::kEager);
  m.data = &buf;
  m.hdr.tag = tag;
  m.hdr.context = context;
  m.hdr.bytes = buf.layout.packed_bytes();
  return m;
}

Status Engine::SendOrQueue(OutMsg& msg) {
  std::deque<OutMsg>& q = pending_[msg.dst];
  if (q.empty() && TrySend(msg)) return Status::Ok();
  q.push_back(msg);  // behind earlier messages to the same rank: order is kept
  ++pending_count_;
  return Status::Ok();
}

bool Engine::TrySendNow(const UserBuffer& buf, int dst, int tag, int context) {
  const size_t bytes = buf.layout.packed_bytes();
  // Anything else (errors included) is Isend's to decide.
  if (finalized_ || !RankValid(dst, false) || tag < 0 || !buf.loc.is_host() ||
      !buf.layout.contiguous() || bytes > eager_max_ || (bytes > 0 && buf.ptr == nullptr) ||
      peer_failed_[dst] || !pending_[dst].empty())
    return false;
  // The hot case, a slot of the pair's fastbox ring: written here, with no OutMsg to build.
  if (box_to_[dst] == kBoxOn && bytes <= config_->fastbox_size) {
    if (Fastbox* box = fastboxes_.TryBegin(dst)) {
      if (bytes > 0) std::memcpy(box->data + sizeof(EagerHeader), buf.ptr, bytes);
      PublishEagerBox(box, dst, tag, context, seq_out_[dst]++, bytes);
      return true;
    }
  }
  OutMsg msg = Eager(dst, tag, context, buf);
  return TrySend(msg);  // false: no slot or cell free; nothing was sent
}

// Completes an eager message whose payload is already in `box` (behind the compact header) and
// hands the slot to the receiver.
void Engine::PublishEagerBox(Fastbox* box, int dst, int tag, int context, uint32_t seq,
                             size_t bytes) {
  const EagerHeader e{MsgType::kEager, {}, tag, context, seq};
  std::memcpy(box->data, &e, sizeof e);
  box->len = static_cast<uint32_t>(sizeof e + bytes);
  fastboxes_.Publish(dst, box);
}

// Sender: the first message to a peer goes through a cell; it gets the pair's fastbox memory
// (sparse until now) and tells the receiver to watch the fastbox from this message on (in the
// pair's order, so no later fastbox message can be missed). If the memory cannot be had (a full
// /dev/shm), the pair keeps to the cells.
void Engine::OpenFastbox(int dst, MsgHeader* h) {
  Status st = fastboxes_.PreparePair(dst);
  if (!st.ok()) {
    box_to_[dst] = kBoxFailed;
    MPIGPU_INFO("no fastbox to rank %d, cells only: %s", dst, st.ToString().c_str());
    return;
  }
  box_to_[dst] = kBoxOn;
  h->flags |= kFlagBoxOn;
}

bool Engine::TryRecvNow(const UserBuffer& buf, int src, int tag, int context, int spins,
                        MsgInfo* info, Status* st) {
  const size_t capacity = buf.layout.packed_bytes();
  if (finalized_ || !RankValid(src, false) || !box_from_[src] || (tag < 0 && tag != kAnyTag) ||
      !buf.loc.is_host() || !buf.layout.contiguous() || (capacity > 0 && buf.ptr == nullptr) ||
      capacity > config_->fastbox_size || peer_failed_[src])
    return false;
  // A receive larger than a slot most likely waits for a cell: posted at once (above), it takes
  // the cell where it lands, and its posting is off the message's path.
  // A posted receive, an unexpected message or a held cell may come first in MPI's order: then
  // the full path decides. Nothing here changes that while it looks (no Progress), and a cell
  // that arrives sends the receive down the full path at once, to be received where it lands
  // instead of being parked as unexpected and copied twice.
  if (!posted_.empty() || !unexpected_.empty() || !held_[src].empty()) return false;
  for (int spin = 0; spin < spins; ++spin) {
    const Fastbox* b = fastboxes_.Peek(src);
    if (b == nullptr) {
      if (queues_.Pending(rank_)) return false;
      continue;
    }
    MsgHeader h;
    const unsigned char* payload = nullptr;
    if (!DecodeBox(src, *b, &h, &payload).ok() || h.seq != seq_in_[src] ||
        h.type != MsgType::kEager || h.context != context || (tag != kAnyTag && h.tag != tag))
      return false;  // not this receive's message (or a bad one, which Progress reports)
    *st = UnpackEager(h, payload, buf, capacity, info);
    fastboxes_.Release(src);
    ++seq_in_[src];
    return true;
  }
  return false;
}

// Copies the first n packed bytes of `user` to or from `plain` (host memory: a cell or fastbox
// payload) and returns when the copy is complete (eager messages).
Status Engine::CopyPackedNow(PackDir dir, const UserBuffer& user, size_t n, void* plain) {
  if (n == 0) return Status::Ok();
  if (user.loc.is_host() && user.layout.contiguous()) {  // the common small case: no engine
    if (dir == PackDir::kPack) std::memcpy(plain, user.ptr, n);
    else std::memcpy(user.ptr, plain, n);
    return Status::Ok();
  }
  CopyEngine* copier = nullptr;
  MPIGPU_RETURN_IF_ERROR(CopierFor(user.loc, &copier));
  if (user.loc.is_device()) PinEagerMemory();
  Status st =
      CopyPacked(*copier, dir, user.ptr, user.loc, user.layout, 0, n, plain, MemLoc::Host());
  // Waited for even after a failure: with `plain` pinned, a piece already issued would still
  // read or write the cell after it went back to its pool.
  Ticket t = 0;
  Status done = copier->Mark(&t);
  if (done.ok()) done = copier->Wait(t);
  st.KeepFirst(std::move(done));
  return st;
}

// Pins the fastboxes and cells (every rank's: this process unpacks from any of them) the first
// time a GPU buffer is packed into or out of one. A pageable cell costs the driver a staging
// copy, and a small pageable host-to-device copy runs on the SMs, which pays a context switch
// whenever ranks share a GPU (run 34: about 140 us per switch up to 64 KiB; pinned, the copy
// engine takes them from 32 KiB). MPIGPU_PIN_SHM=0 leaves them pageable.
void Engine::PinEagerMemory() {
  if (eager_pin_tried_ || !config_->pin_shm || eager_bytes_ == 0) return;
  eager_pin_tried_ = true;
  Status st = PinHostRange(eager_mem_, eager_bytes_);
  if (st.ok()) eager_pinned_ = true;
  else MPIGPU_INFO("eager cells stay pageable: %s", st.ToString().c_str());
}

bool Engine::TrySend(OutMsg& msg) {
  const bool eager = msg.hdr.type == MsgType::kEager;
  const size_t payload = eager ? msg.hdr.bytes : msg.has_ipc ? sizeof(IpcOffer) : 0;
  // A fastbox slot carries an eager message behind the compact EagerHeader, others behind the
  // whole MsgHeader (wire.h); a cell has a header line of its own.
  const size_t box_hdr = eager ? sizeof(EagerHeader) : sizeof(MsgHeader);
  unsigned char* payload_dst = nullptr;
  Fastbox* box = nullptr;
  Cell* cell = nullptr;
  if (box_to_[msg.dst] == kBoxOn && payload <= config_->fastbox_size &&
      (box = fastboxes_.TryBegin(msg.dst)) != nullptr) {
    payload_dst = box->data + box_hdr;
  } else if ((cell = queues_.Alloc(rank_)) != nullptr) {
    payload_dst = cell->payload();
  } else {
    return false;  // no cell free: the message waits in the pair's FIFO
  }
  Status st = eager ? CopyPackedNow(PackDir::kPack, *msg.data, payload, payload_dst) : Status::Ok();
  if (msg.has_ipc) std::memcpy(payload_dst, &msg.offer, sizeof msg.offer);
  if (!st.ok()) {
    if (cell) queues_.Free(cell);  // an unpublished slot stays the sender's: nothing to undo
    if (msg.req != nullptr) Complete(msg.req, st);  // TrySendNow copies host memory: no error
    return true;  // consumed: the request carries the error
  }
  msg.hdr.seq = seq_out_[msg.dst]++;
  if (cell && box_to_[msg.dst] == kBoxOff) OpenFastbox(msg.dst, &msg.hdr);
  if (box && eager) {
    PublishEagerBox(box, msg.dst, msg.hdr.tag, msg.hdr.context, msg.hdr.seq, payload);
  } else if (box) {
    std::memcpy(box->data, &msg.hdr, sizeof msg.hdr);
    box->len = static_cast<uint32_t>(box_hdr + payload);
    fastboxes_.Publish(msg.dst, box);
  } else {
    static_assert(sizeof(cell->hdr) >= sizeof(MsgHeader), "header fits");
    std::memcpy(cell->hdr, &msg.hdr, sizeof msg.hdr);
    cell->payload_len = static_cast<uint32_t>(payload);
    queues_.Enqueue(msg.dst, cell);
  }
  if (eager && msg.req != nullptr) Complete(msg.req, Status::Ok());
  if (msg.hdr.type == MsgType::kRts) waiting_sends_.insert(msg.req);
  return true;
}

Status Engine::FlushPending() {
  if (pending_count_ == 0) return Status::Ok();
  for (int dst = 0; dst < size_; ++dst) {
    std::deque<OutMsg>& q = pending_[dst];
    while (!q.empty() && TrySend(q.front())) {
      q.pop_front();
      --pending_count_;
    }
  }
  return Status::Ok();
}

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

// Messages of one pair are handled in the order they were sent: a message whose number is not
// the next expected one waits (a queue cell in held_, a fastbox message in its box).
Status Engine::PollArrivals() {
  Status st;
  for (size_t i = 0; i < box_sources_.size() && st.ok(); ++i) st = DrainInOrder(box_sources_[i]);
  for (int budget = 64; budget > 0 && st.ok(); --budget) {
    Cell* cell = queues_.Dequeue(rank_);
    if (cell == nullptr) break;
    MsgHeader h;
    std::memcpy(&h, cell->hdr, sizeof h);
    if (h.src < 0 || h.src >= size_) {
      queues_.Free(cell);
      return Status(Err::kInternal, "cell from unknown rank " + std::to_string(h.src));
    }
    if (h.seq != seq_in_[h.src]) {
      held_[h.src].push_back(cell);  // a fastbox message sent before it is still to come
      continue;
    }
    st = HandleMessage(h, cell->payload());
    queues_.Free(cell);
    ++seq_in_[h.src];
    if (st.ok()) st = DrainInOrder(h.src);
  }
  return st;
}

// The header and payload of the fastbox message `b` from src: compact eager messages (TrySend)
// are widened to a MsgHeader.
Status Engine::DecodeBox(int src, const Fastbox& b, MsgHeader* h,
                         const unsigned char** payload) const {
  if (static_cast<MsgType>(b.data[0]) != MsgType::kEager) {
    std::memcpy(h, b.data, sizeof *h);
    *payload = b.data + sizeof *h;
    return Status::Ok();
  }
  if (b.len < sizeof(EagerHeader) || b.len > fastboxes_.data())
    return Status(Err::kInternal, "fastbox message from rank " + std::to_string(src) +
                                      " has a bad length " + std::to_string(b.len));
  EagerHeader e;
  std::memcpy(&e, b.data, sizeof e);
  *h = MsgHeader{};
  h->type = MsgType::kEager;
  h->src = src;
  h->tag = e.tag;
  h->context = e.context;
  h->seq = e.seq;
  h->bytes = b.len - sizeof e;
  *payload = b.data + sizeof e;
  return Status::Ok();
}

// Handles the next message in src's fastbox ring if it is the pair's next one (*took says so).
Status Engine::TakeFastboxInOrder(int src, bool* took) {
  *took = false;
  const Fastbox* b = box_from_[src] ? fastboxes_.Peek(src) : nullptr;
  if (b == nullptr) return Status::Ok();
  MsgHeader h;
  const unsigned char* payload = nullptr;
  MPIGPU_RETURN_IF_ERROR(DecodeBox(src, *b, &h, &payload));
  if (h.seq != seq_in_[src]) return Status::Ok();  // an earlier queue message goes first
  *took = true;
  Status st = HandleMessage(h, payload);
  fastboxes_.Release(src);
  ++seq_in_[src];
  return st;
}

// Handles src's waiting messages (held cells, the fastbox) while the next one in order is there.
Status Engine::DrainInOrder(int src) {
  for (bool moved = true; moved;) {
    moved = false;
    std::vector<Cell*>& held = held_[src];
    for (size_t i = 0; i < held.size(); ++i) {
      MsgHeader h;
      std::memcpy(&h, held[i]->hdr, sizeof h);
      if (h.seq != seq_in_[src]) continue;
      Cell* cell = held[i];
      held.erase(held.begin() + static_cast<long>(i));
      Status st = HandleMessage(h, cell->payload());
      queues_.Free(cell);
      ++seq_in_[src];
      MPIGPU_RETURN_IF_ERROR(st);
      moved = true;
      break;
    }
    if (!moved) MPIGPU_RETURN_IF_ERROR(TakeFastboxInOrder(src, &moved));
  }
  return Status::Ok();
}

Status Engine::HandleMessage(const MsgHeader& h, const unsigned char* payload) {
  if ((h.flags & kFlagBoxOn) && !box_from_[h.src]) {  // its later messages may use the fastbox
    box_from_[h.src] = 1;
    box_sources_.push_back(h.src);
  }
  switch (h.type) {
    case MsgType::kEager:
    case MsgType::kRts: {
      Request* req = posted_.FindAndRemove(EnvelopeOf(h));
      if (req == nullptr) {
        auto* u = new Unexpected();
        u->key = EnvelopeOf(h);
        u->hdr = h;
        if (h.type == MsgType::kEager) u->payload.assign(payload, payload + h.bytes);
        if (h.type == MsgType::kRts && (h.flags & kFlagIpc))
          u->payload.assign(payload, payload + sizeof(IpcOffer));
        unexpected_.PushBack(u);
      } else {
        if (req->peer_ == kAnySource) {
          req->peer_ = h.src;
          ++outstanding_[h.src];
        }
        if (h.type == MsgType::kEager) DeliverEager(req, h, payload);
        else StartRendezvousRecv(req, h, payload);
      }
      break;
    }
    case MsgType::kPutDone: {
      auto* req = reinterpret_cast<Request*>(h.addr);
      if (waiting_puts_.erase(req) == 0 || req->state_ != Request::State::kWaitPut) {
        MPIGPU_WARN("dropping a put notice from rank %d for no waiting receive", h.src);
        break;
      }
      if (h.flags & kFlagCopyError) {
        Complete(req, PeerCopyError(h.src));
      } else if (h.flags & kFlagFailed) {
        FallBackToRing(req);
      } else {
        Complete(req, TruncationOf(req->info_, req->bytes_));
      }
      break;
    }
    case MsgType::kRingAbort:
      if (h.flags & kFlagRingReceiver) FailRingSends(h.src, RingBroken(rank_, h.src));
      else AbortRecvRing(h.src, RingBroken(h.src, rank_));
      break;
    case MsgType::kCts:
    case MsgType::kIpcPut:
    case MsgType::kCmaGo:
    case MsgType::kFin: {
      // The id names one of our sends waiting for this answer; anything else is a stale or
      // corrupt message and is dropped rather than trusted.
      auto* req = reinterpret_cast<Request*>(h.sreq);
      if (waiting_sends_.count(req) == 0 || req->state_ != Request::State::kWaitCts) {
        MPIGPU_WARN("dropping a control message (type %d) from rank %d for no waiting send",
                    static_cast<int>(h.type), h.src);
        break;
      }
      if (h.type == MsgType::kIpcPut) {
        IpcOffer offer;
        std::memcpy(&offer, payload, sizeof offer);
        Status st = StartIpcPut(req, h, offer.ipc);
        if (!st.ok()) {  // tell the receiver to use the ring; this send then waits for its CTS
          IpcUnavailable(st);
          OutMsg no = Control(h.src, MsgType::kPutDone);
          no.hdr.flags = kFlagFailed;
          no.hdr.addr = h.addr;
          (void)SendOrQueue(no);
        }
        break;
      }
      if (h.type == MsgType::kCmaGo) {
        if (h.unit == 0 || h.bytes > req->bytes_) {
          Complete(req, Status(Err::kInternal, "malformed cooperative-copy request"));
          break;
        }
        req->coop_ = true;
        req->gen_ = h.block;
        req->remote_ = h.addr;
        req->total_ = h.bytes;
        req->chunk_ = h.unit;
        req->state_ = Request::State::kLmt;
        lmt_active_.push_back(req);
        break;
      }
      Status st = h.type == MsgType::kCts ? StartRingSend(req, h) : Status::Ok();
      if (h.type == MsgType::kFin && req->notify_slot_ != kNoNotify)
        DropNotifySlot(req, /*reusable=*/true);  // a FIN: the receiver stores no token for it
      if (h.type == MsgType::kFin && (h.flags & kFlagCopyError))
        st = PeerCopyError(h.src);
      if (h.type == MsgType::kFin || !st.ok()) Complete(req, st);
      if (h.type == MsgType::kCts && !st.ok()) {  // the receiver waits for this one's units
        FailRingSends(h.src, RingBroken(rank_, h.src));
        SendRingAbort(h.src, false);
      }
      break;
    }
    default:
      return Status(Err::kInternal, "message of unknown type " +
                                        std::to_string(static_cast<int>(h.type)) + " from rank " +
                                        std::to_string(h.src));
  }
  return Status::Ok();
}

// Copies what fits of an eager message into `buf` (`capacity` packed bytes) and fills *info;
// the copy's error, else kTruncate when the message was longer.
Status Engine::UnpackEager(const MsgHeader& h, const void* payload, const UserBuffer& buf,
                           size_t capacity, MsgInfo* info) {
  *info = MsgInfo{h.src, h.tag, h.bytes};
  const size_t n = std::min<size_t>(h.bytes, capacity);
  Status st = CopyPackedNow(PackDir::kUnpack, buf, n, const_cast<void*>(payload));
  return st.ok() ? TruncationOf(*info, capacity) : st;
}

void Engine::DeliverEager(Request* req, const MsgHeader& h, const void* payload) {
  Complete(req, UnpackEager(h, payload, req->buf_, req->bytes_, &req->info_));
}

void Engine::StartRendezvousRecv(Request* req, const MsgHeader& h, const unsigned char* payload) {
  req->info_ = MsgInfo{h.src, h.tag, h.bytes};
  req->peer_cookie_ = h.sreq;
  req->peer_loc_ = h.loc;
  req->peer_addr_ = h.addr;
  req->peer_block_ = h.block;
  req->peer_contig_ = h.contiguous != 0;
  const size_t n = std::min<size_t>(h.bytes, req->bytes_);

  // CUDA IPC: one copy straight out of the sender's device buffer, or into ours.
  if (h.flags & kFlagIpc) {
    IpcOffer offer;
    std::memcpy(&offer, payload, sizeof offer);
    if (TryIpcPull(req, h, offer)) return;
  } else if (TryIpcPutRequest(req, h)) {
    return;
  }

  // CMA: one copy straight out of the sender's host buffer.
  const bool cma_fits = req->peer_contig_ && req->peer_loc_.is_host() && req->buf_.loc.is_host() &&
                        req->buf_.layout.contiguous();
  if (cma_fits && cma_ok_ &&
      (config_->lmt == LmtMode::kAuto || config_->lmt == LmtMode::kCma)) {
    // Large ones are shared with the sender, once one plain copy showed the kernel allows it.
    if (cma_verified_ && config_->cma_chunk > 0 && n >= 2 * config_->cma_chunk) {
      req->coop_ = true;
      req->total_ = n;
      req->chunk_ = config_->cma_chunk;
      req->state_ = Request::State::kLmtWait;
      lmt_wait_[h.src].push_back(req);
      TryStartRingRecv(h.src);
      return;
    }
    const pid_t pid = job_.pid(h.src);
    const size_t done = CmaCopy(true, pid, static_cast<char*>(req->buf_.ptr), h.addr, n);
    if (done == n) {
      cma_verified_ = true;
      OutMsg fin = Control(h.src, MsgType::kFin);
      fin.hdr.sreq = h.sreq;
      (void)SendOrQueue(fin);
      Complete(req, TruncationOf(req->info_, req->bytes_));
      return;
    }
    if (done == 0 && (errno == EPERM || errno == ENOSYS || errno == EFAULT)) {
      cma_ok_ = false;
      MPIGPU_INFO("process_vm_readv is refused (%s): large host messages use the shared ring",
                  std::strerror(errno));
    } else {
      Complete(req, errno == ESRCH ? PeerDied(h.src) : SysError("process_vm_readv from the sender's buffer"));
      return;
    }
  }
  FallBackToRing(req);
}

}  // namespace mpigpu::transport

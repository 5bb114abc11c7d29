#include "transport/engine.h"

#include <sys/uio.h>
#include <time.h>
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
#include "transport/launcher_link.h"
#include "transport/wire.h"

namespace mpigpu::transport {

// A message waiting for a free cell.
struct Engine::OutMsg {
  int dst = -1;
  MsgHeader hdr{};
  Request* req = nullptr;  // eager: packed at send time and completed; RTS: waits for CTS/FIN
  const UserBuffer* data = nullptr;  // eager: the buffer packed into the slot or cell
  bool has_ipc = false;    // RTS with kFlagIpc, IpcPut: `offer` travels as the payload
  IpcOffer offer;          // set (and read) only with has_ipc: no zeroing on the eager path
};

// The ring of one ordered pair, mapped in this process. The receiver creates its region.
struct Engine::RingPair {
  ShmSegment region;
  LmtRing ring;
  bool creator = false;
  bool pinned = false;
  uint64_t token = 0;  // the random part of its name (RingSegmentName)
  // Receiver: unit size and end slot of the last transfer given a CTS (the chain rule of
  // ringbuf/lmt_ring.h); chain_unit 0 until the first.
  size_t chain_unit = 0;
  size_t chain_slot = 0;
  // Receiver: a transfer failed part-way and may have left units in the ring; later ring
  // transfers from this sender fail instead of reading them.
  bool broken = false;
};

namespace {

// A request whose single copy failed on the peer's side (kFlagCopyError).
Status PeerCopyError(int peer) {
  return Status(Err::kInternal,
                "rank " + std::to_string(peer) + " could not copy this message (see its error)");
}

// A ring transfer that fails because another one on the same ring failed part-way.
Status RingBroken(int sender, int receiver) {
  return Status(Err::kInternal, "the shared ring from rank " + std::to_string(sender) +
                                    " to rank " + std::to_string(receiver) +
                                    " failed in a transfer (see the first error)");
}

double Now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

MatchKey EnvelopeOf(const MsgHeader& h) { return MatchKey{h.context, h.src, h.tag}; }

// A process-independent name for a CUDA device (device ordinals differ between processes with
// different CUDA_VISIBLE_DEVICES): a hash of its UUID; 0 for none.
uint64_t GpuIdentity(int device) {
  cudaDeviceProp p{};
  if (device < 0 || cudaGetDeviceProperties(&p, device) != cudaSuccess) return 0;
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : p.uuid.bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h | 1;
}

// kTruncate when the message was longer than the receive buffer, else ok.
Status TruncationOf(const MsgInfo& m, size_t cap) {
  if (m.bytes <= cap) return Status::Ok();
  return Status(Err::kTruncate, "message of " + std::to_string(m.bytes) + " bytes from rank " +
                                    std::to_string(m.source) + " (tag " + std::to_string(m.tag) +
                                    ") is longer than the receive buffer (" + std::to_string(cap) +
                                    " bytes)");
}

}  // namespace

Engine::~Engine() {
  (void)StopGpuCopier();
  if (eager_pinned_) (void)UnpinHostRange(eager_mem_);
  for (auto& [key, pair] : rings_)
    if (pair->pinned) (void)UnpinHostRange(pair->ring.data());
  for (Request* r : free_requests_) delete r;
  for (std::vector<Cell*>& held : held_)
    for (Cell* c : held) queues_.Free(c);
  while (Unexpected* u = unexpected_.front()) {
    unexpected_.Remove(u);
    delete u;
  }
}

Status Engine::Create(const JobInfo& job, std::unique_ptr<Engine>* out) {
  std::unique_ptr<Engine> e(new Engine());
  Status st = e->Bootstrap(job);
  if (!st.ok()) {
    // The creator removes the job's name whatever went wrong (a peer that never came, a bad
    // setting), so a rerun with the same job id does not find it taken.
    e->job_.Abandon();
    return st;
  }
  *out = std::move(e);
  return Status::Ok();
}

Status Engine::Bootstrap(const JobInfo& job) {
  config_ = &GetTransportConfig();
  MPIGPU_RETURN_IF_ERROR(ConfigStatus());  // a refused MPIGPU_* value (memcopy/params.h)
  rank_ = job.rank;
  size_ = job.size;
  SetLogRank(rank_);
  eager_max_ = std::min(config_->eager_limit, config_->cell_size);
  if (config_->eager_limit > config_->cell_size)
    MPIGPU_INFO("MPIGPU_EAGER_LIMIT (%zu) is above MPIGPU_CELL_SIZE (%zu): eager messages stop at %zu",
                config_->eager_limit, config_->cell_size, eager_max_);

  // Our areas behind the job's rank table: notify words | cell queues, each 4096-aligned, then
  // the segment's sparse tail, which gets memory only where touched: the fastboxes and the CMA
  // slots of the pairs (one line each, n^2). A pair's slots get memory when it first uses them
  // (StartCoopRecv, Fastboxes::PreparePair), so n^2 structures cost only for the pairs that talk.
  notify_bytes_ = RoundUp(sizeof(uint32_t) * kNotifySlots * size_, 4096);
  const size_t queue_bytes = CellQueues::BytesFor(size_, config_->cells_per_rank, config_->cell_size);
  if (queue_bytes == 0)
    return Status(Err::kInvalidArg, "MPIGPU_CELLS_PER_RANK / MPIGPU_CELL_SIZE out of range");
  const size_t cma_bytes = RoundUp(sizeof(CmaSlot) * size_ * size_, 4096);
  // A slot holds MPIGPU_FASTBOX_SIZE payload bytes behind either header (see TrySend).
  const size_t fbox_data = config_->fastbox_size + sizeof(MsgHeader);
  const size_t fbox_bytes =
      config_->fastbox_size ? RoundUp(Fastboxes::BytesFor(size_, fbox_data), 4096) : 0;
  if (config_->fastbox_size && fbox_bytes == 0)
    return Status(Err::kInvalidArg, "MPIGPU_FASTBOX_SIZE out of range");
  const int timeout_ms = BootstrapTimeoutMs(*config_);
  const size_t dense_bytes = notify_bytes_ + RoundUp(queue_bytes, 4096);
  char* mem = nullptr;
  MPIGPU_RETURN_IF_ERROR(job_.Open(job, dense_bytes, cma_bytes + fbox_bytes, timeout_ms, &mem));
  // Zero-filled by the segment's creation, as every rank's atomics here.
  notify_words_ = reinterpret_cast<std::atomic<uint32_t>*>(mem);
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "the GPU stores plain words");
  char* queue_mem = mem + notify_bytes_;
  char* fbox_mem = mem + dense_bytes;
  cma_slots_ = reinterpret_cast<CmaSlot*>(fbox_mem + fbox_bytes);
  // Pinned on first use by a GPU buffer: the cells, and the fastboxes while they are few
  // (pinning faults every page in).
  eager_mem_ = queue_mem;
  eager_bytes_ = RoundUp(queue_bytes, 4096) + (fbox_bytes <= kPinnedFastboxBytes ? fbox_bytes : 0);
  if (rank_ == 0) {
    if (fbox_bytes)
      MPIGPU_RETURN_IF_ERROR(
          Fastboxes::Format(fbox_mem, fbox_bytes, size_, fbox_data, rank_, &fastboxes_));
    MPIGPU_RETURN_IF_ERROR(CellQueues::Format(queue_mem, queue_bytes, size_,
                                              config_->cells_per_rank, config_->cell_size, &queues_));
  } else {
    // Format runs before the queues publish their magic, which CellQueues::Attach waits for.
    MPIGPU_RETURN_IF_ERROR(CellQueues::Attach(queue_mem, queue_bytes, &queues_, timeout_ms));
    if (fbox_bytes)
      MPIGPU_RETURN_IF_ERROR(Fastboxes::Attach(fbox_mem, fbox_bytes, rank_, &fastboxes_));
  }
  for (uint32_t i = kNotifySlots; i > 0; --i) notify_free_.push_back(i - 1);
  int device = -1;
  if (CudaDeviceCount() > 0 && cudaGetDevice(&device) != cudaSuccess) device = -1;
  MPIGPU_RETURN_IF_ERROR(job_.Join(device, GpuIdentity(device),
                                   static_cast<double>(config_->bootstrap_timeout_s)));
  // A resident kernel time-slices with the kernels of every other process on its GPU (no MPS):
  // with a GPU shared by several ranks the copier would stall them all, so it stays off.
  // MPIGPU_GPU_COPIER_SHARED keeps it (MPS).
  const uint64_t my_gpu = job_.gpu_id(rank_);
  shares_gpu_.assign(size_, false);
  for (int r = 0; r < size_ && my_gpu != 0 && !config_->gpu_copier_shared; ++r)
    if (r != rank_ && job_.gpu_id(r) == my_gpu) {
      shares_gpu_[r] = true;
      if (gpu_copier_ok_) MPIGPU_INFO("rank %d shares this GPU: the resident copy kernel stays off", r);
      gpu_copier_ok_ = false;
    }

  pending_.resize(size_);
  seq_out_.assign(size_, 0);
  cma_gen_.assign(size_, 0);
  seq_in_.assign(size_, 0);
  held_.resize(size_);
  lmt_wait_.resize(size_);
  lmt_recv_active_.assign(size_, nullptr);
  lmt_recv_next_.assign(size_, nullptr);
  lmt_send_active_.assign(size_, nullptr);
  lmt_send_queue_.resize(size_);
  peer_failed_.assign(size_, false);
  outstanding_.assign(size_, 0);
  probe_watch_.assign(size_, false);
  box_to_.assign(size_, kBoxOff);
  box_from_.assign(size_, 0);
  MPIGPU_INFO("joined job %s: rank %d of %d, eager <= %zu B, %zu cells per rank",
              job_.jobid().c_str(), rank_, size_, eager_max_, config_->cells_per_rank);
  LauncherLinkJoined(rank_);  // mpigpurun: this rank is in the job
  return Status::Ok();
}

// ---- requests ----

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
  // A contiguous device buffer is offered for a single copy through CUDA IPC: the receiver
  // pulls it in one copy (D->D over NVLink, or D->H) instead of two staged ones.
  if (bytes > 0 && buf.loc.is_device() && OffersIpc(dst, bytes) &&
      ExportDeviceBuffer(buf.ptr, &msg.offer.ipc).ok()) {
    msg.has_ipc = true;
    msg.hdr.flags = kFlagIpc;
    msg.offer.count = buf.layout.count;
    msg.offer.block = buf.layout.block;
    msg.offer.stride = buf.layout.stride;
    msg.offer.notify_slot = kNoNotify;
    msg.offer.notify_token = 0;
    if (!notify_free_.empty()) {  // else the receiver answers with a FIN
      if (++notify_tokens_ == 0) ++notify_tokens_;
      req->notify_slot_ = msg.offer.notify_slot = notify_free_.back();
      req->notify_token_ = msg.offer.notify_token = notify_tokens_;
      notify_free_.pop_back();
      notify_waits_.push_back(req);
    }
  }
  if (bytes > eager_max_ || msg.has_ipc) {
    msg.hdr.type = MsgType::kRts;
    msg.hdr.contiguous = buf.layout.contiguous();
    msg.hdr.block = buf.layout.contiguous() ? 0 : static_cast<uint32_t>(buf.layout.block);
    msg.hdr.addr = reinterpret_cast<uint64_t>(buf.ptr);
    msg.hdr.loc = buf.loc;
    req->state_ = Request::State::kWaitCts;
  }
  return SendOrQueue(msg);
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
  if (!fastboxes_.valid()) return;
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
  // A probe waits on its source like a receive: the peer check watches it from now on.
  if (src == kAnySource) probe_any_ = true;
  else probe_watch_[src] = true;
  MPIGPU_RETURN_IF_ERROR(Progress());
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

void Engine::Release(Request* req) {
  if (req == nullptr) return;
  if (req->done_) FreeRequest(req);
  else req->released_ = true;
}

void Engine::Complete(Request* req, Status st) {
  if (req->done_) return;
  req->status_.KeepFirst(std::move(st));
  if (req->notify_slot_ != kNoNotify) DropNotifySlot(req, req->status_.ok());
  if (req->kind_ == Request::Kind::kSend) {
    if (req->state_ != Request::State::kQueued) waiting_sends_.erase(req);  // eager ones never were
  } else if (req->state_ == Request::State::kWaitPut) {
    waiting_puts_.erase(req);
  }
  req->state_ = Request::State::kDone;
  req->done_ = true;
  req->lmt_.reset();
  if (req->peer_ >= 0) --outstanding_[req->peer_];
  if (req->released_) FreeRequest(req);
}

// The send no longer waits on its notify slot. The slot is free again when the receiver can no
// longer store into it: it answered (by token, or by a FIN, which it sends only for a copy that
// stored no token and never will). After other failures (a dead peer) a late store could
// complete another send: the slot is dropped for good.
void Engine::DropNotifySlot(Request* req, bool reusable) {
  notify_waits_.erase(std::find(notify_waits_.begin(), notify_waits_.end(), req));
  if (reusable) notify_free_.push_back(req->notify_slot_);
  req->notify_slot_ = kNoNotify;
}

Status Engine::Wait(Request* req, double timeout_s) {
  const double deadline = timeout_s < 0 ? -1 : Now() + timeout_s;
  while (!req->done_) {
    MPIGPU_RETURN_IF_ERROR(Progress());
    if (deadline > 0 && Now() > deadline) return Status(Err::kTimeout, "request did not complete");
  }
  return Status::Ok();
}

// ---- sending ----

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

// ---- receiving ----

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
      Complete(req, SysError("process_vm_readv from the sender's buffer"));
      return;
    }
  }
  FallBackToRing(req);
}

void Engine::FallBackToRing(Request* req) {
  req->state_ = Request::State::kLmtWait;
  lmt_wait_[req->info_.source].push_back(req);
  TryStartRingRecv(req->info_.source);
}

void Engine::IpcUnavailable(const Status& why) {
  if (!ipc_ok_) return;
  ipc_ok_ = false;
  MPIGPU_INFO("CUDA IPC is not usable here (%s): GPU buffers use the shared ring",
              why.ToString().c_str());
}

// Maps a peer's exported buffer on this process's current device; `*copier` is that device's
// copy engine and `*loc` where the mapping lives.
Status Engine::IpcMap(int peer, const IpcExport& e, void** ptr, CopyEngine** copier, MemLoc* loc) {
  int device = -1;
  if (CudaDeviceCount() == 0) return Status(Err::kNoGpu, "no CUDA device to map a peer buffer on");
  MPIGPU_CUDA_CHECK(cudaGetDevice(&device));
  if (!ipc_cache_) ipc_cache_ = std::make_unique<IpcCache>(config_->ipc_cache_size);
  MPIGPU_RETURN_IF_ERROR(ipc_cache_->Map(peer, e, ptr));
  *loc = MemLoc::Device(device);
  Status st = CopierFor(*loc, copier);
  if (!st.ok()) (void)ipc_cache_->Release(peer, e);
  return st;
}

namespace {

// The copy from a buffer laid out as `src` into one laid out as `dst`, of the first n packed
// bytes, as one strided copy (rows of `width` bytes), when the two shapes allow it.
bool AsOneStridedCopy(const Layout& dst, const Layout& src, size_t n, CopyDesc* d) {
  const bool dc = dst.contiguous(), sc = src.contiguous();
  if (dc && sc) {
    d->dpitch = d->spitch = d->width = n;
    d->height = 1;
    return true;
  }
  const size_t block = dc ? src.block : dst.block;
  if ((!dc && !sc && dst.block != src.block) || block == 0 || n % block != 0) return false;
  d->width = block;
  d->height = n / block;
  d->dpitch = dc ? block : dst.stride;
  d->spitch = sc ? block : src.stride;
  return true;
}

}  // namespace

// One copy for a single-copy transfer: on the resident kernel when it is small (or strided and
// not large: the copy engine moves narrow rows slowly) and both ends are this GPU's memory, else
// on the copy engine. Sets the request's ticket.
Status Engine::IssueSingleCopy(Request* req, const CopyDesc& d, MemLoc dst_loc, MemLoc src_loc,
                               CopyEngine* engine) {
  const size_t bytes = d.width * d.height;
  const size_t limit = d.height > 1 ? config_->gpu_copier_strided_max : config_->gpu_copier_max;
  if (gpu_copier_ok_ && bytes <= limit && limit > 0 && dst_loc.is_device() &&
      src_loc.is_device()) {
    if (!gpu_copier_.ready()) {
      const bool notify = NotifyMapped();
      Status st = gpu_copier_.Init(dst_loc.device, config_->gpu_copier_idle_us,
                                   notify ? notify_dev_ : nullptr, kNotifySlots * size_);
      if (!st.ok()) {
        gpu_copier_ok_ = false;
        MPIGPU_INFO("resident copy kernel unavailable (%s): copy engine only", st.ToString().c_str());
      }
    }
    bool queued = false;
    // The kernel copies on its own GPU: both ends must be that GPU's memory (or mapped on it).
    if (gpu_copier_ok_ && dst_loc.device == gpu_copier_.device() &&
        src_loc.device == gpu_copier_.device()) {
      // A pull whose sender offered a notify slot: the kernel completes the send itself.
      CopyDesc dn = d;
      if (req->peer_notify_slot_ != kNoNotify && notify_dev_ != nullptr) {
        dn.notify_index = PeerNotifyIndex(*req);
        dn.notify_value = req->peer_notify_token_;
      }
      Status st = gpu_copier_.Submit(dn, &req->ticket_, &queued);
      if (!st.ok()) {  // it cannot run here (e.g. launch refused): the copy engine does it all
        gpu_copier_ok_ = false;
        queued = false;
        MPIGPU_WARN("resident copy kernel failed (%s): copy engine only from now on",
                    st.ToString().c_str());
      }
      // Only a copy the kernel took stores the token; any other ends with a FIN.
      req->notifies_peer_ = queued && dn.notify_index != kNoNotifyIndex;
    }
    if (queued) {
      req->on_gpu_copier_ = true;
      return Status::Ok();
    }
  }
  if (d.height == 1)
    MPIGPU_RETURN_IF_ERROR(engine->Issue(d.dst, dst_loc, d.src, src_loc, d.width));
  else
    MPIGPU_RETURN_IF_ERROR(engine->Issue2D(d.dst, dst_loc, d.dpitch, d.src, src_loc, d.spitch,
                                           d.width, d.height));
  return engine->Mark(&req->ticket_);
}

// Receiver: a single copy out of the sender's buffer failed; the send `sreq` of rank `src` ends
// with an error instead of waiting for a FIN.
void Engine::TellCopyFailed(int src, uint64_t sreq) {
  OutMsg fin = Control(src, MsgType::kFin);
  fin.hdr.sreq = sreq;
  fin.hdr.flags = kFlagCopyError;
  (void)SendOrQueue(fin);
}

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

// Receiver: copy the sender's device buffer (mapped) into ours, then FIN.
bool Engine::TryIpcPull(Request* req, const MsgHeader& h, const IpcOffer& offer) {
  if (!ipc_ok_) return false;
  const size_t n = std::min<size_t>(h.bytes, req->bytes_);
  const Layout send_shape{offer.count, offer.block, offer.stride};
  CopyDesc d{req->buf_.ptr, nullptr, 0, 0, 0, 0};
  const bool one_copy = AsOneStridedCopy(req->buf_.layout, send_shape, n, &d);
  if (!one_copy && !req->buf_.layout.contiguous() && !send_shape.contiguous())
    return false;  // two different vector shapes: the ring's pipeline repacks them
  void* peer_ptr = nullptr;
  MemLoc peer_loc;
  CopyEngine* copier = nullptr;
  Status st = IpcMap(h.src, offer.ipc, &peer_ptr, &copier, &peer_loc);
  if (!st.ok()) {
    IpcUnavailable(st);
    return false;
  }
  if (one_copy) {
    d.src = peer_ptr;
    if (offer.notify_slot < kNotifySlots) {
      req->peer_notify_slot_ = offer.notify_slot;
      req->peer_notify_token_ = offer.notify_token;
    }
    st = IssueSingleCopy(req, d, req->buf_.loc, peer_loc, copier);
  } else {  // one side contiguous, the other a vector cut mid-block (truncation)
    st = req->buf_.layout.contiguous()
             ? CopyPacked(*copier, PackDir::kPack, peer_ptr, peer_loc, send_shape, 0, n,
                          req->buf_.ptr, req->buf_.loc)
             : CopyPacked(*copier, PackDir::kUnpack, req->buf_.ptr, req->buf_.loc,
                          req->buf_.layout, 0, n, peer_ptr, peer_loc);
    if (st.ok()) st = copier->Mark(&req->ticket_);
  }
  if (!st.ok()) {
    (void)ipc_cache_->Release(h.src, offer.ipc);
    Complete(req, st);  // a copy error on our side: nothing to fall back to
    TellCopyFailed(h.src, h.sreq);
    return true;
  }
  req->ipc_ = offer.ipc;
  req->ipc_copier_ = copier;
  req->state_ = Request::State::kIpcCopy;
  lmt_active_.push_back(req);
  return true;
}

// CUDA IPC works here and MPIGPU_LMT allows it (auto, or forced).
bool Engine::IpcAllowed() const {
  return ipc_ok_ && (config_->lmt == LmtMode::kAuto || config_->lmt == LmtMode::kIpc);
}

bool Engine::OffersIpc(int peer, size_t bytes) const {
  if (!IpcAllowed()) return false;
  if (config_->lmt == LmtMode::kIpc) return true;
  return !(peer >= 0 && peer < size_ && shares_gpu_[peer] && bytes < config_->shared_gpu_ipc_min);
}

// Receiver with a contiguous device buffer, sender with a host buffer: the sender copies H2D
// straight into our buffer (pinned sources reach the PCIe limit).
bool Engine::TryIpcPutRequest(Request* req, const MsgHeader& h) {
  if (!IpcAllowed() || !req->buf_.loc.is_device() || !req->buf_.layout.contiguous() ||
      !h.loc.is_host() || job_.gpu(h.src) < 0)
    return false;
  OutMsg put;
  if (!ExportDeviceBuffer(req->buf_.ptr, &put.offer.ipc).ok()) return false;
  put.offer.count = 1;
  put.offer.block = put.offer.stride = req->buf_.layout.packed_bytes();
  put.offer.notify_slot = kNoNotify;
  put.offer.notify_token = 0;
  put.has_ipc = true;
  put.dst = h.src;
  put.hdr.type = MsgType::kIpcPut;
  put.hdr.src = rank_;
  put.hdr.sreq = h.sreq;
  put.hdr.addr = reinterpret_cast<uint64_t>(req);
  put.hdr.bytes = std::min<size_t>(h.bytes, req->bytes_);
  req->state_ = Request::State::kWaitPut;
  waiting_puts_.insert(req);
  (void)SendOrQueue(put);
  return true;
}

// Sender: copy our (host) buffer into the receiver's mapped device buffer.
Status Engine::StartIpcPut(Request* req, const MsgHeader& h, const IpcExport& e) {
  if (!ipc_ok_) return Status(Err::kInternal, "CUDA IPC already found unusable");
  if (h.bytes > req->bytes_) return Status(Err::kInternal, "put larger than the send");
  void* peer_ptr = nullptr;
  MemLoc peer_loc;
  CopyEngine* copier = nullptr;
  MPIGPU_RETURN_IF_ERROR(IpcMap(h.src, e, &peer_ptr, &copier, &peer_loc));
  Status st = CopyPacked(*copier, PackDir::kPack, req->buf_.ptr, req->buf_.loc, req->buf_.layout,
                         0, h.bytes, peer_ptr, peer_loc);
  if (st.ok()) st = copier->Mark(&req->ticket_);
  if (!st.ok()) {
    (void)ipc_cache_->Release(h.src, e);
    return st;
  }
  req->ipc_ = e;
  req->ipc_copier_ = copier;
  req->peer_req_ = h.addr;
  req->state_ = Request::State::kIpcCopy;
  lmt_active_.push_back(req);
  return Status::Ok();
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
  MPIGPU_RETURN_IF_ERROR(CmaCopyChunks(slot, req->gen_, recv,
                                       job_.pid(peer),
                                       static_cast<char*>(req->buf_.ptr),
                                       recv ? req->peer_addr_ : req->remote_, req->total_,
                                       req->chunk_));
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

// ---- progress and peers ----

Status Engine::Progress() {
  if (in_progress_) return Status::Ok();
  in_progress_ = true;
  Status st;
  st = PollArrivals();
  if (!notify_waits_.empty()) PollNotifies();
  if (st.ok() && pending_count_ > 0) st = FlushPending();
  if (st.ok() && !lmt_active_.empty()) st = AdvanceLmts();
  // Peers are checked every ~20 ms; the clock is read only every 256th call, since reading it
  // can cost more than the rest of an idle progress call.
  if ((++progress_calls_ & 255) == 0) {
    const double now = Now();
    if (now >= next_peer_check_) {
      next_peer_check_ = now + 0.02;
      CheckPeers();
      CheckGpuCopier();
    }
  }
  in_progress_ = false;
  return st;
}

// Receiver: whether our kernel stored the token of the send that `req` pulls from.
bool Engine::PeerTokenStored(const Request& req) const {
  return notify_words_[PeerNotifyIndex(req)].load(std::memory_order_acquire) ==
         req.peer_notify_token_;
}

// The resident kernel's health, asked of the driver on the peer-check cadence: a fault (a copy
// through a bad address) is sticky, and AdvanceLmts then fails the copies that were queued on it.
void Engine::CheckGpuCopier() {
  if (!gpu_copier_ok_ || !gpu_copier_.ready()) return;
  Status st = gpu_copier_.Check();
  if (st.ok()) return;
  gpu_copier_ok_ = false;
  MPIGPU_WARN("resident copy kernel faulted (%s): its copies fail", st.ToString().c_str());
}

// Sends whose receiver copies on its resident kernel: done when our token is in their slot.
void Engine::PollNotifies() {
  for (size_t i = 0; i < notify_waits_.size();) {
    Request* req = notify_waits_[i];
    const uint32_t word =
        notify_words_[NotifyIndex(rank_, req->notify_slot_)].load(std::memory_order_acquire);
    if (word == req->notify_token_) {
      ++stats_.sends_notified;
      Complete(req, Status::Ok());  // takes it out of notify_waits_
    } else {
      ++i;
    }
  }
}

// Pins the notify region (every rank's slots) into this process's GPU address space, once, so
// the resident kernel can store into a sender's slot.
bool Engine::NotifyMapped() {
  if (notify_dev_ != nullptr || !notify_ok_) return notify_dev_ != nullptr;
  void* dev = nullptr;
  Status st = PinHostRange(notify_words_, notify_bytes_, /*mapped=*/true);
  if (st.ok()) {
    const cudaError_t e = cudaHostGetDevicePointer(&dev, notify_words_, 0);
    if (e != cudaSuccess) {
      st = CudaFailure("cudaHostGetDevicePointer", e);
      (void)UnpinHostRange(notify_words_);
    }
  }
  if (!st.ok()) {
    notify_ok_ = false;
    MPIGPU_INFO("notify words not mapped for the GPU (%s): device sends complete by FIN",
                st.ToString().c_str());
    return false;
  }
  notify_dev_ = static_cast<uint32_t*>(dev);
  return true;
}

// Ends the resident kernel, then unpins the notify region it may store into.
Status Engine::StopGpuCopier() {
  Status st = gpu_copier_.Stop();
  if (notify_dev_ != nullptr) {
    notify_dev_ = nullptr;
    st.KeepFirst(UnpinHostRange(notify_words_));
  }
  return st;
}

bool Engine::PeerAlive(int rank) {
  if (rank < 0 || rank >= size_ || peer_failed_[rank]) return false;
  if (rank == rank_) return true;
  return job_.Alive(rank);
}

void Engine::SetContextMembers(int context, const std::vector<int>& world_ranks) {
  std::vector<bool>& members = context_members_[context];
  members.assign(size_, false);
  for (int r : world_ranks)
    if (r >= 0 && r < size_) members[r] = true;
}

void Engine::CheckPeers() {
  ExitIfLauncherGone(rank_);  // mpigpurun died (SIGKILL): nobody else would end this rank
  bool any_source_waiting = probe_any_;
  posted_.ForEach([&](Request* r) { any_source_waiting |= r->peer_ == kAnySource; });
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || peer_failed_[r]) continue;
    const bool waited_on = outstanding_[r] > 0 || probe_watch_[r];
    if (!waited_on && !any_source_waiting) continue;
    if (job_.Finalized(r) && !waited_on)
      continue;
    if (PeerAlive(r)) continue;
    // What it sent before it died may have arrived after this progress call last looked: take
    // it in first, so that no receive or probe fails while its message is waiting.
    for (int budget = 1 << 14; budget > 0; --budget) {
      if (!PollArrivals().ok() || !queues_.Pending(rank_)) break;
    }
    FailPeer(r, "rank " + std::to_string(r) + " (pid " +
                    std::to_string(job_.pid(r)) + ") died");
  }
}

void Engine::FailPeer(int rank, const std::string& why) {
  if (rank < 0 || rank >= size_ || peer_failed_[rank]) return;
  peer_failed_[rank] = true;
  MPIGPU_WARN("%s: failing the requests that depend on it", why.c_str());
  const Status st(Err::kPeerFailed, why);
  for (OutMsg& m : pending_[rank])
    if (m.req != nullptr) Complete(m.req, st);
  pending_count_ -= pending_[rank].size();
  pending_[rank].clear();
  for (Request* r : lmt_wait_[rank]) Complete(r, st);
  FailRingSends(rank, st);
  if (Request* next = std::exchange(lmt_recv_next_[rank], nullptr)) Complete(next, st);
  std::vector<Request*> puts(waiting_puts_.begin(), waiting_puts_.end());
  for (Request* r : puts)
    if (r->peer_ == rank) Complete(r, st);
  lmt_wait_[rank].clear();
  posted_.ForEach([&](Request* r) {
    if (r->peer_ == rank || (r->peer_ == kAnySource && ContextHas(r->context_, rank))) {
      posted_.Remove(r);
      Complete(r, st);
    }
  });
  for (auto it = lmt_active_.begin(); it != lmt_active_.end();) {
    if ((*it)->peer_ == rank) {
      Complete(*it, st);
      it = lmt_active_.erase(it);
    } else {
      ++it;
    }
  }
  lmt_recv_active_[rank] = nullptr;
  // Sends waiting for a CTS or FIN from the dead peer (Complete edits the set: copy first).
  std::vector<Request*> waiting(waiting_sends_.begin(), waiting_sends_.end());
  for (Request* r : waiting)
    if (r->peer_ == rank) Complete(r, st);
}

Status Engine::Finalize() {
  if (finalized_) return Status::Ok();
  const double deadline = Now() + config_->bootstrap_timeout_s;
  Status st;
  // 1. Our sends must finish: peers may still need our buffers (CMA, ring).
  // 0. Receives nobody matched are abandoned (the program never waited for them).
  posted_.ForEach([&](Request* r) {
    posted_.Remove(r);
    Complete(r, Status(Err::kInvalidArg, "receive still posted at finalize: cancelled"));
  });
  // Single copies we run for a peer count too: its send waits for their FIN or token.
  auto sends_busy = [&] {
    if (pending_count_ > 0 || !waiting_sends_.empty()) return true;
    for (Request* r : lmt_active_)
      if (r->kind_ == Request::Kind::kSend || r->state_ == Request::State::kIpcCopy) return true;
    return false;
  };
  while (st.ok() && sends_busy() && Now() < deadline) st = Progress();
  // 2. Say we are done, and wait for every peer to say so (or die), serving their messages.
  job_.MarkFinalized();
  for (int r = 0; r < size_ && st.ok(); ++r) {
    while (r != rank_ && !job_.Finalized(r) && PeerAlive(r) && Now() < deadline) {
      st = Progress();
      if (!st.ok()) break;
    }
  }
  if (st.ok() && Now() >= deadline)
    st = Status(Err::kTimeout, "finalize: peers did not finish within MPIGPU_BOOTSTRAP_TIMEOUT");
  // A job in which a rank died (or left without finalizing) did not end well: say so.
  std::string dead;
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && (peer_failed_[r] || !job_.Finalized(r)))
      dead += (dead.empty() ? "" : ", ") + std::to_string(r);
  if (!dead.empty())
    st.KeepFirst(Status(Err::kPeerFailed, "finalize: rank(s) " + dead +
                                              " failed or left without finalizing"));
  finalized_ = true;
  st.KeepFirst(StopGpuCopier());
  if (std::exchange(eager_pinned_, false)) st.KeepFirst(UnpinHostRange(eager_mem_));
  if (ipc_cache_) st.KeepFirst(ipc_cache_->Clear());
  for (auto& [key, pair] : rings_)
    if (pair->creator) (void)pair->region.Unlink();
  LauncherLinkFinalized(rank_);  // mpigpurun: this rank finalized
  return st;
}

}  // namespace mpigpu::transport

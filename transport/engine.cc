// The engine's life cycle and requests: bootstrap over LocalJob, sends and receives started,
// probes, waits, completion, progress, peer liveness and failure, finalize. The other parts:
// engine_eager.cc, engine_ipc.cc, engine_lmt.cc (what they share: engine_internal.h).
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
#include "ringbuf/populate.h"
#include "transport/engine_internal.h"
#include "transport/launcher_link.h"

namespace mpigpu::transport {

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
    if (fbox_bytes) {
      // The header is the one part of the sparse tail written now: its page first gets memory.
      MPIGPU_RETURN_IF_ERROR(PopulateForWrite(fbox_mem, 4096, "the fastboxes' header"));
      MPIGPU_RETURN_IF_ERROR(
          Fastboxes::Format(fbox_mem, fbox_bytes, size_, fbox_data, rank_, &fastboxes_));
    }
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
  box_to_.assign(size_, fastboxes_.valid() ? kBoxOff : kBoxFailed);  // MPIGPU_FASTBOX_SIZE=0: none
  box_from_.assign(size_, 0);
  MPIGPU_INFO("joined job %s: rank %d of %d, eager <= %zu B, %zu cells per rank",
              job_.jobid().c_str(), rank_, size_, eager_max_, config_->cells_per_rank);
  LauncherLinkJoined(rank_);  // mpigpurun: this rank is in the job
  return Status::Ok();
}

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

Status Engine::Wait(Request* req, double timeout_s) {
  const double deadline = timeout_s < 0 ? -1 : MonotonicSeconds() + timeout_s;
  while (!req->done_) {
    MPIGPU_RETURN_IF_ERROR(Progress());
    if (deadline > 0 && MonotonicSeconds() > deadline) return Status(Err::kTimeout, "request did not complete");
  }
  return Status::Ok();
}

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
    const double now = MonotonicSeconds();
    if (now >= next_peer_check_) {
      next_peer_check_ = now + 0.02;
      CheckPeers();
      CheckGpuCopier();
      if (st.ok() && !drain_error_.ok()) st = std::exchange(drain_error_, Status());
    }
  }
  in_progress_ = false;
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
  bool any_source_waiting = probing_ == kAnySource;
  posted_.ForEach([&](Request* r) { any_source_waiting |= r->peer_ == kAnySource; });
  for (int r = 0; r < size_; ++r) {
    if (r == rank_ || peer_failed_[r]) continue;
    const bool waited_on = outstanding_[r] > 0 || probing_ == r;
    if (!waited_on && !any_source_waiting) continue;
    if (job_.Finalized(r) && !waited_on)
      continue;
    if (PeerAlive(r)) continue;
    // What it sent before it died may have arrived after this progress call last looked: take
    // it in first, so that no receive or probe fails while its message is waiting.
    // (At least one pass: the last message may sit in its fastbox, not in a cell.)
    for (int budget = 1 << 14; budget > 0; --budget) {
      Status st = PollArrivals();
      if (!st.ok()) {
        drain_error_.KeepFirst(std::move(st));  // Progress returns it
        break;
      }
      if (!queues_.Pending(rank_)) break;
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
  const double deadline = MonotonicSeconds() + config_->bootstrap_timeout_s;
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
  while (st.ok() && sends_busy() && MonotonicSeconds() < deadline) st = Progress();
  // 2. Say we are done, and wait for every peer to say so (or die), serving their messages.
  job_.MarkFinalized();
  for (int r = 0; r < size_ && st.ok(); ++r) {
    while (r != rank_ && !job_.Finalized(r) && PeerAlive(r) && MonotonicSeconds() < deadline) {
      st = Progress();
      if (!st.ok()) break;
    }
  }
  if (st.ok() && MonotonicSeconds() >= deadline)
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

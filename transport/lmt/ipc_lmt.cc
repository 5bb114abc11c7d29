#include "transport/lmt/ipc_lmt.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"
#include "memcopy/mps.h"
#include "pipeline/layout.h"
#include "ringbuf/numa.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {

// A device send's offer: its notify slot and token (kNoNotify: the receiver answers by kFin).
struct IpcLmt::SendOffer : LmtOp {
  uint32_t slot = kNoNotify;
  uint32_t token = 0;
};

// A request this back-end carries: a single copy running here (a pull, or a put), or a receive
// waiting for the sender's put (put_id).
struct IpcLmt::CopyOp : LmtOp {
  IpcExport ipc{};              // the peer's buffer, mapped through the cache while the copy runs
  CopyEngine* copier = nullptr;
  bool on_gpu_copier = false;   // the copy runs on the resident kernel (ticket is its ticket)
  Ticket ticket = 0;
  uint64_t rreq = 0;            // put: the receiver's id
  uint32_t peer_slot = kNoNotify;  // pull: the sender's notify slot and token
  uint32_t peer_token = 0;
  bool notifies_peer = false;   // pull: our resident kernel stores the token
  bool running = false;         // in active_ (Finished need not search it otherwise)
  uint64_t put_id = 0;          // receive: its id in puts_ while it waits for the put
};

IpcLmt::IpcLmt() = default;
IpcLmt::~IpcLmt() { (void)StopGpuCopier(); }

SegmentNeeds IpcLmt::Needs(const TransportConfig&, int nranks) const {
  return SegmentNeeds{sizeof(uint32_t) * kNotifySlots * static_cast<size_t>(nranks), 0};
}

Status IpcLmt::Attach(LmtHost* host, char* dense, char*) {
  host_ = host;
  rank_ = host->rank();
  size_ = host->size();
  // Zero-filled by the segment's creation, as every rank's atomics here.
  notify_words_ = reinterpret_cast<std::atomic<uint32_t>*>(dense);
  static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t), "the GPU stores plain words");
  notify_bytes_ = SegmentPages(Needs(host->config(), size_).dense);
  for (uint32_t i = kNotifySlots; i > 0; --i) free_slots_.push_back(i - 1);
  return Status::Ok();
}

// A resident kernel time-slices with the kernels of every other process on its GPU (no MPS):
// with a GPU shared by several ranks the copier would stall them all, so it stays off, and small
// device sends to a rank on this GPU avoid the IPC copy. Under MPS (detected, or declared by
// MPIGPU_GPU_COPIER_SHARED=1) both stay on: MPS clients' kernels run side by side.
void IpcLmt::Joined() {
  const NodeJob& job = host_->job();
  const uint64_t my_gpu = job.gpu_id(rank_);
  shares_gpu_.assign(size_, false);
  if (my_gpu == 0) return;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    (void)cudaGetLastError();
    device = -1;
  }
  const MpsState mps = MpsOfDevice(device);
  const SharedGpuMode mode = host_->config().gpu_copier_shared;
  const bool keep = KeepSharedGpuPath(mode, mps.active);
  int sharing = 0;
  for (int r = 0; r < size_; ++r)
    if (r != rank_ && job.gpu_id(r) == my_gpu) {
      ++sharing;
      shares_gpu_[r] = !keep;
    }
  const char* setting = mode == SharedGpuMode::kAuto ? "auto"
                        : mode == SharedGpuMode::kOn ? "1"
                                                     : "0";
  if (sharing == 0) {
    MPIGPU_INFO("MPS %s (%s); no other rank shares this GPU", mps.active ? "yes" : "no",
                mps.how.c_str());
    return;
  }
  if (keep) {
    MPIGPU_INFO("MPS %s (%s); %d other rank(s) share this GPU: the resident copy kernel and the "
                "CUDA IPC single copy stay on at every size (MPIGPU_GPU_COPIER_SHARED=%s)",
                mps.active ? "yes" : "no", mps.how.c_str(), sharing, setting);
    return;
  }
  if (gpu_copier_ok_)
    MPIGPU_INFO("MPS %s (%s); %d other rank(s) share this GPU: the resident copy kernel stays "
                "off and device sends to them take the CUDA IPC copy only from %zu bytes "
                "(MPIGPU_GPU_COPIER_SHARED=%s)",
                mps.active ? "yes" : "no", mps.how.c_str(), sharing,
                host_->config().shared_gpu_ipc_min, setting);
  gpu_copier_ok_ = false;
}

bool IpcLmt::Offers(int peer, MemLoc loc, size_t bytes) const {
  if (!loc.is_device() || !ok_) return false;
  if (host_->config().lmt == LmtMode::kIpc) return true;
  return !(peer >= 0 && peer < size_ && shares_gpu_[peer] &&
           bytes < host_->config().shared_gpu_ipc_min);
}

size_t IpcLmt::Offer(Request* req, unsigned char* out) {
  if (!Offers(req->peer(), req->buf().loc, req->bytes())) return 0;
  IpcOffer offer{};
  if (!ExportDeviceBuffer(req->buf().ptr, &offer.ipc).ok()) return 0;
  offer.count = req->buf().layout.count;
  offer.block = req->buf().layout.block;
  offer.stride = req->buf().layout.stride;
  offer.notify_slot = kNoNotify;
  std::unique_ptr<SendOffer> op = offer_ops_.Take();
  if (!free_slots_.empty()) {  // else the receiver answers with a kFin
    if (++notify_tokens_ == 0) ++notify_tokens_;
    op->slot = offer.notify_slot = free_slots_.back();
    op->token = offer.notify_token = notify_tokens_;
    free_slots_.pop_back();
    notify_waits_.push_back(req);
    host_->Busy(this);
  }
  host_->Offered(req, this, std::move(op));
  std::memcpy(out, &offer, sizeof offer);
  return sizeof offer;
}

void IpcLmt::Unavailable(const Status& why) {
  if (!ok_) return;
  ok_ = false;
  MPIGPU_INFO("CUDA IPC is not usable here (%s): GPU buffers use the next back-end",
              why.ToString().c_str());
}

// Maps a peer's exported buffer on this process's current device; `*copier` is that device's
// copy engine and `*loc` where the mapping lives.
Status IpcLmt::Map(int peer, const IpcExport& e, void** ptr, CopyEngine** copier, MemLoc* loc) {
  int device = -1;
  if (CudaDeviceCount() == 0) return Status(Err::kNoGpu, "no CUDA device to map a peer buffer on");
  MPIGPU_CUDA_CHECK(cudaGetDevice(&device));
  if (!cache_) cache_ = std::make_unique<IpcCache>(host_->config().ipc_cache_size);
  MPIGPU_RETURN_IF_ERROR(cache_->Map(peer, e, ptr));
  *loc = MemLoc::Device(device);
  Status st = host_->CopierFor(*loc, copier);
  if (!st.ok()) (void)cache_->Release(peer, e);
  return st;
}

bool IpcLmt::StartRecv(Request* req, const unsigned char* offer) {
  if (offer != nullptr) {
    IpcOffer o;
    std::memcpy(&o, offer, sizeof o);
    return TryPull(req, o);
  }
  return TryPutRequest(req);
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

void IpcLmt::Run(Request* req) {
  req->op<CopyOp>()->running = true;
  active_.push_back(req);
  host_->Busy(this);
}

// Receiver: copy the sender's device buffer (mapped) into ours, then kFin.
bool IpcLmt::TryPull(Request* req, const IpcOffer& offer) {
  if (!ok_) return false;
  const int src = req->info().source;
  const size_t n = std::min<size_t>(req->info().bytes, req->bytes());
  const Layout send_shape{offer.count, offer.block, offer.stride};
  CopyDesc d{req->buf().ptr, nullptr, 0, 0, 0, 0};
  const bool one_copy = AsOneStridedCopy(req->buf().layout, send_shape, n, &d);
  if (!one_copy && !req->buf().layout.contiguous() && !send_shape.contiguous())
    return false;  // two different vector shapes: the ring's pipeline repacks them
  void* peer_ptr = nullptr;
  MemLoc peer_loc;
  CopyEngine* copier = nullptr;
  Status st = Map(src, offer.ipc, &peer_ptr, &copier, &peer_loc);
  if (!st.ok()) {
    Unavailable(st);
    return false;
  }
  std::unique_ptr<CopyOp> op = copy_ops_.Take();
  CopyOp* o = op.get();
  host_->Carry(req, this, std::move(op));
  if (one_copy) {
    d.src = peer_ptr;
    if (offer.notify_slot < kNotifySlots) {
      o->peer_slot = offer.notify_slot;
      o->peer_token = offer.notify_token;
    }
    st = IssueSingleCopy(req, o, d, req->buf().loc, peer_loc, copier);
  } else {  // one side contiguous, the other a vector cut mid-block (truncation)
    st = req->buf().layout.contiguous()
             ? CopyPacked(*copier, PackDir::kPack, peer_ptr, peer_loc, send_shape, 0, n,
                          req->buf().ptr, req->buf().loc)
             : CopyPacked(*copier, PackDir::kUnpack, req->buf().ptr, req->buf().loc,
                          req->buf().layout, 0, n, peer_ptr, peer_loc);
    if (st.ok()) st = copier->Mark(&o->ticket);
  }
  if (!st.ok()) {
    (void)cache_->Release(src, offer.ipc);
    const uint64_t sreq = req->rts().sreq;
    host_->Complete(req, st);  // a copy error on our side: nothing to fall back to
    SendFin(src, sreq, true);
    return true;
  }
  o->ipc = offer.ipc;
  o->copier = copier;
  Run(req);
  return true;
}

// One copy for a single-copy transfer: on the resident kernel when it is small (or strided and
// not large: the copy engine moves narrow rows slowly) and both ends are this GPU's memory, else
// on the copy engine. Sets the op's ticket.
Status IpcLmt::IssueSingleCopy(Request* req, CopyOp* op, const CopyDesc& d, MemLoc dst_loc,
                               MemLoc src_loc, CopyEngine* engine) {
  const TransportConfig& c = host_->config();
  const size_t bytes = d.width * d.height;
  const size_t limit = d.height > 1 ? c.gpu_copier_strided_max : c.gpu_copier_max;
  if (gpu_copier_ok_ && bytes <= limit && limit > 0 && dst_loc.is_device() &&
      src_loc.is_device()) {
    if (!gpu_copier_.ready()) {
      const bool notify = NotifyMapped();
      Status st = gpu_copier_.Init(dst_loc.device, c.gpu_copier_idle_us,
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
      if (op->peer_slot != kNoNotify && notify_dev_ != nullptr) {
        dn.notify_index = NotifyIndex(req->peer(), op->peer_slot);
        dn.notify_value = op->peer_token;
      }
      Status st = gpu_copier_.Submit(dn, &op->ticket, &queued);
      if (!st.ok()) {  // it cannot run here (e.g. launch refused): the copy engine does it all
        gpu_copier_ok_ = false;
        queued = false;
        MPIGPU_WARN("resident copy kernel failed (%s): copy engine only from now on",
                    st.ToString().c_str());
      }
      // Only a copy the kernel took stores the token; any other ends with a kFin.
      op->notifies_peer = queued && dn.notify_index != kNoNotifyIndex;
    }
    if (queued) {
      op->on_gpu_copier = true;
      return Status::Ok();
    }
  }
  if (d.height == 1)
    MPIGPU_RETURN_IF_ERROR(engine->Issue(d.dst, dst_loc, d.src, src_loc, d.width));
  else
    MPIGPU_RETURN_IF_ERROR(engine->Issue2D(d.dst, dst_loc, d.dpitch, d.src, src_loc, d.spitch,
                                           d.width, d.height));
  return engine->Mark(&op->ticket);
}

// Receiver with a contiguous device buffer, sender with a host buffer: the sender copies H2D
// straight into our buffer (pinned sources reach the PCIe limit).
bool IpcLmt::TryPutRequest(Request* req) {
  const int src = req->info().source;
  const RtsBody rts = BodyOf<RtsBody>(req->rts());
  if (!ok_ || !req->buf().loc.is_device() || !req->buf().layout.contiguous() ||
      !rts.loc.is_host() || host_->job().gpu(src) < 0)
    return false;
  IpcOffer offer{};
  if (!ExportDeviceBuffer(req->buf().ptr, &offer.ipc).ok()) return false;
  offer.count = 1;
  offer.block = offer.stride = req->buf().layout.packed_bytes();
  offer.notify_slot = kNoNotify;
  std::unique_ptr<CopyOp> op = copy_ops_.Take();
  op->put_id = ++next_put_id_;
  MsgHeader put = ControlHeader(kWireIdIpc, kPut);
  put.sreq = req->rts().sreq;
  put.bytes = std::min<size_t>(req->info().bytes, req->bytes());
  SetBody(&put, PutRef{op->put_id});
  puts_[op->put_id] = req;
  host_->Carry(req, this, std::move(op));
  host_->SendControl(src, put, &offer, sizeof offer);
  return true;
}

// Sender: copy our (host) buffer into the receiver's mapped device buffer.
Status IpcLmt::StartPut(Request* req, const MsgHeader& h, const IpcOffer& offer) {
  if (!ok_) return Status(Err::kInternal, "CUDA IPC already found unusable");
  if (h.bytes > req->bytes()) return Status(Err::kInternal, "put larger than the send");
  void* peer_ptr = nullptr;
  MemLoc peer_loc;
  CopyEngine* copier = nullptr;
  MPIGPU_RETURN_IF_ERROR(Map(h.src, offer.ipc, &peer_ptr, &copier, &peer_loc));
  std::unique_ptr<CopyOp> op = copy_ops_.Take();
  Status st = CopyPacked(*copier, PackDir::kPack, req->buf().ptr, req->buf().loc, req->buf().layout,
                         0, h.bytes, peer_ptr, peer_loc);
  if (st.ok()) st = copier->Mark(&op->ticket);
  if (!st.ok()) {
    (void)cache_->Release(h.src, offer.ipc);
    return st;
  }
  op->ipc = offer.ipc;
  op->copier = copier;
  op->rreq = BodyOf<PutRef>(h).rreq;
  host_->Carry(req, this, std::move(op));
  Run(req);
  return Status::Ok();
}

void IpcLmt::SendFin(int src, uint64_t sreq, bool failed) {
  host_->SendControl(src, ControlHeader(kWireIdIpc, kFin, sreq, failed ? kCopyError : 0), nullptr, 0);
}

void IpcLmt::SendPutDone(int dst, uint64_t rreq, uint8_t flags) {
  MsgHeader h = ControlHeader(kWireIdIpc, kPutDone);
  h.flags = flags;
  SetBody(&h, PutRef{rreq});
  host_->SendControl(dst, h, nullptr, 0);
}

Status IpcLmt::OnControl(const MsgHeader& h, const unsigned char* payload, size_t len) {
  if (h.op == kPutDone) {
    auto it = puts_.find(BodyOf<PutRef>(h).rreq);
    if (it == puts_.end() || it->second->peer() != h.src) {
      MPIGPU_WARN("dropping a put notice from rank %d for no waiting receive", h.src);
      return Status::Ok();
    }
    Request* req = it->second;
    puts_.erase(it);
    if (h.flags & kCopyError) host_->Complete(req, PeerCopyError(h.src));
    else if (h.flags & kPutFailed) host_->FallBack(req);
    else host_->Complete(req, TruncationOf(req->info(), req->bytes()));
    return Status::Ok();
  }
  // The id names one of our sends waiting for this answer; anything else is a stale or corrupt
  // message and is dropped rather than trusted.
  Request* req = host_->WaitingSend(h.sreq);
  if (req == nullptr || req->peer() != h.src || (h.op != kFin && h.op != kPut) ||
      (h.op == kPut && len != sizeof(IpcOffer))) {
    MPIGPU_WARN("dropping a CUDA IPC message (op %d) from rank %d for no waiting send", h.op, h.src);
    return Status::Ok();
  }
  if (h.op == kFin) {
    if (req->offerer() == this) DropSlot(req, /*reusable=*/true);  // a kFin: no token will come
    host_->Complete(req, (h.flags & kCopyError) ? PeerCopyError(h.src) : Status::Ok());
    return Status::Ok();
  }
  IpcOffer offer;
  std::memcpy(&offer, payload, sizeof offer);
  Status st = StartPut(req, h, offer);
  if (!st.ok()) {  // tell the receiver to use the next back-end; this send waits for its answer
    Unavailable(st);
    SendPutDone(h.src, BodyOf<PutRef>(h).rreq, kPutFailed);
  }
  return Status::Ok();
}

// Receiver: whether our kernel stored the token of the send that `op` pulls from.
bool IpcLmt::PeerTokenStored(const CopyOp& op, int peer) const {
  return notify_words_[NotifyIndex(peer, op.peer_slot)].load(std::memory_order_acquire) ==
         op.peer_token;
}

Status IpcLmt::Progress(bool* busy) {
  if (!notify_waits_.empty()) PollNotifies();
  for (auto it = active_.begin(); it != active_.end();) {
    Request* req = *it;
    CopyOp* op = req->op<CopyOp>();
    bool done = false;
    Status st = op->on_gpu_copier ? gpu_copier_.Poll(op->ticket, &done)
                                  : op->copier->Poll(op->ticket, &done);
    if (!done && st.ok()) {
      ++it;
      continue;
    }
    it = active_.erase(it);
    op->running = false;
    const int peer = req->peer();
    (void)cache_->Release(peer, op->ipc);
    // Tell the peer its buffer is free (pull) or ours is filled (put); or that the copy failed,
    // so that its request ends too instead of waiting for us. A copy that notifies the peer
    // stored the send's token when it finished; if the kernel faulted, the token tells whether
    // it got that far (a dead kernel stores nothing more).
    const bool recv = !req->is_send();
    if (!op->notifies_peer || (!st.ok() && !PeerTokenStored(*op, peer))) {
      if (recv) SendFin(peer, req->rts().sreq, !st.ok());
      else SendPutDone(peer, op->rreq, st.ok() ? 0 : kCopyError);
    }
    host_->Complete(req, recv && st.ok() ? TruncationOf(req->info(), req->bytes()) : st);
  }
  *busy = !active_.empty() || !notify_waits_.empty();
  return Status::Ok();
}

// Sends whose receiver copies on its resident kernel: done when our token is in their slot.
void IpcLmt::PollNotifies() {
  for (size_t i = 0; i < notify_waits_.size();) {
    Request* req = notify_waits_[i];
    const SendOffer* o = req->offer_op<SendOffer>();
    const uint32_t word =
        notify_words_[NotifyIndex(rank_, o->slot)].load(std::memory_order_acquire);
    if (word == o->token) {
      ++sends_notified_;
      host_->Complete(req, Status::Ok());  // takes it out of notify_waits_
    } else {
      ++i;
    }
  }
}

// The send no longer waits on its notify slot. The slot is free again when the receiver can no
// longer store into it: it answered (by token, or by a kFin, which it sends only for a copy that
// stored no token and never will). After other failures (a dead peer) a late store could
// complete another send: the slot is dropped for good.
void IpcLmt::DropSlot(Request* req, bool reusable) {
  SendOffer* o = req->offer_op<SendOffer>();
  if (o == nullptr || o->slot == kNoNotify) return;
  notify_waits_.erase(std::find(notify_waits_.begin(), notify_waits_.end(), req));
  if (reusable) free_slots_.push_back(o->slot);
  o->slot = kNoNotify;
}

// Called once per completion, for either role (offerer, carrier) or both.
void IpcLmt::Finished(Request* req) {
  if (req->offerer() == this) {
    DropSlot(req, req->status().ok());
    offer_ops_.Give(host_->TakeOfferOp(req));
  }
  if (req->carrier() != this) return;
  const CopyOp* op = req->op<CopyOp>();
  if (op->running) active_.remove(req);  // completed from outside Progress (a dead peer)
  if (op->put_id != 0) puts_.erase(op->put_id);  // none after its kPutDone: erased twice, harmlessly
  copy_ops_.Give(host_->TakeOp(req));
}

void IpcLmt::FailPeer(int rank, const Status& why) {
  std::vector<Request*> failed;
  for (auto& [id, req] : puts_)
    if (req->peer() == rank) failed.push_back(req);
  for (Request* r : active_)
    if (r->peer() == rank) failed.push_back(r);
  for (Request* r : failed) host_->Complete(r, why);
}

// The resident kernel's health, asked of the driver on the peer-check cadence: a fault (a copy
// through a bad address) is sticky, and Progress then fails the copies queued on it.
void IpcLmt::Tick() {
  if (!gpu_copier_ok_ || !gpu_copier_.ready()) return;
  Status st = gpu_copier_.Check();
  if (st.ok()) return;
  gpu_copier_ok_ = false;
  MPIGPU_WARN("resident copy kernel faulted (%s): its copies fail", st.ToString().c_str());
}

// The resident kernel leaves once its queued copies are done (the program's
// cudaDeviceSynchronize would otherwise wait out MPIGPU_GPU_COPIER_IDLE_US for it).
void IpcLmt::Idle() {
  if (gpu_copier_ok_ && gpu_copier_.ready()) gpu_copier_.Release();
}

// Pins the notify region (every rank's slots) into this process's GPU address space, once, so
// the resident kernel can store into a sender's slot.
bool IpcLmt::NotifyMapped() {
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
    MPIGPU_INFO("notify words not mapped for the GPU (%s): device sends complete by kFin",
                st.ToString().c_str());
    return false;
  }
  notify_dev_ = static_cast<uint32_t*>(dev);
  return true;
}

// Ends the resident kernel, then unpins the notify region it may store into.
Status IpcLmt::StopGpuCopier() {
  Status st = gpu_copier_.Stop();
  if (notify_dev_ != nullptr) {
    notify_dev_ = nullptr;
    st.KeepFirst(UnpinHostRange(notify_words_));
  }
  return st;
}

Status IpcLmt::Close() {
  Status st = StopGpuCopier();
  if (cache_) st.KeepFirst(cache_->Clear());
  return st;
}

}  // namespace mpigpu::transport

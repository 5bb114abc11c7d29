// Single copies of device buffers through CUDA IPC: the pull and the put, the resident copier and
// its notify slots, and the fall-back to the ring.
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

// The send no longer waits on its notify slot. The slot is free again when the receiver can no
// longer store into it: it answered (by token, or by a FIN, which it sends only for a copy that
// stored no token and never will). After other failures (a dead peer) a late store could
// complete another send: the slot is dropped for good.
void Engine::DropNotifySlot(Request* req, bool reusable) {
  notify_waits_.erase(std::find(notify_waits_.begin(), notify_waits_.end(), req));
  if (reusable) notify_free_.push_back(req->notify_slot_);
  req->notify_slot_ = kNoNotify;
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

}  // namespace mpigpu::transport

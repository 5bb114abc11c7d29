#include "pipeline/copy_engine.h"

#include <string>
#include <utility>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"
#include "memreg/pin_cache.h"

namespace mpigpu {
namespace {

Status CheckHost(MemLoc dst_loc, MemLoc src_loc) {
  if (!dst_loc.is_host() || !src_loc.is_host())
    return Status(Err::kInvalidArg, "HostCopyEngine cannot copy " + src_loc.ToString() + " -> " +
                                        dst_loc.ToString());
  return Status::Ok();
}

Status CheckTicket(Ticket t, Ticket last) {
  if (t == 0 || t > last)
    return Status(Err::kInvalidArg, "copy engine: ticket " + std::to_string(t) +
                                        " was never handed out (last " + std::to_string(last) + ")");
  return Status::Ok();
}

}  // namespace

// ---- HostCopyEngine ----

Status HostCopyEngine::Issue(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc,
                             size_t bytes) {
  MPIGPU_RETURN_IF_ERROR(CheckHost(dst_loc, src_loc));
  return Copy(dst, dst_loc, src, src_loc, bytes, nullptr);
}

Status HostCopyEngine::Issue2D(void* dst, MemLoc dst_loc, size_t dpitch, const void* src,
                               MemLoc src_loc, size_t spitch, size_t width, size_t height) {
  MPIGPU_RETURN_IF_ERROR(CheckHost(dst_loc, src_loc));
  return Copy2D(dst, dst_loc, dpitch, src, src_loc, spitch, width, height, nullptr);
}

Status HostCopyEngine::Mark(Ticket* out) {
  if (out == nullptr) return Status(Err::kInvalidArg, "copy engine: null ticket");
  *out = ++last_;
  return Status::Ok();
}

Status HostCopyEngine::Poll(Ticket t, bool* done) {
  if (done == nullptr) return Status(Err::kInvalidArg, "copy engine: null done flag");
  MPIGPU_RETURN_IF_ERROR(CheckTicket(t, last_));
  *done = true;  // the copies ran when issued
  return Status::Ok();
}

Status HostCopyEngine::Wait(Ticket t) { return CheckTicket(t, last_); }

// ---- CudaCopyEngine ----

Status CudaCopyEngine::Create(int device, CudaCopyEngine* out) {
  if (out == nullptr) return Status(Err::kInvalidArg, "CudaCopyEngine: null output");
  int count = CudaDeviceCount();
  if (count == 0) return Status(Err::kNoGpu, "CudaCopyEngine: no CUDA device");
  if (device < 0 || device >= count)
    return Status(Err::kInvalidArg, "CudaCopyEngine: device " + std::to_string(device) +
                                        " out of range (" + std::to_string(count) + " devices)");
  DeviceScope scope(device);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  CudaCopyEngine e;
  MPIGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&e.stream_, cudaStreamNonBlocking));
  e.device_ = device;
  *out = std::move(e);
  return Status::Ok();
}

CudaCopyEngine::~CudaCopyEngine() { Destroy(); }

CudaCopyEngine::CudaCopyEngine(CudaCopyEngine&& other) noexcept { *this = std::move(other); }

CudaCopyEngine& CudaCopyEngine::operator=(CudaCopyEngine&& other) noexcept {
  if (this != &other) {
    Destroy();
    device_ = std::exchange(other.device_, -1);
    stream_ = std::exchange(other.stream_, nullptr);
    last_ = std::exchange(other.last_, 0);
    in_flight_ = std::move(other.in_flight_);
    free_ = std::move(other.free_);
    pending_pins_ = std::move(other.pending_pins_);
    other.in_flight_.clear();
    other.free_.clear();
    other.pending_pins_.clear();
  }
  return *this;
}

void CudaCopyEngine::Destroy() {
  if (stream_ == nullptr) return;
  DeviceScope scope(device_);
  // Copies still in flight read or write buffers the caller is about to free: finish them.
  (void)cudaStreamSynchronize(stream_);
  for (Piece& p : in_flight_) {
    (void)cudaEventDestroy(p.event);
    ReleasePins(&p.pins);
  }
  ReleasePins(&pending_pins_);
  for (cudaEvent_t e : free_) (void)cudaEventDestroy(e);
  (void)cudaStreamDestroy(stream_);
  in_flight_.clear();
  free_.clear();
  stream_ = nullptr;
}

Status CudaCopyEngine::CheckReady() const {
  if (stream_ == nullptr) return Status(Err::kInvalidArg, "CudaCopyEngine used before Create");
  return Status::Ok();
}

Status CudaCopyEngine::Issue(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc,
                             size_t bytes) {
  MPIGPU_RETURN_IF_ERROR(CheckReady());
  DeviceScope scope(device_);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  MaybePin(dst_loc, src_loc, dst, src, bytes);
  return Copy(dst, dst_loc, src, src_loc, bytes, stream_);
}

void CudaCopyEngine::MaybePin(MemLoc dst_loc, MemLoc src_loc, const void* dst, const void* src,
                              size_t len) {
  if (dst_loc.is_host() == src_loc.is_host() || len == 0) return;
  memreg::Region* r = memreg::PinForCopy(dst_loc.is_host() ? dst : src, len);
  if (r != nullptr) pending_pins_.push_back(r);
}

void CudaCopyEngine::ReleasePins(std::vector<memreg::Region*>* pins) {
  for (memreg::Region* r : *pins) memreg::UnpinAfterCopy(r);
  pins->clear();
}

Status CudaCopyEngine::Issue2D(void* dst, MemLoc dst_loc, size_t dpitch, const void* src,
                               MemLoc src_loc, size_t spitch, size_t width, size_t height) {
  MPIGPU_RETURN_IF_ERROR(CheckReady());
  DeviceScope scope(device_);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  if (height > 0 && width > 0) {
    const bool host_dst = dst_loc.is_host();
    const size_t pitch = host_dst ? dpitch : spitch;
    if (pitch >= width) MaybePin(dst_loc, src_loc, dst, src, pitch * (height - 1) + width);
  }
  return Copy2D(dst, dst_loc, dpitch, src, src_loc, spitch, width, height, stream_);
}

Status CudaCopyEngine::Mark(Ticket* out) {
  MPIGPU_RETURN_IF_ERROR(CheckReady());
  if (out == nullptr) return Status(Err::kInvalidArg, "copy engine: null ticket");
  DeviceScope scope(device_);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  cudaEvent_t ev;
  if (!free_.empty()) {
    ev = free_.back();
    free_.pop_back();
  } else {
    MPIGPU_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  }
  cudaError_t e = cudaEventRecord(ev, stream_);
  if (e != cudaSuccess) {
    free_.push_back(ev);
    return CudaFailure("cudaEventRecord", e);
  }
  in_flight_.push_back(Piece{++last_, ev, std::move(pending_pins_)});
  pending_pins_.clear();
  *out = last_;
  return Status::Ok();
}

Status CudaCopyEngine::Find(Ticket t, const Piece** out) const {
  MPIGPU_RETURN_IF_ERROR(CheckTicket(t, last_));
  *out = nullptr;
  if (in_flight_.empty() || t < in_flight_.front().ticket) return Status::Ok();  // retired
  *out = &in_flight_[t - in_flight_.front().ticket];
  return Status::Ok();
}

void CudaCopyEngine::RetireThrough(Ticket t) {
  while (!in_flight_.empty() && in_flight_.front().ticket <= t) {
    free_.push_back(in_flight_.front().event);
    ReleasePins(&in_flight_.front().pins);
    in_flight_.pop_front();
  }
}

Status CudaCopyEngine::Poll(Ticket t, bool* done) {
  MPIGPU_RETURN_IF_ERROR(CheckReady());
  if (done == nullptr) return Status(Err::kInvalidArg, "copy engine: null done flag");
  const Piece* p;
  MPIGPU_RETURN_IF_ERROR(Find(t, &p));
  if (p == nullptr) {
    *done = true;
    return Status::Ok();
  }
  cudaError_t e = cudaEventQuery(p->event);
  if (e == cudaErrorNotReady) {
    *done = false;
    return Status::Ok();
  }
  if (e != cudaSuccess) return CudaFailure("cudaEventQuery", e);
  RetireThrough(t);  // one stream: every earlier piece is done too
  *done = true;
  return Status::Ok();
}

Status CudaCopyEngine::Wait(Ticket t) {
  MPIGPU_RETURN_IF_ERROR(CheckReady());
  const Piece* p;
  MPIGPU_RETURN_IF_ERROR(Find(t, &p));
  if (p == nullptr) return Status::Ok();
  MPIGPU_CUDA_CHECK(cudaEventSynchronize(p->event));
  RetireThrough(t);
  return Status::Ok();
}

}  // namespace mpigpu

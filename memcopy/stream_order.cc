#include "memcopy/stream_order.h"

#include <algorithm>
#include <chrono>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"

namespace mpigpu {

DefaultStreamOrder::~DefaultStreamOrder() {
  for (auto& [device, ev] : events_) (void)cudaEventDestroy(ev);
}

Status DefaultStreamOrder::Wait(MemLoc loc) {
  if (!loc.is_device()) return Status::Ok();
  int current = -1;
  MPIGPU_CUDA_CHECK(cudaGetDevice(&current));
  if (current != loc.device) MPIGPU_CUDA_CHECK(cudaSetDevice(loc.device));
  Status st = way_ == Way::kUnchosen ? Choose(loc.device) : WaitOn(loc.device, way_);
  if (current != loc.device) (void)cudaSetDevice(current);
  return st;
}

// On the current device, which is `device`.
Status DefaultStreamOrder::WaitOn(int device, Way way) {
  if (way == Way::kQuery) {
    cudaError_t e = cudaStreamQuery(cudaStreamLegacy);
    if (e == cudaErrorNotReady) e = cudaStreamSynchronize(cudaStreamLegacy);
    if (e != cudaSuccess) return CudaFailure("waiting for the default stream", e);
    return Status::Ok();
  }
  cudaEvent_t& ev = events_[device];
  if (ev == nullptr) {
    const cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e != cudaSuccess) {
      events_.erase(device);
      return CudaFailure("cudaEventCreateWithFlags (default stream order)", e);
    }
  }
  MPIGPU_CUDA_CHECK(cudaEventRecord(ev, cudaStreamLegacy));
  MPIGPU_CUDA_CHECK(cudaEventSynchronize(ev));
  return Status::Ok();
}

// Times both ways (each also does the job, so the first Wait is served whatever comes out).
Status DefaultStreamOrder::Choose(int device) {
  using Clock = std::chrono::steady_clock;
  constexpr int kCalls = 16;
  auto per_call = [&](Way way, double* us) {
    MPIGPU_RETURN_IF_ERROR(WaitOn(device, way));  // first call: set-up, not timed
    const auto t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) MPIGPU_RETURN_IF_ERROR(WaitOn(device, way));
    *us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kCalls;
    return Status::Ok();
  };
  MPIGPU_RETURN_IF_ERROR(per_call(Way::kQuery, &query_us_));
  MPIGPU_RETURN_IF_ERROR(per_call(Way::kEvent, &event_us_));
  way_ = query_us_ <= event_us_ ? Way::kQuery : Way::kEvent;
  MPIGPU_INFO("device sends wait for the default stream by %s (%.2f us; the other way %.2f us)",
              way_ == Way::kQuery ? "stream query" : "event", std::min(query_us_, event_us_),
              std::max(query_us_, event_us_));
  return Status::Ok();
}

}  // namespace mpigpu

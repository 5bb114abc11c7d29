#include "memcopy/stream_order.h"

#include <chrono>

#include "memcopy/device_scope.h"
#include "memcopy/log.h"
#include "memcopy/memcopy.h"

namespace mpigpu {

DefaultStreamOrder::~DefaultStreamOrder() {
  for (auto& [device, ev] : events_) (void)cudaEventDestroy(ev);
}

Status DefaultStreamOrder::Wait(MemLoc loc) {
  if (!loc.is_device()) return Status::Ok();
  DeviceScope scope(loc);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  return way_ == Way::kUnchosen ? Choose(loc.device) : WaitOn(loc.device, way_);
}

// On the current device, which is `device`.
Status DefaultStreamOrder::WaitOn(int device, Way way) {
  if (way != Way::kEvent) {
    cudaError_t e = way == Way::kQuery ? cudaStreamQuery(cudaStreamLegacy) : cudaErrorNotReady;
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

const char* DefaultStreamOrder::Name(Way way) {
  switch (way) {
    case Way::kQuery: return "stream query";
    case Way::kSync: return "stream synchronize";
    case Way::kEvent: return "event";
    case Way::kUnchosen: break;
  }
  return "unchosen";
}

// Times each way (each also does the job, so the first Wait is served whatever comes out).
Status DefaultStreamOrder::Choose(int device) {
  using Clock = std::chrono::steady_clock;
  constexpr int kCalls = 16;
  Way best = Way::kQuery;
  for (Way way : {Way::kQuery, Way::kSync, Way::kEvent}) {
    MPIGPU_RETURN_IF_ERROR(WaitOn(device, way));  // first call: set-up, not timed
    const auto t0 = Clock::now();
    for (int i = 0; i < kCalls; ++i) MPIGPU_RETURN_IF_ERROR(WaitOn(device, way));
    double& us = cost_us_[static_cast<int>(way)];
    us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / kCalls;
    if (us < cost_us(best)) best = way;
  }
  way_ = best;
  MPIGPU_INFO("device sends wait for the default stream by %s: %.2f us (query %.2f, synchronize "
              "%.2f, event %.2f)",
              Name(way_), cost_us(way_), cost_us(Way::kQuery), cost_us(Way::kSync),
              cost_us(Way::kEvent));
  return Status::Ok();
}

}  // namespace mpigpu

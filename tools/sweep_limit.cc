// The limit series: what the node's copy engines (or, for H->H, one CPU's memcpy) reach for the
// pair's copy, measured by rank 0 alone with the CUDA runtime. Bandwidth tables call it "limit";
// latency tables of pairs with a device side call it the "copy" floor (one host-driven copy
// issued and waited for).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"
#include "perf/api_check.h"
#include "tools/sweep_series.h"

namespace mpigpu {
namespace sweep {
namespace {

// The pair's copy in both directions, each with its own buffers and stream.
class LimitCopier {
 public:
  // `a` = rank 0's device, `b` = rank 1's device.
  Status Init(const Pair& pair, size_t max_size, int a, int b) {
    pair_ = pair;
    a_ = a;
    b_ = b;
    if (pair.src == Loc::kHost && pair.dst == Loc::kHost) {
      host_.resize(std::max<size_t>(max_size, 1) * 4);
      what_ = "single-thread host memcpy";
      return Status::Ok();
    }
    // Forward (rank 0's side -> rank 1's side) and reverse copies, each with its own buffers.
    const int src_dev = pair.src == Loc::kDevice ? a : b;
    const int dst_dev = pair.dst == Loc::kDevice ? b : a;
    for (int dir = 0; dir < 2; ++dir) {
      Loc from = dir == 0 ? pair.src : pair.dst;
      Loc to = dir == 0 ? pair.dst : pair.src;
      int from_dev = dir == 0 ? src_dev : dst_dev;
      int to_dev = dir == 0 ? dst_dev : src_dev;
      if (from == Loc::kHost) MPIGPU_CUDA_CHECK(host_src_[dir].Alloc(max_size));
      else MPIGPU_CUDA_CHECK(dev_src_[dir].Alloc(from_dev, max_size));
      if (to == Loc::kHost) MPIGPU_CUDA_CHECK(host_dst_[dir].Alloc(max_size));
      else MPIGPU_CUDA_CHECK(dev_dst_[dir].Alloc(to_dev, max_size));
      // The stream lives on the device whose copy engine moves the data (the source GPU for
      // device sources, else the destination GPU).
      MPIGPU_CUDA_CHECK(stream_[dir].Create(from == Loc::kDevice ? from_dev : to_dev));
    }
    if (pair.src == Loc::kDevice && pair.dst == Loc::kDevice) {
      peer_ = a != b;
      if (peer_) {
        // Direct NVLink/PCIe P2P where the devices allow it (otherwise the runtime stages).
        for (auto [x, y] : {std::pair<int, int>{a, b}, std::pair<int, int>{b, a}}) {
          int can = 0;
          cudaDeviceCanAccessPeer(&can, x, y);
          if (!can) continue;
          DeviceScope on(x);
          cudaError_t e = cudaDeviceEnablePeerAccess(y, 0);
          if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError();  // fine: clear it
        }
        what_ = "cudaMemcpyPeerAsync GPU" + std::to_string(a) + "->GPU" + std::to_string(b);
      } else {
        what_ = "same-device D2D cudaMemcpyAsync on GPU" + std::to_string(a) +
                " (one GPU visible)";
      }
    } else {
      what_ = pair.src == Loc::kHost ? "pinned H2D cudaMemcpyAsync" : "pinned D2H cudaMemcpyAsync";
    }
    return Status::Ok();
  }

  const std::string& what() const { return what_; }

  // Latency (us) of one copy issued and waited for; bandwidth (GB/s) of a window of copies in
  // one (bw) or both (bibw) directions, then one wait.
  Status Measure(Test test, size_t size, int iters, int warm, int window, double* value) {
    const bool bidir = test == Test::kBibw;
    const int per_iter = test == Test::kLatency ? 1 : window;
    if (!host_.empty()) {
      *value = HostMeasure(test, size, iters, warm, per_iter);
      return Status::Ok();
    }
    double t0 = MPIGPU_Wtime();
    for (int i = 0; i < warm + iters; ++i) {
      if (i == warm) t0 = MPIGPU_Wtime();
      for (int k = 0; k < per_iter; ++k) {
        MPIGPU_RETURN_IF_ERROR(Issue(0, size));
        if (bidir) MPIGPU_RETURN_IF_ERROR(Issue(1, size));
      }
      MPIGPU_CUDA_CHECK(cudaStreamSynchronize(stream_[0].get()));
      if (bidir) MPIGPU_CUDA_CHECK(cudaStreamSynchronize(stream_[1].get()));
    }
    const double elapsed = MPIGPU_Wtime() - t0;
    if (test == Test::kLatency) *value = PerOpUs(elapsed, iters);
    else *value = BandwidthGBs(static_cast<double>(size) * per_iter * iters * (bidir ? 2 : 1),
                               elapsed);
    return Status::Ok();
  }

 private:
  Status Issue(int dir, size_t size) {
    const Loc from = dir == 0 ? pair_.src : pair_.dst;
    const Loc to = dir == 0 ? pair_.dst : pair_.src;
    void* src = from == Loc::kHost ? host_src_[dir].ptr() : dev_src_[dir].ptr();
    void* dst = to == Loc::kHost ? host_dst_[dir].ptr() : dev_dst_[dir].ptr();
    cudaStream_t s = stream_[dir].get();
    if (from == Loc::kDevice && to == Loc::kDevice) {
      const int from_dev = dir == 0 ? a_ : b_;
      const int to_dev = dir == 0 ? b_ : a_;
      if (peer_) MPIGPU_CUDA_CHECK(cudaMemcpyPeerAsync(dst, to_dev, src, from_dev, size, s));
      else MPIGPU_CUDA_CHECK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, s));
    } else {
      MPIGPU_CUDA_CHECK(cudaMemcpyAsync(dst, src, size,
                                 from == Loc::kHost ? cudaMemcpyHostToDevice
                                                    : cudaMemcpyDeviceToHost,
                                 s));
    }
    return Status::Ok();
  }

  // H->H: memcpy between two regions; both directions at once on two threads (started once
  // per size, so thread start-up is not what is measured).
  double HostMeasure(Test test, size_t size, int iters, int warm, int per_iter) {
    char* base = host_.data();
    const size_t stride = std::max<size_t>(size, 1);
    auto run = [size](char* dst, const char* src, long count) {
      for (long k = 0; k < count; ++k) std::memcpy(dst, src, size);
    };
    const long timed = static_cast<long>(iters) * per_iter;
    run(base + stride, base, static_cast<long>(warm) * per_iter);
    double t0 = MPIGPU_Wtime();
    if (test == Test::kBibw) {
      std::thread other([&] { run(base + 3 * stride, base + 2 * stride, timed); });
      run(base + stride, base, timed);
      other.join();
    } else {
      run(base + stride, base, timed);
    }
    const double elapsed = MPIGPU_Wtime() - t0;
    if (test == Test::kLatency) return PerOpUs(elapsed, iters);
    return BandwidthGBs(static_cast<double>(size) * timed * (test == Test::kBibw ? 2 : 1),
                        elapsed);
  }

  Pair pair_;
  int a_ = 0, b_ = 0;
  bool peer_ = false;
  std::string what_;
  std::vector<char> host_;  // H->H: four regions of max_size
  PinnedBuffer host_src_[2], host_dst_[2];
  DeviceBuffer dev_src_[2], dev_dst_[2];
  Stream stream_[2];
};

// Rank 0 measures each size between two barriers while rank 1 waits, with the row's counts
// (decided by the mpigpu series before it). The copier is set up at the pair's first limit
// value, after mpigpu's first size, so that its peer access and allocations cannot change what
// mpigpu met first; a failure makes the column n/a.
class LimitSeries : public SeriesRunner {
 public:
  Status StartPair(Ctx& c) override {
    copier_ = std::make_unique<LimitCopier>();
    ready_ = false;
    init_ = Status::Ok();
    return Status::Ok();
  }

  Status StartTest(Ctx& c, Series* s) override {
    status_ = init_;
    return Status::Ok();
  }

  Status MeasureSize(Ctx& c, size_t, size_t size, double* value, int* iters) override {
    PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
    if (c.rank == 0) Rank0(c, size, value, iters);
    PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
    return Status::Ok();
  }

  void EndTest(Ctx& c, Series* s) override {
    s->note = status_.ok() ? copier_->what() +
                                 (c.test == Test::kLatency ? ", one copy issued and waited for"
                                  : c.test == Test::kBw    ? ", a window of copies then one wait"
                                                           : ", windows both ways at once")
                           : "n/a: " + status_.message();
  }

  void EndPair() override { copier_.reset(); }

 private:
  // A copy that fails makes the rest of the test's column n/a, with the reason.
  void Rank0(const Ctx& c, size_t size, double* value, int* iters) {
    const Options& o = *c.o;
    if (!ready_) {
      init_ = copier_->Init(c.pair, o.max_size, c.setup->device, c.setup->peer_device);
      status_ = init_;
      ready_ = true;
    }
    if (!status_.ok()) return;
    // The row's counts: mpigpu, the first series, decided them (the defaults otherwise).
    const int n = c.row.decided ? c.row.iterations : Iterations(o, c.test, size);
    const int warm = c.row.decided ? c.row.warmup : Warmup(o, c.test, size);
    status_ = copier_->Measure(c.test, size, n, warm, o.window, value);
    if (status_.ok()) *iters = n;
    else *value = kNaN;
  }

  std::unique_ptr<LimitCopier> copier_;
  bool ready_ = false;  // Init ran for this pair (init_ is its result)
  Status init_;         // the copier's set-up
  Status status_;       // this test's column: the first failure
};

}  // namespace

std::unique_ptr<SeriesRunner> MakeLimitSeries() { return std::make_unique<LimitSeries>(); }

}  // namespace sweep
}  // namespace mpigpu

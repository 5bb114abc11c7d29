// The latency floors that do not depend on the message size, measured once per sweep: a cache
// line's round trip between the two ranks' cores (host pairs), a flag's round trip between
// kernels on the two ranks' GPUs (D->D). Half of each is the one-way floor the table shows.
// The host-driven copy floor (H<->D, D->D) is the limit copier's latency (sweep_limit.cc).
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <memory>
#include <string>

#include "memcopy/device_scope.h"
#include "perf/api_check.h"
#include "perf/cpu_line.h"
#include "tools/sweep_flag.h"
#include "tools/sweep_series.h"

namespace mpigpu {
namespace sweep {
namespace {

// A floor measured at the first size of the first latency table that has it, then the same
// value for every size and table (the trips behind it are not the row's runs: iters 0). A
// floor that cannot be measured is n/a with the reason.
class ConstantFloor : public SeriesRunner {
 public:
  Status MeasureSize(Ctx& c, size_t, size_t, double* value, int* iters) override {
    if (!measured_) {
      measured_ = true;
      status_ = Measure(c, &one_way_us_, &what_);
    }
    *value = status_.ok() ? one_way_us_ : kNaN;
    *iters = 0;
    return Status::Ok();
  }

  void EndTest(Ctx& c, Series* s) override {
    s->note = status_.ok() ? what_ : "n/a: " + status_.message();
  }

 protected:
  // On both ranks, which it keeps in step whatever fails; *one_way_us is rank 0's. A failed
  // Status makes the column n/a with its message.
  virtual Status Measure(Ctx& c, double* one_way_us, std::string* what) = 0;

 private:
  bool measured_ = false;
  Status status_;
  double one_way_us_ = kNaN;
  std::string what_;
};

// Rank 0's shared page: both ranks map it; the line is its first 64 bytes, each rank's CPU
// (when measured) in the next line.
struct SharedLine {
  std::atomic<long> line;
  alignas(64) int cpu[2];
};

class CacheLineFloor : public ConstantFloor {
 protected:
  Status Measure(Ctx& c, double* one_way_us, std::string* what) override {
    int id = static_cast<int>(getpid());
    PERF_API(MPIGPU_Bcast(&id, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, MPIGPU_COMM_WORLD));
    const std::string name = "/mpigpu-sweep-line-" + std::to_string(id);
    void* page = MAP_FAILED;
    // Rank 0 makes the page, rank 1 maps it; each says whether it could (both must agree before
    // either waits on the other).
    for (int r = 0; r < 2; ++r) {
      int ok = 1;
      if (c.rank == r) {
        const int fd = r == 0 ? shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600)
                              : shm_open(name.c_str(), O_RDWR, 0);
        if (fd >= 0 && (r == 1 || ftruncate(fd, 4096) == 0))
          page = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (fd >= 0) close(fd);
        ok = page != MAP_FAILED;
      }
      PERF_API(MPIGPU_Bcast(&ok, MPIGPU_BUF_HOST, 1, MPIGPU_INT, r, MPIGPU_COMM_WORLD));
      if (!ok) {
        if (c.rank == 0) shm_unlink(name.c_str());
        if (page != MAP_FAILED) munmap(page, 4096);
        return Status(Err::kSystem, "no shared memory for the cache line (" + name + ")");
      }
    }
    if (c.rank == 0) shm_unlink(name.c_str());  // both have it mapped
    auto* shared = static_cast<SharedLine*>(page);
    shared->cpu[c.rank] = sched_getcpu();
    PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
    perf::LineRun run;
    run.trips = 100000;
    run.budget_s = 0.2;  // ranks that share one CPU: each trip is a context switch
    run.timeout_s = 5;
    run.batch = 1000;  // the fastest 1000 trips: a floor, not this moment's average
    double round_trip_ns = kNaN;
    if (c.rank == 0) round_trip_ns = perf::LinePing(&shared->line, run);
    else perf::LineEcho(&shared->line, run.timeout_s);
    PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
    const int cpu0 = shared->cpu[0], cpu1 = shared->cpu[1];
    munmap(page, 4096);
    if (c.rank != 0) return Status::Ok();
    if (std::isnan(round_trip_ns))
      return Status(Err::kTimeout, "rank 1 did not answer the cache line within 5 s");
    *one_way_us = round_trip_ns / 2 / 1000;
    *what = "half a cache line's round trip between the ranks' cores (CPU " +
            std::to_string(cpu0) + " and " + std::to_string(cpu1) + ", " +
            FormatValue(round_trip_ns) +
            " ns, the fastest 1000 trips; store release, load acquire; two processes)";
    return Status::Ok();
  }
};

// Rank 0 alone, with both GPUs, between barriers (rank 1 waits), like the copy limit.
class GpuFlagFloor : public ConstantFloor {
 protected:
  Status Measure(Ctx& c, double* one_way_us, std::string* what) override {
    PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
    Status st;
    if (c.rank == 0) st = Rank0(c.setup->device, c.setup->peer_device, one_way_us, what);
    PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
    return st;
  }

 private:
  static Status Rank0(int a, int b, double* one_way_us, std::string* what) {
    if (a < 0 || b < 0) return Status(Err::kNoGpu, "no CUDA device");
    if (a != b) {
      for (auto [x, y] : {std::pair<int, int>{a, b}, std::pair<int, int>{b, a}}) {
        int can = 0;
        cudaDeviceCanAccessPeer(&can, x, y);
        if (!can)
          return Status(Err::kCuda, "GPU" + std::to_string(x) + " cannot write GPU" +
                                               std::to_string(y) + "'s memory (no peer access)");
        DeviceScope on(x);
        if (cudaDeviceEnablePeerAccess(y, 0) == cudaErrorPeerAccessAlreadyEnabled)
          cudaGetLastError();  // fine: clear it
      }
    }
    FlagTrips trips;
    constexpr int kTrips = 10000;
    const cudaError_t e = GpuFlagRoundTrip(a, b, 100, kTrips, 2000, &trips);
    if (e != cudaSuccess)
      return Status(Err::kCuda, std::string("flag kernels: ") + cudaGetErrorString(e));
    if (!trips.answered)
      return Status(Err::kTimeout, "the flag kernels on GPU" + std::to_string(a) + " and GPU" +
                                       std::to_string(b) + " did not run at once within 2 s");
    *one_way_us = trips.round_trip_ns / 2 / 1000;
    *what = "half a flag's round trip between kernels on GPU" + std::to_string(a) + " and GPU" +
            std::to_string(b) + (a == b ? " (one GPU visible: two kernels on it)" : "") + " (" +
            FormatValue(trips.round_trip_ns / 1000) +
            " us; one thread each, system-scope release store, acquire load)";
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<SeriesRunner> MakeCacheLineFloor() { return std::make_unique<CacheLineFloor>(); }
std::unique_ptr<SeriesRunner> MakeGpuFlagFloor() { return std::make_unique<GpuFlagFloor>(); }

}  // namespace sweep
}  // namespace mpigpu

// Host<->device copies from a pageable buffer on its 1st, 2nd and nth use, against a pinned
// buffer (cudaMallocHost): what the pin cache (memreg/pin_cache.h) gives.
//   pincache_bench local [max_bytes]            one process, through CudaCopyEngine (the path
//                                               every transport's device copy takes)
//   mpigpurun -n 2 pincache_bench ranks [max]   two ranks (on one GPU or two): rank 0's host
//                                               buffer, rank 1's device buffer, through the API
// Per size (4 KiB to max, x4) and direction: a fresh buffer (mmap, written once) is copied once
// (1st), again (2nd: the pin cache registers here), then `iters` times (nth: the median); the
// 1st and 2nd are medians over 3 fresh buffers. Times in us; GB/s of the nth and of pinned; the
// ratio nth/pinned. In `ranks` the time is rank 0's: H2D = send + a 1-byte ack back; D2H = a
// 1-byte request + the receive. MPIGPU_PIN_CACHE=0 gives the pageable rate for every use.
#include <cuda_runtime_api.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "memreg/pin_cache.h"
#include "mpigpu_api/mpigpu.h"
#include "pipeline/copy_engine.h"

using namespace mpigpu;

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "pincache_bench: %s\n", what.c_str());
  std::exit(1);
}

void CheckCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) Die(std::string(what) + ": " + cudaGetErrorString(e));
}

char* FreshPageable(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) Die("mmap failed");
  std::memset(p, 0x5a, n);  // an application's buffer has been written
  return static_cast<char*>(p);
}

int Iters(size_t n) { return static_cast<int>(std::clamp<size_t>((256u << 20) / n, 5, 100)); }

struct Row {
  double first, second, nth, pinned;  // us
};

// `op(buf, n)` times one copy of n bytes with `buf` as the host side (seconds).
Row Measure(size_t n, const std::function<double(char*, size_t)>& op, char* pinned_buf) {
  std::vector<double> firsts, seconds, nths;
  for (int trial = 0; trial < 3; ++trial) {
    char* b = FreshPageable(n);
    firsts.push_back(op(b, n));
    seconds.push_back(op(b, n));
    if (trial == 0)
      for (int i = 0; i < Iters(n); ++i) nths.push_back(op(b, n));
    munmap(b, n);
    memreg::PinCacheSync();
  }
  std::vector<double> pins;
  for (int i = 0; i < Iters(n); ++i) pins.push_back(op(pinned_buf, n));
  return {Median(firsts) * 1e6, Median(seconds) * 1e6, Median(nths) * 1e6, Median(pins) * 1e6};
}

void PrintHeader(const char* mode) {
  std::printf("# pincache_bench %s: pin cache %s%s%s\n", mode,
              memreg::PinCacheActive() ? "on" : "off (", memreg::PinCacheActive() ? "" :
              memreg::PinCacheWhyNot(), memreg::PinCacheActive() ? "" : ")");
  std::printf("# dir  bytes  1st_us  2nd_us  nth_us  pinned_us  nth_GBps  pinned_GBps  nth/pinned\n");
}

void PrintRow(const char* dir, size_t n, const Row& r) {
  const double nth_bw = n / (r.nth * 1e3), pin_bw = n / (r.pinned * 1e3);
  std::printf("%s %zu %.1f %.1f %.1f %.1f %.2f %.2f %.0f%%\n", dir, n, r.first, r.second, r.nth,
              r.pinned, nth_bw, pin_bw, 100.0 * nth_bw / pin_bw);
  std::fflush(stdout);
}

int Local(size_t max) {
  if (CudaDeviceCount() == 0) Die("no CUDA device");
  CudaCopyEngine e;
  if (!CudaCopyEngine::Create(0, &e).ok()) Die("CudaCopyEngine::Create");
  void* dev = nullptr;
  char* pinned = nullptr;
  CheckCuda(cudaMalloc(&dev, max), "cudaMalloc");
  CheckCuda(cudaMallocHost(reinterpret_cast<void**>(&pinned), max), "cudaMallocHost");
  auto copy = [&](bool h2d) {
    return [&, h2d](char* host, size_t n) {
      const double t0 = Now();
      Ticket t = 0;
      Status st = h2d ? e.Issue(dev, MemLoc::Device(0), host, MemLoc::Host(), n)
                      : e.Issue(host, MemLoc::Host(), dev, MemLoc::Device(0), n);
      if (st.ok()) st = e.Mark(&t);
      if (st.ok()) st = e.Wait(t);
      if (!st.ok()) Die(st.ToString());
      return Now() - t0;
    };
  };
  PrintHeader("local (one process, CudaCopyEngine)");
  for (size_t n = 4096; n <= max; n *= 4) PrintRow("H2D", n, Measure(n, copy(true), pinned));
  for (size_t n = 4096; n <= max; n *= 4) PrintRow("D2H", n, Measure(n, copy(false), pinned));
  cudaFree(dev);
  cudaFreeHost(pinned);
  return 0;
}

void Api(int rc, const char* what) {
  if (rc != MPIGPU_SUCCESS) Die(std::string(what) + " failed");
}

int Ranks(size_t max, int argc, char** argv) {
  Api(MPIGPU_Init(&argc, &argv), "MPIGPU_Init");
  int rank = 0, size = 0;
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &size);
  if (size != 2) Die("needs 2 ranks");
  const int count = static_cast<int>(max);
  char one = 0;
  void* dev = nullptr;
  char* pinned = nullptr;
  if (rank == 1) CheckCuda(cudaMalloc(&dev, max), "cudaMalloc");
  if (rank == 0) CheckCuda(cudaMallocHost(reinterpret_cast<void**>(&pinned), max), "cudaMallocHost");
  // Rank 1 mirrors rank 0's schedule: Measure's calls, without timing.
  auto h2d = [&](char* host, size_t n) {
    const double t0 = MPIGPU_Wtime();
    if (rank == 0) {
      Api(MPIGPU_Send(host, MPIGPU_BUF_HOST, static_cast<int>(n), MPIGPU_BYTE, 1, 1, MPIGPU_COMM_WORLD), "send");
      Api(MPIGPU_Recv(&one, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 1, 2, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE), "ack");
    } else {
      Api(MPIGPU_Recv(dev, MPIGPU_BUF_GPU, static_cast<int>(n), MPIGPU_BYTE, 0, 1, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE), "recv");
      Api(MPIGPU_Send(&one, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, 2, MPIGPU_COMM_WORLD), "ack");
    }
    return MPIGPU_Wtime() - t0;
  };
  auto d2h = [&](char* host, size_t n) {
    const double t0 = MPIGPU_Wtime();
    if (rank == 0) {
      Api(MPIGPU_Send(&one, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 1, 3, MPIGPU_COMM_WORLD), "go");
      Api(MPIGPU_Recv(host, MPIGPU_BUF_HOST, static_cast<int>(n), MPIGPU_BYTE, 1, 4, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE), "recv");
    } else {
      Api(MPIGPU_Recv(&one, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, 3, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE), "go");
      Api(MPIGPU_Send(dev, MPIGPU_BUF_GPU, static_cast<int>(n), MPIGPU_BYTE, 0, 4, MPIGPU_COMM_WORLD), "send");
    }
    return MPIGPU_Wtime() - t0;
  };
  (void)count;
  // Rank 1 needs host buffers for the schedule's shape only: it never touches them.
  char dummy_host = 0;
  auto run = [&](const char* dir, const std::function<double(char*, size_t)>& op) {
    for (size_t n = 4096; n <= max; n *= 4) {
      if (rank == 0) {
        PrintRow(dir, n, Measure(n, op, pinned));
      } else {
        for (int trial = 0; trial < 3; ++trial) {
          op(&dummy_host, n);
          op(&dummy_host, n);
          if (trial == 0)
            for (int i = 0; i < Iters(n); ++i) op(&dummy_host, n);
        }
        for (int i = 0; i < Iters(n); ++i) op(&dummy_host, n);
      }
    }
  };
  if (rank == 0) PrintHeader("ranks (rank 0 host, rank 1 device, through the API)");
  run("H2D", h2d);
  run("D2H", d2h);
  if (dev) cudaFree(dev);
  if (pinned) cudaFreeHost(pinned);
  Api(MPIGPU_Finalize(), "MPIGPU_Finalize");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::string mode = argc > 1 ? argv[1] : "local";
  const size_t max = argc > 2 ? std::strtoull(argv[2], nullptr, 0) : (64u << 20);
  if (max < 4096 || max > (1u << 30)) Die("max_bytes: 4096 .. 1 GiB");
  if (mode == "local") return Local(max);
  if (mode == "ranks") return Ranks(max, argc, argv);
  Die("usage: pincache_bench local|ranks [max_bytes]");
}

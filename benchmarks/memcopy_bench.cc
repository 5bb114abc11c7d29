// The seed paper's Figures 4 and 5 on today's hardware:
//  - BM_DeviceCopy: one copy (issued, then waited for) per iteration for each strategy —
//    `bare` (cudaMemcpyAsync with the explicit kind, nothing else: the limit), `parameterized`
//    (mpigpu::Copy), `uva` (cudaMemcpyDefault) and `query` (cudaPointerGetAttributes first) — for
//    H2D, D2H, D2D and P2P (GPU 0 -> GPU 1) from 8 B to 64 MiB, pinned host memory.
//  - BM_HostCopy: host-to-host copy bandwidth, memcpy against non-temporal stores, 1 KiB-256 MiB,
//    to place MPIGPU_MEMCPY_NT_THRESHOLD.
//  - BM_Strategies: the same four strategies timed in one loop in rotating order (robust against
//    drift): medians, param/bare (the acceptance check: within 3% at every size) and what the
//    query adds over the parameterized copy.
// Run: bazel run -c opt //benchmarks:memcopy_bench -- --benchmark_repetitions=5
//        --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"

namespace mpigpu {
namespace {

enum Dir { kH2D, kD2H, kD2D, kP2P };
const char* const kDirNames[] = {"H2D", "D2H", "D2D", "P2P"};
enum Strat { kBare, kParam, kUva, kQuery };
const char* const kStratNames[] = {"bare", "parameterized", "uva", "query"};

constexpr size_t kMaxBytes = size_t{64} << 20;

struct DeviceBuffers {
  void* host = nullptr;     // pinned
  void* dev0 = nullptr;     // GPU 0
  void* dev0b = nullptr;    // second buffer on GPU 0
  void* dev1 = nullptr;     // GPU 1, if present
  cudaStream_t stream = nullptr;
};

DeviceBuffers& Buffers() {
  static DeviceBuffers b = [] {
    DeviceBuffers x;
    cudaSetDevice(0);
    cudaMallocHost(&x.host, kMaxBytes);
    std::memset(x.host, 1, kMaxBytes);
    cudaMalloc(&x.dev0, kMaxBytes);
    cudaMalloc(&x.dev0b, kMaxBytes);
    if (CudaDeviceCount() > 1) {
      cudaSetDevice(1);
      cudaMalloc(&x.dev1, kMaxBytes);
      cudaDeviceEnablePeerAccess(0, 0);
      cudaSetDevice(0);
      cudaDeviceEnablePeerAccess(1, 0);
      (void)cudaGetLastError();
    }
    cudaStreamCreateWithFlags(&x.stream, cudaStreamNonBlocking);
    return x;
  }();
  return b;
}

void BM_DeviceCopy(benchmark::State& state, Dir dir, Strat strat) {
  DeviceBuffers& b = Buffers();
  size_t bytes = static_cast<size_t>(state.range(0));
  void *dst = nullptr, *src = nullptr;
  MemLoc dl, sl;
  cudaMemcpyKind kind = cudaMemcpyDeviceToDevice;
  switch (dir) {
    case kH2D: dst = b.dev0; dl = MemLoc::Device(0); src = b.host; sl = MemLoc::Host();
      kind = cudaMemcpyHostToDevice; break;
    case kD2H: dst = b.host; dl = MemLoc::Host(); src = b.dev0; sl = MemLoc::Device(0);
      kind = cudaMemcpyDeviceToHost; break;
    case kD2D: dst = b.dev0b; dl = MemLoc::Device(0); src = b.dev0; sl = MemLoc::Device(0); break;
    case kP2P: dst = b.dev1; dl = MemLoc::Device(1); src = b.dev0; sl = MemLoc::Device(0); break;
  }
  for (auto _ : state) {
    if (strat == kBare) {
      cudaError_t e = dir == kP2P ? cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, b.stream)
                                  : cudaMemcpyAsync(dst, src, bytes, kind, b.stream);
      if (e != cudaSuccess) state.SkipWithError(cudaGetErrorString(e));
    } else {
      static const CopyStrategy map[] = {CopyStrategy::kParameterized, CopyStrategy::kParameterized,
                                         CopyStrategy::kUvaDefault, CopyStrategy::kQuery};
      Status st = CopyWithStrategy(map[strat], dst, dl, src, sl, bytes, b.stream);
      if (!st.ok()) state.SkipWithError(st.ToString().c_str());
    }
    cudaStreamSynchronize(b.stream);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  state.counters["us_per_copy"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * 1e-6,
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The four strategies timed in one loop, each round in a rotated order, so drift in the machine
// hits all alike: each copy is issued and waited for. Reports the median of each, the
// parameterized copy's ratio to the bare cudaMemcpyAsync (the acceptance check: within 3% at
// every size) and what the query strategy adds over the parameterized one (the paper's Fig. 4).
void BM_Strategies(benchmark::State& state, Dir dir) {
  DeviceBuffers& b = Buffers();
  size_t bytes = static_cast<size_t>(state.range(0));
  void* dst = dir == kH2D ? b.dev0 : dir == kD2H ? b.host : dir == kD2D ? b.dev0b : b.dev1;
  void* src = dir == kH2D ? b.host : b.dev0;
  MemLoc dl = dir == kD2H ? MemLoc::Host() : MemLoc::Device(dir == kP2P ? 1 : 0);
  MemLoc sl = dir == kH2D ? MemLoc::Host() : MemLoc::Device(0);
  cudaMemcpyKind kind = dir == kH2D ? cudaMemcpyHostToDevice
                        : dir == kD2H ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
  std::vector<double> us[4];
  auto now = [] { return std::chrono::steady_clock::now(); };
  int round = 0;
  for (auto _ : state) {
    for (int k = 0; k < 4; ++k) {
      int strat = (k + round) % 4;
      auto t0 = now();
      if (strat == kBare) {
        if (dir == kP2P) cudaMemcpyPeerAsync(dst, 1, src, 0, bytes, b.stream);
        else cudaMemcpyAsync(dst, src, bytes, kind, b.stream);
      } else {
        static const CopyStrategy map[] = {CopyStrategy::kParameterized,
                                           CopyStrategy::kParameterized, CopyStrategy::kUvaDefault,
                                           CopyStrategy::kQuery};
        (void)CopyWithStrategy(map[strat], dst, dl, src, sl, bytes, b.stream);
      }
      cudaStreamSynchronize(b.stream);
      us[strat].push_back(std::chrono::duration<double, std::micro>(now() - t0).count());
    }
    ++round;
  }
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  double m[4];
  for (int k = 0; k < 4; ++k) m[k] = median(us[k]);
  state.counters["bare_us"] = m[kBare];
  state.counters["param_us"] = m[kParam];
  state.counters["uva_us"] = m[kUva];
  state.counters["query_us"] = m[kQuery];
  state.counters["param_over_bare"] = m[kParam] / m[kBare];
  state.counters["query_minus_param_us"] = m[kQuery] - m[kParam];
  state.counters["bare_GBps"] = static_cast<double>(bytes) / m[kBare] * 1e-3;
}

void BM_HostCopy(benchmark::State& state, bool streaming) {
  size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<char> src(bytes, 3), dst(bytes);
  for (auto _ : state) {
    if (streaming) StreamingCopy(dst.data(), src.data(), bytes);
    else std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

void RegisterAll() {
  for (bool nt : {false, true})
    benchmark::RegisterBenchmark(nt ? "BM_HostCopy/nontemporal" : "BM_HostCopy/memcpy",
                                 BM_HostCopy, nt)
        ->RangeMultiplier(2)
        ->Range(1 << 10, 256 << 20)
        ->UseRealTime();
  int gpus = CudaDeviceCount();
  if (gpus == 0) {
    std::fprintf(stderr, "memcopy_bench: no CUDA device; only host copies are measured\n");
    return;
  }
  for (int d = kH2D; d <= kP2P; ++d) {
    if (d == kP2P && gpus < 2) continue;
    benchmark::RegisterBenchmark((std::string("BM_Strategies/") + kDirNames[d]).c_str(),
                                 BM_Strategies, static_cast<Dir>(d))
        ->RangeMultiplier(8)
        ->Range(8, static_cast<int64_t>(kMaxBytes))
        ->UseRealTime();
    for (int s = kBare; s <= kQuery; ++s) {
      std::string name = std::string("BM_DeviceCopy/") + kDirNames[d] + "/" + kStratNames[s];
      benchmark::RegisterBenchmark(name.c_str(), BM_DeviceCopy, static_cast<Dir>(d),
                                   static_cast<Strat>(s))
          ->RangeMultiplier(8)
          ->Range(8, static_cast<int64_t>(kMaxBytes))
          ->UseRealTime();
    }
  }
}

}  // namespace
}  // namespace mpigpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  mpigpu::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

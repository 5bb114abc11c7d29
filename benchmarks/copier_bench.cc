// What one small device copy costs from the moment the CPU asks until the CPU knows it is done,
// the quantity that bounds small GPU-message latency (ANCHORS.md: 7-10 us through the copy engine,
// 3.4 us for a resident kernel):
//  - BM_Copier: the resident copy kernel (transport/lmt/device_copier.h), Submit then poll Done;
//  - BM_CopyEngine: cudaMemcpyAsync / cudaMemcpy2DAsync on a non-blocking stream, then an event
//    polled with cudaEventQuery (what the engine's copy engine does).
// Shapes: 8 B and 4 KiB contiguous, and a halo column (512 rows of 8 B, pitch 4 KiB); sources on
// this GPU (local) or on GPU 1 read over NVLink through peer access (the IPC pull's access path).
// Run: bazel run -c opt //benchmarks:copier_bench
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "memcopy/memcopy.h"
#include "transport/lmt/device_copier.h"

namespace mpigpu {
namespace {

struct Shape {
  size_t width, height;
};
constexpr Shape kShapes[] = {{8, 1}, {4096, 1}, {8, 512}};
constexpr size_t kPitch = 4096;

struct Buffers {
  char* dst = nullptr;
  char* src_local = nullptr;
  char* src_peer = nullptr;  // on GPU 1, null without one
  cudaStream_t stream = nullptr;
  cudaEvent_t event = nullptr;
  transport::DeviceCopier copier;
  bool ok = false;
};

Buffers& Get() {
  static Buffers* b = [] {
    auto* b = new Buffers();
    const size_t bytes = kPitch * 512;
    if (CudaDeviceCount() == 0) return b;
    if (CudaDeviceCount() > 1) {
      cudaSetDevice(1);
      cudaMalloc(reinterpret_cast<void**>(&b->src_peer), bytes);
      cudaMemset(b->src_peer, 1, bytes);
      cudaSetDevice(0);
      cudaDeviceEnablePeerAccess(1, 0);
    }
    cudaSetDevice(0);
    cudaMalloc(reinterpret_cast<void**>(&b->dst), bytes);
    cudaMalloc(reinterpret_cast<void**>(&b->src_local), bytes);
    cudaMemset(b->src_local, 2, bytes);
    cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&b->event, cudaEventDisableTiming);
    b->ok = cudaDeviceSynchronize() == cudaSuccess && b->copier.Init(0, 500).ok();
    return b;
  }();
  return *b;
}

// Why a case cannot run here, or null.
const char* Skip(const Buffers& b, bool peer) {
  if (!b.ok) return "no CUDA device";
  if (peer && b.src_peer == nullptr) return "needs two GPUs";
  return nullptr;
}

void BM_Copier(benchmark::State& state, bool peer, Shape s) {
  Buffers& b = Get();
  if (const char* why = Skip(b, peer)) return state.SkipWithError(why);
  transport::CopyDesc d{b.dst, peer ? b.src_peer : b.src_local, kPitch, kPitch, s.width, s.height};
  for (auto _ : state) {
    uint64_t ticket = 0;
    bool queued = false;
    if (!b.copier.Submit(d, &ticket, &queued).ok() || !queued)
      return state.SkipWithError("copier submit failed");
    while (!b.copier.Done(ticket)) {
    }
  }
  state.SetBytesProcessed(state.iterations() * s.width * s.height);
}

void BM_CopyEngine(benchmark::State& state, bool peer, Shape s) {
  Buffers& b = Get();
  if (const char* why = Skip(b, peer)) return state.SkipWithError(why);
  const char* src = peer ? b.src_peer : b.src_local;
  for (auto _ : state) {
    cudaError_t e = s.height == 1
                        ? cudaMemcpyAsync(b.dst, src, s.width, cudaMemcpyDeviceToDevice, b.stream)
                        : cudaMemcpy2DAsync(b.dst, kPitch, src, kPitch, s.width, s.height,
                                            cudaMemcpyDeviceToDevice, b.stream);
    if (e == cudaSuccess) e = cudaEventRecord(b.event, b.stream);
    if (e != cudaSuccess) return state.SkipWithError(cudaGetErrorString(e));
    while ((e = cudaEventQuery(b.event)) == cudaErrorNotReady) {
    }
    if (e != cudaSuccess) return state.SkipWithError(cudaGetErrorString(e));
  }
  state.SetBytesProcessed(state.iterations() * s.width * s.height);
}

void Register() {
  for (bool peer : {false, true})
    for (Shape s : kShapes) {
      const std::string name = std::string(peer ? "peer/" : "local/") + std::to_string(s.width) +
                               "x" + std::to_string(s.height);
      benchmark::RegisterBenchmark(("BM_Copier/" + name).c_str(), BM_Copier, peer, s)
          ->UseRealTime();
      benchmark::RegisterBenchmark(("BM_CopyEngine/" + name).c_str(), BM_CopyEngine, peer, s)
          ->UseRealTime();
    }
}

}  // namespace
}  // namespace mpigpu

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  mpigpu::Register();
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}

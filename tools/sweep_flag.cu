#include "tools/sweep_flag.h"

#include <cstdint>

namespace mpigpu {
namespace sweep {
namespace {

__device__ __forceinline__ void StoreRelease(unsigned* p, unsigned v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ unsigned LoadAcquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ uint64_t NowNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

constexpr unsigned kGaveUp = 0xFFFFFFFFu;

// Until *flag holds `want` (true) or kGaveUp or the deadline passes (false).
__device__ bool WaitFor(const unsigned* flag, unsigned want, uint64_t deadline) {
  for (;;) {
    const unsigned v = LoadAcquire(flag);
    if (v == want) return true;
    if (v == kGaveUp || NowNs() > deadline) return false;
  }
}

// `mine` lives on this kernel's GPU and the other side writes it; `theirs` the other way round.
__global__ void Ping(unsigned* mine, unsigned* theirs, int warmup, int trips, uint64_t timeout_ns,
                     unsigned long long* elapsed_ns) {
  const uint64_t deadline = NowNs() + timeout_ns;
  uint64_t t0 = NowNs();
  for (int i = 0; i < warmup + trips; ++i) {
    if (i == warmup) t0 = NowNs();
    StoreRelease(theirs, 2u * i + 1);
    if (!WaitFor(mine, 2u * i + 2, deadline)) {
      StoreRelease(theirs, kGaveUp);
      *elapsed_ns = 0;
      return;
    }
  }
  const uint64_t dt = NowNs() - t0;
  *elapsed_ns = dt > 0 ? dt : 1;
}

__global__ void Echo(unsigned* mine, unsigned* theirs, int total, uint64_t timeout_ns) {
  const uint64_t deadline = NowNs() + timeout_ns;
  for (int i = 0; i < total; ++i) {
    if (!WaitFor(mine, 2u * i + 1, deadline)) return;
    StoreRelease(theirs, 2u * i + 2);
  }
}

// What the measurement holds on each GPU, freed with its device current.
struct Side {
  int device = -1;
  unsigned* flag = nullptr;
  unsigned long long* elapsed = nullptr;
  cudaStream_t stream = nullptr;
  ~Side() {
    if (device < 0) return;
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (flag != nullptr) cudaFree(flag);
    if (elapsed != nullptr) cudaFree(elapsed);
    cudaSetDevice(prev);
  }
  cudaError_t Init(int dev) {
    device = dev;
    cudaError_t e = cudaSetDevice(dev);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaMalloc(&flag, sizeof *flag);
    if (e == cudaSuccess) e = cudaMalloc(&elapsed, sizeof *elapsed);
    if (e == cudaSuccess) e = cudaMemset(flag, 0, sizeof *flag);
    if (e == cudaSuccess) e = cudaMemset(elapsed, 0, sizeof *elapsed);
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    return e;
  }
};

}  // namespace

cudaError_t GpuFlagRoundTrip(int a, int b, int warmup, int trips, int timeout_ms, FlagTrips* out) {
  *out = FlagTrips();
  int prev = 0;
  cudaError_t e = cudaGetDevice(&prev);
  if (e != cudaSuccess) return e;
  const uint64_t timeout_ns = static_cast<uint64_t>(timeout_ms) * 1000000u;
  cudaError_t result;
  {
    Side pinger, echo;
    result = pinger.Init(a);
    if (result == cudaSuccess) result = echo.Init(b);
    // The echo first: the pinger's first store finds it polling, or waits for it to start.
    if (result == cudaSuccess) {
      cudaSetDevice(b);
      Echo<<<1, 1, 0, echo.stream>>>(echo.flag, pinger.flag, warmup + trips, timeout_ns);
      result = cudaGetLastError();
    }
    if (result == cudaSuccess) {
      cudaSetDevice(a);
      Ping<<<1, 1, 0, pinger.stream>>>(pinger.flag, echo.flag, warmup, trips, timeout_ns,
                                       pinger.elapsed);
      result = cudaGetLastError();
    }
    if (result == cudaSuccess) result = cudaStreamSynchronize(pinger.stream);
    if (result == cudaSuccess) result = cudaStreamSynchronize(echo.stream);
    unsigned long long ns = 0;
    if (result == cudaSuccess)
      result = cudaMemcpy(&ns, pinger.elapsed, sizeof ns, cudaMemcpyDeviceToHost);
    if (result == cudaSuccess && ns > 0 && trips > 0) {
      out->answered = true;
      out->round_trip_ns = static_cast<double>(ns) / trips;
    }
  }
  cudaSetDevice(prev);
  return result;
}

}  // namespace sweep
}  // namespace mpigpu

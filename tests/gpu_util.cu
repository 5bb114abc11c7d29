#include "tests/gpu_util.h"

#include "memcopy/pattern.h"

namespace mpigpu::testing {
namespace {

__global__ void FillKernel(uint8_t* buf, size_t bytes, uint32_t seed, uint64_t first) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < bytes;
       i += size_t{gridDim.x} * blockDim.x)
    buf[i] = PatternByte(seed, first + i);
}

__global__ void CountKernel(const uint8_t* buf, size_t bytes, uint32_t seed, uint64_t first,
                            unsigned long long* count) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < bytes;
       i += size_t{gridDim.x} * blockDim.x)
    local += buf[i] != PatternByte(seed, first + i);
  if (local) atomicAdd(count, local);
}

__global__ void DelayedFillKernel(uint8_t* buf, size_t bytes, uint32_t seed, long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < bytes;
       i += size_t{gridDim.x} * blockDim.x)
    buf[i] = PatternByte(seed, i);
}

unsigned GridFor(size_t bytes) {
  size_t blocks = (bytes + 255) / 256;
  return static_cast<unsigned>(blocks < 1024 ? (blocks ? blocks : 1) : 1024);
}

}  // namespace

cudaError_t FillPatternOnDevice(void* buf, size_t bytes, uint32_t seed, uint64_t first) {
  if (bytes == 0) return cudaSuccess;
  FillKernel<<<GridFor(bytes), 256>>>(static_cast<uint8_t*>(buf), bytes, seed, first);
  cudaError_t e = cudaGetLastError();
  return e != cudaSuccess ? e : cudaDeviceSynchronize();
}

cudaError_t FillPatternLaterOnDefaultStream(void* buf, size_t bytes, uint32_t seed,
                                            unsigned delay_us) {
  int device = 0, khz = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device);
  if (e != cudaSuccess) return e;
  const long long cycles = static_cast<long long>(khz) * delay_us / 1000;
  DelayedFillKernel<<<GridFor(bytes), 256, 0, cudaStreamLegacy>>>(static_cast<uint8_t*>(buf),
                                                                  bytes, seed, cycles);
  return cudaGetLastError();
}

cudaError_t CountMismatchesOnDevice(const void* buf, size_t bytes, uint32_t seed,
                                    unsigned long long* mismatches, uint64_t first) {
  *mismatches = 0;
  if (bytes == 0) return cudaSuccess;
  unsigned long long* d_count = nullptr;
  cudaError_t e = cudaMalloc(&d_count, sizeof *d_count);
  if (e != cudaSuccess) return e;
  e = cudaMemset(d_count, 0, sizeof *d_count);
  if (e == cudaSuccess) {
    CountKernel<<<GridFor(bytes), 256>>>(static_cast<const uint8_t*>(buf), bytes, seed, first,
                                         d_count);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpy(mismatches, d_count, sizeof *d_count, cudaMemcpyDeviceToHost);
  cudaFree(d_count);
  return e;
}

}  // namespace mpigpu::testing

// Device-side pattern fill and verify for GPU tests (kernels in gpu_util.cu): large device
// buffers are checked where they live, without copying them back.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mpigpu::testing {

// Fills `bytes` at device pointer `buf` with PatternByte(seed, first + i); synchronous.
cudaError_t FillPatternOnDevice(void* buf, size_t bytes, uint32_t seed, uint64_t first = 0);
// Counts the bytes at device pointer `buf` that differ from the pattern; synchronous.
cudaError_t CountMismatchesOnDevice(const void* buf, size_t bytes, uint32_t seed,
                                    unsigned long long* mismatches, uint64_t first = 0);

// Launches, on the legacy default stream and without waiting, a kernel that first spins for
// about `delay_us` microseconds and then fills `bytes` at `buf` with PatternByte(seed, i): the
// program's own work that a send must wait for.
cudaError_t FillPatternLaterOnDefaultStream(void* buf, size_t bytes, uint32_t seed,
                                            unsigned delay_us);

}  // namespace mpigpu::testing

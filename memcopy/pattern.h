// Verification patterns (tests, benchmarks, the sweep's -c): byte i of a buffer filled with
// seed s is PatternByte(s, i). Distinct seeds give
// different bytes at almost every position, so a stale or misplaced copy is caught.
#pragma once

#include <cstddef>
#include <cstdint>

#ifdef __CUDACC__
#define MPIGPU_HD __host__ __device__
#else
#define MPIGPU_HD
#endif

namespace mpigpu::testing {

MPIGPU_HD inline uint8_t PatternByte(uint32_t seed, uint64_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t{seed} * 0xD1B54A32D192ED03ull);
  x ^= x >> 29;
  return static_cast<uint8_t>(x * 0xBF58476D1CE4E5B9ull >> 56);
}

inline void FillPattern(void* buf, size_t bytes, uint32_t seed, uint64_t first = 0) {
  auto* p = static_cast<uint8_t*>(buf);
  for (size_t i = 0; i < bytes; ++i) p[i] = PatternByte(seed, first + i);
}

// Index of the first byte that differs from the pattern, or -1 when all match.
inline long long FirstMismatch(const void* buf, size_t bytes, uint32_t seed, uint64_t first = 0) {
  auto* p = static_cast<const uint8_t*>(buf);
  for (size_t i = 0; i < bytes; ++i)
    if (p[i] != PatternByte(seed, first + i)) return static_cast<long long>(i);
  return -1;
}

}  // namespace mpigpu::testing

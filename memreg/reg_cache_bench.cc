// What the cache and its hooks cost, with a registration that does nothing (the device's own
// ibv_reg_mr cost comes on top of a miss): a hit (Acquire + Release of a cached region, among
// `n` cached regions), a miss (a fresh page range each time), and mmap + munmap of one page with
// and without a cache alive (the hooks log only while one exists).
//   bazel run -c opt //memreg:reg_cache_bench
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <vector>

#include "memreg/reg_cache.h"

using mpigpu::Status;
using mpigpu::memreg::RegCache;
using mpigpu::memreg::Region;

namespace {

double NsPer(int iters, std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() /
         iters;
}

double MapUnmapNs() {
  const int iters = 20000;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    void* p = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    munmap(p, 4096);
  }
  return NsPer(iters, t0);
}

}  // namespace

int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  (void)MapUnmapNs();  // warm-up: the first mappings cost more (page tables)
  const double map_no_cache = MapUnmapNs();
  auto reg = [](void* addr, size_t, void** h) {
    *h = addr;
    return Status::Ok();
  };
  auto dereg = [](void*) {};
  RegCache cache(reg, dereg, size_t{1} << 40, 1 << 20);
  if (!cache.caching()) {
    std::printf("cache off: %s\n", cache.why_not_caching());
    return 1;
  }
  const double map_cache = MapUnmapNs();
  std::printf("mmap+munmap of one page: %.0f ns without a cache, %.0f ns with one\n",
              map_no_cache, map_cache);
  const size_t max_n = 4096;
  char* area = static_cast<char*>(mmap(nullptr, 2 * max_n * page, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  for (size_t n : {size_t{1}, size_t{64}, max_n}) {
    for (size_t i = 0; i < n; ++i) {  // n cached regions, one page apart
      Region* r;
      if (!cache.Acquire(area + 2 * i * page, 64, &r).ok()) return 1;
      cache.Release(r);
    }
    const int iters = 1000000;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      Region* r;
      (void)cache.Acquire(area + 2 * ((static_cast<size_t>(i) * 7919) % n) * page + 8, 64, &r);
      cache.Release(r);
    }
    std::printf("hit (Acquire+Release), %zu cached: %.1f ns\n", n, NsPer(iters, t0));
  }
  munmap(area, 2 * max_n * page);
  const int iters = 20000;
  std::vector<char> big(static_cast<size_t>(iters + 1) * page);
  char* base = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(big.data()) + page - 1) &
                                       ~(page - 1));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) {
    Region* r;
    (void)cache.Acquire(base + static_cast<size_t>(i) * page, 64, &r);
    cache.Release(r);
  }
  std::printf("miss (Acquire+Release of a new page, a no-op registration): %.1f ns\n",
              NsPer(iters, t0));
  return 0;
}

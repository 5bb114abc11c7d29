// The pin cache's cost on a hit: the pagemap check (one pread of 8 bytes per 4 KiB page, then a
// compare with the PFNs kept at registration) against the ~300 us that 16 MiB take to copy at the
// PCIe limit. A fake registrar stands in for cudaHostRegister, so no GPU is needed; PFNs need
// root (otherwise the cache is inactive and the benchmark says so).
#include <sys/mman.h>

#include <benchmark/benchmark.h>

#include <cstring>

#include "memcopy/config.h"
#include "transport/pin_cache.h"

namespace mpigpu {
namespace {

// Faults the pages in, as cudaHostRegister does; registers nothing.
class TouchRegistrar : public PinRegistrar {
 public:
  cudaError_t Register(void* addr, size_t bytes) override {
    std::memset(addr, 1, bytes);
    return cudaSuccess;
  }
  cudaError_t Unregister(void*) override { return cudaSuccess; }
};

void BM_PinCacheHit(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0)) << 20;
  Config config;
  (void)ParseConfig([](const char*) -> const char* { return nullptr; }, &config);
  TouchRegistrar registrar;
  PinCache cache(config, &registrar);
  void* buf = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (buf == MAP_FAILED) {
    state.SkipWithError("mmap failed");
    return;
  }
  (void)cache.Acquire(buf, bytes);  // first sighting
  PinCache::Handle h = cache.Acquire(buf, bytes);  // registered
  if (h == 0) {
    state.SkipWithError("not registered: pagemap shows no PFNs (needs CAP_SYS_ADMIN)?");
    munmap(buf, bytes);
    return;
  }
  (void)cache.Release(h);
  for (auto _ : state) {
    h = cache.Acquire(buf, bytes);
    benchmark::DoNotOptimize(h);
    (void)cache.Release(h);
  }
  if (cache.stats().stale != 0) state.SkipWithError("pages changed during the run");
  state.counters["pages"] = static_cast<double>(bytes / 4096);
  (void)cache.Clear();
  munmap(buf, bytes);
}
BENCHMARK(BM_PinCacheHit)->Arg(1)->Arg(16)->Arg(64)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mpigpu

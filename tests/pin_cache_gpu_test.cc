// The pin cache through the engine, two forked ranks on GPUs: a reused pageable host buffer
// (malloc) is sent H->D and received D->H many times with new bytes each time (registered on its
// second use, hits after that, as root); and the stale case end to end: a buffer's pages are
// replaced at the same address after it was registered, and the next message must carry (or
// land in) the NEW pages, never the old registration's. Skips without a GPU.
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "memcopy/pattern.h"
#include "tests/engine_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::transport {
namespace {

using mpigpu::testing::FillPattern;
using mpigpu::testing::FirstMismatch;

constexpr size_t kBytes = size_t{8} << 20;  // above MPIGPU_PIN_CACHE_MIN's default

// Rank 0 owns the host buffer `host`, rank 1 a device buffer: a message each way with the
// pattern `seed` (H->D: rank 0 sends it; D->H: rank 1 does, into `host`), checked on arrival.
void ExchangeAndCheck(int rank, int dev, Engine* e, unsigned char* host, const Layout& layout,
                      uint32_t seed) {
  const size_t n = layout.packed_bytes();
  if (rank == 0) {
    FillPattern(host, layout.extent(), seed);
    SendOk(e, {host, MemLoc::Host(), layout}, 1, 1);
    RecvOk(e, Host(host, n), 1, 2);
    RANK_CHECK(FirstMismatch(host, n, seed + 1) == -1);
    return;
  }
  std::vector<unsigned char> expect(layout.extent()), got(n);
  FillPattern(expect.data(), expect.size(), seed);
  void* dbuf = nullptr;
  RANK_CHECK(cudaMalloc(&dbuf, n) == cudaSuccess);
  RecvOk(e, {dbuf, MemLoc::Device(dev), Layout::Contiguous(n)}, 0, 1);
  CopyToHost(&got, dbuf);
  for (size_t p = 0; p < n; ++p)  // the packed stream of rank 0's layout
    RANK_CHECK(got[p] == expect[(p / layout.block) * layout.stride + p % layout.block]);
  RANK_CHECK(cudaFree(dbuf) == cudaSuccess);
  FillPattern(got.data(), n, seed + 1);
  dbuf = DeviceCopyOf(got);
  SendOk(e, {dbuf, MemLoc::Device(dev), Layout::Contiguous(n)}, 0, 2);
  RANK_CHECK(cudaFree(dbuf) == cudaSuccess);
}

// In rank 0: what the pin cache did, and, where it is active (root), that it did it.
void ExpectCached(Engine* e, uint64_t min_hits, uint64_t min_stale) {
  const PinCacheStats s = e->pin_cache_stats();
  std::fprintf(stderr, "pin cache: active %d, %llu hits, %llu registrations, %llu stale\n",
               s.active, static_cast<unsigned long long>(s.hits),
               static_cast<unsigned long long>(s.registrations),
               static_cast<unsigned long long>(s.stale));
  if (!s.active) return;  // PFNs invisible (not root): every copy ran unregistered
  RANK_CHECK(s.registrations >= 1 && s.hits >= min_hits && s.stale >= min_stale);
}

TEST(PinCacheGpuTest, AReusedMallocBufferCarriesNewBytesEachTime) {
  std::string r = RunGpuEngineJob(false, [](int rank, int dev, Engine* e) {
    auto* host = static_cast<unsigned char*>(rank == 0 ? std::malloc(kBytes) : nullptr);
    for (uint32_t round = 0; round < 5; ++round)
      ExchangeAndCheck(rank, dev, e, host, Layout::Contiguous(kBytes), 100 + 2 * round);
    // A vector layout (a column of 4 KiB blocks) registers the span it covers.
    const Layout column = Layout::Vector(kBytes / 8192, 4096, 8192);
    for (uint32_t round = 0; round < 3; ++round)
      ExchangeAndCheck(rank, dev, e, host, column, 200 + 2 * round);
    if (rank == 0) ExpectCached(e, 6, 0);
    std::free(host);
  }, 180);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// The registration-cache bug: the buffer registered, then unmapped and a fresh mapping made at
// the same address. A registration kept would still point at the old physical pages.
TEST(PinCacheGpuTest, NewPagesAtARegisteredAddressGetTheNewBytes) {
  std::string r = RunGpuEngineJob(false, [](int rank, int dev, Engine* e) {
    unsigned char* host = nullptr;
    auto map = [&](void* at) {
      void* p = mmap(at, kBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
      RANK_CHECK(p != MAP_FAILED && (at == nullptr || p == at));
      host = static_cast<unsigned char*>(p);
    };
    if (rank == 0) map(nullptr);
    for (uint32_t round = 0; round < 3; ++round)  // seen, registered, hit
      ExchangeAndCheck(rank, dev, e, host, Layout::Contiguous(kBytes), 300 + 2 * round);
    if (rank == 0) {  // free and map again at the same address: new pages
      RANK_CHECK(munmap(host, kBytes) == 0);
      map(host);
    }
    ExchangeAndCheck(rank, dev, e, host, Layout::Contiguous(kBytes), 400);
    ExchangeAndCheck(rank, dev, e, host, Layout::Contiguous(kBytes), 402);
    if (rank == 0) {
      ExpectCached(e, 1, 1);
      RANK_CHECK(munmap(host, kBytes) == 0);
    }
    // The same through malloc and free, which often give the address back.
    void* seen = nullptr;
    for (uint32_t round = 0; round < 3; ++round) {
      host = static_cast<unsigned char*>(rank == 0 ? std::malloc(kBytes) : nullptr);
      for (uint32_t use = 0; use < 3; ++use) {
        const uint32_t seed = 500 + 10 * round + 2 * use;
        ExchangeAndCheck(rank, dev, e, host, Layout::Contiguous(kBytes), seed);
      }
      if (rank == 0 && round == 1 && host == seen)
        std::fprintf(stderr, "note: malloc gave the freed address back (the stale case ran)\n");
      seen = host;
      std::free(host);
    }
  }, 180);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::transport

// The pin cache (memreg/pin_cache.h) on a real GPU with its default settings, through
// CudaCopyEngine as the transports use it: a pageable range is copied unpinned on first use and
// its whole mapping pinned from its second, when one allocation owns that mapping (a large
// malloc'd block, an anonymous mmap); heap and brk memory never; every copy is byte-checked. The
// program's own cudaMemcpy calls must keep working around pinned blocks, live or freed (the
// failure that kept the cache off: CUDA refuses a copy that starts inside a registration and
// ends past it). The memory goes back every way the hooks cover (munmap, mremap move and shrink,
// madvise DONTNEED/FREE, malloc_trim, free of a large block then malloc, brk shrink) and the
// next copies must carry the new bytes; a pinned range freed, then cudaMallocHost /
// cudaHostAlloc / cudaMalloc / cudaMallocManaged while the address may be reused, must allocate
// and copy exactly; LRU limits, memory CUDA already pinned, threads. OffSwitch runs only with
// MPIGPU_PIN_CACHE=0 (its own target). Skips without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "memcopy/memcopy.h"
#include "memreg/memhooks.h"
#include "memreg/pin_cache.h"
#include "memreg/pin_cache_config.h"
#include "pipeline/copy_engine.h"

namespace mpigpu {
namespace {

namespace mr = memreg;

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));
constexpr size_t kDevBytes = 64 << 20;

bool PinCacheOffByEnv() {
  const char* v = std::getenv("MPIGPU_PIN_CACHE");
  return v != nullptr && std::strcmp(v, "0") == 0;
}

// Whether CUDA sees [p] as registered host memory.
bool Pinned(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

void Fill(void* p, size_t n, uint64_t seed) {
  auto* b = static_cast<unsigned char*>(p);
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    if ((i & 7) == 0) x = x * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = static_cast<unsigned char>(x >> (8 * (i & 7)));
  }
}

char* MapBytes(size_t n, void* at = nullptr) {
  void* p = mmap(at, n, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
  EXPECT_NE(p, MAP_FAILED) << strerror(errno);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

class PinCacheGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    if (!PinCacheOffByEnv() && !mr::PinCacheActive())
      GTEST_FAIL() << "pin cache inactive: " << mr::PinCacheWhyNot();
    ASSERT_TRUE(CudaCopyEngine::Create(0, &e_).ok());
    ASSERT_EQ(cudaMalloc(&dev_, kDevBytes), cudaSuccess);
    ASSERT_EQ(cudaMallocHost(reinterpret_cast<void**>(&check_), kDevBytes), cudaSuccess);
  }
  void TearDown() override {
    if (dev_) (void)cudaFree(dev_);
    if (check_) (void)cudaFreeHost(check_);
  }
  // Host -> device through the engine (the transports' path), complete on return.
  void H2D(const void* host, size_t n, void* dev = nullptr) {
    Ticket t = 0;
    ASSERT_TRUE(e_.Issue(dev ? dev : dev_, MemLoc::Device(0), host, MemLoc::Host(), n).ok());
    ASSERT_TRUE(e_.Mark(&t).ok());
    ASSERT_TRUE(e_.Wait(t).ok());
  }
  void D2H(void* host, size_t n) {
    Ticket t = 0;
    ASSERT_TRUE(e_.Issue(host, MemLoc::Host(), dev_, MemLoc::Device(0), n).ok());
    ASSERT_TRUE(e_.Mark(&t).ok());
    ASSERT_TRUE(e_.Wait(t).ok());
  }
  // The device buffer holds `want`'s n bytes.
  void ExpectDevice(const void* want, size_t n, const std::string& what) {
    ASSERT_EQ(cudaMemcpy(check_, dev_, n, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(std::memcmp(check_, want, n), 0) << what << ": device bytes differ (" << n << " B)";
  }
  // H2D of `host` with fresh contents `seed`, checked.
  void SendChecked(char* host, size_t n, uint64_t seed, const std::string& what) {
    Fill(host, n, seed);
    H2D(host, n);
    ExpectDevice(host, n, what);
  }
  // D2H into `host` of fresh device contents, checked.
  void RecvChecked(char* host, size_t n, uint64_t seed, const std::string& what) {
    Fill(check_, n, seed);
    ASSERT_EQ(cudaMemcpy(dev_, check_, n, cudaMemcpyHostToDevice), cudaSuccess);
    std::memset(host, 0xee, n);
    D2H(host, n);
    ASSERT_EQ(std::memcmp(host, check_, n), 0) << what << ": host bytes differ (" << n << " B)";
  }
  // Used twice, so pinned from then on.
  void PinByUse(char* host, size_t n, uint64_t seed) {
    SendChecked(host, n, seed, "pin 1st");
    SendChecked(host, n, seed + 1, "pin 2nd");
    EXPECT_TRUE(Pinned(host)) << "second use did not pin " << n << " B";
  }
  CudaCopyEngine e_;
  void* dev_ = nullptr;
  char* check_ = nullptr;
};

TEST_F(PinCacheGpuTest, FirstUseUnpinnedSecondPinnedBytesExact) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t min = mr::GetPinCacheConfig().min_bytes;
  // Around the threshold, odd sizes and offsets, large.
  const size_t sizes[] = {min - 1, min, min + 1, 1 << 20, (8 << 20) + 123, 64 << 20};
  for (size_t n : sizes) {
    for (size_t off : {size_t{0}, size_t{100}}) {
      if (n + off > kDevBytes) continue;
      const size_t map = (n + off + kPage - 1) / kPage * kPage;
      char* m = MapBytes(map);
      ASSERT_NE(m, nullptr);
      char* h = m + off;
      const std::string at = std::to_string(n) + " B at +" + std::to_string(off);
      SendChecked(h, n, 1, "1st H2D " + at);
      EXPECT_FALSE(Pinned(h)) << "first use pinned " << at;
      SendChecked(h, n, 2, "2nd H2D " + at);
      EXPECT_EQ(Pinned(h), n >= min) << "after the second use, " << at;
      RecvChecked(h, n, 3, "3rd D2H " + at);
      RecvChecked(h, n, 4, "4th D2H " + at);
      SendChecked(h, n, 5, "5th H2D " + at);
      ASSERT_EQ(munmap(m, map), 0);
      mr::PinCacheSync();  // the unregistration runs now
      EXPECT_FALSE(Pinned(h));
    }
  }
  // D2H first: the same rule.
  char* m = MapBytes(4 << 20);
  RecvChecked(m, 4 << 20, 6, "1st D2H");
  EXPECT_FALSE(Pinned(m));
  RecvChecked(m, 4 << 20, 7, "2nd D2H");
  EXPECT_TRUE(Pinned(m));
  ASSERT_EQ(munmap(m, 4 << 20), 0);
  const auto s = mr::PinCacheStats();
  EXPECT_GT(s.first_uses, 0u);
  EXPECT_GT(s.hits, 0u);
  std::printf("pin stats: hits %llu misses %llu first uses %llu registrations %llu\n",
              (unsigned long long)s.hits, (unsigned long long)s.misses,
              (unsigned long long)s.first_uses, (unsigned long long)s.registrations);
}

// The withdrawn pin cache's failure: a pinned range freed, then CUDA allocates (perhaps at the
// same address). Every allocation must work and carry exact bytes, with no cache call in
// between (the unregistration is still pending) and after it.
TEST_F(PinCacheGpuTest, FreedPinnedRangeThenCudaAllocations) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t n = 8 << 20;
  enum Kind { kMallocHost, kHostAlloc, kMalloc, kManaged };
  const char* names[] = {"cudaMallocHost", "cudaHostAlloc", "cudaMalloc", "cudaMallocManaged"};
  for (int kind = kMallocHost; kind <= kManaged; ++kind) {
    for (int pending = 1; pending >= 0; --pending) {
      SCOPED_TRACE(std::string(names[kind]) + (pending ? ", unregistration pending" : ", after it"));
      char* p = MapBytes(n);
      ASSERT_NE(p, nullptr);
      PinByUse(p, n, 10 + kind);
      ASSERT_EQ(munmap(p, n), 0);
      if (!pending) mr::PinCacheSync();  // unregister, release the addresses
      // Allocate several times: one of them may land at the freed address.
      std::vector<void*> got;
      bool reused = false;
      for (int i = 0; i < 4; ++i) {
        void* q = nullptr;
        cudaError_t e = cudaSuccess;
        switch (kind) {
          case kMallocHost: e = cudaMallocHost(&q, n); break;
          case kHostAlloc: e = cudaHostAlloc(&q, n, cudaHostAllocPortable | cudaHostAllocMapped); break;
          case kMalloc: e = cudaMalloc(&q, n); break;
          case kManaged: e = cudaMallocManaged(&q, n); break;
        }
        ASSERT_EQ(e, cudaSuccess) << names[kind] << " failed after a pinned range was freed: "
                                  << cudaGetErrorString(e);
        got.push_back(q);
        const auto qa = reinterpret_cast<uintptr_t>(q), pa = reinterpret_cast<uintptr_t>(p);
        if (qa < pa + n && pa < qa + n) {
          reused = true;
          // Pending: nothing called the cache since the munmap, the addresses must be kept.
          if (pending && i == 0) ADD_FAILURE() << "an allocation landed on a still-registered range";
        }
        // Exact bytes through the new allocation: host kinds through the engine (twice: the cache
        // sees CUDA's own pinned memory and leaves it alone), device kinds by cudaMemcpy.
        if (kind == kMallocHost || kind == kHostAlloc || kind == kManaged) {
          if (kind == kManaged) {
            Fill(q, n, 20 + i);
            ASSERT_EQ(cudaMemcpy(dev_, q, n, cudaMemcpyDefault), cudaSuccess);
            ExpectDevice(q, n, "managed");
          } else {
            SendChecked(static_cast<char*>(q), n, 20 + i, "H2D from the new allocation");
            SendChecked(static_cast<char*>(q), n, 30 + i, "H2D from the new allocation, again");
            RecvChecked(static_cast<char*>(q), n, 40 + i, "D2H into the new allocation");
          }
        } else {
          Fill(check_, n, 50 + i);
          ASSERT_EQ(cudaMemcpy(q, check_, n, cudaMemcpyHostToDevice), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(dev_, q, n, cudaMemcpyDeviceToDevice), cudaSuccess);
          std::vector<char> want(check_, check_ + n);
          ExpectDevice(want.data(), n, "device allocation");
        }
      }
      std::printf("%s, %s: an allocation at the freed address: %s\n", names[kind],
                  pending ? "pending" : "after", reused ? "yes" : "no");
      for (void* q : got)
        ASSERT_EQ(kind == kMalloc || kind == kManaged ? cudaFree(q) : cudaFreeHost(q), cudaSuccess);
      // The freed range, mapped again by the program and registered by it: the old registration
      // must be gone (CUDA refuses a second one).
      mr::PinCacheSync();
      void* again_v = mmap(p, n, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
      if (again_v != p) {  // taken by someone (CUDA keeps some ranges): nothing more to check
        if (again_v != MAP_FAILED) munmap(again_v, n);
        std::printf("%s: the freed range is mapped by someone else now\n", names[kind]);
        continue;
      }
      char* again = static_cast<char*>(again_v);
      std::memset(again, 1, n);
      EXPECT_EQ(cudaHostRegister(again, n, cudaHostRegisterDefault), cudaSuccess)
          << "the old registration outlived its memory";
      (void)cudaHostUnregister(again);
      (void)cudaGetLastError();
      ASSERT_EQ(munmap(again, n), 0);
    }
  }
}

TEST_F(PinCacheGpuTest, MunmapThenMapAtTheSameAddress) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t n = 4 << 20;
  char* p = MapBytes(n);
  PinByUse(p, n, 60);
  ASSERT_EQ(munmap(p, n), 0);
  // The program maps there on purpose (MAP_FIXED) before any cache call.
  ASSERT_EQ(MapBytes(n, p), p);
  SendChecked(p, n, 61, "new mapping, 1st");
  SendChecked(p, n, 62, "new mapping, 2nd");
  EXPECT_TRUE(Pinned(p));
  RecvChecked(p, n, 63, "new mapping, D2H");
  ASSERT_EQ(munmap(p, n), 0);
  mr::PinCacheSync();
}

TEST_F(PinCacheGpuTest, MremapMoveAndShrink) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t n = 4 << 20;
  char* p = MapBytes(n);
  char* q = MapBytes(n);
  PinByUse(p, n, 70);
  std::vector<char> moved(p, p + n);
  ASSERT_EQ(mremap(p, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, q), q) << strerror(errno);
  H2D(q, n);
  ExpectDevice(moved.data(), n, "the moved pages at their new address");
  ASSERT_EQ(MapBytes(n, p), p);  // the program maps the vacated range again
  SendChecked(p, n, 71, "the vacated range mapped again");
  SendChecked(p, n, 72, "the vacated range mapped again, 2nd");
  // Shrink in place: the head keeps its bytes, the tail goes.
  PinByUse(q, n, 73);
  ASSERT_EQ(mremap(q, n, n / 2, 0), q);
  SendChecked(q, n / 2, 74, "shrunk, 1st");
  SendChecked(q, n / 2, 75, "shrunk, 2nd");
  EXPECT_TRUE(Pinned(q));
  ASSERT_EQ(munmap(p, n), 0);
  ASSERT_EQ(munmap(q, n / 2), 0);
  mr::PinCacheSync();
}

TEST_F(PinCacheGpuTest, MadviseDropsPages) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t n = 4 << 20;
  char* p = MapBytes(n);
  for (int advice : {MADV_DONTNEED, MADV_FREE}) {
    PinByUse(p, n, 80 + advice);
    ASSERT_EQ(madvise(p, n, advice), 0);
    SendChecked(p, n, 90 + advice, "after madvise, 1st");
    SendChecked(p, n, 100 + advice, "after madvise, 2nd");
    RecvChecked(p, n, 110 + advice, "after madvise, D2H");
  }
  ASSERT_EQ(munmap(p, n), 0);
}

TEST_F(PinCacheGpuTest, MallocTrimAndFreeThenMallocAtTheSameAddress) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t n = 34 << 20;  // above glibc's largest mmap threshold: a mapping of its own
  char* p = static_cast<char*>(std::malloc(n));
  ASSERT_NE(p, nullptr);
  PinByUse(p, n, 120);
  std::free(p);
  char* q = static_cast<char*>(std::malloc(n));
  ASSERT_NE(q, nullptr);
  std::printf("malloc after free: %s address\n", q == p ? "the same" : "another");
  SendChecked(q, n, 121, "new block, 1st");
  SendChecked(q, n, 122, "new block, 2nd");
  RecvChecked(q, n, 123, "new block, D2H");
  (void)malloc_trim(0);
  SendChecked(q, n, 124, "after malloc_trim");
  SendChecked(q, n, 125, "after malloc_trim, 2nd");
  std::free(q);
}

// A piece of the break is heap memory (neighbours share its pages): never pinned, its bytes
// exact through shrinking and growing again.
TEST_F(PinCacheGpuTest, BrkMemoryIsNeverPinned) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t n = 1 << 20;
  char* base = static_cast<char*>(sbrk(0));
  const size_t pad = (kPage - reinterpret_cast<uintptr_t>(base) % kPage) % kPage;
  if (sbrk(static_cast<intptr_t>(pad + n)) == reinterpret_cast<void*>(-1))
    GTEST_SKIP() << "sbrk refused";
  char* p = base + pad;
  SendChecked(p, n, 130, "brk, 1st");
  SendChecked(p, n, 131, "brk, 2nd");
  EXPECT_FALSE(Pinned(p)) << "heap memory pinned";
  if (sbrk(0) != p + n) GTEST_SKIP() << "the break moved (the heap grew): cannot shrink safely";
  ASSERT_NE(sbrk(-static_cast<intptr_t>(n)), reinterpret_cast<void*>(-1));
  ASSERT_EQ(sbrk(static_cast<intptr_t>(n)), p);  // grown again: fresh zero pages
  for (size_t i = 0; i < n; i += kPage) ASSERT_EQ(p[i], 0);
  SendChecked(p, n, 132, "brk grown again, 1st");
  SendChecked(p, n, 133, "brk grown again, 2nd");
  RecvChecked(p, n, 134, "brk grown again, D2H");
  if (sbrk(0) == p + n) (void)sbrk(-static_cast<intptr_t>(n + pad));
}

// The failure that kept the pin cache off
// (benchmarks/results/2026-11-24-pin-cache-cause-h100/README.md):
// CUDA refuses a copy that starts inside a registration and ends past it. The program's own
// cudaMemcpy must work from every part of a pinned block, from a larger block malloc'd after
// the pinned one was freed (before and after the cache's next call), and from heap neighbours.
TEST_F(PinCacheGpuTest, ProgramsOwnCopiesAroundPinnedBlocks) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t n = (34 << 20) + 4000;  // a mapping of its own at any glibc mmap threshold
  auto own_copy = [&](const char* h, size_t len, const std::string& what) {
    ASSERT_EQ(cudaMemcpy(dev_, h, len, cudaMemcpyHostToDevice), cudaSuccess)
        << what << ": the program's own H2D copy failed";
    ExpectDevice(h, len, what);
    ASSERT_EQ(cudaMemcpy(const_cast<char*>(h), dev_, len, cudaMemcpyDeviceToHost), cudaSuccess)
        << what << ": the program's own D2H copy failed";
  };
  for (int sync = 0; sync <= 1; ++sync) {
    SCOPED_TRACE(sync ? "after the cache's next call" : "unregistration pending");
    char* p = static_cast<char*>(std::malloc(n));
    ASSERT_NE(p, nullptr);
    PinByUse(p, 1 << 20, 200);  // a part of the block pins all of it
    EXPECT_TRUE(Pinned(p + n - 1)) << "the block's last byte is not in the registration";
    // Every shape of the program's own copy from the live, pinned block.
    Fill(p, n, 201);
    own_copy(p, std::min(n, kDevBytes), "from its start");
    own_copy(p + n - (3 << 20) - 1, (3 << 20) + 1, "starting inside, to its end");
    own_copy(p + 1, (5 << 20) + 7, "unaligned, inside");
    std::free(p);
    if (sync) mr::PinCacheSync();
    // Larger blocks now, perhaps at the freed address: whole copies must work.
    for (int i = 0; i < 3; ++i) {
      const size_t qn = n + (8 << 20) * (i + 1);
      char* q = static_cast<char*>(std::malloc(qn));
      ASSERT_NE(q, nullptr);
      Fill(q, qn, 210 + i);
      own_copy(q, std::min(qn, kDevBytes), "a larger block after free #" + std::to_string(i));
      own_copy(q + (20 << 20), std::min(qn - (20 << 20), kDevBytes),
               "inside a larger block after free #" + std::to_string(i));
      std::free(q);
    }
  }
  mr::PinCacheSync();
  EXPECT_EQ(mr::memhooks::DeferredFrees(), 0) << "a freed block was kept after unregistering";
}

// Blocks on glibc's heap (here: after freeing a 2 MiB mapped block, which raises the mmap
// threshold to its size) share pages with neighbours: never pinned, bytes exact, and the
// program's own copies of them unaffected.
TEST_F(PinCacheGpuTest, HeapBlocksAreNeverPinned) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  std::free(std::malloc(2 << 20));
  const size_t n = (1 << 20) + 100;
  char* a = static_cast<char*>(std::malloc(n));
  char* b = static_cast<char*>(std::malloc(n));
  ASSERT_TRUE(a && b);
  if (mr::memhooks::OwnMapping(reinterpret_cast<uintptr_t>(a), reinterpret_cast<uintptr_t>(a) + n,
                               nullptr, nullptr))
    GTEST_SKIP() << "glibc mapped the block on its own (threshold not raised)";
  for (int i = 0; i < 3; ++i) {
    SendChecked(a, n, 220 + i, "heap block a");
    RecvChecked(b, n, 230 + i, "heap block b");
  }
  EXPECT_FALSE(Pinned(a));
  EXPECT_FALSE(Pinned(b));
  Fill(b, n, 240);
  ASSERT_EQ(cudaMemcpy(dev_, b, n, cudaMemcpyHostToDevice), cudaSuccess);
  ExpectDevice(b, n, "the program's own copy of a heap block");
  std::free(a);
  std::free(b);
}

TEST_F(PinCacheGpuTest, LruBoundsEntriesAndBytes) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const auto& c = mr::GetPinCacheConfig();
  const size_t entries = c.max_entries, n = 1 << 20;
  if (entries > 16) GTEST_SKIP() << "run with MPIGPU_PIN_CACHE_ENTRIES <= 16 (main sets 4)";
  std::vector<char*> bufs;
  const auto before = mr::PinCacheStats();
  for (size_t i = 0; i < entries + 2; ++i) {
    bufs.push_back(MapBytes(n));
    PinByUse(bufs.back(), n, 140 + i);
  }
  size_t pinned = 0;
  for (char* b : bufs) pinned += Pinned(b);
  EXPECT_LE(pinned, entries);
  EXPECT_FALSE(Pinned(bufs[0])) << "the least recently used one stays pinned";
  EXPECT_TRUE(Pinned(bufs.back()));
  EXPECT_GE(mr::PinCacheStats().evictions - before.evictions, 2u);
  // An evicted range is pinned again on its next use (it is still known).
  SendChecked(bufs[0], n, 150, "evicted, used again");
  EXPECT_TRUE(Pinned(bufs[0]));
  for (char* b : bufs) ASSERT_EQ(munmap(b, n), 0);
  // Bytes: two buffers larger than half the limit cannot both stay pinned.
  const size_t big = (c.max_mb << 20) / 2 + (1 << 20);
  if (big > kDevBytes) GTEST_SKIP() << "MPIGPU_PIN_CACHE_MB too large for this check (main sets 96)";
  char* a = MapBytes(big);
  char* b = MapBytes(big);
  PinByUse(a, big, 160);
  PinByUse(b, big, 161);
  EXPECT_FALSE(Pinned(a)) << "over MPIGPU_PIN_CACHE_MB";
  EXPECT_LE(mr::PinCacheStats().bytes, c.max_mb << 20);
  ASSERT_EQ(munmap(a, big), 0);
  ASSERT_EQ(munmap(b, big), 0);
  mr::PinCacheSync();
}

TEST_F(PinCacheGpuTest, MemoryCudaPinnedIsLeftAlone) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  const size_t n = 2 << 20;
  void* h = nullptr;
  ASSERT_EQ(cudaMallocHost(&h, n), cudaSuccess);
  const auto before = mr::PinCacheStats();
  for (int i = 0; i < 3; ++i) SendChecked(static_cast<char*>(h), n, 170 + i, "cudaMallocHost");
  // Refused when the driver's mapping is in the own-mapping table (made through mmap), else
  // never tried.
  const auto ha = reinterpret_cast<uintptr_t>(h);
  if (mr::memhooks::OwnMapping(ha, ha + n, nullptr, nullptr)) {
    EXPECT_GE(mr::PinCacheStats().refused - before.refused, 1u);
  }
  EXPECT_EQ(mr::PinCacheStats().registrations - before.registrations,
            mr::PinCacheStats().refused - before.refused);
  EXPECT_TRUE(Pinned(h));
  EXPECT_EQ(cudaFreeHost(h), cudaSuccess);
  // A program's own registration, likewise.
  char* m = MapBytes(n);
  ASSERT_EQ(cudaHostRegister(m, n, cudaHostRegisterDefault), cudaSuccess);
  for (int i = 0; i < 3; ++i) SendChecked(m, n, 180 + i, "program-registered");
  EXPECT_EQ(cudaHostUnregister(m), cudaSuccess) << "the program's registration was disturbed";
  ASSERT_EQ(munmap(m, n), 0);
}

// Threads copying their own buffers, pinning and replacing them, while another maps and unmaps.
TEST_F(PinCacheGpuTest, Threads) {
  if (PinCacheOffByEnv()) GTEST_SKIP() << "MPIGPU_PIN_CACHE=0";
  constexpr int kThreads = 4, kIters = 40;
  const size_t n = 1 << 20;
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::thread churn([&] {
    std::mt19937 rng(1);
    while (!stop.load(std::memory_order_relaxed)) {
      void* p = mmap(nullptr, (rng() % 64 + 1) * kPage, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p != MAP_FAILED) munmap(p, 0);  // EINVAL: a call, nothing unmapped
      if (p != MAP_FAILED) munmap(p, kPage);
    }
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      CudaCopyEngine e;
      void* dev = nullptr;
      std::vector<char> back(n);
      if (!CudaCopyEngine::Create(0, &e).ok() || cudaMalloc(&dev, n) != cudaSuccess) {
        failures++;
        return;
      }
      char* h = MapBytes(n);
      for (int i = 0; i < kIters; ++i) {
        if (i % 7 == 6) {  // replace the memory: unmap, map at the same address
          munmap(h, n);
          h = MapBytes(n, h);
        }
        Fill(h, n, 1000 * t + i);
        Ticket k = 0;
        if (!e.Issue(dev, MemLoc::Device(0), h, MemLoc::Host(), n).ok() || !e.Mark(&k).ok() ||
            !e.Wait(k).ok() || cudaMemcpy(back.data(), dev, n, cudaMemcpyDeviceToHost) != cudaSuccess ||
            std::memcmp(back.data(), h, n) != 0) {
          failures++;
          break;
        }
      }
      munmap(h, n);
      cudaFree(dev);
    });
  }
  for (auto& t : ts) t.join();
  stop = true;
  churn.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(PinCacheGpuTest, OffSwitch) {
  if (!PinCacheOffByEnv()) GTEST_SKIP() << "runs with MPIGPU_PIN_CACHE=0 (pin_cache_off_gpu_test)";
  EXPECT_FALSE(mr::PinCacheActive());
  const size_t n = 4 << 20;
  char* p = MapBytes(n);
  for (int i = 0; i < 3; ++i) SendChecked(p, n, 190 + i, "off");
  RecvChecked(p, n, 194, "off, D2H");
  EXPECT_FALSE(Pinned(p));
  EXPECT_EQ(mr::PinCacheStats().registrations, 0u);
  ASSERT_EQ(munmap(p, n), 0);
}

}  // namespace
}  // namespace mpigpu

int main(int argc, char** argv) {
  // Small limits, so the LRU test can reach them (the environment may override).
  setenv("MPIGPU_PIN_CACHE_MIN", "64K", 0);
  setenv("MPIGPU_PIN_CACHE_ENTRIES", "4", 0);
  setenv("MPIGPU_PIN_CACHE_MB", "96", 0);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

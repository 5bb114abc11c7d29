// The pin cache's logic without a GPU: a fake registrar stands in for cudaHostRegister, the
// real /proc/self/pagemap validates (PFNs are visible as root, as in CI; otherwise these tests
// skip). Second-use registration, hits, the stale case (pages moved away and fresh ones mapped
// at the same address), the LRU size bound, entries in use, overlaps, the size threshold, the
// switch, user-pinned memory, failures, and the inactive mode when PFNs are invisible.
#include "transport/pin_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "memcopy/config.h"

namespace mpigpu {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Registers nothing; remembers what it was asked, and faults the pages in writable as
// cudaHostRegister does (so they are present when the cache reads their PFNs).
class FakeRegistrar : public PinRegistrar {
 public:
  cudaError_t Register(void* addr, size_t bytes) override {
    ++registers;
    if (result != cudaSuccess) return result;
    auto* p = static_cast<volatile char*>(addr);
    for (size_t i = 0; i < bytes; i += 4096) p[i] = p[i];
    registered[addr] = bytes;
    return cudaSuccess;
  }
  cudaError_t Unregister(void* addr) override {
    ++unregisters;
    if (registered.erase(addr) != 1) ++bad_unregisters;
    return cudaSuccess;
  }

  cudaError_t result = cudaSuccess;  // what Register returns
  std::map<void*, size_t> registered;
  int registers = 0, unregisters = 0, bad_unregisters = 0;
};

// Present pages with PFN 0: what pagemap shows a process without CAP_SYS_ADMIN.
class NoPfnPagemap : public PagemapReader {
 public:
  Status Read(uintptr_t, size_t pages, uint64_t* entries) override {
    for (size_t i = 0; i < pages; ++i) entries[i] = uint64_t{1} << 63;
    return Status::Ok();
  }
};

// An anonymous private mapping, touched; not a THP candidate, so khugepaged does not swap its
// pages under a test whose fake registrar does not pin them.
struct Mapping {
  explicit Mapping(size_t n) : bytes(n) {
    void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    (void)madvise(p, n, MADV_NOHUGEPAGE);
    std::memset(p, 0x5a, n);
    ptr = static_cast<char*>(p);
  }
  ~Mapping() { munmap(ptr, bytes); }
  char* ptr;
  size_t bytes;
};

bool PfnsVisible() {
  Mapping m(4096);
  int fd = open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0) return false;
  uint64_t e = 0;
  const ssize_t got = pread(fd, &e, 8, reinterpret_cast<uintptr_t>(m.ptr) / 4096 * 8);
  close(fd);
  return got == 8 && (e & ((uint64_t{1} << 55) - 1)) != 0;
}

// Every test but the inactive mode's reads real PFNs, and registers through a fake.
class PinCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!PfnsVisible()) GTEST_SKIP() << "pagemap shows no PFNs (needs CAP_SYS_ADMIN)";
  }
  FakeRegistrar reg;
};

// Moves m's pages to `elsewhere` (same size; they stay alive there, so the kernel cannot hand
// them back) and maps fresh pages, touched, at m's address.
bool ReplacePages(Mapping* m, Mapping* elsewhere) {
  void* moved = mremap(m->ptr, m->bytes, m->bytes, MREMAP_MAYMOVE | MREMAP_FIXED, elsewhere->ptr);
  void* fresh = mmap(m->ptr, m->bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (moved != elsewhere->ptr || fresh != m->ptr) return false;
  std::memset(m->ptr, 0x33, m->bytes);
  return true;
}

// The defaults, with the size bound and threshold given.
Config CacheConfig(size_t max_bytes = size_t{1} << 30, size_t min_bytes = kMiB) {
  Config c;
  EXPECT_TRUE(ParseConfig([](const char*) -> const char* { return nullptr; }, &c).ok());
  c.pin_cache_size = max_bytes;
  c.pin_cache_min = min_bytes;
  return c;
}

// Acquire, then Release at once: whether it was registered.
bool UseOnce(PinCache& cache, const void* p, size_t n) {
  PinCache::Handle h = cache.Acquire(p, n);
  if (h != 0) EXPECT_TRUE(cache.Release(h).ok());
  return h != 0;
}

// Two uses: the first is a sighting, the second registers. Whether both did as they should.
bool UseTwice(PinCache& cache, const void* p, size_t n) {
  const bool first = UseOnce(cache, p, n);
  return !first && UseOnce(cache, p, n);
}

TEST_F(PinCacheTest, RegistersOnTheSecondUseAndHitsOnTheThird) {
  PinCache cache(CacheConfig(), &reg);
  Mapping m(4 * kMiB);
  EXPECT_EQ(cache.Acquire(m.ptr, m.bytes), 0u);  // first sighting: nothing to pay
  EXPECT_EQ(reg.registers, 0);
  PinCache::Handle h = cache.Acquire(m.ptr, m.bytes);
  ASSERT_EQ(h, reinterpret_cast<uintptr_t>(m.ptr));
  EXPECT_EQ(reg.registers, 1);
  EXPECT_EQ(reg.registered[m.ptr], m.bytes);
  EXPECT_TRUE(cache.Release(h).ok());
  EXPECT_TRUE(UseOnce(cache, m.ptr, m.bytes));
  EXPECT_EQ(reg.registers, 1);  // a hit registers nothing
  PinCacheStats s = cache.stats();
  EXPECT_TRUE(s.active);
  EXPECT_EQ(s.first_sightings, 1u);
  EXPECT_EQ(s.registrations, 1u);
  EXPECT_EQ(s.hits, 1u);
  EXPECT_EQ(s.entries, 1u);
  EXPECT_EQ(s.bytes, m.bytes);
  EXPECT_TRUE(cache.Clear().ok());
  EXPECT_TRUE(reg.registered.empty());
  EXPECT_EQ(reg.bad_unregisters, 0);
}

TEST_F(PinCacheTest, RegistersWholePagesAndCoveredSubrangesHit) {
  PinCache cache(CacheConfig(), &reg);
  Mapping m(4 * kMiB);
  const char* p = m.ptr + 100;  // not page-aligned; ends mid-page
  const size_t n = 2 * kMiB + 50;
  EXPECT_TRUE(UseTwice(cache, p, n));
  ASSERT_EQ(reg.registered.count(m.ptr), 1u);
  EXPECT_EQ(reg.registered[m.ptr], 2 * kMiB + 4096);
  // A part of a registered buffer is registered too, whatever its size.
  EXPECT_TRUE(UseOnce(cache, m.ptr + 4096, 1000));
  EXPECT_EQ(cache.stats().hits, 1u);
  EXPECT_EQ(reg.registers, 1);
}

// The registration-cache bug this cache exists to avoid: the buffer's pages move away (they stay
// alive elsewhere, so the kernel cannot hand them back) and fresh pages are mapped at the same
// address. The old registration must be dropped, never used.
TEST_F(PinCacheTest, NewPagesAtTheSameAddressDropTheOldRegistration) {
  PinCache cache(CacheConfig(), &reg);
  Mapping old_home(4 * kMiB), elsewhere(4 * kMiB);
  char* a = old_home.ptr;
  EXPECT_TRUE(UseTwice(cache, a, 4 * kMiB));
  EXPECT_TRUE(UseOnce(cache, a, 4 * kMiB));  // a hit while the pages are the same
  ASSERT_EQ(reg.registers, 1);

  ASSERT_TRUE(ReplacePages(&old_home, &elsewhere));

  EXPECT_EQ(cache.Acquire(a, 4 * kMiB), 0u);  // stale: dropped, and this is a first sighting
  EXPECT_EQ(reg.unregisters, 1);
  EXPECT_TRUE(reg.registered.empty());
  PinCacheStats s = cache.stats();
  EXPECT_EQ(s.stale, 1u);
  EXPECT_EQ(s.entries, 0u);
  EXPECT_EQ(s.hits, 1u);  // only the hit before the move
  // The new pages are registered afresh on their next use, and hit after that.
  EXPECT_TRUE(UseOnce(cache, a, 4 * kMiB));
  EXPECT_EQ(reg.registers, 2);
  EXPECT_TRUE(UseOnce(cache, a, 4 * kMiB));
  EXPECT_EQ(cache.stats().hits, 2u);
}

// A copy of any size inside a stale registration would go through it: a small one drops it too.
TEST_F(PinCacheTest, ASmallCopyInsideAStaleRegistrationDropsIt) {
  PinCache cache(CacheConfig(), &reg);
  Mapping old_home(2 * kMiB), elsewhere(2 * kMiB);
  char* a = old_home.ptr;
  EXPECT_TRUE(UseTwice(cache, a, 2 * kMiB));
  ASSERT_TRUE(ReplacePages(&old_home, &elsewhere));
  EXPECT_FALSE(UseOnce(cache, a + kMiB, 100));  // below the threshold, inside the stale entry
  EXPECT_EQ(cache.stats().stale, 1u);
  EXPECT_TRUE(reg.registered.empty());
}

TEST_F(PinCacheTest, LeastRecentlyUsedGoFirstUnderTheSizeBound) {
  PinCache cache(CacheConfig(3 * kMiB), &reg);
  Mapping b0(kMiB), b1(kMiB), b2(kMiB), b3(kMiB);
  for (const Mapping* b : {&b0, &b1, &b2}) {
    EXPECT_TRUE(UseTwice(cache, b->ptr, kMiB));
  }
  EXPECT_TRUE(UseOnce(cache, b0.ptr, kMiB));  // b0 is now the most recently used: b1 goes first
  EXPECT_TRUE(UseTwice(cache, b3.ptr, kMiB));
  PinCacheStats s = cache.stats();
  EXPECT_EQ(s.evictions, 1u);
  EXPECT_EQ(s.entries, 3u);
  EXPECT_EQ(s.bytes, 3 * kMiB);
  EXPECT_EQ(reg.registered.count(b1.ptr), 0u);
  EXPECT_EQ(reg.registered.count(b0.ptr), 1u);
  // A range larger than the whole bound is never registered.
  Mapping big(4 * kMiB);
  EXPECT_FALSE(UseOnce(cache, big.ptr, big.bytes));
  EXPECT_FALSE(UseOnce(cache, big.ptr, big.bytes));
  EXPECT_EQ(cache.stats().entries, 3u);
}

TEST_F(PinCacheTest, EntriesInUseAreNotEvicted) {
  PinCache cache(CacheConfig(2 * kMiB), &reg);
  Mapping b0(kMiB), b1(kMiB), b2(kMiB);
  EXPECT_EQ(cache.Acquire(b0.ptr, kMiB), 0u);
  EXPECT_EQ(cache.Acquire(b1.ptr, kMiB), 0u);
  const PinCache::Handle h0 = cache.Acquire(b0.ptr, kMiB);
  const PinCache::Handle h1 = cache.Acquire(b1.ptr, kMiB);
  ASSERT_NE(h0, 0u);
  ASSERT_NE(h1, 0u);
  EXPECT_FALSE(UseOnce(cache, b2.ptr, kMiB));
  EXPECT_FALSE(UseOnce(cache, b2.ptr, kMiB));  // no room: both in use
  EXPECT_EQ(cache.stats().entries, 2u);
  EXPECT_EQ(cache.stats().uncached, 1u);
  EXPECT_EQ(reg.unregisters, 0);
  EXPECT_TRUE(cache.Release(h0).ok());
  EXPECT_TRUE(UseOnce(cache, b2.ptr, kMiB));  // b0 is free now and goes
  EXPECT_EQ(reg.registered.count(b0.ptr), 0u);
  EXPECT_EQ(reg.registered.count(b1.ptr), 1u);
  EXPECT_TRUE(cache.Release(h1).ok());
  EXPECT_EQ(cache.Release(h1).code(), Err::kInvalidArg);  // not in use any more
  EXPECT_EQ(cache.Release(12345).code(), Err::kInvalidArg);
}

TEST_F(PinCacheTest, AnOverlappingRangeReplacesEntriesNotInUse) {
  PinCache cache(CacheConfig(), &reg);
  Mapping m(4 * kMiB);
  EXPECT_TRUE(UseTwice(cache, m.ptr, 2 * kMiB));
  // [1 MiB, 3 MiB) overlaps the entry; in use, the entry stays and the new range is not cached.
  const PinCache::Handle held = cache.Acquire(m.ptr, 2 * kMiB);
  ASSERT_NE(held, 0u);
  EXPECT_FALSE(UseOnce(cache, m.ptr + kMiB, 2 * kMiB));
  EXPECT_FALSE(UseOnce(cache, m.ptr + kMiB, 2 * kMiB));
  EXPECT_EQ(reg.registers, 1);
  EXPECT_TRUE(cache.Release(held).ok());
  // Free now: the overlapping range replaces it on its next use.
  EXPECT_TRUE(UseOnce(cache, m.ptr + kMiB, 2 * kMiB));
  EXPECT_EQ(reg.registers, 2);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(reg.registered.count(m.ptr), 0u);
  EXPECT_EQ(reg.registered[m.ptr + kMiB], 2 * kMiB);
}

TEST_F(PinCacheTest, BuffersBelowTheThresholdAreNeverRegistered) {
  PinCache cache(CacheConfig(size_t{1} << 30, kMiB), &reg);
  Mapping m(kMiB);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(UseOnce(cache, m.ptr, kMiB - 1));
  EXPECT_EQ(reg.registers, 0);
  EXPECT_FALSE(UseOnce(cache, m.ptr, kMiB));
  EXPECT_TRUE(UseOnce(cache, m.ptr, kMiB));  // exactly the threshold counts
}

TEST_F(PinCacheTest, OffInTheConfigurationRegistersNothing) {
  Config c;
  ASSERT_TRUE(ParseConfig([](const char* name) -> const char* {
                return std::string(name) == "MPIGPU_PIN_CACHE" ? "0" : nullptr;
              }, &c).ok());
  EXPECT_FALSE(c.pin_cache);
  EXPECT_EQ(c.pin_cache_size, size_t{1} << 30);  // the documented defaults
  EXPECT_EQ(c.pin_cache_min, kMiB);
  PinCache cache(c, &reg);
  Mapping m(2 * kMiB);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(UseOnce(cache, m.ptr, m.bytes));
  EXPECT_EQ(reg.registers, 0);
  EXPECT_FALSE(cache.stats().active);
}

TEST(PinCacheInactiveTest, WhenPagemapShowsNoPfns) {
  FakeRegistrar reg;
  NoPfnPagemap pagemap;
  PinCache cache(CacheConfig(), &reg, &pagemap);
  Mapping m(2 * kMiB);
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(UseOnce(cache, m.ptr, m.bytes));
  EXPECT_EQ(reg.registers, 0);
  EXPECT_FALSE(cache.stats().active);
  EXPECT_EQ(cache.stats().first_sightings, 0u);
}

TEST_F(PinCacheTest, UserPinnedMemoryIsCopiedAsIsAndNotTriedAgain) {
  reg.result = cudaErrorHostMemoryAlreadyRegistered;
  PinCache cache(CacheConfig(), &reg);
  Mapping m(2 * kMiB);
  for (int i = 0; i < 4; ++i) EXPECT_FALSE(UseOnce(cache, m.ptr, m.bytes));
  EXPECT_EQ(reg.registers, 1);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST_F(PinCacheTest, ARegistrationFailureLeavesTheCopyUncached) {
  reg.result = cudaErrorMemoryAllocation;
  PinCache cache(CacheConfig(), &reg);
  Mapping m(2 * kMiB);
  EXPECT_FALSE(UseOnce(cache, m.ptr, m.bytes));
  EXPECT_FALSE(UseOnce(cache, m.ptr, m.bytes));
  EXPECT_EQ(cache.stats().uncached, 1u);
  reg.result = cudaSuccess;  // a later use may succeed
  EXPECT_TRUE(UseOnce(cache, m.ptr, m.bytes));
}

TEST_F(PinCacheTest, ClearUnregistersEverythingEvenInUse) {
  PinCache cache(CacheConfig(), &reg);
  Mapping b0(kMiB), b1(kMiB);
  for (const Mapping* b : {&b0, &b1}) EXPECT_FALSE(UseOnce(cache, b->ptr, kMiB));
  EXPECT_TRUE(UseOnce(cache, b0.ptr, kMiB));
  ASSERT_NE(cache.Acquire(b1.ptr, kMiB), 0u);  // never released
  EXPECT_TRUE(cache.Clear().ok());
  EXPECT_TRUE(reg.registered.empty());
  EXPECT_EQ(cache.stats().entries, 0u);
  EXPECT_EQ(cache.stats().bytes, 0u);
}

}  // namespace
}  // namespace mpigpu

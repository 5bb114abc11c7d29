// The own-mapping table and the interposed malloc family, without a GPU: which memory is one
// allocation's own mapping (large malloc'd blocks of every allocation function, anonymous
// mmaps), what leaves the table (free, realloc, munmap of any part, MAP_FIXED over it, mremap),
// free()/realloc() of a protected block deferred until unprotected, the registration cache
// spanning whole mappings for a client that asks, and threads.
//
// Block sizes are above glibc's largest dynamic mmap threshold (32 MiB), so every one is mapped
// on its own whatever the test freed before (freeing smaller mapped blocks raises the
// threshold); they are never touched whole, so they cost address space only.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "memreg/alloc_hooks.h"
#include "memreg/memhooks.h"
#include "memreg/reg_cache.h"

namespace mr = mpigpu::memreg;
namespace mh = mpigpu::memreg::memhooks;

namespace {

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
constexpr size_t kBig = (34u << 20) + 123;

uintptr_t U(const void* p) { return reinterpret_cast<uintptr_t>(p); }

struct Own {
  bool found;
  uintptr_t start, end;
};
Own Lookup(const void* p, size_t n) {
  Own o{};
  o.found = mh::OwnMapping(U(p), U(p) + n, &o.start, &o.end);
  return o;
}

bool Mapped(uintptr_t a) {
  unsigned char v;
  return mincore(reinterpret_cast<void*>(a), kPage, &v) == 0;
}

class AllocHooksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(mr::AllocHooksActive()) << mr::AllocHooksWhyNot();
    ASSERT_TRUE(mh::HooksActive()) << mh::HooksInactiveReason();
  }
  // Asserts p's block is tracked as a mapping holding it whole, tightly.
  void ExpectOwn(const void* p, size_t n, size_t align, const char* what) {
    const Own o = Lookup(p, n);
    ASSERT_TRUE(o.found) << what;
    EXPECT_EQ(o.start % kPage, 0u) << what;
    EXPECT_EQ(o.end % kPage, 0u) << what;
    EXPECT_LE(o.start, U(p)) << what;
    EXPECT_GE(o.end, U(p) + n) << what;
    EXPECT_LE(o.end - o.start, n + 2 * kPage + align) << what;
    const Own inner = Lookup(static_cast<const char*>(p) + n / 2, 100);
    EXPECT_TRUE(inner.found && inner.start == o.start && inner.end == o.end) << what;
    EXPECT_FALSE(Lookup(p, o.end - U(p) + 1).found) << what << ": a range past the mapping";
  }
};

TEST_F(AllocHooksTest, EveryAllocationFunctionsLargeBlockIsItsOwnMapping) {
  struct Case {
    const char* name;
    size_t align;
    void* (*alloc)(size_t);
  };
  const Case cases[] = {
      {"malloc", 16, [](size_t n) { return std::malloc(n); }},
      {"calloc", 16, [](size_t n) { return std::calloc(1, n); }},
      {"realloc(nullptr)", 16, [](size_t n) { return std::realloc(nullptr, n); }},
      {"memalign 4096", 4096, [](size_t n) { return memalign(4096, n); }},
      {"memalign 1M", 1 << 20, [](size_t n) { return memalign(1 << 20, n); }},
      {"posix_memalign 64", 64,
       [](size_t n) {
         void* p = nullptr;
         return posix_memalign(&p, 64, n) == 0 ? p : nullptr;
       }},
      {"aligned_alloc 4096", 4096, [](size_t n) { return aligned_alloc(4096, n); }},
      {"valloc", 4096, [](size_t n) { return valloc(n); }},
      {"pvalloc", 4096, [](size_t n) { return pvalloc(n); }},
      {"operator new[]", 16, [](size_t n) { return static_cast<void*>(new char[n]); }},
  };
  for (const Case& c : cases) {
    void* p = c.alloc(kBig);
    ASSERT_NE(p, nullptr) << c.name;
    ExpectOwn(p, kBig, c.align, c.name);
    const Own o = Lookup(p, kBig);
    if (std::strcmp(c.name, "operator new[]") == 0)
      delete[] static_cast<char*>(p);
    else
      std::free(p);
    EXPECT_FALSE(Lookup(p, 1).found) << c.name << ": freed, still listed";
    EXPECT_FALSE(mh::OwnMapping(o.start, o.start + kPage, nullptr, nullptr)) << c.name;
  }
}

TEST_F(AllocHooksTest, HeapStackAndStaticMemoryAreNot) {
  void* small = std::malloc(1000);
  ASSERT_NE(small, nullptr);
  EXPECT_FALSE(Lookup(small, 1000).found);
  std::free(small);
  char stack[256];
  EXPECT_FALSE(Lookup(stack, sizeof stack).found);
  static char data[4096];
  EXPECT_FALSE(Lookup(data, sizeof data).found);
}

TEST_F(AllocHooksTest, AnonymousMappingsAndWhatRemovesThem) {
  const size_t n = 4 << 20;
  auto map = [](size_t len, int prot, void* at = nullptr) {
    void* p = mmap(at, len, prot, MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0), -1, 0);
    EXPECT_NE(p, MAP_FAILED) << std::strerror(errno);
    return static_cast<char*>(p);
  };
  char* p = map(n, PROT_READ | PROT_WRITE);
  Own o = Lookup(p + 100, n - 200);
  ASSERT_TRUE(o.found);
  EXPECT_EQ(o.start, U(p));
  EXPECT_EQ(o.end, U(p) + n);
  // Any part unmapped: the whole mapping leaves (what stays is no longer one allocation's).
  ASSERT_EQ(munmap(p + n - kPage, kPage), 0);
  EXPECT_FALSE(Lookup(p, kPage).found);
  ASSERT_EQ(munmap(p, n - kPage), 0);
  // A mapping nobody can use yet is not listed.
  char* none = map(n, PROT_NONE);
  EXPECT_FALSE(Lookup(none, kPage).found);
  ASSERT_EQ(munmap(none, n), 0);
  // MAP_FIXED over part of a listed mapping removes it; the new mapping is listed itself.
  p = map(n, PROT_READ | PROT_WRITE);
  char* q = map(kPage, PROT_READ | PROT_WRITE, p + kPage);
  ASSERT_EQ(q, p + kPage);
  EXPECT_FALSE(Lookup(p, 1).found);
  o = Lookup(q, kPage);
  EXPECT_TRUE(o.found && o.start == U(q) && o.end == U(q) + kPage);
  ASSERT_EQ(munmap(p, n), 0);
  // mremap of a whole listed mapping: listed at its new place and size; of a part: not.
  p = map(n, PROT_READ | PROT_WRITE);
  char* fix = map(4 * n, PROT_READ | PROT_WRITE);
  void* r = mremap(p, n, 2 * n, MREMAP_MAYMOVE | MREMAP_FIXED, fix + n);
  ASSERT_EQ(r, fix + n);
  EXPECT_FALSE(Lookup(p, 1).found);
  o = Lookup(r, 2 * n);
  EXPECT_TRUE(o.found && o.start == U(r) && o.end == U(r) + 2 * n);
  EXPECT_FALSE(Lookup(fix, 1).found) << "the mapping moved into was replaced";
  ASSERT_EQ(mremap(r, 2 * n, n, 0), r);  // shrunk in place
  o = Lookup(r, n);
  EXPECT_TRUE(o.found && o.start == U(r) && o.end == U(r) + n);
  ASSERT_EQ(mremap(static_cast<char*>(r) + n - kPage, kPage, kPage, MREMAP_MAYMOVE | MREMAP_FIXED,
                   fix + 3 * n),
            fix + 3 * n);  // a part moved away
  EXPECT_FALSE(Lookup(r, 1).found);
  EXPECT_FALSE(Lookup(fix + 3 * n, 1).found);
  ASSERT_EQ(munmap(fix, 4 * n), 0);
  // A file mapping is not one allocation's own (another process may map the file).
  FILE* f = tmpfile();
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(ftruncate(fileno(f), static_cast<off_t>(n)), 0);
  void* fm = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
  ASSERT_NE(fm, MAP_FAILED);
  EXPECT_FALSE(Lookup(fm, kPage).found);
  ASSERT_EQ(munmap(fm, n), 0);
  fclose(f);
}

TEST_F(AllocHooksTest, ReallocMovesTheListing) {
  char* p = static_cast<char*>(std::malloc(kBig));
  ASSERT_NE(p, nullptr);
  const Own before = Lookup(p, kBig);
  ASSERT_TRUE(before.found);
  char* q = static_cast<char*>(std::realloc(p, 2 * kBig));
  ASSERT_NE(q, nullptr);
  ExpectOwn(q, 2 * kBig, 16, "grown");
  if (q != p) {
    EXPECT_FALSE(mh::OwnMapping(before.start, before.start + kPage, nullptr, nullptr));
  }
  // Shrunk: glibc shrinks the mapping in place (mremap), which stays the block's own.
  char* s = static_cast<char*>(std::realloc(q, 1000));
  ASSERT_NE(s, nullptr);
  const Own shrunk = Lookup(s, 1000);
  if (shrunk.found) EXPECT_LE(shrunk.end - shrunk.start, 2 * kPage);
  EXPECT_FALSE(Lookup(s, 3 * kPage).found);
  std::free(s);
  errno = 0;
  volatile size_t huge = SIZE_MAX / 2;  // past the compiler's own check
  EXPECT_EQ(reallocarray(nullptr, huge, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  void* a = nullptr;
  EXPECT_EQ(posix_memalign(&a, 24, 64), EINVAL);
  EXPECT_EQ(a, nullptr);
  void* t = reallocarray(nullptr, 2, kBig / 2 + 1);
  ASSERT_NE(t, nullptr);
  ExpectOwn(t, kBig, 16, "reallocarray");
  std::free(t);
}

// A registration protects the block's mapping: free() keeps it until unprotected, so nothing can
// be allocated there meanwhile; then ReleaseKept frees it.
TEST_F(AllocHooksTest, FreeOfAProtectedBlockIsDeferred) {
  const auto s0 = mh::GetStats();
  char* p = static_cast<char*>(std::malloc(kBig));
  ASSERT_NE(p, nullptr);
  std::memset(p, 0x5a, 1 << 20);
  const Own o = Lookup(p, kBig);
  ASSERT_TRUE(o.found);
  const int slot = mh::Protect(o.start, o.end);
  ASSERT_GE(slot, 0);
  std::free(p);
  EXPECT_EQ(mh::DeferredFrees(), 1);
  EXPECT_FALSE(Lookup(p, 1).found) << "a freed block is never pinned again";
  EXPECT_TRUE(Mapped(o.start)) << "the mapping went while protected";
  EXPECT_EQ(static_cast<unsigned char>(p[12345]), 0x5au);  // still the same pages
  std::vector<void*> others;
  for (int i = 0; i < 4; ++i) {
    void* q = std::malloc(kBig);
    ASSERT_NE(q, nullptr);
    const Own oq = Lookup(q, kBig);
    EXPECT_TRUE(oq.end <= o.start || o.end <= oq.start) << "allocated over a protected block";
    others.push_back(q);
  }
  EXPECT_EQ(mh::ReleaseKept(), 0u);  // still protected
  EXPECT_EQ(mh::DeferredFrees(), 1);
  mh::Unprotect(slot);
  EXPECT_GE(mh::ReleaseKept(), 1u);
  EXPECT_EQ(mh::DeferredFrees(), 0);
  const auto s1 = mh::GetStats();
  EXPECT_EQ(s1.deferred_frees, s0.deferred_frees + 1);
  EXPECT_EQ(s1.deferred_released, s0.deferred_released + 1);
  EXPECT_EQ(s1.leaked, s0.leaked);
  for (void* q : others) std::free(q);
}

TEST_F(AllocHooksTest, ReallocOfAProtectedBlockCopiesAndDefers) {
  char* p = static_cast<char*>(std::malloc(kBig));
  ASSERT_NE(p, nullptr);
  for (size_t i = 0; i < kBig; i += 4093) p[i] = static_cast<char>(i * 7);
  const Own o = Lookup(p, kBig);
  ASSERT_TRUE(o.found);
  const int slot = mh::Protect(o.start, o.end);
  ASSERT_GE(slot, 0);
  char* q = static_cast<char*>(std::realloc(p, kBig + (8 << 20)));
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q, p) << "a protected block must not be resized in place";
  for (size_t i = 0; i < kBig; i += 4093) ASSERT_EQ(q[i], static_cast<char>(i * 7)) << i;
  EXPECT_EQ(mh::DeferredFrees(), 1);
  EXPECT_TRUE(Mapped(o.start));
  // realloc(p, 0) of a protected block: freed (deferred), nullptr.
  char* r = static_cast<char*>(std::malloc(kBig));
  const Own orr = Lookup(r, kBig);
  const int slot2 = mh::Protect(orr.start, orr.end);
  EXPECT_EQ(std::realloc(r, 0), nullptr);
  EXPECT_EQ(mh::DeferredFrees(), 2);
  mh::Unprotect(slot);
  mh::Unprotect(slot2);
  EXPECT_EQ(mh::ReleaseKept(), 2u);
  std::free(q);
}

// The pin client's shape on a fake device: a span of the whole own mapping, first use unpinned,
// the second registers the mapping whole, heap ranges never, free() while cached deferred and
// released after the cache's next call deregistered it.
TEST_F(AllocHooksTest, RegCacheSpansWholeOwnMappings) {
  struct Reg {
    uintptr_t addr;
    size_t len;
  };
  std::vector<Reg> regs, deregs;
  mr::RegCache cache(true, 64);
  ASSERT_TRUE(cache.caching()) << cache.why_not_caching();
  mr::RegCache::Client c;
  c.name = "fake-pin";
  c.reg = [&](void* a, size_t n, void** h) {
    regs.push_back({U(a), n});
    *h = a;
    return mpigpu::Status::Ok();
  };
  c.dereg = [&](void* h) { deregs.push_back({U(h), 0}); };
  c.pins_addresses = true;
  c.exclusive_pages = true;
  c.span = [](uintptr_t a, uintptr_t b, uintptr_t* s, uintptr_t* e) {
    return mh::OwnMapping(a, b, s, e);
  };
  const int id = cache.AddClient(std::move(c));
  ASSERT_GE(id, 0);

  char* p = static_cast<char*>(std::malloc(kBig));
  ASSERT_NE(p, nullptr);
  const Own o = Lookup(p, kBig);
  ASSERT_TRUE(o.found);
  mr::Region* r = nullptr;
  ASSERT_TRUE(cache.AcquireOnReuse(id, p + 8192, 1 << 20, &r).ok());
  EXPECT_EQ(r, nullptr) << "first use";
  ASSERT_TRUE(cache.AcquireOnReuse(id, p + 8192, 1 << 20, &r).ok());
  ASSERT_NE(r, nullptr) << "second use";
  EXPECT_EQ(U(r->addr), o.start);
  EXPECT_EQ(r->len, o.end - o.start);
  ASSERT_EQ(regs.size(), 1u);
  EXPECT_EQ(regs[0].addr, o.start);
  EXPECT_EQ(regs[0].len, o.end - o.start);
  cache.Release(r);
  // Another part of the same block: a hit on the same registration.
  ASSERT_TRUE(cache.AcquireOnReuse(id, p + (20 << 20), 4 << 20, &r).ok());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(regs.size(), 1u);
  cache.Release(r);
  // Heap memory: never registered, not even remembered.
  const auto before = cache.stats(id);
  std::vector<char> heap(64 << 10);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(cache.AcquireOnReuse(id, heap.data(), heap.size(), &r).ok());
    EXPECT_EQ(r, nullptr);
  }
  EXPECT_EQ(cache.stats(id).first_uses, before.first_uses);
  mr::Region* strict = nullptr;
  EXPECT_FALSE(cache.Acquire(id, heap.data(), heap.size(), &strict).ok());
  // free() while registered: kept; the cache's next call deregisters, then it is freed.
  std::free(p);
  EXPECT_EQ(mh::DeferredFrees(), 1);
  EXPECT_TRUE(deregs.empty());
  cache.Sync();
  ASSERT_EQ(deregs.size(), 1u);
  EXPECT_EQ(deregs[0].addr, o.start);
  EXPECT_EQ(mh::DeferredFrees(), 0);
}

// Threads allocating, freeing and looking up their own blocks while another protects and
// unprotects ranges: every live block stays listed, none freed under protection, all released.
TEST_F(AllocHooksTest, Threads) {
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::thread protector([&] {
    std::mt19937_64 rng(7);
    std::vector<int> slots;
    while (!stop.load(std::memory_order_relaxed)) {
      const uintptr_t base = (rng() % (1ull << 34)) * kPage + (1ull << 44);
      const int s = mh::Protect(base, base + 64 * kPage);
      if (s >= 0) slots.push_back(s);
      if (slots.size() > 8) {
        mh::Unprotect(slots.front());
        slots.erase(slots.begin());
      }
      (void)mh::ReleaseKept();
    }
    for (int s : slots) mh::Unprotect(s);
  });
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&, t] {
      std::mt19937_64 rng(t);
      std::vector<std::pair<char*, size_t>> live;
      for (int i = 0; i < 400; ++i) {
        if (live.size() < 6 && rng() % 2 == 0) {
          const size_t n = kBig + (rng() % 64) * kPage;
          char* p = static_cast<char*>(rng() % 3 == 0 ? std::calloc(1, n) : std::malloc(n));
          if (p == nullptr) continue;
          p[0] = 1;
          live.emplace_back(p, n);
        } else if (!live.empty()) {
          const size_t k = rng() % live.size();
          if (!Lookup(live[k].first, live[k].second).found) failures.fetch_add(1);
          if (rng() % 4 == 0) {
            char* q = static_cast<char*>(std::realloc(live[k].first, live[k].second + kPage));
            if (q != nullptr) live[k] = {q, live[k].second + kPage};
          } else {
            std::free(live[k].first);
            live.erase(live.begin() + static_cast<long>(k));
          }
        }
      }
      for (auto& [p, n] : live) std::free(p);
    });
  }
  for (auto& t : ts) t.join();
  stop.store(true);
  protector.join();
  EXPECT_EQ(failures.load(), 0) << "a live block was missing from the table";
  (void)mh::ReleaseKept();
  EXPECT_EQ(mh::DeferredFrees(), 0);
}

}  // namespace

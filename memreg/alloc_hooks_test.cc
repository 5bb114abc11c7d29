// The own-mapping table and the interposed malloc family, without a GPU: which memory is one
// allocation's own mapping (large malloc'd blocks of every allocation function, anonymous
// mmaps), what leaves the table (free, realloc, munmap of any part, MAP_FIXED over it, mremap),
// free()/realloc() of a protected block deferred until unprotected, the registration cache
// spanning whole mappings for a client that asks, and threads.
//
// Block sizes are above glibc's largest dynamic mmap threshold (32 MiB), so every one is mapped
// on its own whatever the test freed before (freeing smaller mapped blocks raises the
// threshold); they are never touched whole, so they cost address space only.
#include <dlfcn.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <mutex>
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

// Allocations before the hooks' constructors ran (tracking still off): a large block kept, one
// freed, one kept to be realloc'd and freed in a test.
void* g_early_kept = nullptr;
void* g_early_realloc = nullptr;
__attribute__((constructor(101))) void EarlyAllocations() {
  void* a = std::malloc(kBig);
  std::free(a);
  g_early_kept = std::malloc(kBig);
  g_early_realloc = std::calloc(1, kBig);
}

// Whether glibc gave p's block a mapping of its own (its chunk header's flags: IS_MMAPPED).
bool GlibcMappedOnItsOwn(const void* p) { return (static_cast<const size_t*>(p)[-1] & 7) == 2; }

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

// Runs fn in a forked child (fn returns 0 when all is well) and waits at most timeout_s for it:
// a hang in the child is a failure here, not a hung test. The child runs no gtest assertions.
std::string RunInChild(int (*fn)(), int timeout_s) {
  const pid_t pid = fork();
  if (pid < 0) return std::string("fork: ") + std::strerror(errno);
  if (pid == 0) _exit(fn());
  int status = 0;
  for (int i = 0; i < timeout_s * 100; ++i) {
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
      if (WIFEXITED(status)) return "child failed check " + std::to_string(WEXITSTATUS(status));
      return "child killed by signal " + std::to_string(WTERMSIG(status));
    }
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, nullptr);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return "child hung (killed after " + std::to_string(timeout_s) + " s)";
}

// What a program may do in a signal handler, or in a fork()ed child: map, remap, unmap, and
// allocate and free large blocks. 0, or the number of the check that failed.
int MapAndAllocate() {
  const size_t n = 4 * kPage;
  void* m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 1;
  void* r = mremap(m, n, 64 * n, MREMAP_MAYMOVE);
  if (r == MAP_FAILED) return 2;
  if (munmap(r, 64 * n) != 0) return 3;
  void* b = std::malloc(kBig);
  if (b == nullptr) return 4;
  static_cast<char*>(b)[0] = 1;
  b = std::realloc(b, 2 * kBig);
  if (b == nullptr) return 5;
  std::free(b);
  return 0;
}

std::atomic<int> g_handler_result{-1};
void MapAndAllocateHandler(int) { g_handler_result.store(MapAndAllocate()); }

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
  // (Unless glibc mapped it on its own: GLIBC_TUNABLES=glibc.malloc.mmap_threshold=0.)
  EXPECT_EQ(Lookup(small, 1000).found, GlibcMappedOnItsOwn(small));
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
  if (shrunk.found) {
    EXPECT_LE(shrunk.end - shrunk.start, 2 * kPage);
  }
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
  c.span = mr::RegCache::OwnMappingSpan();
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
  // Memory no allocation owns whole (static data: a heap block may be a mapping of its own,
  // e.g. under GLIBC_TUNABLES=glibc.malloc.mmap_threshold=0): never registered, not remembered.
  const auto before = cache.stats(id);
  static char heap_store[2000];
  struct {
    char* data() { return heap_store; }
    size_t size() { return sizeof heap_store; }
  } heap;
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

// A signal handler interrupting its own thread while that thread holds the table's lock (a
// large malloc between glibc and the table, say): every hook it reaches must give up on the lock
// in bounded time, not spin forever on a holder that cannot run.
int SignalWhileLockHeldChild() {
  struct sigaction sa = {};
  sa.sa_handler = MapAndAllocateHandler;
  if (sigaction(SIGUSR1, &sa, nullptr) != 0) return 10;
  void* before = std::malloc(kBig);  // listed; a poisoned table may forget it, never mislist it
  mh::LockMappingsForTest();
  raise(SIGUSR1);
  mh::UnlockMappingsForTest();
  if (g_handler_result.load() != 0) return 20 + g_handler_result.load();
  const uintptr_t b = U(before);
  std::free(before);
  if (mh::OwnMapping(b, b + 1, nullptr, nullptr)) return 11;
  void* after = std::malloc(kBig);  // the table works again
  if (!mh::OwnMapping(U(after), U(after) + kBig, nullptr, nullptr)) return 12;
  std::free(after);
  return 0;
}

TEST_F(AllocHooksTest, SignalHandlerWhileTheTableIsLocked) {
  EXPECT_EQ(RunInChild(SignalWhileLockHeldChild, 20), "");
}

// fork() while another thread holds the table's lock: the child (one thread) must find it
// usable: a large malloc listed, mremap and lookups returning.
std::atomic<bool> g_holding{false};
int AfterForkChild() {
  const int r = MapAndAllocate();
  if (r != 0) return 20 + r;
  void* b = std::malloc(kBig);
  const bool listed = mh::OwnMapping(U(b), U(b) + kBig, nullptr, nullptr);
  std::free(b);
  return listed ? 0 : 30;
}

TEST_F(AllocHooksTest, ForkWhileAnotherThreadHoldsTheTableLock) {
  std::thread holder([] {
    mh::LockMappingsForTest();
    g_holding.store(true);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    mh::UnlockMappingsForTest();
  });
  while (!g_holding.load()) std::this_thread::yield();
  const std::string r = RunInChild(AfterForkChild, 20);
  holder.join();
  EXPECT_EQ(r, "");
  void* b = std::malloc(kBig);  // and the parent's table still works
  EXPECT_TRUE(Lookup(b, kBig).found);
  std::free(b);
}

// free() twice of a block kept while registered: glibc would stop the program ("double free");
// the deferred table must not keep it twice (it would be freed twice later, unmapping what
// another allocation may own by then) nor free it under its deferred slot's feet.
TEST_F(AllocHooksTest, DoubleFreeOfAKeptBlockStopsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto kept_then = [](bool unprotect_first) {
    void* volatile p = std::malloc(kBig);  // volatile: the double free is the point
    const Own o = Lookup(p, kBig);
    const int slot = mh::Protect(o.start, o.end);
    std::free(p);
    if (unprotect_first) mh::Unprotect(slot);
    std::free(p);
    std::fprintf(stderr, "no stop: %d kept\n", mh::DeferredFrees());
  };
  EXPECT_DEATH(kept_then(false), "double free");
  EXPECT_DEATH(kept_then(true), "double free");
}

// Allocations made before the hooks' constructors ran are not listed (tracking was off), and
// free()/realloc() of them later works.
TEST_F(AllocHooksTest, BlocksAllocatedBeforeLoadAreUnlistedAndFreeable) {
  ASSERT_NE(g_early_kept, nullptr);
  ASSERT_NE(g_early_realloc, nullptr);
  EXPECT_FALSE(Lookup(g_early_kept, kBig).found);
  EXPECT_FALSE(Lookup(g_early_realloc, kBig).found);
  EXPECT_EQ(static_cast<char*>(g_early_realloc)[kBig - 1], 0);
  void* q = std::realloc(g_early_realloc, 2 * kBig);
  ASSERT_NE(q, nullptr);
  ExpectOwn(q, 2 * kBig, 16, "realloc of an early block");
  std::free(q);
  std::free(g_early_kept);
  EXPECT_FALSE(Lookup(q, 1).found);
}

// The error paths of the allocation functions, as glibc's own: errno and return values.
TEST_F(AllocHooksTest, ErrorPathsAndEdgeCases) {
  errno = 0;
  EXPECT_EQ(aligned_alloc(3, 64), nullptr);
  EXPECT_EQ(errno, EINVAL);
  void* a = reinterpret_cast<void*>(1);
  EXPECT_EQ(posix_memalign(&a, 0, 64), EINVAL);
  EXPECT_EQ(posix_memalign(&a, 4, 64), EINVAL);  // not a multiple of sizeof(void*)
  EXPECT_EQ(a, reinterpret_cast<void*>(1)) << "left alone on error";
  volatile size_t huge = SIZE_MAX - 4096;
  errno = 0;
  EXPECT_EQ(posix_memalign(&a, 64, huge), ENOMEM);
  errno = 12345;  // posix_memalign leaves errno alone on success
  ASSERT_EQ(posix_memalign(&a, 4096, kBig), 0);
  EXPECT_EQ(errno, 12345);
  ExpectOwn(a, kBig, 4096, "posix_memalign 4096");
  std::free(a);
  errno = 0;
  EXPECT_EQ(std::malloc(huge), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(std::calloc(huge, 2), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  // free() preserves errno (glibc 2.33 on), for mapped blocks too.
  void* b = std::malloc(kBig);
  errno = 777;
  std::free(b);
  EXPECT_EQ(errno, 777);
  // realloc of a mapped block that fails: the block stays, listed.
  char* c = static_cast<char*>(std::malloc(kBig));
  c[5] = 9;
  errno = 0;
  void* volatile cv = c;  // (the compiler cannot tell that a failed realloc leaves c valid)
  EXPECT_EQ(std::realloc(cv, huge), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  ExpectOwn(c, kBig, 16, "after a failed realloc");
  EXPECT_EQ(c[5], 9);
  // reallocarray(p, 0, n) frees p, as realloc(p, 0).
  const uintptr_t cu = U(c);
  EXPECT_EQ(reallocarray(c, 0, 100), nullptr);
  EXPECT_FALSE(mh::OwnMapping(cu, cu + 1, nullptr, nullptr));
  // A memalign'd mapped block (glibc keeps its offset in the mapping) grown and shrunk.
  char* m = static_cast<char*>(memalign(1 << 20, kBig));
  ASSERT_NE(m, nullptr);
  ExpectOwn(m, kBig, 1 << 20, "memalign 1M");
  m[kBig - 1] = 3;
  char* g = static_cast<char*>(std::realloc(m, 2 * kBig));
  ASSERT_NE(g, nullptr);
  ExpectOwn(g, 2 * kBig, 1 << 20, "memalign'd, grown");
  EXPECT_EQ(g[kBig - 1], 3);
  char* sh = static_cast<char*>(std::realloc(g, kBig / 2));
  ASSERT_NE(sh, nullptr);
  ExpectOwn(sh, kBig / 2, 1 << 20, "memalign'd, shrunk");
  EXPECT_EQ(malloc_usable_size(sh) >= kBig / 2, true);
  // Shrunk to a small size (glibc keeps a mapped block mapped) and grown again.
  char* h = static_cast<char*>(std::realloc(sh, 100));
  ASSERT_NE(h, nullptr);
  h[99] = 4;
  char* back = static_cast<char*>(std::realloc(h, kBig));
  ASSERT_NE(back, nullptr);
  EXPECT_EQ(back[99], 4);
  ExpectOwn(back, kBig, 1 << 20, "small and large again");
  std::free(back);
  // dlerror's message is malloc'd inside libdl: fine through the hooks.
  EXPECT_EQ(dlsym(RTLD_DEFAULT, "mpigpu_no_such_symbol"), nullptr);
  EXPECT_NE(dlerror(), nullptr);
}

// Many threads allocating, reallocating and freeing large blocks (mapped and not), mapping,
// remapping and unmapping, some blocks freed under protection; another thread looking up,
// protecting and releasing. At pauses, every listed entry is a live allocation's whole mapping
// (or was listed before the test and is still mapped): never a stale one.
TEST_F(AllocHooksTest, StressNeverListsAStaleMapping) {
  constexpr int kWorkers = 6;
  constexpr size_t kMax = mh::kMappingSlots;
  // The checker's buffers, allocated before the first snapshot (large: mapped blocks of their
  // own, listed before the test and unchanged during it).
  std::vector<uintptr_t> ss(kMax), es(kMax);
  std::vector<uintptr_t> s0(kMax), e0(kMax);
  const size_t n0 = mh::CopyMappingsForTest(s0.data(), e0.data(), kMax);
  s0.resize(n0);
  e0.resize(n0);
  const auto t0 = mh::GetTableStats();

  struct Live {
    char* p;
    size_t n;
    bool mmapped;  // by mmap (its own mapping exactly), not malloc
  };
  std::mutex mu;  // the live sets, for the checker
  std::vector<std::vector<Live>> live(kWorkers);
  std::atomic<bool> pause{false}, stop{false};
  std::atomic<int> parked{0}, stale{0}, overlaps{0};
  std::vector<std::string> errors;

  auto worker = [&](int t) {
    std::mt19937_64 rng(100 + t);
    std::vector<std::pair<int, size_t>> protected_slots;  // slot, op when taken
    for (size_t op = 0; !stop.load(std::memory_order_relaxed); ++op) {
      if (pause.load(std::memory_order_acquire)) {
        parked.fetch_add(1);
        while (pause.load(std::memory_order_acquire)) std::this_thread::yield();
        parked.fetch_sub(1);
      }
      std::vector<Live>& mine = live[t];
      const int what = static_cast<int>(rng() % 10);
      if (mine.size() < 8 && what < 4) {
        const size_t n = (size_t{1} << (17 + rng() % 9)) + (rng() % 4096);  // 128 KiB..32 MiB
        Live l{nullptr, n, what == 3};
        if (l.mmapped) {
          void* m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
          l.p = m == MAP_FAILED ? nullptr : static_cast<char*>(m);
        } else if (what == 0) {
          l.p = static_cast<char*>(std::calloc(1, n));
        } else if (what == 1) {
          l.p = static_cast<char*>(memalign(size_t{1} << (4 + rng() % 14), n));
        } else {
          l.p = static_cast<char*>(std::malloc(n));
        }
        if (l.p == nullptr) continue;
        l.p[0] = 1;
        std::lock_guard<std::mutex> g(mu);
        mine.push_back(l);
      } else if (!mine.empty()) {
        const size_t k = rng() % mine.size();
        Live l = mine[k];
        if (what == 4 && !l.mmapped) {  // protect the block's mapping; freed later, deferred
          const Own o = Lookup(l.p, l.n);
          if (o.found) {
            const int slot = mh::Protect(o.start, o.end);
            if (slot >= 0) protected_slots.emplace_back(slot, op);
          }
          continue;
        }
        if (what == 5) {  // realloc / mremap
          const size_t n2 = l.n / 2 + (rng() % (2 * l.n));
          char* q;
          if (l.mmapped) {
            void* r = mremap(l.p, l.n, n2, MREMAP_MAYMOVE);
            q = r == MAP_FAILED ? nullptr : static_cast<char*>(r);
          } else {
            q = static_cast<char*>(std::realloc(l.p, n2));
          }
          if (q != nullptr) {
            std::lock_guard<std::mutex> g(mu);
            mine[k] = {q, n2, l.mmapped};
          }
          continue;
        }
        {
          std::lock_guard<std::mutex> g(mu);
          mine.erase(mine.begin() + static_cast<long>(k));
        }
        if (l.mmapped) {
          if (what == 6 && l.n > 2 * kPage) {  // a part first: the rest is nobody's own
            ASSERT_EQ(munmap(l.p, kPage), 0);
            ASSERT_EQ(munmap(l.p + kPage, l.n - kPage), 0);
          } else {
            ASSERT_EQ(munmap(l.p, l.n), 0);
          }
        } else {
          std::free(l.p);
        }
      }
      // Registrations end after a while (the cache's eviction).
      while (!protected_slots.empty() && op - protected_slots.front().second > 20) {
        mh::Unprotect(protected_slots.front().first);
        protected_slots.erase(protected_slots.begin());
      }
    }
    for (auto& [slot, op] : protected_slots) mh::Unprotect(slot);
    std::lock_guard<std::mutex> g(mu);
    for (const Live& l : live[t]) {
      if (l.mmapped)
        munmap(l.p, l.n);
      else
        std::free(l.p);
    }
    live[t].clear();
  };

  // Looks up, protects and releases meanwhile (the pin cache's side).
  std::thread cache_side([&] {
    std::mt19937_64 rng(99);
    while (!stop.load(std::memory_order_relaxed)) {
      uintptr_t a = 0;
      {
        std::lock_guard<std::mutex> g(mu);
        auto& v = live[rng() % kWorkers];
        if (!v.empty()) a = U(v[rng() % v.size()].p);
      }
      uintptr_t s = 0, e = 0;
      if (a != 0 && mh::OwnMapping(a, a + 1, &s, &e)) {
        const int slot = mh::Protect(s, e);
        if (slot >= 0) mh::Unprotect(slot);
      }
      (void)mh::ReleaseKept();
    }
  });

  auto check = [&] {
    std::lock_guard<std::mutex> g(mu);
    const size_t n = mh::CopyMappingsForTest(ss.data(), es.data(), kMax);
    for (size_t i = 0; i < n; ++i) {
      const uintptr_t s = ss[i], e = es[i];
      bool ok = false;
      for (auto& v : live)
        for (const Live& l : v) {
          const uintptr_t p = U(l.p);
          if (l.mmapped) ok |= s == p && e == ((p + l.n + kPage - 1) & ~(kPage - 1));
          else ok |= s <= p && p + l.n <= e && e - s <= l.n + (1u << 17) + 2 * kPage;
        }
      for (size_t j = 0; j < s0.size() && !ok; ++j) ok = s0[j] == s && e0[j] == e;
      // Another live block glibc mapped on its own (gtest's, a thread's; every block under
      // mmap_threshold=0): a chunk header at the start naming exactly this mapping.
      if (!ok && Mapped(s)) {
        const auto* h = reinterpret_cast<const size_t*>(s);
        ok = h[0] == 0 && h[1] == ((e - s) | 2);
      }
      if (ok) ok = Mapped(s) && Mapped(e - kPage);  // ends (every page: too slow)
      if (!ok) {
        stale.fetch_add(1);
        if (errors.size() < 5)
          errors.push_back("stale entry [" + std::to_string(s) + ", " + std::to_string(e) + ")");
      }
      if (i > 0 && ss[i] < es[i - 1]) overlaps.fetch_add(1);
    }
  };

  std::vector<std::thread> ts;
  for (int t = 0; t < kWorkers; ++t) ts.emplace_back(worker, t);
  for (int round = 0; round < 20; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    pause.store(true, std::memory_order_release);
    while (parked.load() < kWorkers) std::this_thread::yield();
    // The cache side may still be inside a lookup; it never changes the table.
    check();
    pause.store(false, std::memory_order_release);
  }
  stop.store(true);
  for (auto& t : ts) t.join();
  cache_side.join();
  check();
  EXPECT_EQ(stale.load(), 0) << (errors.empty() ? "" : errors[0]);
  EXPECT_EQ(overlaps.load(), 0);
  (void)mh::ReleaseKept();
  EXPECT_EQ(mh::DeferredFrees(), 0);
  const auto t1 = mh::GetTableStats();
  std::printf("table lock not taken in time during the stress: %llu inserts skipped, %llu "
              "poisonings\n",
              static_cast<unsigned long long>(t1.skipped_inserts - t0.skipped_inserts),
              static_cast<unsigned long long>(t1.poisonings - t0.poisonings));
}

// glibc told never to map a block on its own (GLIBC_TUNABLES=glibc.malloc.mmap_max=0): the hooks
// say so and why (the pin cache then stays off), and the malloc family still works. Runs this
// binary again with the tunable (it must be set before glibc starts).
TEST(AllocHooksTunables, NoMappedBlocksTurnsTheHooksOffSayingWhy) {
  if (std::getenv("MPIGPU_ALLOC_TEST_CHILD") != nullptr) {
    EXPECT_FALSE(mr::AllocHooksActive());
    EXPECT_NE(std::strstr(mr::AllocHooksWhyNot(), "mapping of its own"), nullptr)
        << mr::AllocHooksWhyNot();
    void* p = std::malloc(kBig);
    ASSERT_NE(p, nullptr);
    EXPECT_FALSE(GlibcMappedOnItsOwn(p));
    EXPECT_FALSE(Lookup(p, kBig).found);
    p = std::realloc(p, 2 * kBig);
    ASSERT_NE(p, nullptr);
    std::free(p);
    return;
  }
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("GLIBC_TUNABLES", "glibc.malloc.mmap_max=0", 1);
    setenv("MPIGPU_ALLOC_TEST_CHILD", "1", 1);
    setenv("MPIGPU_PIN_CACHE", "1", 1);
    execl("/proc/self/exe", "alloc_hooks_test",
          "--gtest_filter=AllocHooksTunables.NoMappedBlocksTurnsTheHooksOffSayingWhy",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's output says why";
}

// The probe (AllocHooksActive) after the program left a large free area on glibc's heap: a
// freed 30 MiB mapped block raises glibc's thresholds (mmap 30 MiB, trim 60 MiB), then 56 MiB of
// 1 MiB blocks freed stay as the heap's top, from which glibc serves the probe's first 33 MiB
// block. That is no reason to turn the pin cache off for the whole process. Runs in a fresh
// process (the probe runs once per process).
TEST(AllocHooksProbe, AFreeAreaOnTheHeapDoesNotTurnTheHooksOff) {
  if (std::getenv("MPIGPU_ALLOC_TEST_CHILD") != nullptr) {
    void* volatile a = std::malloc(30u << 20);
    std::free(a);
    std::vector<void*> b(56);
    for (void*& q : b) q = std::malloc(1u << 20);
    const bool heap = !GlibcMappedOnItsOwn(b[0]);
    for (void* q : b) std::free(q);
    if (!heap) GTEST_SKIP() << "glibc mapped 1 MiB blocks on their own: the case does not arise";
    EXPECT_TRUE(mr::AllocHooksActive()) << mr::AllocHooksWhyNot();
    return;
  }
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("MPIGPU_ALLOC_TEST_CHILD", "1", 1);
    setenv("MPIGPU_PIN_CACHE", "1", 1);
    execl("/proc/self/exe", "alloc_hooks_test",
          "--gtest_filter=AllocHooksProbe.AFreeAreaOnTheHeapDoesNotTurnTheHooksOff",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child's output says why";
}

}  // namespace

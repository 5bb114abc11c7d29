// RegCache with a fake registration that records its calls: hits, misses, covering lookups,
// neighbours sharing an edge page (each its own region; exclusive clients never twice a page),
// merging, LRU eviction and limits, reference counts; staleness through every hooked path
// (munmap, mremap, madvise, shmdt, sbrk, free and malloc again: the own-mapping client), from
// this thread and others; heap memory registered per use (the own-mapping client);
// a stress test of mapping threads against acquiring ones.
//
// The staleness oracle: the fake reads each registered page's frame number (/proc/self/pagemap,
// root only) and the first word of the page at registration. A region the cache hands out again
// must still sit on the same frames (where readable) and, in the stress test, on the same
// generation of the page's contents.
#include "memreg/reg_cache.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "memreg/memhooks.h"
#include "memreg/reg_cache_config.h"

namespace mpigpu::memreg {
namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// The frame of the page at `p`, or 0 when not readable (not root, or not present).
uint64_t FrameOf(const void* p) {
  static const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  uint64_t entry = 0;
  const off_t off = static_cast<off_t>(reinterpret_cast<uintptr_t>(p) / kPage * 8);
  if (pread(fd, &entry, sizeof entry, off) != sizeof entry) return 0;
  if (!(entry >> 63)) return 0;           // not present
  return entry & ((uint64_t{1} << 55) - 1);  // 0 without CAP_SYS_ADMIN
}

bool FramesReadable() {
  static const bool readable = [] {
    static volatile char probe[1] = {1};
    probe[0] = 2;
    return FrameOf(const_cast<char*>(probe)) != 0;
  }();
  return readable;
}

// A fake "memory region": what was registered, and the pages' frames then.
struct FakeMr {
  int id;
  uintptr_t addr;
  size_t len;
  std::vector<uint64_t> frames;
};

// Records registrations; reads pages to fault them in, as ibv_reg_mr pins them.
class FakeDevice {
 public:
  RegCache::RegisterFn Reg() {
    return [this](void* addr, size_t len, void** handle) -> Status {
      if (fail_next_.exchange(false)) return Status(Err::kNoMemory, "fake: out of MRs");
      auto mr = std::make_unique<FakeMr>();
      mr->addr = reinterpret_cast<uintptr_t>(addr);
      mr->len = len;
      for (size_t off = 0; off < len; off += kPage) {
        const volatile char* p = static_cast<const char*>(addr) + off;
        (void)*p;  // present, as a registration makes it
        mr->frames.push_back(FrameOf(static_cast<const char*>(addr) + off));
      }
      std::lock_guard<std::mutex> lock(mu_);
      mr->id = ++next_id_;
      log_.push_back("reg " + std::to_string(mr->id));
      *handle = mr.get();
      live_[mr->id] = std::move(mr);
      return Status::Ok();
    };
  }
  RegCache::DeregisterFn Dereg() {
    return [this](void* handle) {
      auto* mr = static_cast<FakeMr*>(handle);
      std::lock_guard<std::mutex> lock(mu_);
      log_.push_back("dereg " + std::to_string(mr->id));
      ASSERT_EQ(live_.erase(mr->id), 1u) << "deregistered twice";
    };
  }
  int registrations() {
    std::lock_guard<std::mutex> lock(mu_);
    return next_id_;
  }
  size_t live() {
    std::lock_guard<std::mutex> lock(mu_);
    return live_.size();
  }
  std::vector<std::string> TakeLog() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(log_, {});
  }
  void FailNext() { fail_next_ = true; }
  // Whether two live registrations share a page (what cudaHostRegister refuses).
  bool AnyTwoShareAPage() {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<uintptr_t, uintptr_t>> v;
    for (auto& [id, mr] : live_) v.emplace_back(mr->addr, mr->addr + mr->len);
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i].first < v[i - 1].second) return true;
    return false;
  }

 private:
  std::mutex mu_;
  int next_id_ = 0;
  std::map<int, std::unique_ptr<FakeMr>> live_;
  std::vector<std::string> log_;
  std::atomic<bool> fail_next_{false};
};

int IdOf(const Region* r) { return static_cast<FakeMr*>(r->handle[0])->id; }

// The oracle: a region handed out still covers the frames it was registered on.
void ExpectSameFrames(const Region* r) {
  if (!FramesReadable()) return;  // not root: frames read as 0 (the tests say so once below)
  const auto* mr = static_cast<FakeMr*>(r->handle[0]);
  for (size_t i = 0; i < mr->frames.size(); ++i)
    ASSERT_EQ(mr->frames[i], FrameOf(reinterpret_cast<char*>(mr->addr) + i * kPage))
        << "stale region: page " << i << " of [" << r->addr << ", +" << r->len << ")";
}

char* MapPages(size_t n, void* at = nullptr, int extra_flags = 0) {
  void* p = mmap(at, n * kPage, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | extra_flags | (at ? MAP_FIXED : 0), -1, 0);
  EXPECT_NE(p, MAP_FAILED) << strerror(errno);
  if (p != MAP_FAILED) std::memset(p, 0x5a, n * kPage);
  return static_cast<char*>(p);
}

class RegCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(memhooks::HooksActive()) << memhooks::HooksInactiveReason();
    if (!FramesReadable() && !said_) {
      said_ = true;
      std::fprintf(stderr,
                   "note: /proc/self/pagemap shows no frame numbers (not root): the frame "
                   "oracle is skipped; the registration counts are still checked\n");
    }
  }
  std::unique_ptr<RegCache> Make(size_t max_bytes = 1 << 30, size_t max_entries = 1 << 20) {
    auto c = std::make_unique<RegCache>(dev_.Reg(), dev_.Dereg(), max_bytes, max_entries);
    EXPECT_TRUE(c->caching()) << c->why_not_caching();
    return c;
  }
  // Acquire, check the region covers the request and the oracle, and return it.
  Region* Get(RegCache* c, const void* addr, size_t len) {
    Region* r = nullptr;
    Status st = c->Acquire(const_cast<void*>(addr), len, &r);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) return nullptr;
    const auto a = reinterpret_cast<uintptr_t>(addr);
    const auto ra = reinterpret_cast<uintptr_t>(r->addr);
    EXPECT_LE(ra, a);
    EXPECT_GE(ra + r->len, a + len);
    EXPECT_EQ(ra % kPage, 0u);
    EXPECT_EQ(r->len % kPage, 0u);
    ExpectSameFrames(r);
    return r;
  }
  FakeDevice dev_;
  static bool said_;
};
bool RegCacheTest::said_ = false;

TEST_F(RegCacheTest, HitMissAndCoveringLookup) {
  auto c = Make();
  char* buf = MapPages(8);
  Region* r1 = Get(c.get(), buf + 100, 3 * kPage);  // pages 0..3
  ASSERT_NE(r1, nullptr);
  EXPECT_EQ(r1->addr, buf);
  EXPECT_EQ(r1->len, 4 * kPage);
  c->Release(r1);
  // Every sub-range of the registered pages hits the same region.
  for (size_t off : {size_t{0}, kPage, 2 * kPage + 7, 4 * kPage - 1}) {
    Region* r = Get(c.get(), buf + off, 1);
    EXPECT_EQ(r, r1);
    c->Release(r);
  }
  Region* whole = Get(c.get(), buf, 4 * kPage);
  EXPECT_EQ(whole, r1);
  c->Release(whole);
  EXPECT_EQ(dev_.registrations(), 1);
  // A range beyond it misses.
  Region* other = Get(c.get(), buf + 6 * kPage, kPage);
  EXPECT_NE(other, r1);
  c->Release(other);
  EXPECT_EQ(dev_.registrations(), 2);
  const auto s = c->stats();
  EXPECT_EQ(s.hits, 5u);
  EXPECT_EQ(s.misses, 2u);
  EXPECT_EQ(s.entries, 2u);
  EXPECT_EQ(s.bytes, 5 * kPage);
  c.reset();
  EXPECT_EQ(dev_.live(), 0u);
  munmap(buf, 8 * kPage);
}

TEST_F(RegCacheTest, OverlapMergesWhenSmall) {
  auto c = Make();
  char* buf = MapPages(8);
  // Two ranges sharing pages 1 and 2 (more than an edge page): the second registers the union,
  // and both then hit.
  Region* a = Get(c.get(), buf, 2 * kPage + 10);              // pages 0..2
  Region* b = Get(c.get(), buf + kPage + 10, 3 * kPage);      // pages 1..4
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->addr, buf);
  EXPECT_EQ(b->len, 5 * kPage);
  EXPECT_EQ(dev_.registrations(), 2);
  EXPECT_EQ(dev_.live(), 2u);  // a is still referenced: kept registered for its holder
  c->Release(a);
  EXPECT_EQ(dev_.live(), 1u);  // a left the map when b absorbed it: deregistered at release
  c->Release(b);
  for (int i = 0; i < 3; ++i) {
    Region* x = Get(c.get(), buf, 2 * kPage + 10);
    Region* y = Get(c.get(), buf + kPage + 10, 3 * kPage);
    EXPECT_EQ(x, y);
    c->Release(x);
    c->Release(y);
  }
  EXPECT_EQ(dev_.registrations(), 2);
  EXPECT_EQ(c->stats().merges, 1u);
  c.reset();
  munmap(buf, 8 * kPage);
}

TEST_F(RegCacheTest, LargeUnionIsNotMerged) {
  auto c = Make();
  char* buf = MapPages(12);
  Region* big = Get(c.get(), buf, 8 * kPage);
  c->Release(big);
  // Pages 6..9 share two pages with it: the union would be 10 pages, over twice the request's 4:
  // registered alone, and the big one leaves the cache (they would share more than an edge page).
  Region* small = Get(c.get(), buf + 6 * kPage, 4 * kPage);
  EXPECT_EQ(small->addr, buf + 6 * kPage);
  EXPECT_EQ(small->len, 4 * kPage);
  EXPECT_EQ(dev_.live(), 1u);
  c->Release(small);
  EXPECT_EQ(c->stats().merges, 0u);
  EXPECT_EQ(c->stats().cached, 1u);
  c.reset();
  munmap(buf, 12 * kPage);
}

// 16 buffers laid out as malloc lays out 64-page vectors back to back (a 16-byte chunk header
// before each): each one's last page is the next one's first. Each keeps its own region over its
// 65 pages (two regions over each shared page), so from the second round on every request hits;
// nothing merges, nothing is evicted. Rounds alternate one buffer at a time and all 16 held at
// once (the bandwidth test's window).
constexpr int kAdjacent = 16;
constexpr size_t kAdjacentPages = 64;
char* AdjacentBuffer(char* base, int i) {
  return base + 16 + i * (kAdjacentPages * kPage + 16);
}

TEST_F(RegCacheTest, AdjacentBuffersSharingEdgePagesEachHitTheirOwnRegion) {
  auto c = Make();
  const size_t pages = kAdjacent * kAdjacentPages + 2;
  char* base = MapPages(pages);
  const size_t n = kAdjacentPages * kPage;
  std::vector<Region*> first(kAdjacent);
  constexpr int kRounds = 6;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<Region*> held(kAdjacent);
    for (int i = 0; i < kAdjacent; ++i) {
      held[i] = Get(c.get(), AdjacentBuffer(base, i), n);
      ASSERT_NE(held[i], nullptr);
      // Its own pages: from its first page (the previous buffer's last) through its last.
      EXPECT_EQ(held[i]->addr, base + i * kAdjacentPages * kPage) << "buffer " << i;
      EXPECT_EQ(held[i]->len, (kAdjacentPages + 1) * kPage) << "buffer " << i;
      if (round == 0) first[i] = held[i];
      else EXPECT_EQ(held[i], first[i]) << "buffer " << i << ", round " << round;
      if (round % 2 == 0) c->Release(held[i]);  // one at a time; odd rounds hold the window
    }
    if (round % 2 == 1)
      for (Region* r : held) c->Release(r);
  }
  const auto s = c->stats();
  EXPECT_EQ(s.misses, static_cast<uint64_t>(kAdjacent));
  EXPECT_EQ(s.hits, static_cast<uint64_t>(kAdjacent * (kRounds - 1)));
  EXPECT_EQ(s.registrations, static_cast<uint64_t>(kAdjacent));
  EXPECT_EQ(dev_.registrations(), kAdjacent);
  EXPECT_EQ(s.merges, 0u);
  EXPECT_EQ(s.evictions, 0u);
  EXPECT_EQ(s.deregistrations, 0u);
  EXPECT_EQ(s.entries, static_cast<size_t>(kAdjacent));
  EXPECT_EQ(s.cached, static_cast<size_t>(kAdjacent));
  // The limits count a shared page once per registration (each memory region pins it).
  EXPECT_EQ(s.bytes, kAdjacent * (kAdjacentPages + 1) * kPage);
  c.reset();
  EXPECT_EQ(dev_.live(), 0u);
  munmap(base, pages * kPage);
}

// Unmapping one shared page drops exactly the two regions over it (and a page inside one buffer
// only that buffer's); the next requests register again and the others still hit.
TEST_F(RegCacheTest, UnmappingASharedPageDropsBothRegionsOverIt) {
  auto c = Make();
  const size_t pages = kAdjacent * kAdjacentPages + 2;
  char* base = MapPages(pages);
  const size_t n = kAdjacentPages * kPage;
  std::vector<int> ids(kAdjacent);
  for (int i = 0; i < kAdjacent; ++i) {
    Region* r = Get(c.get(), AdjacentBuffer(base, i), n);
    ASSERT_NE(r, nullptr);
    ids[i] = IdOf(r);
    c->Release(r);
  }
  ASSERT_EQ(dev_.live(), static_cast<size_t>(kAdjacent));
  (void)dev_.TakeLog();
  // The page buffers 3 and 4 share: both regions go, none other.
  char* shared = base + 4 * kAdjacentPages * kPage;
  ASSERT_EQ(munmap(shared, kPage), 0);
  c->Sync();
  auto log = dev_.TakeLog();
  std::sort(log.begin(), log.end());
  std::vector<std::string> want = {"dereg " + std::to_string(ids[3]),
                                   "dereg " + std::to_string(ids[4])};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(log, want);
  EXPECT_EQ(c->stats().invalidations, 2u);
  EXPECT_EQ(c->stats().cached, static_cast<size_t>(kAdjacent - 2));
  // A page inside buffer 9 alone (not an edge page): only its region goes.
  ASSERT_EQ(munmap(base + (9 * kAdjacentPages + 10) * kPage, kPage), 0);
  c->Sync();
  EXPECT_EQ(dev_.TakeLog(), std::vector<std::string>{"dereg " + std::to_string(ids[9])});
  EXPECT_EQ(c->stats().invalidations, 3u);
  // Mapped again (fresh pages): the three register anew over the new pages; the rest hit.
  ASSERT_EQ(MapPages(1, shared), shared);
  ASSERT_EQ(MapPages(1, base + (9 * kAdjacentPages + 10) * kPage),
            base + (9 * kAdjacentPages + 10) * kPage);
  const auto before = c->stats();
  for (int i = 0; i < kAdjacent; ++i) {
    Region* r = Get(c.get(), AdjacentBuffer(base, i), n);
    ASSERT_NE(r, nullptr);
    if (i == 3 || i == 4 || i == 9) EXPECT_NE(IdOf(r), ids[i]) << "buffer " << i;
    else EXPECT_EQ(IdOf(r), ids[i]) << "buffer " << i;
    c->Release(r);
  }
  const auto s = c->stats();
  EXPECT_EQ(s.registrations - before.registrations, 3u);
  EXPECT_EQ(s.hits - before.hits, static_cast<uint64_t>(kAdjacent - 3));
  EXPECT_EQ(s.merges, 0u);
  EXPECT_EQ(dev_.live(), static_cast<size_t>(kAdjacent));
  c.reset();
  munmap(base, pages * kPage);
}

// A held region whose neighbour's shared page is unmapped leaves the cache at once and is
// deregistered at its Release; the neighbour, unreferenced, at once.
TEST_F(RegCacheTest, UnmappedSharedPageUnderAHeldRegion) {
  auto c = Make();
  char* base = MapPages(2 * kAdjacentPages + 2);
  const size_t n = kAdjacentPages * kPage;
  Region* a = Get(c.get(), AdjacentBuffer(base, 0), n);
  Region* b = Get(c.get(), AdjacentBuffer(base, 1), n);
  ASSERT_TRUE(a && b);
  c->Release(b);
  const int ida = IdOf(a), idb = IdOf(b);
  (void)dev_.TakeLog();
  ASSERT_EQ(munmap(base + kAdjacentPages * kPage, kPage), 0);
  c->Sync();
  EXPECT_EQ(dev_.TakeLog(), std::vector<std::string>{"dereg " + std::to_string(idb)});
  EXPECT_EQ(c->stats().cached, 0u);
  c->Release(a);
  EXPECT_EQ(dev_.TakeLog(), std::vector<std::string>{"dereg " + std::to_string(ida)});
  ASSERT_EQ(MapPages(1, base + kAdjacentPages * kPage), base + kAdjacentPages * kPage);
  Region* again = Get(c.get(), AdjacentBuffer(base, 0), n);
  EXPECT_NE(IdOf(again), ida);
  c->Release(again);
  c.reset();
  munmap(base, (2 * kAdjacentPages + 2) * kPage);
}

// Two chunks sharing two pages (not an edge page) are still merged or replaced: overlap by more
// than a page never lets entries nest or a page lie in three of them.
TEST_F(RegCacheTest, NeighboursWithEdgePagesAndAMiddleRequest) {
  auto c = Make();
  char* buf = MapPages(12);
  Region* a = Get(c.get(), buf, 4 * kPage + 1);        // pages 0..4
  Region* b = Get(c.get(), buf + 6 * kPage, 4 * kPage);  // pages 6..9
  c->Release(a);
  c->Release(b);
  // Pages 4..6: shares page 4 with a (a's last) and page 6 with b (b's first): all three stay.
  Region* m = Get(c.get(), buf + 4 * kPage + 1, 2 * kPage);
  EXPECT_EQ(m->addr, buf + 4 * kPage);
  EXPECT_EQ(m->len, 3 * kPage);
  c->Release(m);
  EXPECT_EQ(c->stats().cached, 3u);
  EXPECT_EQ(c->stats().merges, 0u);
  // Each of the three hits its own; a one-page request on a shared page hits one of its two.
  EXPECT_EQ(Get(c.get(), buf, 4 * kPage + 1), a);
  c->Release(a);
  EXPECT_EQ(Get(c.get(), buf + 6 * kPage, 4 * kPage), b);
  c->Release(b);
  EXPECT_EQ(Get(c.get(), buf + 4 * kPage + 1, 2 * kPage), m);
  c->Release(m);
  Region* p4 = Get(c.get(), buf + 4 * kPage, 8);
  EXPECT_TRUE(p4 == a || p4 == m);
  c->Release(p4);
  EXPECT_EQ(dev_.registrations(), 3);
  // Pages 3..5 share two pages with a and two with m: both are absorbed (union 0..6, 7 pages, over
  // twice 3: replaced), b stays.
  Region* x = Get(c.get(), buf + 3 * kPage, 3 * kPage);
  EXPECT_EQ(x->addr, buf + 3 * kPage);
  EXPECT_EQ(x->len, 3 * kPage);
  c->Release(x);
  EXPECT_EQ(c->stats().cached, 2u);
  EXPECT_EQ(dev_.live(), 2u);
  EXPECT_EQ(Get(c.get(), buf + 6 * kPage, 4 * kPage), b);
  c->Release(b);
  c.reset();
  munmap(buf, 12 * kPage);
}

TEST_F(RegCacheTest, LruEvictionByEntries) {
  auto c = Make(1 << 30, 3);
  char* buf = MapPages(16);
  auto use = [&](int page) {
    Region* r = Get(c.get(), buf + page * 2 * kPage, kPage);
    int id = IdOf(r);
    c->Release(r);
    return id;
  };
  const int a = use(0), b = use(1), cc = use(2);
  EXPECT_EQ(use(0), a);  // a is now the most recently used
  dev_.TakeLog();
  const int d = use(3);  // evicts b, the least recently released
  EXPECT_EQ(dev_.TakeLog(), (std::vector<std::string>{"reg " + std::to_string(d),
                                                      "dereg " + std::to_string(b)}));
  const int e = use(4);  // then cc
  EXPECT_EQ(dev_.TakeLog(), (std::vector<std::string>{"reg " + std::to_string(e),
                                                      "dereg " + std::to_string(cc)}));
  EXPECT_EQ(use(0), a);  // still cached
  EXPECT_EQ(c->stats().entries, 3u);
  EXPECT_EQ(c->stats().evictions, 2u);
  c.reset();
  munmap(buf, 16 * kPage);
}

TEST_F(RegCacheTest, LruEvictionByBytes) {
  auto c = Make(6 * kPage, 100);
  char* buf = MapPages(32);
  Region* r1 = Get(c.get(), buf, 2 * kPage);
  Region* r2 = Get(c.get(), buf + 4 * kPage, 2 * kPage);
  Region* r3 = Get(c.get(), buf + 8 * kPage, 2 * kPage);
  const int id1 = IdOf(r1), id2 = IdOf(r2);
  c->Release(r2);
  c->Release(r1);
  c->Release(r3);
  EXPECT_EQ(c->stats().bytes, 6 * kPage);
  dev_.TakeLog();
  Region* r4 = Get(c.get(), buf + 12 * kPage, 3 * kPage);  // needs 3 pages: r2 then r1 go
  const auto log = dev_.TakeLog();
  EXPECT_EQ(log, (std::vector<std::string>{"reg " + std::to_string(IdOf(r4)),
                                           "dereg " + std::to_string(id2),
                                           "dereg " + std::to_string(id1)}));
  EXPECT_EQ(c->stats().bytes, 5 * kPage);
  c->Release(r4);
  // A region larger than the limit is registered for its holder, then dropped at release.
  Region* huge = Get(c.get(), buf + 16 * kPage, 8 * kPage);
  ASSERT_NE(huge, nullptr);
  c->Release(huge);
  EXPECT_LE(c->stats().bytes, 6 * kPage);
  EXPECT_EQ(c->stats().entries, 0u);
  c.reset();
  munmap(buf, 32 * kPage);
}

TEST_F(RegCacheTest, ReferencedRegionsAreNeverEvicted) {
  auto c = Make(1 << 30, 1);
  char* buf = MapPages(8);
  Region* a = Get(c.get(), buf, kPage);
  Region* a2 = Get(c.get(), buf, kPage);  // refcount 2
  EXPECT_EQ(a, a2);
  Region* b = Get(c.get(), buf + 4 * kPage, kPage);  // over the entry limit: both referenced
  EXPECT_EQ(dev_.live(), 2u);
  c->Release(a);
  EXPECT_EQ(dev_.live(), 2u);  // a still referenced once
  c->Release(b);               // b idle and over the limit: goes
  EXPECT_EQ(dev_.live(), 1u);
  c->Release(a2);  // a idle, within the limit: cached
  EXPECT_EQ(dev_.live(), 1u);
  Region* again = Get(c.get(), buf, kPage);
  EXPECT_EQ(again, a);
  c->Release(again);
  EXPECT_EQ(dev_.registrations(), 2);
  c.reset();
  munmap(buf, 8 * kPage);
}

TEST_F(RegCacheTest, BadRequestsAndFailedRegistrations) {
  auto c = Make();
  Region* r = nullptr;
  char* buf = MapPages(4);
  EXPECT_EQ(c->Acquire(nullptr, 10, &r).code(), Err::kInvalidArg);
  EXPECT_EQ(c->Acquire(buf, 0, &r).code(), Err::kInvalidArg);
  EXPECT_EQ(c->Acquire(reinterpret_cast<void*>(UINTPTR_MAX - 10), 100, &r).code(),
            Err::kInvalidArg);
  // kNoMemory: retried once after dropping the idle regions.
  Region* idle = Get(c.get(), buf, kPage);
  c->Release(idle);
  dev_.FailNext();
  Region* x = Get(c.get(), buf + 2 * kPage, kPage);
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(dev_.live(), 1u);  // the idle one was given back
  c->Release(x);
  c->Release(nullptr);  // harmless
  c.reset();
  munmap(buf, 4 * kPage);
}

// ---- staleness ----

TEST_F(RegCacheTest, MunmapThenMapAtTheSameAddress) {
  auto c = Make();
  char* buf = MapPages(4);
  Region* r = Get(c.get(), buf, 4 * kPage);
  const int first = IdOf(r);
  c->Release(r);
  ASSERT_EQ(munmap(buf, 4 * kPage), 0);
  ASSERT_EQ(MapPages(4, buf), buf);
  Region* r2 = Get(c.get(), buf, 4 * kPage);
  const int second = IdOf(r2);
  EXPECT_NE(second, first) << "a region over unmapped memory was handed out again";
  EXPECT_EQ(dev_.live(), 1u);  // the old one was deregistered
  c->Release(r2);
  // Partial: unmapping one page of a region drops the whole region.
  Region* r3 = Get(c.get(), buf, 4 * kPage);
  EXPECT_EQ(IdOf(r3), second);
  c->Release(r3);
  ASSERT_EQ(munmap(buf + 3 * kPage, kPage), 0);
  Region* r4 = Get(c.get(), buf, kPage);
  EXPECT_NE(IdOf(r4), second);
  c->Release(r4);
  EXPECT_GE(c->stats().invalidations, 2u);
  c.reset();
  munmap(buf, 4 * kPage);
}

TEST_F(RegCacheTest, MapFixedOverAMapping) {
  auto c = Make();
  char* buf = MapPages(4);
  Region* r = Get(c.get(), buf, 4 * kPage);
  const int first = IdOf(r);
  c->Release(r);
  ASSERT_EQ(MapPages(2, buf + kPage), buf + kPage);  // replaces pages 1..2 without munmap
  Region* r2 = Get(c.get(), buf, 4 * kPage);
  EXPECT_NE(IdOf(r2), first);
  c->Release(r2);
  c.reset();
  munmap(buf, 4 * kPage);
}

TEST_F(RegCacheTest, ReferencedRegionUnmappedIsDroppedAtRelease) {
  auto c = Make();
  char* buf = MapPages(4);
  Region* held = Get(c.get(), buf, 4 * kPage);
  const int first = IdOf(held);
  ASSERT_EQ(munmap(buf, 4 * kPage), 0);
  ASSERT_EQ(MapPages(4, buf), buf);
  Region* fresh = Get(c.get(), buf, 4 * kPage);
  EXPECT_NE(IdOf(fresh), first);
  EXPECT_EQ(dev_.live(), 2u);  // the holder's registration stays until its release
  c->Release(held);
  EXPECT_EQ(dev_.live(), 1u);
  Region* again = Get(c.get(), buf, kPage);
  EXPECT_EQ(again, fresh);
  c->Release(again);
  c->Release(fresh);
  c.reset();
  munmap(buf, 4 * kPage);
}

TEST_F(RegCacheTest, Mremap) {
  auto c = Make();
  char* buf = MapPages(4);
  char* elsewhere = MapPages(4);
  Region* r = Get(c.get(), buf, 4 * kPage);
  const int first = IdOf(r);
  c->Release(r);
  // Move the pages away, then map fresh ones where they were.
  void* moved = mremap(buf, 4 * kPage, 4 * kPage, MREMAP_MAYMOVE | MREMAP_FIXED, elsewhere);
  ASSERT_EQ(moved, elsewhere) << strerror(errno);
  ASSERT_EQ(MapPages(4, buf), buf);
  Region* r2 = Get(c.get(), buf, 4 * kPage);
  EXPECT_NE(IdOf(r2), first);
  c->Release(r2);
  // Shrinking in place drops the region too.
  Region* r3 = Get(c.get(), elsewhere, 4 * kPage);
  const int third = IdOf(r3);
  c->Release(r3);
  ASSERT_EQ(mremap(elsewhere, 4 * kPage, 2 * kPage, 0), elsewhere);
  Region* r4 = Get(c.get(), elsewhere, 2 * kPage);
  EXPECT_NE(IdOf(r4), third);
  c->Release(r4);
  c.reset();
  munmap(buf, 4 * kPage);
  munmap(elsewhere, 2 * kPage);
}

TEST_F(RegCacheTest, MadviseDropsPages) {
  auto c = Make();
  char* priv = MapPages(4);
  void* shared = mmap(nullptr, 4 * kPage, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  struct Case {
    void* addr;
    int advice;
    const char* name;
  } cases[] = {{priv, MADV_DONTNEED, "MADV_DONTNEED"},
               {priv, MADV_FREE, "MADV_FREE"},
               {shared, MADV_REMOVE, "MADV_REMOVE"}};
  for (const Case& k : cases) {
    std::memset(k.addr, 1, 4 * kPage);
    Region* r = Get(c.get(), k.addr, 4 * kPage);
    const int id = IdOf(r);
    c->Release(r);
    ASSERT_EQ(madvise(k.addr, kPage, k.advice), 0) << k.name << ": " << strerror(errno);
    std::memset(k.addr, 2, 4 * kPage);
    Region* r2 = Get(c.get(), k.addr, 4 * kPage);
    EXPECT_NE(IdOf(r2), id) << k.name;
    c->Release(r2);
  }
  // Advice that keeps the pages keeps the region.
  Region* r = Get(c.get(), priv, 4 * kPage);
  ASSERT_EQ(madvise(priv, 4 * kPage, MADV_WILLNEED), 0);
  Region* same = Get(c.get(), priv, 4 * kPage);
  EXPECT_EQ(same, r);
  c->Release(r);
  c->Release(same);
  c.reset();
  munmap(priv, 4 * kPage);
  munmap(shared, 4 * kPage);
}

TEST_F(RegCacheTest, Shmdt) {
  auto c = Make();
  const int id1 = shmget(IPC_PRIVATE, 4 * kPage, IPC_CREAT | 0600);
  if (id1 < 0) GTEST_SKIP() << "no System V shared memory here: " << strerror(errno);
  char* seg = static_cast<char*>(shmat(id1, nullptr, 0));
  ASSERT_NE(seg, reinterpret_cast<char*>(-1));
  shmctl(id1, IPC_RMID, nullptr);
  std::memset(seg, 1, 4 * kPage);
  Region* r = Get(c.get(), seg, 4 * kPage);
  const int first = IdOf(r);
  c->Release(r);
  ASSERT_EQ(shmdt(seg), 0);
  const int id2 = shmget(IPC_PRIVATE, 4 * kPage, IPC_CREAT | 0600);
  ASSERT_GE(id2, 0);
  char* seg2 = static_cast<char*>(shmat(id2, seg, 0));
  shmctl(id2, IPC_RMID, nullptr);
  ASSERT_EQ(seg2, seg) << strerror(errno);
  Region* r2 = Get(c.get(), seg2, 4 * kPage);
  EXPECT_NE(IdOf(r2), first);
  EXPECT_EQ(c->stats().flushes, 0u);  // shmdt knew the segment's size (from shmat)
  c->Release(r2);
  c.reset();
  shmdt(seg2);
}

TEST_F(RegCacheTest, BrkShrink) {
  auto c = Make();
  // Grow the break by whole pages (malloc copes with a foreign sbrk), register, shrink it back,
  // grow it again: the same addresses, fresh pages.
  char* top = static_cast<char*>(sbrk(0));
  const size_t pad = (kPage - reinterpret_cast<uintptr_t>(top) % kPage) % kPage;
  char* old = static_cast<char*>(sbrk(static_cast<intptr_t>(pad + 4 * kPage)));
  ASSERT_NE(old, reinterpret_cast<char*>(-1));
  char* area = old + pad;
  std::memset(area, 1, 4 * kPage);
  Region* r = Get(c.get(), area, 4 * kPage);
  const int first = IdOf(r);
  c->Release(r);
  ASSERT_NE(sbrk(-static_cast<intptr_t>(4 * kPage)), reinterpret_cast<void*>(-1));
  ASSERT_EQ(sbrk(static_cast<intptr_t>(4 * kPage)), area);
  std::memset(area, 2, 4 * kPage);
  Region* r2 = Get(c.get(), area, 4 * kPage);
  const int second = IdOf(r2);
  EXPECT_NE(second, first);
  c->Release(r2);
  // Same through brk().
  ASSERT_EQ(brk(area), 0);
  ASSERT_EQ(brk(area + 4 * kPage), 0);
  std::memset(area, 3, 4 * kPage);
  Region* r3 = Get(c.get(), area, 4 * kPage);
  EXPECT_NE(IdOf(r3), second);
  c->Release(r3);
  c.reset();
  ASSERT_EQ(brk(old), 0);
}

// The ibverbs client's shape: a span of the whole own mapping (memhooks::OwnMapping), no address
// protection (ibv_reg_mr pins pages). Client 0, so IdOf and the oracle read its handle.
std::unique_ptr<RegCache> MakeOwnMappingClient(FakeDevice* dev) {
  auto c = std::make_unique<RegCache>(true, 1 << 20);
  RegCache::Client v;
  v.name = "verbs-own";
  v.reg = dev->Reg();
  v.dereg = dev->Dereg();
  v.span = RegCache::OwnMappingSpan();
  EXPECT_EQ(c->AddClient(std::move(v)), 0);
  return c;
}

// Whether large malloc'd blocks are own mappings here: the malloc family interposed (this test,
// not the ThreadSanitizer one, links //memreg:alloc_hooks; under a sanitizer's allocator no table
// is kept at all, memhooks.cc).
constexpr bool kMallocTracked =
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    false;
#else
    true;
#endif

// free() then malloc() of a large block at the same address, with no malloc settings: glibc
// unmaps the block inside libc and maps the new one there. The own-mapping client caches the
// block's whole mapping (a hit on its second use), and free() drops it: the new block's pages
// are registered anew, never served by the old region (the frame oracle checks every hand-out).
TEST_F(RegCacheTest, FreeThenMallocAtTheSameAddress) {
  if (kMallocTracked) {
    ASSERT_TRUE(memhooks::TrackingMappings()) << "MPIGPU_IB_REG_CACHE=1 starts the table at load";
  }
  auto c = MakeOwnMappingClient(&dev_);
  // Above glibc's largest mmap threshold (128 KiB at start, rising to the size of each mapped
  // block freed, at most 32 MiB): a mapping of its own every round. (A smaller block malloc'd
  // again after one of its size was freed comes from the heap: registered per use.)
  const size_t n = 40 << 20;
  int same_address = 0;
  for (int round = 0; round < 4; ++round) {
    char* p = static_cast<char*>(malloc(n));
    ASSERT_NE(p, nullptr);
    std::memset(p, round, n);
    const auto ap = reinterpret_cast<uintptr_t>(p);
    uintptr_t ms = 0, me = 0;
    const bool own = memhooks::OwnMapping(ap, ap + n, &ms, &me);
    if (kMallocTracked) {
      ASSERT_TRUE(own) << "a 40 MiB block is not listed as an own mapping";
    }
    const int before = dev_.registrations();
    Region* r = Get(c.get(), p + 4096, n - 8192);
    ASSERT_NE(r, nullptr);
    if (own) {  // the whole mapping, kept
      EXPECT_EQ(reinterpret_cast<uintptr_t>(r->addr), ms);
      EXPECT_EQ(r->len, me - ms);
    }
    c->Release(r);
    Region* hit = Get(c.get(), p + n / 2, 4096);
    EXPECT_EQ(dev_.registrations(), before + (own ? 1 : 2)) << "own: the second use hits";
    c->Release(hit);
    const int regs_before_free = dev_.registrations();
    free(p);
    char* q = static_cast<char*>(malloc(n));
    ASSERT_NE(q, nullptr);
    std::memset(q, 100 + round, n);
    if (q == p) ++same_address;
    Region* r2 = Get(c.get(), q + 4096, n - 8192);  // the oracle: r2's frames are q's
    ASSERT_NE(r2, nullptr);
    EXPECT_GT(dev_.registrations(), regs_before_free) << "the freed block's region was reused";
    c->Release(r2);
    free(q);
  }
  EXPECT_GT(same_address, 0) << "malloc never returned the same address: nothing was tested";
  std::fprintf(stderr, "free/malloc: %d of 4 rounds at the same address\n", same_address);
  c.reset();
  EXPECT_EQ(dev_.live(), 0u);
}

// Heap memory (no allocation owns its mapping whole) is registered for each use and
// deregistered at its last Release: glibc may give its pages back behind the hooks.
TEST_F(RegCacheTest, HeapIsRegisteredPerUseNeverKept) {
  auto c = MakeOwnMappingClient(&dev_);
  std::vector<char> heap(96 << 10, 1);  // below glibc's mmap threshold: on the shared heap
  const auto ah = reinterpret_cast<uintptr_t>(heap.data());
  ASSERT_FALSE(memhooks::OwnMapping(ah, ah + heap.size(), nullptr, nullptr));
  for (int i = 0; i < 3; ++i) {
    const int before = dev_.registrations();
    Region* r = Get(c.get(), heap.data(), heap.size());
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(dev_.registrations(), before + 1) << "use " << i << ": registered anew";
    // A second holder of the same range meanwhile: its own registration, nothing shared.
    Region* r2 = Get(c.get(), heap.data() + 100, 1000);
    EXPECT_NE(r2, r);
    c->Release(r2);
    c->Release(r);
    EXPECT_EQ(dev_.live(), 0u) << "use " << i << ": deregistered at its Release";
  }
  const RegCache::Stats s = c->stats(0);
  EXPECT_EQ(s.uncached, 6u);
  EXPECT_EQ(s.hits, 0u);
  EXPECT_EQ(s.cached, 0u);
  // AcquireOnReuse still gives nothing for it.
  Region* none = nullptr;
  ASSERT_TRUE(c->AcquireOnReuse(0, heap.data(), heap.size(), &none).ok());
  ASSERT_TRUE(c->AcquireOnReuse(0, heap.data(), heap.size(), &none).ok());
  EXPECT_EQ(none, nullptr);
}

// An own mapping part of which the program made read-only: registering the whole mapping fails
// where the request alone would not; the request is then registered for that use alone.
TEST_F(RegCacheTest, SpanThatCannotRegisterFallsBackToTheRequest) {
  auto c = std::make_unique<RegCache>(true, 1 << 20);
  char* m = MapPages(8);
  const auto am = reinterpret_cast<uintptr_t>(m);
  RegCache::Client v;
  v.name = "verbs-own";
  v.reg = [&, reg = dev_.Reg()](void* addr, size_t len, void** h) -> Status {
    if (reinterpret_cast<uintptr_t>(addr) + len > am + 6 * kPage)  // "read-only" last 2 pages
      return Status(Err::kSystem, "fake: no write access");
    return reg(addr, len, h);
  };
  v.dereg = dev_.Dereg();
  v.span = RegCache::OwnMappingSpan();
  ASSERT_EQ(c->AddClient(std::move(v)), 0);
  if (!kMallocTracked && !memhooks::TrackingMappings())
    GTEST_SKIP() << "no own-mapping table under a sanitizer's allocator (memhooks.cc)";
  ASSERT_TRUE(memhooks::OwnMapping(am, am + 8 * kPage, nullptr, nullptr));
  Region* r = Get(c.get(), m + kPage, 2 * kPage);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->addr, m + kPage);
  EXPECT_EQ(r->len, 2 * kPage);
  EXPECT_EQ(c->stats(0).uncached, 1u);
  c->Release(r);
  EXPECT_EQ(dev_.live(), 0u);
  Region* bad = nullptr;
  EXPECT_FALSE(c->Acquire(0, m + 6 * kPage, kPage, &bad).ok());  // the request alone fails too
  c.reset();
  munmap(m, 8 * kPage);
}

#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
}  // namespace
}  // namespace mpigpu::memreg
extern "C" void __libc_free(void*);  // glibc's own free, past the interposed one
namespace mpigpu::memreg {
namespace {

// The order inside free(): glibc unmaps the block, then free() logs it. Another thread's malloc
// may land at the same address in between and send from it: its new mapping's own record must
// drop the old region first. Played here by freeing through glibc alone (no record at all).
TEST_F(RegCacheTest, NewBlockAtAFreedAddressDropsTheOldRegionWithoutFreesRecord) {
  auto c = MakeOwnMappingClient(&dev_);
  const size_t n = 40 << 20;  // always a mapping of its own (FreeThenMallocAtTheSameAddress)
  int same_address = 0;
  for (int round = 0; round < 4 && same_address == 0; ++round) {
    char* p = static_cast<char*>(malloc(n));
    ASSERT_NE(p, nullptr);
    std::memset(p, 1, n);
    Region* r = Get(c.get(), p, n);
    ASSERT_NE(r, nullptr);
    const int old_id = IdOf(r);
    c->Release(r);
    const auto ap = reinterpret_cast<uintptr_t>(p);
    uintptr_t ms = 0, me = 0;
    ASSERT_TRUE(memhooks::OwnMapping(ap, ap + n, &ms, &me));
    __libc_free(p);  // unmapped by glibc; no record (the racing free() has not logged yet)
    memhooks::ForgetMappings(ms, me);  // what free() did before unmapping
    char* q = static_cast<char*>(malloc(n));
    ASSERT_NE(q, nullptr);
    std::memset(q, 2, n);
    if (q == p) {
      ++same_address;
      Region* r2 = Get(c.get(), q, n);  // the frame oracle checks r2 too
      ASSERT_NE(r2, nullptr);
      EXPECT_NE(IdOf(r2), old_id) << "the old region was handed out over the new block";
      c->Release(r2);
    }
    free(q);
  }
  if (same_address == 0) GTEST_SKIP() << "malloc never returned the freed address";
}
#endif

// The unmapping happens on other threads; the next Acquire on this one must see it.
TEST_F(RegCacheTest, InvalidationFromAnotherThread) {
  auto c = Make();
  char* buf = MapPages(4);
  for (int round = 0; round < 20; ++round) {
    Region* r = Get(c.get(), buf, 4 * kPage);
    const int id = IdOf(r);
    c->Release(r);
    std::thread t([&] {
      if (round % 2 == 0) {
        ASSERT_EQ(munmap(buf, 4 * kPage), 0);
        ASSERT_EQ(MapPages(4, buf), buf);
      } else {
        ASSERT_EQ(madvise(buf, 4 * kPage, MADV_DONTNEED), 0);
      }
    });
    t.join();
    Region* r2 = Get(c.get(), buf, 4 * kPage);
    EXPECT_NE(IdOf(r2), id) << "round " << round;
    c->Release(r2);
  }
  // free and malloc on another thread (one arena: M_ARENA_MAX 1).
  const size_t n = 4 << 20;
  char* p = static_cast<char*>(malloc(n));
  std::memset(p, 7, n);
  Region* r = Get(c.get(), p, n);
  c->Release(r);
  std::thread t([&] {
    free(p);
    char* q = static_cast<char*>(malloc(n));
    std::memset(q, 8, n);
    p = q;
  });
  t.join();
  Region* r2 = Get(c.get(), p, n);  // hit or miss, the frames must match (oracle)
  c->Release(r2);
  free(p);
  c.reset();
  munmap(buf, 4 * kPage);
}

// More invalidations than the log holds between two Acquires: the cache drops everything.
TEST_F(RegCacheTest, LogOverflowFlushes) {
  auto c = Make();
  char* buf = MapPages(4);
  Region* r = Get(c.get(), buf, kPage);
  const int id = IdOf(r);
  c->Release(r);
  for (size_t i = 0; i < memhooks::kLogSlots + 10; ++i) {
    void* junk = MapPages(1);
    munmap(junk, kPage);
  }
  Region* r2 = Get(c.get(), buf, kPage);
  EXPECT_NE(IdOf(r2), id);
  EXPECT_GE(c->stats().flushes, 1u);
  c->Release(r2);
  c.reset();
  munmap(buf, 4 * kPage);
}

// Threads remap a pool of slots (and churn unrelated mappings) while two threads acquire and
// release them. Each slot's first word holds its generation; under the slot's lock, a region
// handed out must have been registered on the current generation.
TEST_F(RegCacheTest, StressMappersAgainstAcquirer) {
  constexpr int kSlots = 16, kMappers = 3;
  const size_t slot_pages = 4;
  // Generation of each registration, read by the fake at registration time.
  std::mutex gen_mu;
  std::map<int, uint64_t> reg_gen;
  FakeDevice& dev = dev_;
  auto reg = [&](void* addr, size_t len, void** h) -> Status {
    Status st = dev.Reg()(addr, len, h);
    if (st.ok()) {
      std::lock_guard<std::mutex> lock(gen_mu);
      reg_gen[static_cast<FakeMr*>(*h)->id] = *static_cast<uint64_t*>(addr);
    }
    return st;
  };
  RegCache cache(reg, dev.Dereg(), 64 * slot_pages * kPage, 8);
  ASSERT_TRUE(cache.caching());
  char* pool = MapPages(kSlots * slot_pages);
  struct Slot {
    std::mutex mu;
    uint64_t gen = 0;
  };
  std::vector<Slot> slots(kSlots);
  auto slot_addr = [&](int i) { return pool + i * slot_pages * kPage; };
  std::atomic<uint64_t> next_gen{1};
  // Every page of a slot starts with the slot's generation.
  auto stamp = [&](int i, uint64_t g) {
    for (size_t p = 0; p < slot_pages; ++p)
      *reinterpret_cast<uint64_t*>(slot_addr(i) + p * kPage) = g;
  };
  for (int i = 0; i < kSlots; ++i) stamp(i, 0);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> remaps{0};
  std::vector<std::thread> mappers;
  for (int m = 0; m < kMappers; ++m) {
    mappers.emplace_back([&, m] {
      std::mt19937 rng(m);
      while (!stop.load(std::memory_order_relaxed)) {
        const int i = static_cast<int>(rng() % kSlots);
        {
          std::lock_guard<std::mutex> lock(slots[i].mu);
          const uint64_t g = next_gen.fetch_add(1, std::memory_order_relaxed);
          switch (rng() % 3) {
            case 0:
              munmap(slot_addr(i), slot_pages * kPage);
              mmap(slot_addr(i), slot_pages * kPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
              break;
            case 1:
              madvise(slot_addr(i), slot_pages * kPage, MADV_DONTNEED);
              break;
            default:
              mmap(slot_addr(i), slot_pages * kPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
          }
          stamp(i, g);
          slots[i].gen = g;
        }
        remaps.fetch_add(1, std::memory_order_relaxed);
        // Unrelated churn: log records that match nothing.
        void* junk = mmap(nullptr, kPage, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        munmap(junk, kPage);
      }
    });
  }
  // Two acquiring threads (the cache is shared by the netmod's callers), 10000 requests each.
  std::atomic<int> checked{0}, stale{0};
  std::vector<std::thread> acquirers;
  for (int a = 0; a < 2; ++a) {
    acquirers.emplace_back([&, a] {
      std::mt19937 rng(99 + a);
      for (int iter = 0; iter < 10000; ++iter) {
        const int i = static_cast<int>(rng() % kSlots);
        std::lock_guard<std::mutex> lock(slots[i].mu);
        Region* r = nullptr;
        const size_t off = rng() % (slot_pages * kPage - 64);
        Status st = cache.Acquire(slot_addr(i) + off, 64, &r);
        if (!st.ok()) {
          ADD_FAILURE() << st.ToString();
          return;
        }
        // Requests stay inside a slot, so do regions (merged ones: unions of overlapping ones).
        EXPECT_GE(static_cast<char*>(r->addr), slot_addr(i));
        EXPECT_LE(static_cast<char*>(r->addr) + r->len, slot_addr(i) + slot_pages * kPage);
        uint64_t g;
        {
          std::lock_guard<std::mutex> gl(gen_mu);
          g = reg_gen[IdOf(r)];
        }
        if (g != slots[i].gen) ++stale;
        ++checked;
        cache.Release(r);
      }
    });
  }
  for (auto& t : acquirers) t.join();
  stop = true;
  for (auto& t : mappers) t.join();
  const auto s = cache.stats();
  std::fprintf(stderr,
               "stress: %d checked, %llu remaps, hits %llu, misses %llu, invalidations %llu, "
               "flushes %llu\n",
               checked.load(), static_cast<unsigned long long>(remaps.load()),
               static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.misses),
               static_cast<unsigned long long>(s.invalidations),
               static_cast<unsigned long long>(s.flushes));
  EXPECT_EQ(checked, 20000);
  EXPECT_EQ(stale, 0) << "stale regions handed out";
  EXPECT_GT(s.hits, 0u);
  EXPECT_GT(s.invalidations + s.flushes, 0u);
  munmap(pool, kSlots * slot_pages * kPage);
}

// The settings: defaults, ranges, refusals with the variable named.
// ---- clients, the reuse policy, address protection ----

// A cache with two fake clients: 0 plain (verbs-like), 1 address-keyed (cudaHostRegister-like).
class SharedCacheTest : public RegCacheTest {
 protected:
  std::unique_ptr<RegCache> MakeShared(size_t pin_entries = 1 << 20) {
    auto c = std::make_unique<RegCache>(true, 1 << 20);
    EXPECT_TRUE(c->caching()) << c->why_not_caching();
    RegCache::Client plain;
    plain.name = "plain";
    plain.reg = dev_.Reg();
    plain.dereg = dev_.Dereg();
    EXPECT_EQ(c->AddClient(plain), 0);
    RegCache::Client pin;
    pin.name = "pin";
    pin.reg = pins_.Reg();
    pin.dereg = pins_.Dereg();
    pin.max_entries = pin_entries;
    pin.pins_addresses = true;
    pin.exclusive_pages = true;
    EXPECT_EQ(c->AddClient(pin), 1);
    return c;
  }
  // Whether [p, p + n) is free address space (a probe mapping lands exactly there).
  static bool AddressFree(void* p, size_t n) {
    void* q = mmap(p, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (q == MAP_FAILED) return false;
    munmap(q, n);
    return q == p;
  }
  // Whether the first page of p is mapped (mincore fails with ENOMEM where nothing is).
  static bool Mapped(void* p) {
    unsigned char v;
    return mincore(p, kPage, &v) == 0;
  }
  FakeDevice pins_;
};

TEST_F(SharedCacheTest, TwoClientsShareOneEntry) {
  auto c = MakeShared();
  char* buf = MapPages(4);
  Region* a = nullptr;
  ASSERT_TRUE(c->Acquire(0, buf, 4 * kPage, &a).ok());
  Region* b = nullptr;
  ASSERT_TRUE(c->Acquire(1, buf + 10, kPage, &b).ok());
  EXPECT_EQ(a, b) << "one entry, one handle per client";
  EXPECT_NE(a->handle[0], nullptr);
  EXPECT_NE(a->handle[1], nullptr);
  EXPECT_EQ(c->stats(0).entries, 1u);
  EXPECT_EQ(c->stats(1).entries, 1u);
  EXPECT_EQ(c->stats().entries, 2u);
  c->Release(a);
  c->Release(b);
  ASSERT_EQ(munmap(buf, 4 * kPage), 0);
  c->Sync();
  EXPECT_EQ(dev_.live(), 0u);
  EXPECT_EQ(pins_.live(), 0u);
  c.reset();
  EXPECT_EQ(memhooks::Quarantined(), 0);
}

// A client whose device goes (the ibverbs netmod closing) drops its registrations, referenced
// or not, and leaves the other clients' alone; its next Acquire registers anew.
TEST_F(SharedCacheTest, DropClientDeregistersOnlyThatClient) {
  auto c = MakeShared();
  char* buf = MapPages(8);
  Region *a = nullptr, *b = nullptr, *p = nullptr;
  ASSERT_TRUE(c->Acquire(0, buf, 2 * kPage, &a).ok());
  ASSERT_TRUE(c->Acquire(0, buf + 4 * kPage, 2 * kPage, &b).ok());
  ASSERT_TRUE(c->Acquire(1, buf, kPage, &p).ok());
  c->Release(a);  // a is idle, b still referenced
  EXPECT_EQ(dev_.live(), 2u);
  c->DropClient(0);
  EXPECT_EQ(dev_.live(), 0u) << "idle and referenced registrations of client 0 both go";
  EXPECT_EQ(pins_.live(), 1u) << "client 1's stays";
  EXPECT_EQ(c->stats(0).entries, 0u);
  EXPECT_EQ(b->handle[0], nullptr);
  c->Release(b);  // still due; nothing left to deregister
  EXPECT_EQ(dev_.live(), 0u);
  Region* again = nullptr;
  ASSERT_TRUE(c->Acquire(0, buf, 2 * kPage, &again).ok());
  EXPECT_NE(again->handle[0], nullptr);
  EXPECT_EQ(dev_.live(), 1u);
  c->Release(again);
  c->Release(p);
  ASSERT_EQ(munmap(buf, 8 * kPage), 0);
  c->Sync();
  EXPECT_EQ(dev_.live(), 0u);
  EXPECT_EQ(pins_.live(), 0u);
}

TEST_F(SharedCacheTest, FirstUseRecordsSecondRegistersThirdHits) {
  auto c = MakeShared();
  char* buf = MapPages(8);
  Region* r = nullptr;
  ASSERT_TRUE(c->AcquireOnReuse(1, buf, 8 * kPage, &r).ok());
  EXPECT_EQ(r, nullptr) << "the first use registered";
  EXPECT_EQ(pins_.registrations(), 0);
  EXPECT_EQ(c->stats(1).first_uses, 1u);
  ASSERT_TRUE(c->AcquireOnReuse(1, buf, 8 * kPage, &r).ok());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(pins_.registrations(), 1);
  c->Release(r);
  ASSERT_TRUE(c->AcquireOnReuse(1, buf + 100, kPage, &r).ok());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(pins_.registrations(), 1) << "a covered request must hit";
  c->Release(r);
  // Growth (a buffer used with larger messages): the larger range replaces the smaller.
  char* big = MapPages(16);
  ASSERT_TRUE(c->AcquireOnReuse(1, big, 4 * kPage, &r).ok());
  ASSERT_TRUE(c->AcquireOnReuse(1, big, 4 * kPage, &r).ok());
  ASSERT_NE(r, nullptr);
  c->Release(r);
  ASSERT_TRUE(c->AcquireOnReuse(1, big, 8 * kPage, &r).ok());
  ASSERT_NE(r, nullptr) << "a grown request over a registered range is a reuse";
  EXPECT_EQ(r->len, 8 * kPage);
  c->Release(r);
  ASSERT_TRUE(c->AcquireOnReuse(1, big, 4 * kPage, &r).ok());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->len, 8 * kPage);
  c->Release(r);
  c.reset();
  munmap(buf, 8 * kPage);
  munmap(big, 16 * kPage);
}

// Chunks of one buffer that share boundary pages: each is first used on its own, and later
// rounds neither register nor deregister (no chunk evicts its neighbour).
TEST_F(SharedCacheTest, ChunksSharingPagesDoNotThrash) {
  auto c = MakeShared();
  const size_t unit = 4 * kPage;
  char* buf = MapPages(4 * 4 + 2);
  auto round = [&](int* pinned) {
    *pinned = 0;
    for (int k = 0; k < 4; ++k) {
      Region* r = nullptr;
      ASSERT_TRUE(c->AcquireOnReuse(1, buf + 100 + k * unit, unit, &r).ok());
      if (r != nullptr) ++*pinned;
      c->Release(r);
    }
  };
  int pinned = 0;
  round(&pinned);
  EXPECT_EQ(pinned, 0) << "first round";
  EXPECT_EQ(pins_.registrations(), 0);
  round(&pinned);
  EXPECT_GE(pinned, 2);
  const int regs = pins_.registrations();
  const auto deregs = c->stats(1).deregistrations;
  for (int i = 0; i < 3; ++i) round(&pinned);
  EXPECT_EQ(pins_.registrations(), regs) << "later rounds registered again";
  EXPECT_EQ(c->stats(1).deregistrations, deregs) << "later rounds deregistered";
  c.reset();
  munmap(buf, (4 * 4 + 2) * kPage);
}

// The exclusive (cudaHostRegister-like) client over the same adjacent buffers: its live
// registrations never share a page, whether it asks by Acquire (a neighbour holding the shared
// page gives it up) or on reuse (the request goes unregistered instead); the plain client's
// regions over the same buffers keep sharing their edge pages.
TEST_F(SharedCacheTest, ExclusiveClientNeverRegistersAPageTwice) {
  auto c = MakeShared();
  const size_t pages = 4 * kAdjacentPages + 2;
  char* base = MapPages(pages);
  const size_t n = kAdjacentPages * kPage;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) {
      Region* r = nullptr;
      ASSERT_TRUE(c->Acquire(0, AdjacentBuffer(base, i), n, &r).ok());
      c->Release(r);
    }
  }
  EXPECT_EQ(dev_.registrations(), 4);
  EXPECT_EQ(c->stats(0).hits, 8u);
  // On reuse: buffer 0 pins; buffer 1's entry (covered) would share page 64: left unregistered.
  Region* p0 = nullptr;
  Region* p1 = nullptr;
  ASSERT_TRUE(c->AcquireOnReuse(1, AdjacentBuffer(base, 0), n, &p0).ok());
  ASSERT_NE(p0, nullptr) << "buffer 0's entry is known (the plain client's): a reuse";
  ASSERT_TRUE(c->AcquireOnReuse(1, AdjacentBuffer(base, 1), n, &p1).ok());
  EXPECT_EQ(p1, nullptr);
  EXPECT_FALSE(pins_.AnyTwoShareAPage());
  c->Release(p0);
  EXPECT_EQ(dev_.live(), 4u) << "the plain client's regions stay";
  // By Acquire: buffer 1 takes the page; buffer 0's entry leaves the map (its registrations go).
  ASSERT_TRUE(c->Acquire(1, AdjacentBuffer(base, 1), n, &p1).ok());
  ASSERT_NE(p1, nullptr);
  EXPECT_FALSE(pins_.AnyTwoShareAPage());
  EXPECT_EQ(pins_.live(), 1u);
  c->Release(p1);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) {
      Region* r = nullptr;
      ASSERT_TRUE(c->Acquire(1, AdjacentBuffer(base, i), n, &r).ok());
      EXPECT_FALSE(pins_.AnyTwoShareAPage()) << "round " << round << ", buffer " << i;
      c->Release(r);
    }
  }
  c.reset();
  EXPECT_EQ(dev_.live(), 0u);
  EXPECT_EQ(pins_.live(), 0u);
  munmap(base, pages * kPage);
}

// munmap of an address-keyed registration keeps the addresses (inaccessible) until the cache
// deregistered it; a plain client's range is freed at once.
TEST_F(SharedCacheTest, MunmapOfAProtectedRangeKeepsItsAddressesUntilDeregistered) {
  auto c = MakeShared();
  char* plain = MapPages(4);
  Region* r = Get(c.get(), plain, 4 * kPage);
  c->Release(r);
  ASSERT_EQ(munmap(plain, 4 * kPage), 0);
  EXPECT_TRUE(AddressFree(plain, 4 * kPage)) << "a plain registration kept its addresses";

  char* buf = MapPages(4);
  ASSERT_TRUE(c->Acquire(1, buf, 4 * kPage, &r).ok());
  c->Release(r);
  const auto q0 = memhooks::GetStats().quarantined;
  ASSERT_EQ(munmap(buf, 4 * kPage), 0);
  EXPECT_EQ(memhooks::GetStats().quarantined, q0 + 1);
  EXPECT_FALSE(AddressFree(buf, 4 * kPage)) << "freed while still registered";
  EXPECT_EQ(pins_.live(), 1u);  // nothing ran in the hook
  c->Sync();
  EXPECT_EQ(pins_.live(), 0u);
  EXPECT_TRUE(AddressFree(buf, 4 * kPage)) << "the reservation outlived the registration";
  EXPECT_EQ(memhooks::Quarantined(), 0);

  // Held (a copy in flight): the addresses stay until its Release.
  buf = MapPages(4);
  ASSERT_TRUE(c->Acquire(1, buf, 4 * kPage, &r).ok());
  ASSERT_EQ(munmap(buf, 4 * kPage), 0);
  c->Sync();
  EXPECT_FALSE(AddressFree(buf, 4 * kPage));
  EXPECT_EQ(pins_.live(), 1u);
  c->Release(r);
  EXPECT_EQ(pins_.live(), 0u);
  EXPECT_TRUE(AddressFree(buf, 4 * kPage));
  c.reset();
}

TEST_F(SharedCacheTest, MremapOfAProtectedRangeReservesWhatItVacated) {
  auto c = MakeShared();
  char* buf = MapPages(4);
  char* dst = MapPages(4);
  Region* r = nullptr;
  ASSERT_TRUE(c->Acquire(1, buf, 4 * kPage, &r).ok());
  c->Release(r);
  ASSERT_EQ(mremap(buf, 4 * kPage, 4 * kPage, MREMAP_MAYMOVE | MREMAP_FIXED, dst), dst);
  EXPECT_FALSE(AddressFree(buf, 4 * kPage)) << "moved away while registered";
  c->Sync();
  EXPECT_TRUE(AddressFree(buf, 4 * kPage));
  // Shrink in place: the tail is kept until deregistered, the head stays mapped.
  ASSERT_TRUE(c->Acquire(1, dst, 4 * kPage, &r).ok());
  c->Release(r);
  ASSERT_EQ(mremap(dst, 4 * kPage, 2 * kPage, 0), dst);
  EXPECT_FALSE(AddressFree(dst + 2 * kPage, 2 * kPage));
  c->Sync();
  EXPECT_TRUE(AddressFree(dst + 2 * kPage, 2 * kPage));
  EXPECT_TRUE(Mapped(dst));
  EXPECT_EQ(pins_.live(), 0u);
  c.reset();
  munmap(dst, 2 * kPage);
}

// The break shrunk over a protected range: its addresses are kept until deregistered (the break
// cannot grow back over them before), then it grows back onto fresh pages.
TEST_F(SharedCacheTest, BrkShrinkOverAProtectedRangeKeepsItsAddresses) {
  auto c = MakeShared();
  char* top = static_cast<char*>(sbrk(0));
  const size_t pad = (kPage - reinterpret_cast<uintptr_t>(top) % kPage) % kPage;
  char* old = static_cast<char*>(sbrk(static_cast<intptr_t>(pad + 4 * kPage)));
  ASSERT_NE(old, reinterpret_cast<char*>(-1));
  char* area = old + pad;
  std::memset(area, 1, 4 * kPage);
  Region* r = nullptr;
  ASSERT_TRUE(c->Acquire(1, area, 4 * kPage, &r).ok());
  c->Release(r);
  ASSERT_NE(sbrk(-static_cast<intptr_t>(4 * kPage)), reinterpret_cast<void*>(-1));
  EXPECT_FALSE(AddressFree(area, 4 * kPage)) << "the break gave up registered addresses";
  EXPECT_EQ(sbrk(static_cast<intptr_t>(4 * kPage)), reinterpret_cast<void*>(-1));
  c->Sync();
  EXPECT_EQ(pins_.live(), 0u);
  ASSERT_EQ(sbrk(static_cast<intptr_t>(4 * kPage)), area);
  EXPECT_EQ(area[0], 0);  // fresh pages
  c.reset();
  ASSERT_EQ(brk(old), 0);
}

// The program maps over the kept addresses on purpose (MAP_FIXED): its mapping must survive the
// release of the reservation.
TEST_F(SharedCacheTest, MapFixedOverAReservationIsNeverUnmapped) {
  auto c = MakeShared();
  char* buf = MapPages(4);
  Region* r = nullptr;
  ASSERT_TRUE(c->Acquire(1, buf, 4 * kPage, &r).ok());
  c->Release(r);
  ASSERT_EQ(munmap(buf, 4 * kPage), 0);
  ASSERT_EQ(MapPages(4, buf), buf);
  buf[0] = 7;
  c->Sync();
  EXPECT_TRUE(Mapped(buf)) << "the program's new mapping was unmapped";
  EXPECT_EQ(buf[0], 7);
  EXPECT_EQ(pins_.live(), 0u);
  EXPECT_EQ(memhooks::Quarantined(), 0);
  c.reset();
  munmap(buf, 4 * kPage);
}

// Per-client limits: the pin client's LRU evicts its own registrations only.
TEST_F(SharedCacheTest, PerClientLimits) {
  auto c = MakeShared(/*pin_entries=*/2);
  std::vector<char*> bufs;
  for (int i = 0; i < 4; ++i) {
    bufs.push_back(MapPages(2));
    Region* r = nullptr;
    ASSERT_TRUE(c->Acquire(0, bufs.back(), 2 * kPage, &r).ok());
    Region* p = nullptr;
    ASSERT_TRUE(c->Acquire(1, bufs.back(), 2 * kPage, &p).ok());
    c->Release(r);
    c->Release(p);
  }
  EXPECT_EQ(c->stats(1).entries, 2u);
  EXPECT_EQ(c->stats(0).entries, 4u) << "the plain client lost registrations to the pin limit";
  EXPECT_EQ(c->stats(1).evictions, 2u);
  c.reset();
  for (char* b : bufs) munmap(b, 2 * kPage);
}

// Threads: acquirers of the pin client against threads unmapping and mapping (TSan covers the
// cache's own code in reg_cache_tsan_test). The test's own maps take `map_mu`, so that no
// other test thread's mmap can land at an address one thread unmapped and maps again on purpose
// (MAP_FIXED would clobber it: the test's race, not the cache's); releases (Sync) stay free.
TEST_F(SharedCacheTest, ProtectedRangesUnderConcurrentUnmapping) {
  auto c = MakeShared();
  constexpr int kThreads = 3, kIters = 300;
  std::vector<std::thread> ts;
  std::atomic<int> bad{0}, registered{0};
  std::mutex map_mu;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        char* b = nullptr;
        {
          std::lock_guard<std::mutex> g(map_mu);
          b = MapPages(2);
        }
        Region* r = nullptr;
        if (!c->AcquireOnReuse(1, b, 2 * kPage, &r).ok()) bad++;
        // The second use registers, unless a flush of the invalidation log (other threads'
        // munmaps lapping it) made the cache forget the first: conservative, never stale.
        if (!c->AcquireOnReuse(1, b, 2 * kPage, &r).ok()) bad++;
        if (r != nullptr) registered++;
        c->Release(r);
        std::lock_guard<std::mutex> g(map_mu);
        if (munmap(b, 2 * kPage) != 0) bad++;
        if (i % 2 == 0) {
          // Mapped again on purpose at once, while other threads release reservations: the new
          // mapping must never be unmapped under us.
          if (MapPages(2, b) != b) bad++;
          for (int k = 0; k < 50; ++k) {
            b[k * 64] = static_cast<char>(k);
            if (!Mapped(b) || b[k * 64] != static_cast<char>(k)) bad++;
          }
          if (munmap(b, 2 * kPage) != 0) bad++;
        }
        if (i % 16 == t) c->Sync();
      }
    });
  }
  std::atomic<bool> stop{false};
  std::thread syncer([&] {
    while (!stop.load(std::memory_order_relaxed)) c->Sync();
  });
  for (auto& t : ts) t.join();
  stop = true;
  syncer.join();
  c->Sync();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(registered.load(), kThreads * kIters / 2) << "too few registrations to test much";
  EXPECT_EQ(pins_.live(), 0u);
  EXPECT_EQ(memhooks::Quarantined(), 0);
  c.reset();
}

TEST(RegCacheConfigTest, DefaultsRangesAndRefusals) {
  auto parse = [](std::map<std::string, std::string> env, RegCacheConfig* c) {
    return RegCacheParams().Parse(
        [&](const char* n) -> const char* {
          auto it = env.find(n);
          return it == env.end() ? nullptr : it->second.c_str();
        },
        c);
  };
  RegCacheConfig c;
  ASSERT_TRUE(parse({}, &c).ok());
  EXPECT_TRUE(c.enabled);  // on by default (the hooks start where an RDMA device is)
  EXPECT_EQ(c.max_mb, 2048u);
  EXPECT_EQ(c.max_entries, 4096u);
  ASSERT_TRUE(parse({{"MPIGPU_IB_REG_CACHE", "off"}, {"MPIGPU_IB_REG_CACHE_MB", "1"},
                     {"MPIGPU_IB_REG_CACHE_ENTRIES", "4194304"}},
                    &c)
                  .ok());
  EXPECT_FALSE(c.enabled);
  EXPECT_EQ(c.max_mb, 1u);
  EXPECT_EQ(c.max_entries, 4194304u);
  for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{
           {"MPIGPU_IB_REG_CACHE", "maybe"},
           {"MPIGPU_IB_REG_CACHE_MB", "0"},
           {"MPIGPU_IB_REG_CACHE_MB", "1048577"},
           {"MPIGPU_IB_REG_CACHE_ENTRIES", "-1"},
           {"MPIGPU_IB_REG_CACHE_ENTRIES", "4194305"}}) {
    RegCacheConfig d;
    Status st = parse({{name, value}}, &d);
    EXPECT_EQ(st.code(), Err::kInvalidArg) << name << "=" << value;
    EXPECT_NE(st.message().find(name), std::string::npos) << st.message();
    EXPECT_TRUE(d.enabled);  // refused values keep their defaults (on)
    EXPECT_EQ(d.max_mb, 2048u);
  }
}

}  // namespace
}  // namespace mpigpu::memreg

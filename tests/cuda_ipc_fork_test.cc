// CUDA IPC between two forked processes: rank 0 exports device buffers, rank 1 maps them through
// IpcCache, copies D->H and D->D out of the peer's memory and checks every byte. The exports
// travel through an anonymous shared mapping made before fork(); the parent never touches CUDA
// (ranks decide whether a GPU exists and return kRankSkip otherwise).
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "memcopy/memcopy.h"
#include "tests/gpu_util.h"
#include "tests/multiproc.h"
#include "memcopy/pattern.h"
#include "transport/lmt/cuda_ipc.h"

namespace mpigpu {
namespace {

using mpigpu::testing::CountMismatchesOnDevice;
using mpigpu::testing::FillPatternOnDevice;
using mpigpu::testing::FirstMismatch;
using mpigpu::testing::kRankSkip;
using mpigpu::testing::kSkipped;
using mpigpu::testing::RunJob;

constexpr int kSlots = 8;
constexpr int kWaitS = 60;    // a hand-shake wait; the job's own deadline is longer
constexpr int kJobS = 150;

// The two ranks' mailbox, in a MAP_SHARED anonymous mapping.
// Writers: rank 0 (exporter) writes slots[], same_address and `posted`; rank 1 (importer) writes
// `acked`. Rank 0 fills the slots for step k, then posted.store(k, release); rank 1's
// posted.load(acquire) == k pairs with it and makes the slots visible. Rank 1 stores acked = k
// (release) once it is done with step k's buffers; rank 0 frees them only after its acquire load
// sees it. Steps only grow.
struct Slot {
  IpcExport e;
  uint64_t bytes;  // bytes to copy from the exported pointer
  uint32_t seed;   // the allocation holds PatternByte(seed, i - base) at base + i
  uint32_t pad;
};
struct Mailbox {
  alignas(64) std::atomic<int> posted;
  alignas(64) std::atomic<int> acked;
  alignas(64) Slot slots[kSlots];
  int same_address;  // stale test: the reallocation got the freed buffer's address
};
static_assert(std::atomic<int>::is_always_lock_free, "atomics shared across processes");
static_assert(std::is_trivially_copyable_v<Slot>, "slots are plain data");

class SharedMailbox {
 public:
  SharedMailbox() {
    void* p = mmap(nullptr, sizeof(Mailbox), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                   -1, 0);
    if (p != MAP_FAILED) box_ = new (p) Mailbox{};
  }
  ~SharedMailbox() {
    if (box_ != nullptr) munmap(box_, sizeof(Mailbox));
  }
  Mailbox* get() const { return box_; }

 private:
  Mailbox* box_ = nullptr;
};

// Waits (bounded) until `word` reaches `value`.
bool WaitFor(const std::atomic<int>& word, int value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kWaitS);
  while (word.load(std::memory_order_acquire) < value) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr, "timed out waiting for step %d\n", value);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

#define RANK_OK(expr)                                                         \
  do {                                                                        \
    ::mpigpu::Status st_ = (expr);                                            \
    if (!st_.ok()) std::fprintf(stderr, "%s: %s\n", #expr, st_.ToString().c_str()); \
    RANK_CHECK(st_.ok());                                                     \
  } while (0)

// In a rank: the device this rank uses, or -1 when the test cannot run here.
int PickDevice(int rank, bool separate_gpus) {
  const int n = CudaDeviceCount();
  if (n == 0 || (separate_gpus && n < 2)) return -1;
  const int dev = separate_gpus ? rank : 0;
  RANK_CHECK(cudaSetDevice(dev) == cudaSuccess);
  return dev;
}

// Exporter: a device allocation of `bytes` filled with PatternByte(seed, i).
void* AllocFilled(size_t bytes, uint32_t seed) {
  void* p = nullptr;
  RANK_CHECK(cudaMalloc(&p, bytes) == cudaSuccess);
  RANK_CHECK(FillPatternOnDevice(p, bytes, seed) == cudaSuccess);
  return p;
}

// Exporter: exports buf + offset into slot s.
void Export(Mailbox* box, int s, void* buf, uint64_t offset, uint64_t bytes, uint32_t seed) {
  Slot& slot = box->slots[s];
  RANK_OK(ExportDeviceBuffer(static_cast<char*>(buf) + offset, &slot.e));
  RANK_CHECK(slot.e.base == reinterpret_cast<uintptr_t>(buf));
  RANK_CHECK(slot.e.offset == offset);
  RANK_CHECK(slot.e.alloc_size >= offset + bytes);
  RANK_CHECK(slot.e.buffer_id != 0);
  slot.bytes = bytes;
  slot.seed = seed;
}

// Exporter: `count` allocations of `alloc` bytes, allocation i filled with seed0 + i and exported
// from offset i * offset_step into slot i; posts step 1 and frees them all once it is acked.
void ExportEachAndWait(Mailbox* box, int count, size_t alloc, uint32_t seed0,
                       uint64_t offset_step) {
  std::vector<void*> bufs;
  for (int i = 0; i < count; ++i) {
    bufs.push_back(AllocFilled(alloc, seed0 + i));
    Export(box, i, bufs[i], offset_step * i, alloc - offset_step * i, seed0 + i);
  }
  box->posted.store(1, std::memory_order_release);
  RANK_CHECK(WaitFor(box->acked, 1));
  for (void* b : bufs) RANK_CHECK(cudaFree(b) == cudaSuccess);
}

// Importer: maps slot s, copies its bytes D->H and D->D (into this rank's device) out of the
// peer's memory, checks both against the pattern, releases the mapping. Returns the mapped pointer.
void* MapCopyVerify(IpcCache* cache, const Slot& slot, int dev) {
  void* peer = nullptr;
  RANK_OK(cache->Map(0, slot.e, &peer));
  const size_t n = slot.bytes;
  std::vector<unsigned char> host(n);
  RANK_OK(Copy(host.data(), MemLoc::Host(), peer, MemLoc::Device(dev), n, nullptr));
  RANK_CHECK(cudaStreamSynchronize(nullptr) == cudaSuccess);
  long long bad = FirstMismatch(host.data(), n, slot.seed, slot.e.offset);
  if (bad != -1) std::fprintf(stderr, "D->H: first mismatch at byte %lld of %zu\n", bad, n);
  RANK_CHECK(bad == -1);

  void* mine = nullptr;
  RANK_CHECK(cudaMalloc(&mine, n) == cudaSuccess);
  RANK_OK(Copy(mine, MemLoc::Device(dev), peer, MemLoc::Device(dev), n, nullptr));
  RANK_CHECK(cudaStreamSynchronize(nullptr) == cudaSuccess);
  unsigned long long mismatches = 1;
  RANK_CHECK(CountMismatchesOnDevice(mine, n, slot.seed, &mismatches, slot.e.offset) == cudaSuccess);
  RANK_CHECK(mismatches == 0);
  RANK_CHECK(cudaFree(mine) == cudaSuccess);
  RANK_OK(cache->Release(0, slot.e));
  return peer;
}

void CheckStats(const IpcCache& cache, uint64_t hits, uint64_t misses, uint64_t evictions,
                uint64_t stale, size_t entries) {
  IpcCacheStats s = cache.stats();
  if (s.hits != hits || s.misses != misses || s.evictions != evictions || s.stale != stale ||
      s.entries != entries)
    std::fprintf(stderr,
                 "cache stats: hits %llu misses %llu evictions %llu stale %llu entries %zu; "
                 "expected %llu %llu %llu %llu %zu\n",
                 (unsigned long long)s.hits, (unsigned long long)s.misses,
                 (unsigned long long)s.evictions, (unsigned long long)s.stale, s.entries,
                 (unsigned long long)hits, (unsigned long long)misses,
                 (unsigned long long)evictions, (unsigned long long)stale, entries);
  RANK_CHECK(s.hits == hits && s.misses == misses && s.evictions == evictions &&
             s.stale == stale && s.entries == entries);
}

// Runs exporter(box, dev) as rank 0 and importer(box, dev) as rank 1; "" on success.
std::string RunPair(bool separate_gpus, const std::function<void(Mailbox*, int)>& exporter,
                    const std::function<void(Mailbox*, int)>& importer) {
  SharedMailbox shared;
  if (shared.get() == nullptr) return "mmap of the mailbox failed";
  Mailbox* box = shared.get();
  return RunJob(2, [&](int rank) {
    const int dev = PickDevice(rank, separate_gpus);
    if (dev < 0) return kRankSkip;
    if (rank == 0) {
      RANK_CHECK(IpcSupported(dev));
      exporter(box, dev);
    } else {
      importer(box, dev);
    }
    return 0;
  }, kJobS);
}

// One allocation, two pointers into it: the second Map is a hit on the same mapping.
void MapCopyAndHit(bool separate_gpus) {
  const size_t alloc = (4 << 20) + 4096;
  const uint64_t off1 = 4099, off2 = (1 << 20) + 1, n = (2 << 20) + 7;
  std::string r = RunPair(separate_gpus,
      [&](Mailbox* box, int) {
        void* buf = AllocFilled(alloc, 11);
        const IpcExportCacheStats before = GetExportCacheStats();
        Export(box, 0, buf, off1, n, 11);
        Export(box, 1, buf, off2, n, 11);
        RANK_CHECK(GetExportCacheStats().misses - before.misses == 1);  // one handle made
        RANK_CHECK(std::memcmp(&box->slots[0].e.handle, &box->slots[1].e.handle,
                               sizeof(cudaIpcMemHandle_t)) == 0);
        box->posted.store(1, std::memory_order_release);
        RANK_CHECK(WaitFor(box->acked, 1));
        RANK_CHECK(cudaFree(buf) == cudaSuccess);
      },
      [&](Mailbox* box, int dev) {
        IpcCache cache(64);
        RANK_CHECK(WaitFor(box->posted, 1));
        char* p1 = static_cast<char*>(MapCopyVerify(&cache, box->slots[0], dev));
        CheckStats(cache, 0, 1, 0, 0, 1);
        char* p2 = static_cast<char*>(MapCopyVerify(&cache, box->slots[1], dev));
        CheckStats(cache, 1, 1, 0, 0, 1);
        RANK_CHECK(p2 - p1 == static_cast<ptrdiff_t>(off2 - off1));
        RANK_CHECK(MapCopyVerify(&cache, box->slots[0], dev) == p1);
        CheckStats(cache, 2, 1, 0, 0, 1);
        RANK_OK(cache.Clear());
        CheckStats(cache, 2, 1, 0, 0, 0);
        box->acked.store(1, std::memory_order_release);
      });
  if (r == kSkipped)
    GTEST_SKIP() << (separate_gpus ? "needs 2 CUDA devices (found fewer)" : "no CUDA device");
  EXPECT_EQ(r, "");
}

TEST(CudaIpcForkTest, SameGpuMapCopyAndHit) { MapCopyAndHit(false); }

TEST(CudaIpcForkTest, TwoGpusMapCopyAndHit) { MapCopyAndHit(true); }

// The peer frees a mapped buffer and allocates another of the same size: the importer must read
// the new bytes, never the old mapping.
TEST(CudaIpcForkTest, ReallocatedBufferIsReopenedNotReadStale) {
  const size_t alloc = 2 << 20;
  const uint64_t off = 512, n = (1 << 20) + 3;
  std::string r = RunPair(false,
      [&](Mailbox* box, int) {
        void* a = AllocFilled(alloc, 21);
        Export(box, 0, a, off, n, 21);
        box->posted.store(1, std::memory_order_release);
        RANK_CHECK(WaitFor(box->acked, 1));
        RANK_CHECK(cudaFree(a) == cudaSuccess);  // the importer still has it mapped
        void* b = AllocFilled(alloc, 22);
        Export(box, 1, b, off, n, 22);
        const IpcExport& old_e = box->slots[0].e;
        const IpcExport& new_e = box->slots[1].e;
        RANK_CHECK(new_e.buffer_id != old_e.buffer_id);
        box->same_address = b == a;
        if (b == a)
          RANK_CHECK(std::memcmp(&new_e.handle, &old_e.handle, sizeof new_e.handle) != 0);
        box->posted.store(2, std::memory_order_release);
        RANK_CHECK(WaitFor(box->acked, 2));
        RANK_CHECK(cudaFree(b) == cudaSuccess);
      },
      [&](Mailbox* box, int dev) {
        IpcCache cache(64);
        RANK_CHECK(WaitFor(box->posted, 1));
        MapCopyVerify(&cache, box->slots[0], dev);
        box->acked.store(1, std::memory_order_release);
        RANK_CHECK(WaitFor(box->posted, 2));
        MapCopyVerify(&cache, box->slots[1], dev);  // seed 22: the new bytes
        if (box->same_address) {
          CheckStats(cache, 0, 2, 0, 1, 1);
        } else {
          IpcCacheStats s = cache.stats();
          std::printf("note: the reallocation got another address; stale path %s (stale %llu)\n",
                      s.stale ? "taken through an overlap" : "not exercised",
                      (unsigned long long)s.stale);
          RANK_CHECK(s.hits == 0 && s.misses == 2);
        }
        RANK_OK(cache.Clear());
        box->acked.store(2, std::memory_order_release);
      });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Five buffers through a cache of three: the bound holds and the least recently used goes.
TEST(CudaIpcForkTest, LruBoundWithMoreBuffersThanEntries) {
  const size_t alloc = 1 << 20;
  std::string r = RunPair(false,
      [&](Mailbox* box, int) { ExportEachAndWait(box, 5, alloc, 31, 64); },
      [&](Mailbox* box, int dev) {
        IpcCache cache(3);
        RANK_CHECK(WaitFor(box->posted, 1));
        auto map = [&](int i) {
          MapCopyVerify(&cache, box->slots[i], dev);
          RANK_CHECK(cache.stats().entries <= 3);
        };
        map(0), map(1), map(2);
        map(0);  // 1 is now the least recently used
        map(3);  // evicts 1
        CheckStats(cache, 1, 4, 1, 0, 3);
        map(0);  // hit
        map(1);  // reopened after its eviction; evicts 2
        map(4);  // evicts 3
        CheckStats(cache, 2, 6, 3, 0, 3);
        RANK_OK(cache.Clear());
        box->acked.store(1, std::memory_order_release);
      });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Pinned mappings outlive the bound; Clear closes everything, and every buffer maps again after.
TEST(CudaIpcForkTest, ClearClosesAllAndMappingsReopen) {
  const size_t alloc = 1 << 20;
  std::string r = RunPair(false,
      [&](Mailbox* box, int) { ExportEachAndWait(box, 3, alloc, 41, 0); },
      [&](Mailbox* box, int dev) {
        IpcCache cache(2);
        RANK_CHECK(WaitFor(box->posted, 1));
        void* p = nullptr;
        for (int i = 0; i < 3; ++i) RANK_OK(cache.Map(0, box->slots[i].e, &p));  // all pinned
        CheckStats(cache, 0, 3, 0, 0, 3);
        RANK_OK(cache.Clear());
        CheckStats(cache, 0, 3, 0, 0, 0);
        for (int round = 0; round < 2; ++round)
          for (int i = 0; i < 3; ++i) MapCopyVerify(&cache, box->slots[i], dev);
        RANK_CHECK(cache.stats().entries == 2);
        RANK_OK(cache.Clear());
        box->acked.store(1, std::memory_order_release);
      });
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu

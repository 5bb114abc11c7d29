// CUDA IPC building blocks in one process: argument checks and the no-GPU path (anywhere), the
// importer cache's logic (hits, stale buffer ids, overlaps, LRU bound, pinning, retries, Clear)
// through a fake opener (anywhere), and the exporter on a real GPU (skipped without one).
// The two-process GPU tests are in cuda_ipc_fork_test.cc.
#include "transport/lmt/cuda_ipc.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <map>
#include <thread>
#include <vector>

#include "memcopy/memcopy.h"

namespace mpigpu {
namespace {

// A well-formed export of a 1 MiB allocation at `base` (the handle is a fake's business).
IpcExport FakeExport(uint64_t base, uint64_t buffer_id, uint64_t size = 1 << 20,
                     uint64_t offset = 0) {
  IpcExport e{};
  e.base = base;
  e.alloc_size = size;
  e.offset = offset;
  e.buffer_id = buffer_id;
  e.device = 0;
  std::memcpy(e.handle.reserved, &buffer_id, sizeof buffer_id);  // the fake reads it back
  return e;
}

// n disjoint 1 MiB exports of one peer: 0x100000 + i MiB, buffer ids 10 + i.
std::vector<IpcExport> FakeExports(uint64_t n) {
  std::vector<IpcExport> bufs;
  for (uint64_t i = 0; i < n; ++i) bufs.push_back(FakeExport(0x100000 + i * (1 << 20), 10 + i));
  return bufs;
}

// Hands out distinct fake addresses and remembers which are open; can be told to fail.
class FakeOpener : public IpcOpener {
 public:
  cudaError_t Open(const cudaIpcMemHandle_t& handle, void** mapped) override {
    ++opens;
    if (!fail_next.empty()) {
      cudaError_t r = fail_next.front();
      fail_next.erase(fail_next.begin());
      if (r != cudaSuccess) return r;
    }
    uint64_t id;
    std::memcpy(&id, handle.reserved, sizeof id);
    next += 1 << 24;
    *mapped = reinterpret_cast<void*>(next);
    open[*mapped] = id;
    return cudaSuccess;
  }
  cudaError_t Close(void* mapped) override {
    ++closes;
    if (open.erase(mapped) != 1) ++bad_closes;
    return close_error;
  }

  std::vector<cudaError_t> fail_next;  // results of the next opens (cudaSuccess: open normally)
  cudaError_t close_error = cudaSuccess;
  std::map<void*, uint64_t> open;  // mapped address -> buffer id opened there
  int opens = 0, closes = 0, bad_closes = 0;
  uintptr_t next = 0x7f0000000000;
};

#define EXPECT_STATS(cache, h, m, ev, st, n)        \
  do {                                              \
    IpcCacheStats s_ = (cache).stats();             \
    EXPECT_EQ(s_.hits, uint64_t{h});                \
    EXPECT_EQ(s_.misses, uint64_t{m});              \
    EXPECT_EQ(s_.evictions, uint64_t{ev});          \
    EXPECT_EQ(s_.stale, uint64_t{st});              \
    EXPECT_EQ(s_.entries, size_t{n});               \
  } while (0)

TEST(CudaIpcLayoutTest, ExportFitsASharedMessage) {
  EXPECT_EQ(sizeof(IpcExport), 104u);
  EXPECT_EQ(offsetof(IpcExport, base), 64u);
  EXPECT_EQ(offsetof(IpcExport, device), 96u);
}

TEST(CudaIpcArgsTest, NullAndMalformedInputsAreInvalidArg) {
  IpcExport e{};
  EXPECT_EQ(ExportDeviceBuffer(nullptr, &e).code(), Err::kInvalidArg);
  int x = 0;
  EXPECT_EQ(ExportDeviceBuffer(&x, nullptr).code(), Err::kInvalidArg);

  FakeOpener fake;
  IpcCache cache(4, &fake);
  void* p = reinterpret_cast<void*>(1);
  const IpcExport good = FakeExport(0x100000, 1);
  EXPECT_EQ(cache.Map(0, good, nullptr).code(), Err::kInvalidArg);
  EXPECT_EQ(cache.Map(-1, good, &p).code(), Err::kInvalidArg);
  EXPECT_EQ(p, nullptr);
  IpcExport bad = good;
  bad.base = 0;
  EXPECT_EQ(cache.Map(0, bad, &p).code(), Err::kInvalidArg);
  bad = good;
  bad.offset = bad.alloc_size;
  EXPECT_EQ(cache.Map(0, bad, &p).code(), Err::kInvalidArg);
  bad = good;
  bad.alloc_size = 0;
  EXPECT_EQ(cache.Map(0, bad, &p).code(), Err::kInvalidArg);
  bad = good;
  bad.base = ~uint64_t{0} - 10;  // range wraps around
  EXPECT_EQ(cache.Map(0, bad, &p).code(), Err::kInvalidArg);
  bad = good;
  bad.device = -1;
  EXPECT_EQ(cache.Map(0, bad, &p).code(), Err::kInvalidArg);
  EXPECT_EQ(fake.opens, 0);
  EXPECT_EQ(cache.Release(0, good).code(), Err::kInvalidArg);  // nothing mapped

  IpcCache empty(0, &fake);
  Status st = empty.Map(0, good, &p);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("size is 0"), std::string::npos) << st.ToString();
}

TEST(CudaIpcNoGpuTest, ExportAndMapReturnNoGpu) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device exists: the no-GPU path is not reachable";
  int x = 0;
  IpcExport e{};
  Status st = ExportDeviceBuffer(&x, &e);
  EXPECT_EQ(st.code(), Err::kNoGpu) << st.ToString();
  EXPECT_EQ(DriverApi::Get().status.code(), Err::kNoGpu);
  EXPECT_EQ(DriverApi::Get().pointer_get_attributes, nullptr);
  EXPECT_FALSE(IpcSupported(0));
  IpcCache cache(4);  // the CUDA runtime opener
  void* p = nullptr;
  st = cache.Map(1, FakeExport(0x100000, 1), &p);
  EXPECT_EQ(st.code(), Err::kNoGpu) << st.ToString();
  EXPECT_EQ(p, nullptr);
  EXPECT_STATS(cache, 0, 1, 0, 0, 0);
  EXPECT_TRUE(cache.Clear().ok());
}

// ---- cache logic through the fake ----

TEST(IpcCacheTest, HitReturnsSameMappingPlusOffset) {
  FakeOpener fake;
  IpcCache cache(4, &fake);
  void *a = nullptr, *b = nullptr;
  ASSERT_TRUE(cache.Map(0, FakeExport(0x100000, 7, 1 << 20, 100), &a).ok());
  ASSERT_TRUE(cache.Map(0, FakeExport(0x100000, 7, 1 << 20, 4196), &b).ok());
  EXPECT_EQ(static_cast<char*>(b) - static_cast<char*>(a), 4096);
  EXPECT_EQ(fake.opens, 1);
  EXPECT_STATS(cache, 1, 1, 0, 0, 1);
  // The same base from another peer is another allocation.
  void* c = nullptr;
  ASSERT_TRUE(cache.Map(1, FakeExport(0x100000, 7), &c).ok());
  EXPECT_NE(c, a);
  EXPECT_EQ(fake.opens, 2);
  EXPECT_TRUE(cache.Clear().ok());
  EXPECT_EQ(fake.open.size(), 0u);
  EXPECT_EQ(fake.bad_closes, 0);
}

TEST(IpcCacheTest, NewBufferIdAtSameAddressReopens) {
  FakeOpener fake;
  IpcCache cache(4, &fake);
  const IpcExport old_buf = FakeExport(0x100000, 7);
  void* p = nullptr;
  ASSERT_TRUE(cache.Map(0, old_buf, &p).ok());
  ASSERT_TRUE(cache.Release(0, old_buf).ok());
  // Freed and reallocated by the peer: same base and size, new id.
  ASSERT_TRUE(cache.Map(0, FakeExport(0x100000, 8), &p).ok());
  ASSERT_EQ(fake.open.size(), 1u);
  EXPECT_EQ(fake.open.at(p), 8u);  // the mapping read through is the new buffer's
  EXPECT_STATS(cache, 0, 2, 0, 1, 1);
  // A new size at the same base is stale too, even with an equal id.
  ASSERT_TRUE(cache.Release(0, FakeExport(0x100000, 8)).ok());
  ASSERT_TRUE(cache.Map(0, FakeExport(0x100000, 8, 2 << 20), &p).ok());
  EXPECT_STATS(cache, 0, 3, 0, 2, 1);
  EXPECT_EQ(fake.bad_closes, 0);
}

TEST(IpcCacheTest, OverlappingRangeOfSamePeerEvictsTheOld) {
  FakeOpener fake;
  IpcCache cache(8, &fake);
  void* p = nullptr;
  for (const IpcExport& e : FakeExports(3)) {
    ASSERT_TRUE(cache.Map(0, e, &p).ok());
    ASSERT_TRUE(cache.Release(0, e).ok());
  }
  IpcExport other_peer = FakeExport(0x100000, 99, 3 << 20);
  ASSERT_TRUE(cache.Map(1, other_peer, &p).ok());
  // One allocation of peer 0 now covers the second half of its first and all of its second
  // buffer: both are gone; the third (disjoint) and peer 1's stay.
  ASSERT_TRUE(cache.Map(0, FakeExport(0x100000 + (1 << 19), 20, 3 << 19), &p).ok());
  EXPECT_STATS(cache, 0, 5, 0, 2, 3);
  EXPECT_EQ(fake.open.size(), 3u);
  EXPECT_EQ(fake.bad_closes, 0);
}

TEST(IpcCacheTest, LruBoundEvictsLeastRecentlyUsed) {
  FakeOpener fake;
  IpcCache cache(3, &fake);
  const std::vector<IpcExport> bufs = FakeExports(5);
  auto map = [&](int i) {
    void* p = nullptr;
    Status st = cache.Map(0, bufs[i], &p);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(fake.open.at(static_cast<char*>(p) - bufs[i].offset), bufs[i].buffer_id);
    ASSERT_TRUE(cache.Release(0, bufs[i]).ok());
    EXPECT_LE(cache.stats().entries, 3u);
  };
  map(0), map(1), map(2);
  map(0);  // now 1 is the least recently used
  map(3);  // evicts 1
  EXPECT_STATS(cache, 1, 4, 1, 0, 3);
  map(0);  // hit
  map(1);  // miss, evicts 2
  map(4);  // miss, evicts 3
  EXPECT_STATS(cache, 2, 6, 3, 0, 3);
  EXPECT_EQ(fake.open.size(), 3u);
  EXPECT_TRUE(cache.Clear().ok());
  EXPECT_STATS(cache, 2, 6, 3, 0, 0);
  EXPECT_EQ(fake.open.size(), 0u);
  EXPECT_EQ(fake.closes, fake.opens);
  EXPECT_EQ(fake.bad_closes, 0);
}

TEST(IpcCacheTest, PinnedMappingsAreNeverClosed) {
  FakeOpener fake;
  IpcCache cache(2, &fake);
  const std::vector<IpcExport> bufs = FakeExports(4);
  void* p = nullptr;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.Map(0, bufs[i], &p).ok());  // all pinned
  EXPECT_STATS(cache, 0, 3, 0, 0, 3);  // grew past the bound rather than close a pinned one
  // The peer reusing a pinned buffer's address is refused; the pinned mapping stays.
  Status st = cache.Map(0, FakeExport(bufs[1].base, 77), &p);
  EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();
  EXPECT_EQ(fake.open.size(), 3u);
  // Pins count: two Maps need two Releases.
  ASSERT_TRUE(cache.Map(0, bufs[0], &p).ok());
  ASSERT_TRUE(cache.Release(0, bufs[0]).ok());
  ASSERT_TRUE(cache.Release(0, bufs[0]).ok());
  EXPECT_EQ(cache.Release(0, bufs[0]).code(), Err::kInvalidArg);
  ASSERT_TRUE(cache.Release(0, bufs[1]).ok());
  ASSERT_TRUE(cache.Release(0, bufs[2]).ok());
  ASSERT_TRUE(cache.Map(0, bufs[3], &p).ok());  // back under the bound: 2 evicted
  EXPECT_STATS(cache, 1, 5, 2, 0, 2);
  // Release with a stale buffer id does not unpin the current mapping.
  EXPECT_EQ(cache.Release(0, FakeExport(bufs[3].base, 1234)).code(), Err::kInvalidArg);
  EXPECT_EQ(fake.bad_closes, 0);
}

TEST(IpcCacheTest, AlreadyMappedEvictsPeerAndRetriesOnce) {
  FakeOpener fake;
  IpcCache cache(8, &fake);
  void* p = nullptr;
  for (int peer = 0; peer < 2; ++peer) {
    IpcExport e = FakeExport(0x100000, 5 + peer);
    ASSERT_TRUE(cache.Map(peer, e, &p).ok());
    ASSERT_TRUE(cache.Release(peer, e).ok());
  }
  fake.fail_next = {cudaErrorAlreadyMapped};
  ASSERT_TRUE(cache.Map(0, FakeExport(0x900000, 9), &p).ok());
  EXPECT_EQ(fake.opens, 4);
  EXPECT_STATS(cache, 0, 3, 1, 0, 2);  // peer 0's mapping closed, peer 1's kept
  // Failing twice gives up with a CUDA error and caches nothing.
  fake.fail_next = {cudaErrorAlreadyMapped, cudaErrorAlreadyMapped};
  Status st = cache.Map(0, FakeExport(0xa00000, 10), &p);
  EXPECT_EQ(st.code(), Err::kCuda) << st.ToString();
  EXPECT_EQ(p, nullptr);
  EXPECT_EQ(fake.opens, 6);
  // Out of memory: everyone's unpinned mappings go before the retry.
  ASSERT_TRUE(cache.Release(0, FakeExport(0x900000, 9)).ok());
  fake.fail_next = {cudaErrorMemoryAllocation};
  ASSERT_TRUE(cache.Map(0, FakeExport(0xb00000, 11), &p).ok());
  EXPECT_EQ(cache.stats().entries, 1u);
  // Other failures are not retried; no device is kNoGpu.
  fake.fail_next = {cudaErrorInvalidValue};
  EXPECT_EQ(cache.Map(0, FakeExport(0xc00000, 12), &p).code(), Err::kCuda);
  fake.fail_next = {cudaErrorNoDevice};
  EXPECT_EQ(cache.Map(0, FakeExport(0xc00000, 12), &p).code(), Err::kNoGpu);
  EXPECT_EQ(fake.opens, 10);
  EXPECT_EQ(fake.bad_closes, 0);
}

TEST(IpcCacheTest, ClearClosesEverythingAndKeepsFirstError) {
  FakeOpener fake;
  {
    IpcCache cache(8, &fake);
    void* p = nullptr;
    for (uint64_t i = 0; i < 5; ++i)
      ASSERT_TRUE(cache.Map(static_cast<int>(i % 2), FakeExport(0x100000 + (i << 20), i), &p).ok());
    fake.close_error = cudaErrorInvalidValue;
    Status st = cache.Clear();  // pinned or not, all go
    EXPECT_EQ(st.code(), Err::kCuda);
    EXPECT_EQ(cache.stats().entries, 0u);
    EXPECT_EQ(fake.open.size(), 0u);
    fake.close_error = cudaSuccess;
    ASSERT_TRUE(cache.Map(0, FakeExport(0x100000, 0), &p).ok());  // usable again: reopens
    EXPECT_EQ(fake.opens, 6);
  }  // the destructor closes the rest
  EXPECT_EQ(fake.open.size(), 0u);
  EXPECT_EQ(fake.closes, 6);
  EXPECT_EQ(fake.bad_closes, 0);
}

// ---- the exporter on a real GPU ----

#define REQUIRE_GPU()                                                   \
  do {                                                                  \
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";       \
  } while (0)

TEST(CudaIpcExportTest, ExportsAllocationBaseOffsetAndCaches) {
  REQUIRE_GPU();
  ASSERT_TRUE(DriverApi::Get().status.ok()) << DriverApi::Get().status.ToString();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  EXPECT_TRUE(IpcSupported(0));
  EXPECT_FALSE(IpcSupported(-1));
  EXPECT_FALSE(IpcSupported(CudaDeviceCount()));
  ClearExportCache();
  const IpcExportCacheStats before = GetExportCacheStats();
  const size_t bytes = (3 << 20) + 123;
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, bytes), cudaSuccess);
  IpcExport e{}, e2{};
  Status st = ExportDeviceBuffer(static_cast<char*>(buf) + 4099, &e);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(e.base, reinterpret_cast<uintptr_t>(buf));
  EXPECT_EQ(e.offset, 4099u);
  EXPECT_GE(e.alloc_size, bytes);
  EXPECT_NE(e.buffer_id, 0u);
  EXPECT_EQ(e.device, 0);
  EXPECT_EQ(e.reserved, 0u);
  // Another pointer into the same allocation: same handle, from the cache.
  st = ExportDeviceBuffer(static_cast<char*>(buf) + bytes - 1, &e2);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(e2.base, e.base);
  EXPECT_EQ(e2.offset, bytes - 1);
  EXPECT_EQ(e2.buffer_id, e.buffer_id);
  EXPECT_EQ(std::memcmp(&e2.handle, &e.handle, sizeof e.handle), 0);
  EXPECT_EQ(GetExportCacheStats().misses - before.misses, 1u);
  EXPECT_EQ(GetExportCacheStats().hits - before.hits, 1u);

  // From a thread that has made no CUDA call (no current context set by the runtime).
  Status thread_st;
  IpcExport e3{};
  std::thread([&] { thread_st = ExportDeviceBuffer(buf, &e3); }).join();
  EXPECT_TRUE(thread_st.ok()) << thread_st.ToString();
  EXPECT_EQ(e3.base, e.base);
  EXPECT_EQ(e3.offset, 0u);

  // Freed and reallocated: a new buffer id, and a new handle where the address is reused.
  ASSERT_EQ(cudaFree(buf), cudaSuccess);
  void* buf2 = nullptr;
  ASSERT_EQ(cudaMalloc(&buf2, bytes), cudaSuccess);
  IpcExport e4{};
  st = ExportDeviceBuffer(buf2, &e4);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_NE(e4.buffer_id, e.buffer_id);
  if (buf2 == buf)
    EXPECT_NE(std::memcmp(&e4.handle, &e.handle, sizeof e.handle), 0);
  else
    std::printf("note: the reallocation got another address (%p, was %p)\n", buf2, buf);
  EXPECT_EQ(GetExportCacheStats().misses - before.misses, 2u);
  ASSERT_EQ(cudaFree(buf2), cudaSuccess);
}

TEST(CudaIpcExportTest, HostManagedAndPoolMemoryAreRefused) {
  REQUIRE_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  IpcExport e{};
  std::vector<char> host(4096);
  Status st = ExportDeviceBuffer(host.data(), &e);
  EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();

  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 4096), cudaSuccess);
  st = ExportDeviceBuffer(pinned, &e);
  EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();
  cudaFreeHost(pinned);

  void* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 1 << 20), cudaSuccess);
  st = ExportDeviceBuffer(managed, &e);
  EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();
  cudaFree(managed);

  // Stream-ordered (memory pool) allocations are not legacy-IPC capable.
  void* pooled = nullptr;
  ASSERT_EQ(cudaMallocAsync(&pooled, 1 << 20, nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  st = ExportDeviceBuffer(pooled, &e);
  EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();
  ASSERT_EQ(cudaFreeAsync(pooled, nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
}

}  // namespace
}  // namespace mpigpu

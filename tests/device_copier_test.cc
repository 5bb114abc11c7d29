// The resident copy kernel: contiguous and strided copies of every alignment, byte-verified; it
// leaves when idle (cudaDeviceSynchronize returns) and comes back on the next copy; Stop ends it.
#include "transport/lmt/device_copier.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "memcopy/memcopy.h"
#include "tests/gpu_util.h"
#include "memcopy/pattern.h"

namespace mpigpu::transport {
namespace {

#define REQUIRE_GPU() \
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device"

bool WaitDone(const DeviceCopier& c, uint64_t t) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!c.Done(t))
    if (std::chrono::steady_clock::now() > deadline) return false;
  return true;
}

// GPU cases: device 0, and device buffers freed at the end of the test.
class CopierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_GPU();
    ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  }
  void TearDown() override {
    for (void* p : owned_) cudaFree(p);
  }
  // A device buffer of n bytes (null, with a test failure, if cudaMalloc fails).
  char* Alloc(size_t n) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, n), cudaSuccess);
    if (p) owned_.push_back(p);
    return static_cast<char*>(p);
  }

 private:
  std::vector<void*> owned_;
};

TEST(DeviceCopierTest, InitWithoutGpuIsNoGpu) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device exists; this checks the no-GPU error";
  DeviceCopier c;
  EXPECT_EQ(c.Init(0, 100).code(), Err::kNoGpu);
}

TEST_F(CopierTest, ContiguousCopiesOfEveryAlignment) {
  DeviceCopier c;
  ASSERT_TRUE(c.Init(0, 1000).ok());
  const size_t kMax = 300000;
  char *src = nullptr, *dst = nullptr;
  ASSERT_NE(src = Alloc(kMax + 64), nullptr);
  ASSERT_NE(dst = Alloc(kMax + 64), nullptr);
  ASSERT_EQ(testing::FillPatternOnDevice(src, kMax + 64, 5), cudaSuccess);
  uint32_t seed = 10;
  for (size_t n : {size_t{1}, size_t{3}, size_t{8}, size_t{15}, size_t{16}, size_t{17}, size_t{4096},
                   size_t{65536} + 3, kMax})
    for (size_t soff : {0, 1, 4, 8, 16})
      for (size_t doff : {0, 3, 16}) {
        ASSERT_EQ(testing::FillPatternOnDevice(dst, kMax + 64, ++seed), cudaSuccess);
        uint64_t t = 0;
        bool queued = false;
        ASSERT_TRUE(c.Submit({dst + doff, src + soff, n, n, n, 1}, &t, &queued).ok());
        ASSERT_TRUE(queued);
        ASSERT_TRUE(WaitDone(c, t)) << n;
        std::vector<unsigned char> got(kMax + 64);
        ASSERT_EQ(cudaMemcpy(got.data(), dst, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
        for (size_t i = 0; i < got.size(); ++i) {
          unsigned char want = (i >= doff && i < doff + n) ? testing::PatternByte(5, i - doff + soff)
                                                           : testing::PatternByte(seed, i);
          ASSERT_EQ(got[i], want) << "n " << n << " soff " << soff << " doff " << doff << " at " << i;
        }
      }
  EXPECT_TRUE(c.Stop().ok());
}

TEST_F(CopierTest, StridedCopiesAndManyInFlight) {
  DeviceCopier c;
  ASSERT_TRUE(c.Init(0, 1000).ok());
  // A halo column: 2048 rows of 8 bytes, 4096-byte pitch, into a packed buffer and back.
  const size_t rows = 2048, width = 8, pitch = 4096;
  char *grid = nullptr, *packed = nullptr, *grid2 = nullptr;
  ASSERT_NE(grid = Alloc(rows * pitch), nullptr);
  ASSERT_NE(grid2 = Alloc(rows * pitch), nullptr);
  ASSERT_NE(packed = Alloc(rows * width), nullptr);
  ASSERT_EQ(testing::FillPatternOnDevice(grid, rows * pitch, 21), cudaSuccess);
  ASSERT_EQ(cudaMemset(grid2, 0, rows * pitch), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  uint64_t t1 = 0, t2 = 0;
  bool q1 = false, q2 = false;
  ASSERT_TRUE(c.Submit({packed, grid + 16, width, pitch, width, rows}, &t1, &q1).ok());
  ASSERT_TRUE(c.Submit({grid2 + 16, packed, pitch, width, width, rows}, &t2, &q2).ok());
  ASSERT_TRUE(q1 && q2);
  ASSERT_TRUE(WaitDone(c, t2));
  EXPECT_TRUE(c.Done(t1));  // in order
  std::vector<unsigned char> got(rows * pitch);
  ASSERT_EQ(cudaMemcpy(got.data(), grid2, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t r = 0; r < rows; ++r)
    for (size_t b = 0; b < pitch; ++b) {
      unsigned char want = (b >= 16 && b < 16 + width) ? testing::PatternByte(21, r * pitch + b) : 0;
      ASSERT_EQ(got[r * pitch + b], want) << r << "," << b;
    }
  // More copies than slots: Submit says "not queued" instead of overwriting a slot in flight.
  int queued = 0, refused = 0;
  uint64_t last = 0;
  for (int i = 0; i < 4 * DeviceCopier::kSlots; ++i) {
    bool q = false;
    uint64_t t = 0;
    ASSERT_TRUE(c.Submit({packed, grid, 1 << 16, 1 << 16, 1 << 16, 1}, &t, &q).ok());
    if (q) {
      ++queued;
      last = t;
    } else {
      ++refused;
    }
  }
  ASSERT_TRUE(WaitDone(c, last));
  EXPECT_GE(queued, DeviceCopier::kSlots);
  EXPECT_EQ(queued + refused, 4 * DeviceCopier::kSlots);
  EXPECT_TRUE(c.Stop().ok());
}

TEST_F(CopierTest, LeavesWhenIdleAndComesBack) {
  DeviceCopier c;
  ASSERT_TRUE(c.Init(0, 200).ok());  // 200 us idle
  char *a = nullptr, *b = nullptr;
  ASSERT_NE(a = Alloc(4096), nullptr);
  ASSERT_NE(b = Alloc(4096), nullptr);
  ASSERT_EQ(testing::FillPatternOnDevice(a, 4096, 3), cudaSuccess);
  for (int round = 0; round < 3; ++round) {
    uint64_t t = 0;
    bool q = false;
    ASSERT_TRUE(c.Submit({b, a, 4096, 4096, 4096, 1}, &t, &q).ok());
    ASSERT_TRUE(q && WaitDone(c, t));
    // The application's device-wide synchronisation returns: the kernel leaves when idle.
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(c.stats().launches, 3u);  // relaunched after each idle exit
  unsigned long long bad = 1;
  ASSERT_EQ(testing::CountMismatchesOnDevice(b, 4096, 3, &bad), cudaSuccess);
  EXPECT_EQ(bad, 0u);
  EXPECT_TRUE(c.Stop().ok());
}

// A copy's notify word (pinned, mapped host memory) gets its value only after the copy's bytes
// are in place: the host waits for the word alone, never for `done`, then reads the bytes. An
// index outside the region is refused, and a pitch beyond 32 bits is left to another path.
TEST_F(CopierTest, NotifyWordIsStoredAfterTheCopy) {
  constexpr int kCopies = 300;
  constexpr uint32_t kWords = 8;
  constexpr size_t kBytes = 32 << 10;
  void* mem = nullptr;
  ASSERT_EQ(cudaHostAlloc(&mem, kWords * sizeof(uint32_t), cudaHostAllocMapped), cudaSuccess);
  volatile uint32_t* words = static_cast<volatile uint32_t*>(mem);
  for (uint32_t k = 0; k < kWords; ++k) words[k] = 0;
  void* dev_words = nullptr;
  ASSERT_EQ(cudaHostGetDevicePointer(&dev_words, mem, 0), cudaSuccess);
  DeviceCopier c;
  ASSERT_TRUE(c.Init(0, 1000, static_cast<uint32_t*>(dev_words), kWords).ok());
  char *src = nullptr, *dst = nullptr;
  ASSERT_NE(src = Alloc(kCopies * kBytes), nullptr);
  ASSERT_NE(dst = Alloc(kBytes), nullptr);
  ASSERT_EQ(testing::FillPatternOnDevice(src, kCopies * kBytes, 9), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<unsigned char> got(kBytes);
  uint64_t t = 0;
  bool q = false;
  for (int i = 0; i < kCopies; ++i) {
    const uint32_t k = static_cast<uint32_t>(i) % kWords;
    CopyDesc d{dst, src + i * kBytes, kBytes, kBytes, kBytes, 1};
    d.notify_index = k;
    d.notify_value = 1000 + static_cast<uint32_t>(i);
    ASSERT_TRUE(c.Submit(d, &t, &q).ok());
    ASSERT_TRUE(q);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (words[k] != d.notify_value)
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "copy " << i << " never notified";
    ASSERT_EQ(cudaMemcpy(got.data(), dst, kBytes, cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t b = 0; b < kBytes; ++b)
      ASSERT_EQ(got[b], testing::PatternByte(9, i * kBytes + b)) << "copy " << i << " byte " << b;
    ASSERT_TRUE(WaitDone(c, t));
  }
  CopyDesc bad{dst, src, 8, 8, 8, 1};
  bad.notify_index = kWords;
  EXPECT_EQ(c.Submit(bad, &t, &q).code(), Err::kInvalidArg);
  EXPECT_FALSE(q);
  const CopyDesc wide{dst, src, size_t{1} << 32, 8, 8, 2};
  EXPECT_TRUE(c.Submit(wide, &t, &q).ok());
  EXPECT_FALSE(q);
  EXPECT_TRUE(c.Stop().ok());
  cudaFreeHost(mem);
}

// Copies submitted around the moment the kernel leaves for idleness (10 us idle, gaps of 0 to
// 30 us), one to three at a time: each must be done exactly once, whether the kernel saw it
// before leaving or the host relaunched it. Every copy writes its own bytes, checked at the end.
TEST_F(CopierTest, SubmitsRacingTheIdleExitAllComplete) {
  DeviceCopier c;
  ASSERT_TRUE(c.Init(0, 10).ok());
  constexpr int kCopies = 3000;
  constexpr size_t kBytes = 64;
  char *src = nullptr, *dst = nullptr;
  ASSERT_NE(src = Alloc(kCopies * kBytes), nullptr);
  ASSERT_NE(dst = Alloc(kCopies * kBytes), nullptr);
  ASSERT_EQ(testing::FillPatternOnDevice(src, kCopies * kBytes, 7), cudaSuccess);
  ASSERT_EQ(cudaMemset(dst, 0, kCopies * kBytes), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  uint32_t rng = 12345;
  auto next_rand = [&rng] { return rng = rng * 1664525u + 1013904223u; };
  int i = 0;
  while (i < kCopies) {
    const int burst = 1 + static_cast<int>(next_rand() % 3);
    uint64_t t = 0;
    for (int k = 0; k < burst && i < kCopies; ++k, ++i) {
      bool q = false;
      const size_t off = static_cast<size_t>(i) * kBytes;
      ASSERT_TRUE(c.Submit({dst + off, src + off, kBytes, kBytes, kBytes, 1}, &t, &q).ok());
      ASSERT_TRUE(q);
    }
    ASSERT_TRUE(WaitDone(c, t)) << "copy " << t << " never finished";
    const auto gap = std::chrono::microseconds(next_rand() % 31);
    for (auto t0 = std::chrono::steady_clock::now(); std::chrono::steady_clock::now() - t0 < gap;) {
    }
  }
  unsigned long long bad = 1;
  ASSERT_EQ(testing::CountMismatchesOnDevice(dst, kCopies * kBytes, 7, &bad), cudaSuccess);
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(c.stats().copies, static_cast<uint64_t>(kCopies));
  EXPECT_GT(c.stats().launches, 1u) << "the kernel never left: the race was not exercised";
  EXPECT_TRUE(c.Stop().ok());
}

// In a fresh process (see below): a copy into an unmapped address kills the kernel with a
// sticky error. The copies behind it never run; Poll must report the fault for them once Check
// found it, and Submit must refuse, instead of leaving callers waiting for ever. Exits 0 with
// "fault reported" when all of that holds, else 1 with what did not.
void FaultThenPollEveryCopy() {
  auto fail = [](const char* what) {
    std::fprintf(stderr, "%s\n", what);
    std::exit(1);
  };
  constexpr size_t kBytes = 4096;
  char *src = nullptr, *dst = nullptr;
  if (cudaSetDevice(0) != cudaSuccess || cudaMalloc(reinterpret_cast<void**>(&src), kBytes) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void**>(&dst), kBytes) != cudaSuccess)
    fail("no device memory");
  DeviceCopier c;
  if (!c.Init(0, 100000).ok()) fail("Init failed");
  uint64_t good = 0, bad = 0, after = 0;
  bool q = false;
  if (!c.Submit({dst, src, kBytes, kBytes, kBytes, 1}, &good, &q).ok() || !q) fail("first Submit");
  if (!WaitDone(c, good)) fail("a good copy did not finish");
  if (!c.Check().ok()) fail("Check reports a fault before any");
  void* unmapped = reinterpret_cast<void*>(uintptr_t{0x1000});
  if (!c.Submit({unmapped, src, kBytes, kBytes, kBytes, 1}, &bad, &q).ok() || !q) fail("bad Submit");
  if (!c.Submit({dst, src, kBytes, kBytes, kBytes, 1}, &after, &q).ok() || !q) fail("third Submit");
  Status fault;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool done = false;
  while (fault.ok()) {
    if (std::chrono::steady_clock::now() > deadline) fail("no fault reported within 20 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    fault = c.Check();
  }
  if (fault.code() != Err::kCuda) fail("the fault is not a CUDA error");
  Status st = c.Poll(after, &done);
  if (done || st.code() != Err::kCuda) fail("Poll of the copy behind the fault did not fail");
  st = c.Poll(bad, &done);
  if (done || st.code() != Err::kCuda) fail("Poll of the faulting copy did not fail");
  st = c.Poll(good, &done);
  if (!done || !st.ok()) fail("the finished copy no longer reads done");
  uint64_t t = 0;
  if (c.Submit({dst, src, kBytes, kBytes, kBytes, 1}, &t, &q).code() != Err::kCuda || q)
    fail("Submit after the fault was not refused");
  std::fprintf(stderr, "fault reported: %s\n", fault.ToString().c_str());
  std::exit(0);
}

// The fault ends this process's CUDA context, so it runs in a child: the threadsafe death-test
// style re-executes this binary for this test alone, with a fresh CUDA state.
TEST_F(CopierTest, AFaultFailsEveryWaitingCopyInsteadOfHanging) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(FaultThenPollEveryCopy(), ::testing::ExitedWithCode(0), "fault reported");
}

}  // namespace
}  // namespace mpigpu::transport

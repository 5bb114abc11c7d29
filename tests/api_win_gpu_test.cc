// One-sided communication with device windows in forked ranks (2 and 4, accumulates also 3;
// rank r on CUDA device r % device count, so 4 ranks share devices where there are fewer): Put
// and Get for every pair of origin and window memory with a device side, under fence and under
// lock/flush/unlock, sizes around the inline limit of the header message (kAmBytes = 4096 less
// the 40-byte header: 4056 data bytes) and the eager limit (64 KiB); accumulates of int and
// double, Fetch_and_op and Compare_and_swap on device words; Win_allocate with a GPU tag; a
// vector target type. Ranks skip where no CUDA device exists.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "memcopy/pattern.h"
#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;
// The header message holds 4096 bytes, 40 of them the header: 4056 data bytes go inline.
const size_t kSizes[] = {1,     4055,  4056,  4057,  4095,          4096,
                         4097,  65535, 65536, 65537, (1u << 20) + 3};

#define CUDA_OK(call) RANK_CHECK((call) == cudaSuccess)

// Runs body(rank) in n ranks with the API initialised, rank r on device r % count; every rank
// skips without a GPU (the decision is the ranks': the parent must not touch CUDA before it
// forks).
std::string RunGpuWinJob(int n, const std::function<void(int)>& body) {
  return RunJob(n, [&](int rank) {
    const int ndev = CudaDeviceCount();
    if (ndev == 0) return kRankSkip;
    CUDA_OK(cudaSetDevice(rank % ndev));
    return RunApiRank(body);
  }, 180);
}

// Runs body in jobs of each size in `ns`: kSkipped when the ranks skipped, else what went wrong.
std::string RunOnRanks(std::initializer_list<int> ns, const std::function<void(int)>& body) {
  std::string out;
  for (int n : ns) {
    const std::string r = RunGpuWinJob(n, body);
    if (r == kSkipped) return r;
    if (!r.empty()) out += std::to_string(n) + " ranks: " + r + "\n";
  }
  return out;
}

int Size() {
  int n = 0;
  API_OK(MPIGPU_Comm_size(kWorld, &n));
  return n;
}

// Memory on the device (dev) or the host, filled with `fill`, finished before it is handed over.
struct Buf {
  bool dev;
  size_t bytes;
  void* p = nullptr;
  std::vector<unsigned char> host;
  Buf(bool on_dev, size_t n, int fill) : dev(on_dev), bytes(n) {
    if (dev) {
      CUDA_OK(cudaMalloc(&p, std::max<size_t>(n, 1)));
      CUDA_OK(cudaMemset(p, fill, n));
      CUDA_OK(cudaDeviceSynchronize());
    } else {
      host.assign(std::max<size_t>(n, 1), static_cast<unsigned char>(fill));
      p = host.data();
    }
  }
  ~Buf() {
    if (dev) (void)cudaFree(p);
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  MPIGPU_Buftype bt() const { return dev ? MPIGPU_BUF_GPU : MPIGPU_BUF_HOST; }
  void Fill(uint32_t seed) {
    if (!dev) return FillPattern(p, bytes, seed);
    std::vector<unsigned char> h(bytes);
    FillPattern(h.data(), bytes, seed);
    Write(h.data(), bytes);
  }
  void Write(const void* src, size_t n) {
    if (!dev) return (void)std::memcpy(p, src, n);
    CUDA_OK(cudaMemcpy(p, src, n, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());  // pageable copies may return before the data lands
  }
  std::vector<unsigned char> Read() const {
    if (!dev) return std::vector<unsigned char>(host.begin(), host.begin() + bytes);
    std::vector<unsigned char> h(bytes);
    CUDA_OK(cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost));
    return h;
  }
};

// The bytes of `b` hold the pattern of `seed`; prints the first wrong one.
void CheckPattern(const Buf& b, uint32_t seed, const char* what, size_t size, int mode) {
  std::vector<unsigned char> got = b.Read();
  const long long bad = FirstMismatch(got.data(), b.bytes, seed);
  if (bad != -1)
    std::fprintf(stderr, "%s, %zu bytes, mode %d: byte %lld is %d, expected %d\n", what, size,
                 mode, bad, got[bad], PatternByte(seed, bad));
  RANK_CHECK(bad == -1);
}

// Origin and window locations: host -> device, device -> device, device -> host.
struct Mode {
  bool origin_dev, win_dev;
};
const Mode kModes[] = {{false, true}, {true, true}, {true, false}};

uint32_t Seed(int rank, int mode, size_t size_index) {
  return static_cast<uint32_t>(rank + 1 + 8 * mode + 64 * size_index);
}

// For every mode and size: a window over `mem` (zeroed), `src` holding the pattern of
// Seed(rank, m, k) and `back` (0xEE) at the origin; body(m, k, mem, src, back, win); Win_free.
void EachModeAndSize(int rank, const std::function<void(int, size_t, const Buf&, const Buf&,
                                                        const Buf&, MPIGPU_Win)>& body) {
  for (int m = 0; m < 3; ++m) {
    for (size_t k = 0; k < sizeof kSizes / sizeof kSizes[0]; ++k) {
      const size_t s = kSizes[k];
      Buf mem(kModes[m].win_dev, s, 0), src(kModes[m].origin_dev, s, 0),
          back(kModes[m].origin_dev, s, 0xEE);
      src.Fill(Seed(rank, m, k));
      MPIGPU_Win win;
      API_OK(MPIGPU_Win_create(mem.p, mem.bt(), s, 1, MPIGPU_INFO_NULL, kWorld, &win));
      body(m, k, mem, src, back, win);
      API_OK(MPIGPU_Win_free(&win));
    }
  }
}

// Each rank puts into its right neighbour and gets from its left one, fence-separated.
void PutGetFence(int rank) {
  const int n = Size(), right = (rank + 1) % n, left = (rank + n - 1) % n;
  EachModeAndSize(rank, [&](int m, size_t k, const Buf& mem, const Buf& src, const Buf& back,
                            MPIGPU_Win win) {
    const size_t s = kSizes[k];
    API_OK(MPIGPU_Win_fence(0, win));
    API_OK(MPIGPU_Put(src.p, src.bt(), static_cast<int>(s), MPIGPU_BYTE, right, 0,
                      static_cast<int>(s), MPIGPU_BYTE, win));
    API_OK(MPIGPU_Win_fence(0, win));
    CheckPattern(mem, Seed(left, m, k), "fence put", s, m);
    API_OK(MPIGPU_Get(back.p, back.bt(), static_cast<int>(s), MPIGPU_BYTE, left, 0,
                      static_cast<int>(s), MPIGPU_BYTE, win));
    API_OK(MPIGPU_Win_fence(MPIGPU_MODE_NOSUCCEED, win));
    // left's window holds what left-of-left put there.
    CheckPattern(back, Seed((left + n - 1) % n, m, k), "fence get", s, m);
  });
}

TEST(ApiWinGpuTest, PutAndGetWithFenceMoveEveryByteToAndFromDeviceWindows) {
  const std::string r = RunOnRanks({2, 4}, PutGetFence);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Each rank locks its right neighbour, puts, flushes, reads its own bytes back with a Get and
// unlocks; after a barrier its own window holds its left neighbour's bytes.
void PutGetLock(int rank) {
  const int n = Size(), right = (rank + 1) % n, left = (rank + n - 1) % n;
  EachModeAndSize(rank, [&](int m, size_t k, const Buf& mem, const Buf& src, const Buf& back,
                            MPIGPU_Win win) {
    const size_t s = kSizes[k];
    API_OK(MPIGPU_Win_lock(k % 2 ? MPIGPU_LOCK_SHARED : MPIGPU_LOCK_EXCLUSIVE, right, 0, win));
    API_OK(MPIGPU_Put(src.p, src.bt(), static_cast<int>(s), MPIGPU_BYTE, right, 0,
                      static_cast<int>(s), MPIGPU_BYTE, win));
    API_OK(MPIGPU_Win_flush(right, win));
    API_OK(MPIGPU_Get(back.p, back.bt(), static_cast<int>(s), MPIGPU_BYTE, right, 0,
                      static_cast<int>(s), MPIGPU_BYTE, win));
    API_OK(MPIGPU_Win_unlock(right, win));
    CheckPattern(back, Seed(rank, m, k), "lock get", s, m);
    API_OK(MPIGPU_Barrier(kWorld));
    CheckPattern(mem, Seed(left, m, k), "lock put", s, m);
  });
}

TEST(ApiWinGpuTest, PutAndGetUnderLockFlushUnlockMoveEveryByte) {
  const std::string r = RunOnRanks({2, 4}, PutGetLock);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Every rank accumulates (SUM) ints from host memory and doubles from device memory into rank
// 0's device window, under fence and then again under a shared lock; the sums are exact.
void AccumulateSums(int rank) {
  const int np = Size();
  for (int count : {1, 500, 1014, 1015, 8192, 16384, 16385, 70000}) {
    const size_t ints = static_cast<size_t>(count) * 4, dbl_at = (ints + 7) / 8 * 8;
    const size_t bytes = dbl_at + static_cast<size_t>(count) * 8;
    Buf mem(true, bytes, 0);
    std::vector<int32_t> isrc(count);
    std::vector<double> dsrc(count);
    for (int i = 0; i < count; ++i) {
      isrc[i] = i + rank;
      dsrc[i] = 0.5 * i + rank;
    }
    Buf dsrc_dev(true, dsrc.size() * 8, 0);
    dsrc_dev.Write(dsrc.data(), dsrc.size() * 8);
    MPIGPU_Win win;
    API_OK(MPIGPU_Win_create(mem.p, MPIGPU_BUF_GPU, bytes, 1, MPIGPU_INFO_NULL, kWorld, &win));
    API_OK(MPIGPU_Win_fence(0, win));
    API_OK(MPIGPU_Accumulate(isrc.data(), MPIGPU_BUF_HOST, count, MPIGPU_INT, 0, 0, count,
                             MPIGPU_INT, MPIGPU_SUM, win));
    API_OK(MPIGPU_Accumulate(dsrc_dev.p, MPIGPU_BUF_GPU, count, MPIGPU_DOUBLE, 0, dbl_at, count,
                             MPIGPU_DOUBLE, MPIGPU_SUM, win));
    API_OK(MPIGPU_Win_fence(0, win));
    API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_SHARED, 0, 0, win));
    API_OK(MPIGPU_Accumulate(isrc.data(), MPIGPU_BUF_HOST, count, MPIGPU_INT, 0, 0, count,
                             MPIGPU_INT, MPIGPU_SUM, win));
    API_OK(MPIGPU_Accumulate(dsrc_dev.p, MPIGPU_BUF_GPU, count, MPIGPU_DOUBLE, 0, dbl_at, count,
                             MPIGPU_DOUBLE, MPIGPU_SUM, win));
    API_OK(MPIGPU_Win_unlock(0, win));
    API_OK(MPIGPU_Barrier(kWorld));
    if (rank == 0) {
      std::vector<unsigned char> got = mem.Read();
      const auto* iv = reinterpret_cast<const int32_t*>(got.data());
      const auto* dv = reinterpret_cast<const double*>(got.data() + dbl_at);
      const int ranks_sum = np * (np - 1) / 2;
      int bad = 0;
      for (int i = 0; i < count && bad < 5; ++i) {
        const int32_t ie = 2 * (np * i + ranks_sum);
        const double de = 2 * (np * 0.5 * i + ranks_sum);
        if (iv[i] != ie || dv[i] != de) {
          std::fprintf(stderr, "count %d, element %d: int %d (expected %d), double %g (%g)\n",
                       count, i, iv[i], ie, dv[i], de);
          ++bad;
        }
      }
      RANK_CHECK(bad == 0);
    }
    API_OK(MPIGPU_Barrier(kWorld));
    API_OK(MPIGPU_Win_free(&win));
  }
}

TEST(ApiWinGpuTest, AccumulateSumsIntsAndDoublesIntoDeviceWindow) {
  const std::string r = RunOnRanks({2, 3, 4}, AccumulateSums);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Fetch_and_op: every rank adds 1 to rank 0's device word 10 times; the old values seen over
// all ranks are exactly 0 .. 10 * np - 1. Compare_and_swap: exactly one rank swaps 0 into
// rank + 100 on word 1. Origin, compare and result buffers alternate between host and device.
void Atomics(int rank) {
  const int np = Size();
  constexpr int kTimes = 10;
  Buf mem(true, 2 * sizeof(int64_t), 0);
  MPIGPU_Win win;
  API_OK(MPIGPU_Win_create(mem.p, MPIGPU_BUF_GPU, mem.bytes, sizeof(int64_t), MPIGPU_INFO_NULL,
                           kWorld, &win));
  const bool dev = rank % 2 == 1;
  Buf one(dev, sizeof(int64_t), 0), old(!dev, sizeof(int64_t), 0xEE);
  const int64_t v1 = 1;
  one.Write(&v1, sizeof v1);
  std::vector<int64_t> olds(kTimes);
  API_OK(MPIGPU_Win_lock_all(0, win));
  for (int k = 0; k < kTimes; ++k) {
    API_OK(MPIGPU_Fetch_and_op(one.p, one.bt(), old.p, old.bt(), MPIGPU_INT64_T, 0, 0,
                               MPIGPU_SUM, win));
    API_OK(MPIGPU_Win_flush(0, win));
    std::vector<unsigned char> b = old.Read();
    std::memcpy(&olds[k], b.data(), sizeof(int64_t));
  }
  API_OK(MPIGPU_Win_unlock_all(win));
  std::vector<int64_t> all(static_cast<size_t>(kTimes) * np);
  API_OK(MPIGPU_Allgather(olds.data(), MPIGPU_BUF_HOST, kTimes, MPIGPU_INT64_T, all.data(),
                          MPIGPU_BUF_HOST, kTimes, MPIGPU_INT64_T, kWorld));
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) RANK_CHECK(all[i] == static_cast<int64_t>(i));
  // Compare_and_swap on word 1.
  const int64_t mine = rank + 100, zero = 0;
  Buf origin(dev, 8, 0), cmp(!dev, 8, 0), got(dev, 8, 0xEE);
  origin.Write(&mine, 8);
  cmp.Write(&zero, 8);
  API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_SHARED, 0, 0, win));
  API_OK(MPIGPU_Compare_and_swap(origin.p, origin.bt(), cmp.p, cmp.bt(), got.p, got.bt(),
                                 MPIGPU_INT64_T, 0, 1, win));
  API_OK(MPIGPU_Win_unlock(0, win));
  int64_t before = -1;
  std::memcpy(&before, got.Read().data(), 8);
  const int32_t won = before == 0;
  int32_t winners = 0;
  API_OK(MPIGPU_Allreduce(&won, MPIGPU_BUF_HOST, &winners, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                          MPIGPU_SUM, kWorld));
  RANK_CHECK(winners == 1);
  RANK_CHECK(before == 0 || (before >= 100 && before < 100 + np));
  API_OK(MPIGPU_Barrier(kWorld));
  if (rank == 0) {
    int64_t words[2];
    std::memcpy(words, mem.Read().data(), sizeof words);
    RANK_CHECK(words[0] == static_cast<int64_t>(kTimes) * np);
    RANK_CHECK(words[1] >= 100 && words[1] < 100 + np);
  }
  API_OK(MPIGPU_Win_free(&win));
}

TEST(ApiWinGpuTest, FetchAndOpAndCompareAndSwapOnDeviceWords) {
  const std::string r = RunOnRanks({2, 4}, Atomics);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// Win_allocate with the GPU tag returns device memory of the rank's device, which Win_free
// frees; Put and Get through it move every byte.
void AllocateOnDevice(int rank) {
  const int n = Size(), right = (rank + 1) % n, left = (rank + n - 1) % n;
  int dev = -1;
  CUDA_OK(cudaGetDevice(&dev));
  for (size_t k = 0; k < sizeof kSizes / sizeof kSizes[0]; ++k) {
    const size_t s = kSizes[k];
    void* base = nullptr;
    MPIGPU_Win win;
    API_OK(MPIGPU_Win_allocate(s, 1, MPIGPU_BUF_GPU, MPIGPU_INFO_NULL, kWorld, &base, &win));
    cudaPointerAttributes attr{};
    CUDA_OK(cudaPointerGetAttributes(&attr, base));
    RANK_CHECK(attr.type == cudaMemoryTypeDevice);
    RANK_CHECK(attr.device == dev);
    void* qbase = nullptr;
    MPIGPU_Aint qsize = 0;
    int unit = 0, flavor = 0;
    API_OK(MPIGPU_Win_query(win, &qbase, &qsize, &unit, &flavor));
    RANK_CHECK(qbase == base && qsize == static_cast<MPIGPU_Aint>(s) && unit == 1 &&
               flavor == MPIGPU_WIN_FLAVOR_ALLOCATE);
    Buf src(k % 2 == 1, s, 0), back(k % 2 == 0, s, 0xEE);
    src.Fill(Seed(rank, 5, k));
    API_OK(MPIGPU_Win_fence(0, win));
    API_OK(MPIGPU_Put(src.p, src.bt(), static_cast<int>(s), MPIGPU_BYTE, right, 0,
                      static_cast<int>(s), MPIGPU_BYTE, win));
    API_OK(MPIGPU_Win_fence(0, win));
    std::vector<unsigned char> mine(s);
    CUDA_OK(cudaMemcpy(mine.data(), base, s, cudaMemcpyDeviceToHost));
    RANK_CHECK(FirstMismatch(mine.data(), s, Seed(left, 5, k)) == -1);
    API_OK(MPIGPU_Get(back.p, back.bt(), static_cast<int>(s), MPIGPU_BYTE, right, 0,
                      static_cast<int>(s), MPIGPU_BYTE, win));
    API_OK(MPIGPU_Win_fence(MPIGPU_MODE_NOSUCCEED, win));
    CheckPattern(back, Seed(rank, 5, k), "allocate get", s, 5);
    API_OK(MPIGPU_Win_free(&win));
  }
}

TEST(ApiWinGpuTest, WinAllocateWithGpuTagGivesDeviceMemoryThatPutAndGetReach) {
  const std::string r = RunOnRanks({2, 4}, AllocateOnDevice);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

// A vector target type (blocks of `block` ints every `stride`) into the right neighbour's
// device window from a contiguous device origin, and back with a Get: the blocks hold the
// data, the gaps keep their bytes.
void VectorTarget(int rank) {
  const int n = Size(), right = (rank + 1) % n, left = (rank + n - 1) % n;
  struct Shape {
    int count, block, stride;
  };
  // Inline (under 4056 bytes), above the header message, above the eager limit.
  for (Shape sh : {Shape{10, 3, 5}, Shape{300, 4, 7}, Shape{5000, 4, 6}}) {
    const size_t elems = static_cast<size_t>(sh.count) * sh.block;
    const size_t span = static_cast<size_t>(sh.count - 1) * sh.stride + sh.block;
    Buf mem(true, span * 4, 0x5A), src(true, elems * 4, 0), back(true, elems * 4, 0xEE);
    std::vector<int32_t> data(elems);
    for (size_t i = 0; i < elems; ++i) data[i] = static_cast<int32_t>(rank * 1000003 + i);
    src.Write(data.data(), elems * 4);
    MPIGPU_Datatype vec;
    API_OK(MPIGPU_Type_vector(sh.count, sh.block, sh.stride, MPIGPU_INT, &vec));
    API_OK(MPIGPU_Type_commit(&vec));
    MPIGPU_Win win;
    API_OK(MPIGPU_Win_create(mem.p, MPIGPU_BUF_GPU, mem.bytes, 4, MPIGPU_INFO_NULL, kWorld, &win));
    API_OK(MPIGPU_Win_fence(0, win));
    API_OK(MPIGPU_Put(src.p, MPIGPU_BUF_GPU, static_cast<int>(elems), MPIGPU_INT, right, 0, 1,
                      vec, win));
    API_OK(MPIGPU_Win_fence(0, win));
    std::vector<unsigned char> got = mem.Read();
    const auto* w = reinterpret_cast<const int32_t*>(got.data());
    int bad = 0;
    size_t next = 0;
    for (size_t j = 0; j < span && bad < 5; ++j) {
      const bool in_block = static_cast<int>(j % sh.stride) < sh.block;
      const int32_t expect =
          in_block ? static_cast<int32_t>(left * 1000003 + next++) : 0x5A5A5A5A;
      if (w[j] != expect) {
        std::fprintf(stderr, "vector %d/%d/%d: element %zu is %d, expected %d\n", sh.count,
                     sh.block, sh.stride, j, w[j], expect);
        ++bad;
      }
    }
    RANK_CHECK(bad == 0);
    API_OK(MPIGPU_Get(back.p, MPIGPU_BUF_GPU, static_cast<int>(elems), MPIGPU_INT, right, 0, 1,
                      vec, win));
    API_OK(MPIGPU_Win_fence(MPIGPU_MODE_NOSUCCEED, win));
    std::vector<unsigned char> b = back.Read();
    RANK_CHECK(std::memcmp(b.data(), data.data(), elems * 4) == 0);
    API_OK(MPIGPU_Win_free(&win));
    API_OK(MPIGPU_Type_free(&vec));
  }
}

TEST(ApiWinGpuTest, VectorTargetTypeScattersIntoDeviceWindow) {
  const std::string r = RunOnRanks({2, 4}, VectorTarget);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

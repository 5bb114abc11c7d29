// Parameterized memcpy: every location pair and strategy, strided copies, byte-verified.
// GPU cases skip with a reason where no CUDA device exists.
#include "memcopy/memcopy.h"
#include "memcopy/device_scope.h"
#include "memcopy/stream_order.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <algorithm>
#include <tuple>
#include <vector>

#include "tests/gpu_util.h"
#include "memcopy/pattern.h"

namespace mpigpu {
namespace {

using testing::CountMismatchesOnDevice;
using testing::FillPattern;
using testing::FillPatternOnDevice;
using testing::FirstMismatch;

#define REQUIRE_GPUS(n)                                                          \
  do {                                                                           \
    if (CudaDeviceCount() < (n))                                                 \
      GTEST_SKIP() << "needs " << (n) << " CUDA device(s), found " << CudaDeviceCount(); \
  } while (0)

// Sizes around the host NT threshold, odd sizes, and large ones.
const size_t kSizes[] = {0, 1, 7, 64, 255, 256, 257, 4095, 65536, 65537, (1u << 20) - 1,
                         1u << 20, (1u << 20) + 1, (4u << 20) + 13};

TEST(HostCopyTest, StreamingCopyEveryAlignmentAndSize) {
  std::vector<uint8_t> src(5000), dst(5000 + 64);
  FillPattern(src.data(), src.size(), 1);
  for (size_t doff = 0; doff < 17; ++doff)
    for (size_t soff = 0; soff < 5; ++soff)
      for (size_t n : {0, 1, 15, 16, 63, 64, 65, 255, 256, 257, 1000, 4000}) {
        std::memset(dst.data(), 0xEE, dst.size());
        StreamingCopy(dst.data() + doff, src.data() + soff, n);
        ASSERT_EQ(FirstMismatch(dst.data() + doff, n, 1, soff), -1) << doff << " " << soff << " " << n;
        // Nothing written around the destination range.
        for (size_t i = 0; i < doff; ++i) ASSERT_EQ(dst[i], 0xEE);
        for (size_t i = doff + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xEE);
      }
}

TEST(HostCopyTest, ThresholdPicksEitherPathAndBothAreExact) {
  for (size_t n : kSizes) {
    std::vector<uint8_t> src(n + 1), dst(n + 1, 0);
    FillPattern(src.data(), n, 2);
    for (size_t threshold : {size_t{0}, size_t{1}, n, n + 1, size_t{1} << 20}) {
      std::fill(dst.begin(), dst.end(), 0);
      HostCopy(dst.data(), src.data(), n, threshold);
      ASSERT_EQ(FirstMismatch(dst.data(), n, 2), -1) << n << " " << threshold;
      ASSERT_EQ(dst[n], 0) << "wrote past the end";
    }
  }
}

TEST(CopyTest, HostToHostThroughEveryStrategy) {
  for (size_t n : kSizes) {
    std::vector<uint8_t> src(n), dst(n);
    FillPattern(src.data(), n, 3);
    ASSERT_TRUE(Copy(dst.data(), MemLoc::Host(), src.data(), MemLoc::Host(), n, nullptr).ok());
    ASSERT_EQ(FirstMismatch(dst.data(), n, 3), -1) << n;
  }
}

TEST(CopyTest, InvalidArgumentsAreRejected) {
  char buf[8];
  EXPECT_EQ(Copy(nullptr, MemLoc::Host(), buf, MemLoc::Host(), 8, nullptr).code(), Err::kInvalidArg);
  EXPECT_EQ(Copy(buf, MemLoc::Host(), nullptr, MemLoc::Host(), 8, nullptr).code(), Err::kInvalidArg);
  EXPECT_TRUE(Copy(nullptr, MemLoc::Host(), nullptr, MemLoc::Host(), 0, nullptr).ok());
  EXPECT_EQ(Copy(buf, MemLoc::Device(-1), buf, MemLoc::Host(), 8, nullptr).code(), Err::kInvalidArg);
  EXPECT_EQ(Copy2D(buf, MemLoc::Host(), 2, buf, MemLoc::Host(), 4, 3, 2, nullptr).code(),
            Err::kInvalidArg);
}

TEST(CopyTest, DeviceCopyWithoutGpuFailsCleanly) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device exists; this checks the no-GPU error";
  char host[16];
  Status st = Copy(host, MemLoc::Host(), host, MemLoc::Device(0), sizeof host, nullptr);
  EXPECT_EQ(st.code(), Err::kCuda) << st.ToString();
  EXPECT_FALSE(st.message().empty());
}

TEST(DefaultStreamOrderTest, HostMemoryNeedsNothing) {
  DefaultStreamOrder order;
  EXPECT_TRUE(order.Wait(MemLoc::Host()).ok());
  EXPECT_EQ(order.way(), DefaultStreamOrder::Way::kUnchosen);  // nothing was timed
}

TEST(DefaultStreamOrderTest, WithoutGpuADeviceWaitFailsCleanly) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device exists; this checks the no-GPU error";
  DefaultStreamOrder order;
  EXPECT_EQ(order.Wait(MemLoc::Device(0)).code(), Err::kCuda);
}

// The first wait chooses a way; each way returns only once default-stream work issued before it
// (a kernel that spins 20 ms, then writes) is done, whichever was chosen.
TEST(DefaultStreamOrderTest, WaitsForPendingDefaultStreamWork) {
  REQUIRE_GPUS(1);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const size_t n = 1 << 20;
  void* buf = nullptr;
  ASSERT_EQ(cudaMalloc(&buf, n), cudaSuccess);
  DefaultStreamOrder order;
  ASSERT_TRUE(order.Wait(MemLoc::Device(0)).ok());
  EXPECT_NE(order.way(), DefaultStreamOrder::Way::kUnchosen);
  for (auto way : {DefaultStreamOrder::Way::kQuery, DefaultStreamOrder::Way::kSync,
                   DefaultStreamOrder::Way::kEvent})
    EXPECT_GT(order.cost_us(way), 0) << DefaultStreamOrder::Name(way);
  for (int seed = 1; seed <= 3; ++seed) {
    ASSERT_EQ(testing::FillPatternLaterOnDefaultStream(buf, n, seed, 20000), cudaSuccess);
    ASSERT_TRUE(order.Wait(MemLoc::Device(0)).ok());
    EXPECT_EQ(cudaStreamQuery(cudaStreamLegacy), cudaSuccess) << "work still pending";
    std::vector<unsigned char> host(n);
    cudaStream_t mine;
    ASSERT_EQ(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaMemcpyAsync(host.data(), buf, n, cudaMemcpyDeviceToHost, mine), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(mine), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(mine), cudaSuccess);
    EXPECT_EQ(FirstMismatch(host.data(), n, seed), -1);
  }
  ASSERT_EQ(cudaFree(buf), cudaSuccess);
}

TEST(DeviceScopeTest, HostMemoryAndNoDeviceDoNothing) {
  DeviceScope host(MemLoc::Host());
  EXPECT_TRUE(host.ok());
  EXPECT_TRUE(host.status().ok());
  DeviceScope none(-1);
  EXPECT_TRUE(none.ok());
}

int CurrentDevice() {
  int d = -1;
  EXPECT_EQ(cudaGetDevice(&d), cudaSuccess);
  return d;
}

TEST(DeviceScopeTest, MakesTheDeviceCurrentAndRestoresTheCallers) {
  REQUIRE_GPUS(1);
  const int last = CudaDeviceCount() - 1;
  ASSERT_EQ(cudaSetDevice(last), cudaSuccess);
  {
    DeviceScope scope(MemLoc::Device(0));
    ASSERT_TRUE(scope.ok()) << scope.status().ToString();
    EXPECT_EQ(CurrentDevice(), 0);
    {
      DeviceScope inner(0);  // current already: nothing to switch or restore
      EXPECT_TRUE(inner.ok());
    }
    EXPECT_EQ(CurrentDevice(), 0);
  }
  EXPECT_EQ(CurrentDevice(), last);
  {
    DeviceScope bad(CudaDeviceCount());  // no such device: nothing changes
    EXPECT_FALSE(bad.ok());
    EXPECT_EQ(bad.status().code(), Err::kCuda);
    const std::string call = "cudaSetDevice(" + std::to_string(CudaDeviceCount()) + ")";
    EXPECT_NE(bad.status().message().find(call), std::string::npos) << bad.status().message();
    EXPECT_EQ(CurrentDevice(), last);
  }
  EXPECT_EQ(CurrentDevice(), last);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "status() takes the error out";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
}

TEST(Copy2DTest, HostStridedRowsOnly) {
  const size_t width = 5, spitch = 9, dpitch = 7, height = 11;
  std::vector<uint8_t> src(spitch * height), dst(dpitch * height, 0xEE);
  FillPattern(src.data(), src.size(), 4);
  ASSERT_TRUE(Copy2D(dst.data(), MemLoc::Host(), dpitch, src.data(), MemLoc::Host(), spitch, width,
                     height, nullptr)
                  .ok());
  for (size_t r = 0; r < height; ++r)
    for (size_t c = 0; c < dpitch; ++c)
      ASSERT_EQ(dst[r * dpitch + c], c < width ? src[r * spitch + c] : 0xEE) << r << "," << c;
}

// ---- GPU: every location pair x strategy, verified byte for byte ----

enum class Host { kPageable, kPinned };

class Buffers {
 public:
  Buffers(MemLoc loc, size_t bytes, Host host) : loc_(loc), bytes_(bytes), host_(host) {
    if (loc.is_device()) {
      cudaSetDevice(loc.device);
      ok_ = cudaMalloc(&p_, bytes ? bytes : 1) == cudaSuccess;
    } else if (host == Host::kPinned) {
      ok_ = cudaMallocHost(&p_, bytes ? bytes : 1) == cudaSuccess;
    } else {
      p_ = std::malloc(bytes ? bytes : 1);
      ok_ = p_ != nullptr;
    }
  }
  ~Buffers() {
    if (loc_.is_device()) cudaFree(p_);
    else if (host_ == Host::kPinned) cudaFreeHost(p_);
    else std::free(p_);
  }
  bool ok() const { return ok_; }
  void* get() const { return p_; }
  void Fill(uint32_t seed) {
    if (loc_.is_device()) ASSERT_EQ(FillPatternOnDevice(p_, bytes_, seed), cudaSuccess);
    else FillPattern(p_, bytes_, seed);
  }
  unsigned long long Mismatches(uint32_t seed) {
    unsigned long long bad = 0;
    if (loc_.is_device()) {
      cudaSetDevice(loc_.device);
      EXPECT_EQ(CountMismatchesOnDevice(p_, bytes_, seed, &bad), cudaSuccess);
    } else {
      long long first = FirstMismatch(p_, bytes_, seed);
      bad = first < 0 ? 0 : 1 + first;  // non-zero on any mismatch
    }
    return bad;
  }

 private:
  MemLoc loc_;
  size_t bytes_;
  Host host_;
  void* p_ = nullptr;
  bool ok_ = false;
};

using PairParam = std::tuple<int, int, CopyStrategy, Host>;  // src, dst: -1 host, else device

class GpuCopyTest : public ::testing::TestWithParam<PairParam> {};

MemLoc LocOf(int v) { return v < 0 ? MemLoc::Host() : MemLoc::Device(v); }

TEST_P(GpuCopyTest, EveryLocationPairIsByteExact) {
  auto [src_v, dst_v, strategy, host] = GetParam();
  REQUIRE_GPUS(std::max({1, src_v + 1, dst_v + 1}));
  if (std::max(src_v, dst_v) >= 1) {
    int can = 0;
    cudaDeviceCanAccessPeer(&can, 0, 1);
    if (can) {
      cudaSetDevice(0);
      (void)cudaDeviceEnablePeerAccess(1, 0);
      cudaSetDevice(1);
      (void)cudaDeviceEnablePeerAccess(0, 0);
      (void)cudaGetLastError();
    }
  }
  MemLoc src_loc = LocOf(src_v), dst_loc = LocOf(dst_v);
  int stream_dev = src_loc.is_device() ? src_loc.device : (dst_loc.is_device() ? dst_loc.device : 0);
  cudaSetDevice(stream_dev);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  uint32_t seed = 100;
  for (size_t n : {size_t{1}, size_t{8}, size_t{4095}, size_t{65536}, size_t{65537},
                   size_t{1} << 20, (size_t{16} << 20) + 5}) {
    ++seed;
    Buffers src(src_loc, n, host), dst(dst_loc, n, host);
    ASSERT_TRUE(src.ok() && dst.ok());
    src.Fill(seed);
    dst.Fill(seed + 1000);
    Status st = CopyWithStrategy(strategy, dst.get(), dst_loc, src.get(), src_loc, n, stream);
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(dst.Mismatches(seed), 0u) << "bytes " << n << " " << src_loc.ToString() << "->"
                                        << dst_loc.ToString();
  }
  cudaStreamDestroy(stream);
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, GpuCopyTest,
    ::testing::Combine(::testing::Values(-1, 0, 1), ::testing::Values(-1, 0, 1),
                       ::testing::Values(CopyStrategy::kParameterized, CopyStrategy::kUvaDefault,
                                         CopyStrategy::kQuery),
                       ::testing::Values(Host::kPageable, Host::kPinned)));

TEST(GpuCopy2DTest, StridedToAndFromDevice) {
  REQUIRE_GPUS(1);
  cudaSetDevice(0);
  const size_t width = 100, spitch = 300, dpitch = 128, height = 257;
  std::vector<uint8_t> src(spitch * height), back(dpitch * height, 0), packed(width * height);
  FillPattern(src.data(), src.size(), 7);
  void *dev = nullptr, *dev2 = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, dpitch * height), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dev2, width * height), cudaSuccess);
  // host strided -> device strided -> device packed -> host packed
  ASSERT_TRUE(Copy2D(dev, MemLoc::Device(0), dpitch, src.data(), MemLoc::Host(), spitch, width,
                     height, nullptr).ok());
  ASSERT_TRUE(Copy2D(dev2, MemLoc::Device(0), width, dev, MemLoc::Device(0), dpitch, width, height,
                     nullptr).ok());
  ASSERT_TRUE(Copy(packed.data(), MemLoc::Host(), dev2, MemLoc::Device(0), width * height, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t r = 0; r < height; ++r)
    ASSERT_EQ(std::memcmp(&packed[r * width], &src[r * spitch], width), 0) << "row " << r;
  // device strided -> host strided
  ASSERT_TRUE(Copy2D(back.data(), MemLoc::Host(), dpitch, dev, MemLoc::Device(0), dpitch, width,
                     height, nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (size_t r = 0; r < height; ++r)
    ASSERT_EQ(std::memcmp(&back[r * dpitch], &src[r * spitch], width), 0) << "row " << r;
  cudaFree(dev);
  cudaFree(dev2);
}

TEST(GpuCopy2DTest, StridedAcrossDevices) {
  REQUIRE_GPUS(2);
  const size_t width = 64, spitch = 96, dpitch = 80, height = 1000;
  void *a = nullptr, *b = nullptr;
  cudaSetDevice(0);
  ASSERT_EQ(cudaMalloc(&a, spitch * height), cudaSuccess);
  ASSERT_EQ(FillPatternOnDevice(a, spitch * height, 9), cudaSuccess);
  cudaSetDevice(1);
  ASSERT_EQ(cudaMalloc(&b, dpitch * height), cudaSuccess);
  ASSERT_TRUE(Copy2D(b, MemLoc::Device(1), dpitch, a, MemLoc::Device(0), spitch, width, height,
                     nullptr).ok());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> got(dpitch * height);
  ASSERT_EQ(cudaMemcpy(got.data(), b, got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t r = 0; r < height; ++r)
    for (size_t c = 0; c < width; ++c)
      ASSERT_EQ(got[r * dpitch + c], testing::PatternByte(9, r * spitch + c)) << r << "," << c;
  cudaFree(b);
  cudaSetDevice(0);
  cudaFree(a);
}

}  // namespace
}  // namespace mpigpu

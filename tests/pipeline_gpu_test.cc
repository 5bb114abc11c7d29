// The LMT pipeline on CUDA streams: sender and receiver each with a CudaCopyEngine, in one
// process, through a ring in cudaHostRegister'ed memory; every host/device pair of user buffers,
// contiguous and vector layouts, byte-verified. Skips where there is no CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "pipeline/copy_engine.h"
#include "pipeline/pipeline.h"
#include "tests/lmt_test_util.h"

namespace mpigpu {
namespace {

using testing::CheckLayout;
using testing::ClearLayout;
using testing::FillLayout;

TEST(CudaCopyEngineTest, CreateWithoutGpuIsNoGpu) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device exists";
  CudaCopyEngine e;
  EXPECT_EQ(CudaCopyEngine::Create(0, &e).code(), Err::kNoGpu);
  Ticket t;
  EXPECT_EQ(e.Mark(&t).code(), Err::kInvalidArg);  // never created
}

class PipelineGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
    ASSERT_TRUE(CudaCopyEngine::Create(0, &send_engine_).ok());
    ASSERT_TRUE(CudaCopyEngine::Create(0, &recv_engine_).ok());
    ASSERT_EQ(cudaHostRegister(ring_.block.get(), ring_.block.bytes, cudaHostRegisterDefault),
              cudaSuccess);
  }
  void TearDown() override {
    if (CudaDeviceCount() > 0) (void)cudaHostUnregister(ring_.block.get());
  }

  // A user buffer of `bytes` at `loc` holding the host image `image`.
  struct UserBuf {
    UserBuf(MemLoc loc, const std::vector<char>& image) : loc(loc), host(image) {
      if (loc.is_device()) {
        EXPECT_EQ(cudaMalloc(&dev, image.size()), cudaSuccess);
        EXPECT_EQ(cudaMemcpy(dev, image.data(), image.size(), cudaMemcpyHostToDevice),
                  cudaSuccess);
      }
    }
    ~UserBuf() {
      if (dev != nullptr) (void)cudaFree(dev);
    }
    void* ptr() { return loc.is_device() ? dev : static_cast<void*>(host.data()); }
    // The buffer's bytes as the host sees them.
    std::vector<char> Read() {
      if (loc.is_host()) return host;
      std::vector<char> out(host.size());
      EXPECT_EQ(cudaMemcpy(out.data(), dev, out.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      return out;
    }
    MemLoc loc;
    std::vector<char> host;
    void* dev = nullptr;
  };

  void Transfer(MemLoc sloc, const Layout& sl, MemLoc rloc, const Layout& rl, uint64_t total,
                uint32_t seed) {
    std::vector<char> simg(sl.extent() + 1), rimg(rl.extent() + 1);
    FillLayout(simg.data(), sl, seed);
    ClearLayout(rimg.data(), rl);
    UserBuf src(sloc, simg), dst(rloc, rimg);
    LmtParams p{total, kUnit, LmtFillBlock(sl, rl, kUnit), 3};
    LmtSender s;
    LmtReceiver r;
    Status st = LmtSender::Create(&ring_.ring, &send_engine_, {src.ptr(), sloc, sl}, p, &s);
    ASSERT_TRUE(st.ok()) << st.ToString();
    st = LmtReceiver::Create(&ring_.ring, &recv_engine_, {dst.ptr(), rloc, rl}, p, &r);
    ASSERT_TRUE(st.ok()) << st.ToString();
    testing::RunBoth(&s, &r, seed);
    std::vector<char> got = dst.Read();
    EXPECT_EQ(CheckLayout(got.data(), rl, seed, total), "")
        << sloc.ToString() << " -> " << rloc.ToString() << ", " << total << " bytes";
  }

  static constexpr size_t kUnit = 1 << 20;
  testing::TestRing ring_{4 * kUnit, 4};
  CudaCopyEngine send_engine_, recv_engine_;
};

TEST_F(PipelineGpuTest, EveryLocationPairContiguousAndVector) {
  const MemLoc locs[] = {MemLoc::Host(), MemLoc::Device(0)};
  const Layout v = Layout::Vector(3000, 1000, 1536);  // units cut to 1,048,000 bytes
  uint32_t seed = 1;
  for (MemLoc sloc : locs) {
    for (MemLoc rloc : locs) {
      for (uint64_t total : {uint64_t{1}, uint64_t{kUnit}, uint64_t{9 * kUnit + 5}}) {
        Layout c = Layout::Contiguous(total);
        Transfer(sloc, c, rloc, c, total, seed++);
      }
      Transfer(sloc, v, rloc, v, v.packed_bytes(), seed++);
      Transfer(sloc, v, rloc, Layout::Contiguous(v.packed_bytes()), v.packed_bytes(), seed++);
      Transfer(sloc, Layout::Contiguous(v.packed_bytes()), rloc, v, v.packed_bytes() - 3, seed++);
    }
  }
}

TEST_F(PipelineGpuTest, EngineTicketsCompleteInOrder) {
  std::vector<char> host(1 << 20);
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, host.size()), cudaSuccess);
  testing::FillPattern(host.data(), host.size(), 9);
  Ticket t1, t2;
  ASSERT_TRUE(send_engine_.Issue(dev, MemLoc::Device(0), host.data(), MemLoc::Host(),
                                 host.size()).ok());
  ASSERT_TRUE(send_engine_.Mark(&t1).ok());
  std::vector<char> back(host.size());
  ASSERT_TRUE(send_engine_.Issue(back.data(), MemLoc::Host(), dev, MemLoc::Device(0),
                                 back.size()).ok());
  ASSERT_TRUE(send_engine_.Mark(&t2).ok());
  EXPECT_LT(t1, t2);
  ASSERT_TRUE(send_engine_.Wait(t2).ok());
  bool done = false;
  ASSERT_TRUE(send_engine_.Poll(t1, &done).ok());  // earlier ticket: done, and still done
  EXPECT_TRUE(done);
  EXPECT_EQ(testing::FirstMismatch(back.data(), back.size(), 9), -1);
  EXPECT_EQ(send_engine_.Poll(t2 + 1, &done).code(), Err::kInvalidArg);
  (void)cudaFree(dev);
}

}  // namespace
}  // namespace mpigpu

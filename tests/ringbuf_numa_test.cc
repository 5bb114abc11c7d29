// NUMA placement and pinning helpers, and a NUMA-placed segment.
#include "ringbuf/numa.h"

#include <gtest/gtest.h>
#include <numa.h>
#include <sys/mman.h>

#include "memcopy/memcopy.h"
#include "ringbuf/segment.h"
#include "memcopy/pattern.h"
#include "tests/ringbuf_test_util.h"

namespace mpigpu {
namespace {

using testing::FillPattern;
using testing::FirstMismatch;

class Pages {
 public:
  explicit Pages(size_t bytes) : bytes_(bytes) {
    p_ = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  }
  ~Pages() {
    if (p_ != MAP_FAILED) munmap(p_, bytes_);
  }
  char* get() const { return p_ == MAP_FAILED ? nullptr : static_cast<char*>(p_); }

 private:
  size_t bytes_;
  void* p_;
};

TEST(NumaTest, NodeOfGpu) {
  EXPECT_EQ(NumaNodeOfGpu(-1), -1);
  EXPECT_EQ(NumaNodeOfGpu(1 << 20), -1);
  const int gpus = CudaDeviceCount();
  if (gpus == 0) {
    EXPECT_EQ(NumaNodeOfGpu(0), -1);
    return;
  }
  for (int d = 0; d < gpus; ++d) {
    int node = NumaNodeOfGpu(d);
    EXPECT_GE(node, -1);
    if (numa_available() >= 0) {
      EXPECT_LE(node, numa_max_node());
    }
    std::printf("GPU %d: NUMA node %d\n", d, node);
  }
}

TEST(NumaTest, BindChecksItsArguments) {
  Pages pages(1 << 20);
  ASSERT_NE(pages.get(), nullptr);
  EXPECT_TRUE(BindToNumaNode(pages.get(), 1 << 20, -1).ok());  // no placement asked: no-op
  EXPECT_EQ(BindToNumaNode(nullptr, 4096, 0).code(), Err::kInvalidArg);
  EXPECT_EQ(BindToNumaNode(pages.get(), 0, 0).code(), Err::kInvalidArg);
  EXPECT_EQ(BindToNumaNode(pages.get() + 1, 4096, 0).code(), Err::kInvalidArg);
  Status st = BindToNumaNode(pages.get(), 1 << 20, 1 << 20);
  if (numa_available() >= 0) {
    EXPECT_EQ(st.code(), Err::kInvalidArg) << st.ToString();
    EXPECT_NE(st.message().find("node 1048576"), std::string::npos) << st.message();
  } else {
    EXPECT_TRUE(st.ok()) << st.ToString();
  }
}

TEST(NumaTest, BindPagesToNodeZero) {
  Pages pages(1 << 20);
  ASSERT_NE(pages.get(), nullptr);
  FillPattern(pages.get(), 1 << 19, 7);  // half touched before, half after binding
  Status st = BindToNumaNode(pages.get(), 1 << 20, 0);
  ASSERT_TRUE(st.ok()) << st.ToString();
  FillPattern(pages.get() + (1 << 19), 1 << 19, 8);
  EXPECT_EQ(FirstMismatch(pages.get(), 1 << 19, 7), -1);
  EXPECT_EQ(FirstMismatch(pages.get() + (1 << 19), 1 << 19, 8), -1);
}

TEST(NumaTest, SegmentPlacedOnNodeZero) {
  const std::string name = testing::FreshSegmentName("numa");
  ShmSegment seg;
  Status st = ShmSegment::Create(name, 4 << 20, 1, &seg, /*numa_node=*/0);
  ASSERT_TRUE(st.ok()) << st.ToString();
  FillPattern(seg.payload(), 4 << 20, 9);
  EXPECT_EQ(FirstMismatch(seg.payload(), 4 << 20, 9), -1);
  EXPECT_TRUE(seg.Unlink().ok());
  if (numa_available() >= 0) {
    ShmSegment bad;
    EXPECT_EQ(ShmSegment::Create(name, 4096, 1, &bad, 1 << 20).code(), Err::kInvalidArg);
    EXPECT_FALSE(ShmSegment::Remove(name).ok());  // the failed create removed its name
  }
}

TEST(NumaTest, PinAndUnpin) {
  const std::string name = testing::FreshSegmentName("pin");
  ShmSegment seg;
  ASSERT_TRUE(ShmSegment::Create(name, 2 << 20, 1, &seg).ok());
  ASSERT_TRUE(seg.Unlink().ok());
  EXPECT_EQ(PinHostRange(nullptr, 4096).code(), Err::kInvalidArg);
  EXPECT_EQ(PinHostRange(seg.payload(), 0).code(), Err::kInvalidArg);
  if (CudaDeviceCount() == 0) {
    EXPECT_EQ(PinHostRange(seg.payload(), 2 << 20).code(), Err::kNoGpu);
    EXPECT_EQ(UnpinHostRange(seg.payload()).code(), Err::kNoGpu);
    GTEST_SKIP() << "no CUDA device: only the kNoGpu answers were checked";
  }
  Status st = PinHostRange(seg.payload(), 2 << 20);
  ASSERT_TRUE(st.ok()) << st.ToString();
  FillPattern(seg.payload(), 2 << 20, 4);
  EXPECT_EQ(FirstMismatch(seg.payload(), 2 << 20, 4), -1);
  st = UnpinHostRange(seg.payload());
  EXPECT_TRUE(st.ok()) << st.ToString();
}

}  // namespace
}  // namespace mpigpu

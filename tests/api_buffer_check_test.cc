// MPIGPU_CHECK_BUFFERS: a tag that disagrees with where the driver says the memory lives gives
// MPIGPU_ERR_BUFFER with a message naming both; matching tags, managed memory and host-only
// machines pass.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "memcopy/memcopy.h"
#include "mpigpu_api/buftype.h"
#include "mpigpu_api/errors.h"

namespace mpigpu {
namespace {

TEST(BufferCheckTest, HostMemoryPassesWithoutAGpu) {
  if (CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device exists; this checks host-only machines";
  char buf[8];
  EXPECT_EQ(CheckBufferLocationNow(buf, MemLoc::Host()), MPIGPU_SUCCESS);
}

TEST(BufferCheckTest, MismatchedTagsAreBufferErrors) {
  const int gpus = CudaDeviceCount();
  if (gpus == 0) GTEST_SKIP() << "no CUDA device";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, 64), cudaSuccess);
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 64), cudaSuccess);
  void* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 64), cudaSuccess);
  char* pageable = static_cast<char*>(std::malloc(64));

  EXPECT_EQ(CheckBufferLocationNow(dev, MemLoc::Device(0)), MPIGPU_SUCCESS);
  EXPECT_EQ(CheckBufferLocationNow(pageable, MemLoc::Host()), MPIGPU_SUCCESS);
  EXPECT_EQ(CheckBufferLocationNow(pinned, MemLoc::Host()), MPIGPU_SUCCESS);
  EXPECT_EQ(CheckBufferLocationNow(managed, MemLoc::Host()), MPIGPU_SUCCESS);
  EXPECT_EQ(CheckBufferLocationNow(managed, MemLoc::Device(0)), MPIGPU_SUCCESS);

  EXPECT_EQ(CheckBufferLocationNow(pageable, MemLoc::Device(0)), MPIGPU_ERR_BUFFER);
  EXPECT_NE(ErrorMessage(MPIGPU_ERR_BUFFER).find("host memory"), std::string::npos)
      << ErrorMessage(MPIGPU_ERR_BUFFER);
  EXPECT_EQ(CheckBufferLocationNow(pinned, MemLoc::Device(0)), MPIGPU_ERR_BUFFER);
  EXPECT_EQ(CheckBufferLocationNow(dev, MemLoc::Host()), MPIGPU_ERR_BUFFER);
  EXPECT_NE(ErrorMessage(MPIGPU_ERR_BUFFER).find("cuda:0"), std::string::npos);
  if (gpus > 1) {
    EXPECT_EQ(CheckBufferLocationNow(dev, MemLoc::Device(1)), MPIGPU_ERR_BUFFER);
    EXPECT_NE(ErrorMessage(MPIGPU_ERR_BUFFER).find("tagged cuda:1"), std::string::npos);
  }
  cudaFree(dev);
  cudaFreeHost(pinned);
  cudaFree(managed);
  std::free(pageable);
}

}  // namespace
}  // namespace mpigpu

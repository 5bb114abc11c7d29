// GPUDirect RDMA's export half (internode/ib/ib_dmabuf.h): a device buffer's pages as a dma-buf
// fd, rounded out to host pages inside its allocation, the buffer's offset in it; host memory and
// ranges that leave their allocation are refused. The registration half (ibv_reg_dmabuf_mr)
// needs an RDMA device that takes dma-bufs, which no machine of this project has. Skips without
// a GPU, and with the driver's reason where the GPU cannot export dma-bufs.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "internode/ib/ib_dmabuf.h"
#include "memcopy/memcopy.h"

namespace mpigpu::internode {
namespace {

TEST(IbDmabufGpuTest, ExportsTheBuffersPagesAndRefusesOthers) {
  if (CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  const size_t alloc = size_t{8} << 20;
  void* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, alloc), cudaSuccess);
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  int fd = -1;
  uint64_t offset = 0;
  char* p = static_cast<char*>(d) + 12345;
  const size_t len = size_t{1} << 20;
  Status st = ExportDmabuf(p, len, &fd, &offset);
  if (st.code() == Err::kNoGpu) {
    cudaFree(d);
    GTEST_SKIP() << st.ToString();
  }
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_GE(fd, 0);
  EXPECT_EQ(offset, reinterpret_cast<uint64_t>(p) % page);
  // A dma-buf's size is its end (lseek SEEK_END): whole pages covering [p, p + len).
  const off_t size = ::lseek(fd, 0, SEEK_END);
  std::fprintf(stderr, "dma-buf fd %d, offset %llu, size %lld\n", fd,
               static_cast<unsigned long long>(offset), static_cast<long long>(size));
  EXPECT_GE(static_cast<uint64_t>(size), offset + len);
  EXPECT_EQ(static_cast<uint64_t>(size) % page, 0u);
  EXPECT_LE(static_cast<uint64_t>(size), offset + len + page);
  ::close(fd);

  std::vector<char> host(len);
  EXPECT_EQ(ExportDmabuf(host.data(), len, &fd, &offset).code(), Err::kInvalidArg);
  EXPECT_EQ(fd, -1);
  // The last bytes of the allocation and past it.
  EXPECT_EQ(ExportDmabuf(static_cast<char*>(d) + alloc - 100, 200, &fd, &offset).code(),
            Err::kInvalidArg);
  EXPECT_EQ(cudaFree(d), cudaSuccess);
}

}  // namespace
}  // namespace mpigpu::internode

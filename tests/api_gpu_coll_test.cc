// Every collective (tests/coll_suite.h) on device buffers (MPIGPU_BUF_GPU) between forked ranks
// sharing one GPU: data movement straight between device blocks, reductions staged through the
// host, derived types through the packer, user ops on staged copies; and the intercommunicator
// forms (tests/inter_coll_suite.h). Ranks skip without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/api_test_util.h"
#include "tests/coll_suite.h"
#include "tests/inter_coll_suite.h"
#include "memcopy/memcopy.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

#define CUDA_OK(call) RANK_CHECK((call) == cudaSuccess)

Mem DeviceMem() {
  Mem m;
  m.bt = MPIGPU_BUF_GPU;
  m.alloc = [](size_t b) {
    void* p = nullptr;
    CUDA_OK(cudaMalloc(&p, b ? b : 1));
    return p;
  };
  m.free = [](void* p) { CUDA_OK(cudaFree(p)); };
  // Synchronised: the transport copies on its own streams (as with CUDA-aware MPI).
  m.put = [](void* d, const void* h, size_t b) {
    CUDA_OK(cudaMemcpy(d, h, b, cudaMemcpyHostToDevice));
    CUDA_OK(cudaDeviceSynchronize());
  };
  m.get = [](void* h, const void* s, size_t b) {
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(h, s, b, cudaMemcpyDeviceToHost));
  };
  return m;
}

TEST(ApiGpuCollTest, EveryCollectiveOnDeviceBuffers) {
  for (int n : {1, 2, 3, 5}) {
    std::string r = RunJob(
        n,
        [n](int) {
          if (CudaDeviceCount() == 0) return kRankSkip;
          return RunApiRank([n](int rank) { RunCollSuite(rank, n, DeviceMem()); });
        },
        300);
    if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

// The intercommunicator forms (tests/inter_coll_suite.h) on device buffers, 2 + 3 ranks.
TEST(ApiGpuCollTest, IntercommunicatorCollectivesOnDeviceBuffers) {
  std::string r = RunJob(
      5,
      [](int) {
        if (CudaDeviceCount() == 0) return kRankSkip;
        return RunApiRank([](int rank) { RunInterCollSuite(rank, 5, 2, DeviceMem()); });
      },
      300);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

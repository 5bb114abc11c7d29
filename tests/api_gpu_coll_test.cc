// Every collective (tests/coll_suite.h) on device buffers (MPIGPU_BUF_GPU) between forked ranks
// sharing one GPU: data movement straight between device blocks, predefined reductions on the
// GPU (coll_device_reduce_test checks every op x type), derived types through the packer, user
// ops on staged copies; and the intercommunicator
// forms (tests/inter_coll_suite.h). Ranks skip without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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

// Neighborhood collectives on device buffers: a periodic ring of 3 ranks (each has two
// neighbours, left then right), allgather and alltoall of 1000 ints, blocking and nonblocking.
TEST(ApiGpuCollTest, NeighborhoodCollectivesOnDeviceBuffers) {
  std::string r = RunJob(
      3,
      [](int) {
        if (CudaDeviceCount() == 0) return kRankSkip;
        return RunApiRank([](int rank) {
          const Mem m = DeviceMem();
          const int n = 3, cnt = 1000;
          int dims[1] = {n}, periods[1] = {1};
          MPIGPU_Comm ring;
          API_OK(MPIGPU_Cart_create(MPIGPU_COMM_WORLD, 1, dims, periods, 0, &ring));
          const int left = (rank + n - 1) % n, right = (rank + 1) % n;
          const size_t bytes = sizeof(int) * cnt;
          for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
            // allgather: my block to both; I get left's then right's.
            std::vector<int> mine(cnt), two(2 * cnt, -1);
            for (int i = 0; i < cnt; ++i) mine[i] = rank * 100000 + i;
            void* s = m.alloc(bytes);
            void* g = m.alloc(2 * bytes);
            m.put(s, mine.data(), bytes);
            m.put(g, two.data(), 2 * bytes);
            MPIGPU_Request q;
            if (nonblocking) {
              API_OK(MPIGPU_Ineighbor_allgather(s, m.bt, cnt, MPIGPU_INT, g, m.bt, cnt, MPIGPU_INT,
                                                ring, &q));
              API_OK(MPIGPU_Wait(&q, MPIGPU_STATUS_IGNORE));
            } else {
              API_OK(MPIGPU_Neighbor_allgather(s, m.bt, cnt, MPIGPU_INT, g, m.bt, cnt, MPIGPU_INT,
                                               ring));
            }
            m.get(two.data(), g, 2 * bytes);
            for (int i = 0; i < cnt; ++i)
              RANK_CHECK(two[i] == left * 100000 + i && two[cnt + i] == right * 100000 + i);
            // alltoall: block 0 goes left, block 1 right; I get left's block 1, right's block 0.
            std::vector<int> out(2 * cnt);
            for (int i = 0; i < 2 * cnt; ++i) out[i] = rank * 100000 + 7 * i;
            void* a = m.alloc(2 * bytes);
            m.put(a, out.data(), 2 * bytes);
            m.put(g, std::vector<int>(2 * cnt, -1).data(), 2 * bytes);
            if (nonblocking) {
              API_OK(MPIGPU_Ineighbor_alltoall(a, m.bt, cnt, MPIGPU_INT, g, m.bt, cnt, MPIGPU_INT,
                                               ring, &q));
              API_OK(MPIGPU_Wait(&q, MPIGPU_STATUS_IGNORE));
            } else {
              API_OK(MPIGPU_Neighbor_alltoall(a, m.bt, cnt, MPIGPU_INT, g, m.bt, cnt, MPIGPU_INT,
                                              ring));
            }
            m.get(two.data(), g, 2 * bytes);
            for (int i = 0; i < cnt; ++i)
              RANK_CHECK(two[i] == left * 100000 + 7 * (cnt + i) &&
                         two[cnt + i] == right * 100000 + 7 * i);
            m.free(s);
            m.free(g);
            m.free(a);
          }
          API_OK(MPIGPU_Comm_free(&ring));
        });
      },
      300);
  if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}


// A program that synchronises its GPU after a blocking collective (torch.cuda.synchronize(),
// cudaDeviceSynchronize) must not wait for the resident copy kernel's idle time: the collective
// releases it (DeviceCopier::Release). The idle time is set to 1 s, so a kernel left resident
// would hold the synchronisation for about a second; the bound checked is half of that, far
// above what an idle GPU's synchronisation costs. The control: after a point-to-point message
// the kernel does stay resident (or this GPU pair does not use it, and the test says so).
TEST(ApiGpuCollTest, ABlockingCollectiveLeavesNoResidentCopierForTheProgramToWaitFor) {
  setenv("MPIGPU_GPU_COPIER_IDLE_US", "1000000", 1);
  std::string r = RunJob(
      2,
      [](int) {
        if (CudaDeviceCount() < 2) return kRankSkip;  // one GPU: the copier runs only under MPS
        return RunApiRank([](int rank) {
          const int n = 2048;  // 8 KiB a rank: a size the copier carries (MPIGPU_GPU_COPIER_MAX)
          void* send = nullptr;
          void* recv = nullptr;
          CUDA_OK(cudaMalloc(&send, n * sizeof(int)));
          CUDA_OK(cudaMalloc(&recv, 2 * n * sizeof(int)));
          CUDA_OK(cudaMemset(send, rank + 1, n * sizeof(int)));
          CUDA_OK(cudaDeviceSynchronize());
          auto sync_seconds = [] {
            const double t0 = MPIGPU_Wtime();
            CUDA_OK(cudaDeviceSynchronize());
            return MPIGPU_Wtime() - t0;
          };
          // Control: a small device message; the receiver's copier, if it carried it, stays.
          if (rank == 0) API_OK(MPIGPU_Send(send, MPIGPU_BUF_GPU, n, MPIGPU_INT, 1, 5,
                                            MPIGPU_COMM_WORLD));
          else API_OK(MPIGPU_Recv(recv, MPIGPU_BUF_GPU, n, MPIGPU_INT, 0, 5, MPIGPU_COMM_WORLD,
                                  MPIGPU_STATUS_IGNORE));
          int resident = rank == 1 && sync_seconds() > 0.5;
          API_OK(MPIGPU_Bcast(&resident, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, MPIGPU_COMM_WORLD));
          if (!resident) {
            std::fprintf(stderr, "rank %d: the resident copier did not carry the message\n", rank);
            RANK_CHECK(resident);  // a GPU pair that never uses the copier cannot show the fault
          }
          for (int i = 0; i < 3; ++i) {
            API_OK(MPIGPU_Allgather(send, MPIGPU_BUF_GPU, n, MPIGPU_INT, recv, MPIGPU_BUF_GPU, n,
                                    MPIGPU_INT, MPIGPU_COMM_WORLD));
            const double waited = sync_seconds();
            if (waited > 0.5)
              std::fprintf(stderr, "rank %d: cudaDeviceSynchronize after Allgather took %.3f s\n",
                           rank, waited);
            RANK_CHECK(waited <= 0.5);
          }
          std::vector<int> host(2 * n);
          CUDA_OK(cudaMemcpy(host.data(), recv, 2 * n * sizeof(int), cudaMemcpyDeviceToHost));
          for (int i = 0; i < 2 * n; ++i) RANK_CHECK(host[i] == (i < n ? 0x01010101 : 0x02020202));
          CUDA_OK(cudaFree(send));
          CUDA_OK(cudaFree(recv));
        });
      },
      120);
  unsetenv("MPIGPU_GPU_COPIER_IDLE_US");
  if (r == kSkipped) GTEST_SKIP() << "needs two CUDA devices";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

// Persistent collectives on device buffers (MPIGPU_BUF_GPU) between forked ranks sharing one
// GPU: Bcast, Allreduce (staged through the host at each start), Gather and Alltoallv started
// together several times, each run with new device data. Ranks skip without a CUDA device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

#define CUDA_OK(call) RANK_CHECK((call) == cudaSuccess)

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;
constexpr MPIGPU_Buftype kGpu = MPIGPU_BUF_GPU;
constexpr int kElems = 1024;  // per block: past the eager sizes of small messages

int* DeviceInts(size_t n) {
  void* p = nullptr;
  CUDA_OK(cudaMalloc(&p, n * sizeof(int)));
  return static_cast<int*>(p);
}
void Put(int* d, const std::vector<int>& h) {
  CUDA_OK(cudaMemcpy(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_OK(cudaDeviceSynchronize());
}
std::vector<int> Get(const int* d, size_t n) {
  std::vector<int> h(n);
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));
  return h;
}

void DeviceRuns(int rank, int n) {
  const int root = n - 1;
  int* bc = DeviceInts(kElems);
  int* ar_in = DeviceInts(kElems);
  int* ar_out = DeviceInts(kElems);
  int* gat_out = DeviceInts(static_cast<size_t>(kElems) * n);
  int* a2a_in = DeviceInts(static_cast<size_t>(kElems) * n);
  int* a2a_out = DeviceInts(static_cast<size_t>(kElems) * n);
  std::vector<int> counts(n, kElems), displs(n);
  for (int r = 0; r < n; ++r) displs[r] = r * kElems;
  MPIGPU_Request req[4];
  API_OK(MPIGPU_Bcast_init(bc, kGpu, kElems, MPIGPU_INT, root, kWorld, MPIGPU_INFO_NULL, &req[0]));
  API_OK(MPIGPU_Allreduce_init(ar_in, kGpu, ar_out, kGpu, kElems, MPIGPU_INT, MPIGPU_SUM, kWorld,
                               MPIGPU_INFO_NULL, &req[1]));
  API_OK(MPIGPU_Gather_init(ar_in, kGpu, kElems, MPIGPU_INT, gat_out, kGpu, kElems, MPIGPU_INT,
                            root, kWorld, MPIGPU_INFO_NULL, &req[2]));
  API_OK(MPIGPU_Alltoallv_init(a2a_in, kGpu, counts.data(), displs.data(), MPIGPU_INT, a2a_out,
                               kGpu, counts.data(), displs.data(), MPIGPU_INT, kWorld,
                               MPIGPU_INFO_NULL, &req[3]));
  auto val = [](int run, int r, int i) { return run * 100000 + r * 1000 + i; };
  for (int run = 0; run < 3; ++run) {
    std::vector<int> mine(kElems), blocks(static_cast<size_t>(kElems) * n);
    for (int i = 0; i < kElems; ++i) mine[i] = val(run, rank, i);
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < kElems; ++i) blocks[r * kElems + i] = val(run, rank, r * 7 + i);
    Put(bc, rank == root ? mine : std::vector<int>(kElems, -1));
    Put(ar_in, mine);
    Put(a2a_in, blocks);
    API_OK(MPIGPU_Startall(4, req));
    API_OK(MPIGPU_Waitall(4, req, MPIGPU_STATUSES_IGNORE));
    const std::vector<int> b = Get(bc, kElems), s = Get(ar_out, kElems);
    const std::vector<int> g = Get(gat_out, static_cast<size_t>(kElems) * n);
    const std::vector<int> a = Get(a2a_out, static_cast<size_t>(kElems) * n);
    for (int i = 0; i < kElems; ++i) {
      RANK_CHECK(b[i] == val(run, root, i));
      int sum = 0;
      for (int r = 0; r < n; ++r) sum += val(run, r, i);
      RANK_CHECK(s[i] == sum);
      for (int r = 0; r < n; ++r) {
        if (rank == root) RANK_CHECK(g[r * kElems + i] == val(run, r, i));
        RANK_CHECK(a[r * kElems + i] == val(run, r, rank * 7 + i));
      }
    }
  }
  for (auto& q : req) API_OK(MPIGPU_Request_free(&q));
  for (int* p : {bc, ar_in, ar_out, gat_out, a2a_in, a2a_out}) CUDA_OK(cudaFree(p));
}

TEST(ApiGpuPersistentTest, RestartedCollectivesOnDeviceBuffers) {
  for (int n : {1, 2, 4}) {
    std::string r = RunJob(
        n,
        [n](int) {
          if (CudaDeviceCount() == 0) return kRankSkip;
          return RunApiRank([n](int rank) { DeviceRuns(rank, n); });
        },
        300);
    if (r == kSkipped) GTEST_SKIP() << "no CUDA device";
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

}  // namespace
}  // namespace mpigpu::testing

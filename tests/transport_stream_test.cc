// Device sends and receives are ordered after the program's work on the legacy default stream
// (memcopy/stream_order.h): a buffer filled by `cudaMemcpy` from pageable memory, or by
// a kernel still running on the default stream, is sent with the new bytes; a received buffer is
// read right away by a default-stream kernel. No synchronisation in the program between the fill
// and the send, or between the receive and the check.
// Every size class (fastbox, cell, copier, IPC single copy, ring), every byte checked. The
// same source runs with the engine's defaults, with the ring forced, and with the CUDA IPC copy
// at every size also between ranks sharing a GPU (BUILD).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "transport/transport_config.h"
#include "memcopy/memcopy.h"
#include "memcopy/pattern.h"
#include "tests/gpu_util.h"
#include "tests/engine_util.h"
#include "tests/multiproc.h"
#include "transport/engine.h"

namespace mpigpu::transport {
namespace {

using mpigpu::testing::FillPattern;
using mpigpu::testing::RunJob;

std::unique_ptr<Engine> Join() { return mpigpu::testing::JoinJob(); }

void WaitOk(Engine* e, Request* r) {
  Status st = e->Wait(r, 60);
  if (!st.ok() || !r->status().ok())
    std::fprintf(stderr, "wait: %s / %s\n", st.ToString().c_str(), r->status().ToString().c_str());
  RANK_CHECK(st.ok() && r->status().ok());
  e->Release(r);
}

// Sizes on each side of every threshold that picks a path for a device message.
std::vector<size_t> Sizes() {
  const TransportConfig& c = GetTransportConfig();
  const size_t eager = std::min(c.eager_limit, c.cell_size);
  return {1,
          c.fastbox_size,
          c.fastbox_size + 1,
          c.gpu_copier_max,
          c.gpu_copier_max + 1,
          eager,
          eager + 1,
          size_t{1} << 20,
          c.shared_gpu_ipc_min + 1,
          size_t{16} << 20};
}

enum class Fill { kPageableMemcpy, kDefaultStreamKernel };

// Two ranks, one per GPU (or both on GPU 0): rank 0 fills and sends at once, rank 1 receives,
// then counts wrong bytes on the default stream at once.
std::string RunOrderingJob(Fill fill) {
  return RunJob(2, [fill](int rank) {
    const int gpus = CudaDeviceCount();
    if (gpus < 1) return mpigpu::testing::kRankSkip;
    const int dev = rank % gpus;
    RANK_CHECK(cudaSetDevice(dev) == cudaSuccess);
    auto e = Join();
    uint32_t seed = 900;
    int bad_messages = 0;
    for (size_t n : Sizes()) {
      for (int rep = 0; rep < 3; ++rep) {
        ++seed;
        void* dbuf = nullptr;
        RANK_CHECK(cudaMalloc(&dbuf, n) == cudaSuccess);
        const UserBuffer buf{dbuf, MemLoc::Device(dev), Layout::Contiguous(n)};
        Request* req = nullptr;
        if (rank == 0) {
          RANK_CHECK(cudaMemset(dbuf, 0, n) == cudaSuccess);
          RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
          std::vector<unsigned char> host;  // pageable on purpose
          if (fill == Fill::kPageableMemcpy) {
            host.resize(n);
            FillPattern(host.data(), n, seed);
            RANK_CHECK(cudaMemcpy(dbuf, host.data(), n, cudaMemcpyHostToDevice) == cudaSuccess);
          } else {
            RANK_CHECK(mpigpu::testing::FillPatternLaterOnDefaultStream(dbuf, n, seed, 2000) ==
                       cudaSuccess);
          }
          RANK_CHECK(e->Isend(buf, 1, 0, 0, &req).ok());  // no synchronisation before it
          WaitOk(e.get(), req);
        } else {
          RANK_CHECK(cudaMemset(dbuf, 0, n) == cudaSuccess);
          RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
          RANK_CHECK(e->Irecv(buf, 0, 0, 0, &req).ok());
          WaitOk(e.get(), req);
          unsigned long long wrong = 0;
          RANK_CHECK(mpigpu::testing::CountMismatchesOnDevice(dbuf, n, seed, &wrong) ==
                     cudaSuccess);
          if (wrong != 0) {
            std::fprintf(stderr, "%zu bytes, rep %d: %llu wrong bytes\n", n, rep, wrong);
            ++bad_messages;
          }
        }
        RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
        RANK_CHECK(cudaFree(dbuf) == cudaSuccess);
      }
    }
    RANK_CHECK(bad_messages == 0);
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, 300);
}

TEST(TransportStreamTest, SendsAfterAPageableCudaMemcpyCarryTheNewBytes) {
  std::string r = RunOrderingJob(Fill::kPageableMemcpy);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

TEST(TransportStreamTest, SendsAfterADefaultStreamKernelCarryItsBytes) {
  std::string r = RunOrderingJob(Fill::kDefaultStreamKernel);
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::transport

// Device sends and receives are ordered after the program's work on the legacy default stream
// (memcopy/stream_order.h): a buffer filled by `cudaMemcpy` from pageable memory, or by
// a kernel still running on the default stream, is sent with the new bytes; a received buffer is
// read right away by a default-stream kernel. No synchronisation in the program between the fill
// and the send, or between the receive and the check.
// Every size class (fastbox, cell, copier, IPC single copy, ring), every byte checked. The
// same source runs with the engine's defaults, with the ring forced, and with the CUDA IPC copy
// at every size also between ranks sharing a GPU (BUILD). A device send offered for the IPC
// copy waits for its stream after its RTS went out, and the receiver's copy waits for that
// (a fence: transport/lmt/ipc_lmt.h); the last test kills a sender inside that window.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
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
    if (rank == 1) {
      const TransportStats st = e->stats();
      std::fprintf(stderr, "rank 1: %llu pulls with a fence, %llu of them waited for it\n",
                   static_cast<unsigned long long>(st.pulls_fenced),
                   static_cast<unsigned long long>(st.pulls_fence_waited));
    }
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

// A host message of one byte (the test's own signalling between ranks).
void SendByte(Engine* e, int dst, int tag, char v) {
  Request* r = nullptr;
  RANK_CHECK(e->Isend({&v, MemLoc::Host(), Layout::Contiguous(1)}, dst, tag, 0, &r).ok());
  WaitOk(e, r);
}
char RecvByte(Engine* e, int src, int tag) {
  char v = 0;
  Request* r = nullptr;
  RANK_CHECK(e->Irecv({&v, MemLoc::Host(), Layout::Contiguous(1)}, src, tag, 0, &r).ok());
  WaitOk(e, r);
  return v;
}

// Rank 0's fenced device send never releases its receiver's copy ("ipc-fence-never": as if it
// died between its RTS and the end of its stream wait), and rank 0 dies. Rank 1's receive must
// fail within seconds, and its copies from rank 2 must still run (its resident kernel, if it
// waited on rank 0's fence word, moves on). Skipped where the pair 0 -> 1 has no fenced path
// (two ranks sharing a GPU without MPS, small sends: no IPC offer; the IPC variant has one).
TEST(TransportStreamTest, ASenderDeadBeforeReleasingItsFenceFailsOnlyItsReceive) {
  constexpr int kData = 7, kSignal = 8, kGo = 9;
  std::string r = RunJob(3, [](int rank) {
    const int gpus = CudaDeviceCount();
    if (gpus < 1) return mpigpu::testing::kRankSkip;
    const int dev = rank % gpus;
    RANK_CHECK(cudaSetDevice(dev) == cudaSuccess);
    auto e = Join();
    constexpr size_t n = 8;
    void* dbuf = nullptr;
    RANK_CHECK(cudaMalloc(&dbuf, 64) == cudaSuccess);
    RANK_CHECK(cudaMemset(dbuf, 0, 64) == cudaSuccess);
    RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
    const UserBuffer buf{dbuf, MemLoc::Device(dev), Layout::Contiguous(n)};
    Request* req = nullptr;
    if (rank == 0) {
      RANK_CHECK(e->InjectFault("ipc-fence-never"));
      RANK_CHECK(e->Isend(buf, 1, kData, 0, &req).ok());
      if (RecvByte(e.get(), 1, kSignal) == 'f') _exit(0);  // rank 1 holds our fenced RTS: die
      WaitOk(e.get(), req);  // no fence on this pair: an ordinary send
      RANK_CHECK(e->Finalize().ok());
      return mpigpu::testing::kRankSkip;
    }
    if (rank == 2) {
      const char what = RecvByte(e.get(), 1, kGo);
      if (what == 'f') {
        const uint32_t seed = 4242;
        RANK_CHECK(mpigpu::testing::FillPatternLaterOnDefaultStream(dbuf, n, seed, 0) ==
                   cudaSuccess);
        RANK_CHECK(e->Isend(buf, 1, kData, 0, &req).ok());
        WaitOk(e.get(), req);
      }
      (void)e->Finalize();  // reports rank 0's death in the fenced case
      return what == 'f' ? 0 : mpigpu::testing::kRankSkip;
    }
    RANK_CHECK(e->Irecv(buf, 0, kData, 0, &req).ok());
    // The RTS from rank 0 arrives and is matched: the pull counts as fenced, or the message
    // arrives whole (no fence on this pair).
    const auto start = std::chrono::steady_clock::now();
    while (e->stats().pulls_fenced == 0 && !req->done() &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
      RANK_CHECK(e->Progress().ok());
    const bool fenced = e->stats().pulls_fenced > 0;
    RANK_CHECK(fenced || req->done());
    SendByte(e.get(), 0, kSignal, fenced ? 'f' : 'p');
    if (!fenced) {
      WaitOk(e.get(), req);
      SendByte(e.get(), 2, kGo, 'p');
      RANK_CHECK(e->Finalize().ok());
      return mpigpu::testing::kRankSkip;
    }
    const auto t0 = std::chrono::steady_clock::now();
    while (!req->done() && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30))
      (void)e->Progress();  // may report the death itself; the request must end with it
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "rank 1: the fenced receive from the dead rank ended after %.2f s: %s\n",
                 waited, req->status().ToString().c_str());
    RANK_CHECK(req->done() && req->status().code() == Err::kPeerFailed);
    RANK_CHECK(waited < 10);
    e->Release(req);
    // Rank 2's device message still arrives, bytes checked.
    SendByte(e.get(), 2, kGo, 'f');
    RANK_CHECK(cudaMemset(dbuf, 0, 64) == cudaSuccess);
    RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
    RANK_CHECK(e->Irecv(buf, 2, kData, 0, &req).ok());
    WaitOk(e.get(), req);
    unsigned long long wrong = 0;
    RANK_CHECK(mpigpu::testing::CountMismatchesOnDevice(dbuf, n, 4242, &wrong) == cudaSuccess);
    RANK_CHECK(wrong == 0);
    (void)e->Finalize();
    return 0;
  }, 120, /*allowed_to_die=*/{0});
  if (r == mpigpu::testing::kSkipped) GTEST_SKIP() << "no GPU, or no fenced path for 0 -> 1 here";
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::transport

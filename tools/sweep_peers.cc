// The peer series, what mpigpu is compared with on pairs with a device side: NCCL (D->D, loaded
// at run time through perf/nccl.h) and the paper's manual staging through pinned host memory.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "memcopy/memcopy.h"
#include "perf/api_check.h"
#include "perf/nccl.h"
#include "tools/sweep_series.h"

namespace mpigpu {
namespace sweep {
namespace {

using perf::kNcclInt8;
using perf::Nccl;
using perf::NcclComm;
using perf::NcclUniqueId;

// Both ranks learn whether both `ok`; *both is the agreement.
Status BothOk(const Ctx& c, bool ok, bool* both) {
  int mine = ok ? 1 : 0, theirs = 0;
  PERF_API(MPIGPU_Sendrecv(&mine, MPIGPU_BUF_HOST, 1, MPIGPU_INT, c.peer, kTagSetup, &theirs,
                           MPIGPU_BUF_HOST, 1, MPIGPU_INT, c.peer, kTagSetup, MPIGPU_COMM_WORLD,
                           MPIGPU_STATUS_IGNORE));
  *both = mine && theirs;
  return Status::Ok();
}

// NCCL: set up once (on the first D->D pair), then used for every test there.
class NcclSeries : public SeriesRunner {
 public:
  ~NcclSeries() override {
    if (comm_ != nullptr) static_cast<void>(nccl_->CommDestroy(comm_));
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
  }

  Status StartPair(Ctx& c) override {
    if (tried_) return Status::Ok();
    tried_ = true;
    const RankSetup& s = *c.setup;
    bool ok = true;
    // On one node the ranks need a GPU each; on two hosts, one GPU per host.
    if (s.same_node ? s.device_count < 2 || s.device == s.peer_device : s.device_count < 1) {
      why_ = "NCCL needs a GPU per rank (" + std::to_string(s.device_count) + " visible)";
      ok = false;
    } else {
      Status st = Nccl::Load(&nccl_);
      if (!st.ok()) {
        why_ = st.message();
        ok = false;
      }
    }
    bool both = false;
    MPIGPU_RETURN_IF_ERROR(BothOk(c, ok, &both));
    if (!both) {
      if (ok) why_ = "rank " + std::to_string(c.peer) + " cannot use NCCL";
      return Status::Ok();
    }
    NcclUniqueId id{};
    if (c.rank == 0) MPIGPU_RETURN_IF_ERROR(nccl_->GetUniqueId(&id));
    PERF_API(MPIGPU_Bcast(&id, MPIGPU_BUF_HOST, static_cast<int>(sizeof id), MPIGPU_BYTE, 0,
                          MPIGPU_COMM_WORLD));
    MPIGPU_RETURN_IF_ERROR(nccl_->CommInitRank(&comm_, 2, id, c.rank));
    MPIGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return Status::Ok();
  }

  Status StartTest(Ctx& c, Series* s) override {
    s->note = comm_ == nullptr
                  ? "n/a: " + why_
                  : "ncclSend/ncclRecv (libnccl.so.2, NCCL_NVLS_ENABLE=0 unless set)";
    return Status::Ok();
  }

  Status MeasureSize(Ctx& c, size_t, size_t size, double* value, int* iters) override {
    if (comm_ == nullptr || size == 0) return Status::Ok();  // n/a (size 0: nothing to move)
    const int window = c.o->window;
    double elapsed = 0;
    MPIGPU_RETURN_IF_ERROR(TimedRuns(
        c, size, /*collective=*/true,
        [&]() -> Status {
          MPIGPU_RETURN_IF_ERROR(Run(c, size, window));
          MPIGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
          return Status::Ok();
        },
        &elapsed, iters));
    *value = TestValue(c.test, size, window, *iters, elapsed);
    return Status::Ok();
  }

 private:
  // One run of the test's loop, enqueued on stream_.
  Status Run(const Ctx& c, size_t size, int window) {
    const Nccl& n = *nccl_;
    void* s = c.sbuf.ptr();
    void* r = c.rbuf.ptr();
    switch (c.test) {
      case Test::kLatency:
        if (c.rank == 0) {
          MPIGPU_RETURN_IF_ERROR(n.Send(s, size, kNcclInt8, 1, comm_, stream_));
          MPIGPU_RETURN_IF_ERROR(n.Recv(r, size, kNcclInt8, 1, comm_, stream_));
        } else {
          MPIGPU_RETURN_IF_ERROR(n.Recv(r, size, kNcclInt8, 0, comm_, stream_));
          MPIGPU_RETURN_IF_ERROR(n.Send(s, size, kNcclInt8, 0, comm_, stream_));
        }
        break;
      case Test::kBw:
        MPIGPU_RETURN_IF_ERROR(n.GroupStart());
        for (int w = 0; w < window; ++w) {
          if (c.rank == 0) MPIGPU_RETURN_IF_ERROR(n.Send(s, size, kNcclInt8, 1, comm_, stream_));
          else MPIGPU_RETURN_IF_ERROR(n.Recv(r, size, kNcclInt8, 0, comm_, stream_));
        }
        MPIGPU_RETURN_IF_ERROR(n.GroupEnd());
        // The 1-byte ack back, as in the mpigpu loop.
        if (c.rank == 0) MPIGPU_RETURN_IF_ERROR(n.Recv(r, 1, kNcclInt8, 1, comm_, stream_));
        else MPIGPU_RETURN_IF_ERROR(n.Send(s, 1, kNcclInt8, 0, comm_, stream_));
        break;
      case Test::kBibw:
        MPIGPU_RETURN_IF_ERROR(n.GroupStart());
        for (int w = 0; w < window; ++w) {
          MPIGPU_RETURN_IF_ERROR(n.Send(s, size, kNcclInt8, c.peer, comm_, stream_));
          MPIGPU_RETURN_IF_ERROR(n.Recv(r, size, kNcclInt8, c.peer, comm_, stream_));
        }
        MPIGPU_RETURN_IF_ERROR(n.GroupEnd());
        break;
    }
    return Status::Ok();
  }

  std::unique_ptr<Nccl> nccl_;
  NcclComm comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool tried_ = false;
  std::string why_;  // why NCCL cannot run (comm_ null after the set-up)
};

// The paper's manual staging: D2H into pinned host memory, host send/recv, H2D.
class StagedSeries : public SeriesRunner {
 public:
  Status StartPair(Ctx& c) override {
    if (c.my_loc != Loc::kDevice) return Status::Ok();
    host_ = std::make_unique<HostSide>();
    MPIGPU_CUDA_CHECK(host_->send.Alloc(c.o->max_size));
    MPIGPU_CUDA_CHECK(host_->recv.Alloc(c.o->max_size));
    return Status::Ok();
  }

  Status StartTest(Ctx& c, Series* s) override {
    s->note = "manual staging: cudaMemcpy D2H to pinned host, MPIGPU_Send/Recv, cudaMemcpy H2D";
    return Status::Ok();
  }

  Status MeasureSize(Ctx& c, size_t, size_t size, double* value, int* iters) override {
    const int window = c.o->window;
    const int n = Count(size);
    double elapsed = 0;
    MPIGPU_RETURN_IF_ERROR(TimedRuns(
        c, size, /*collective=*/true, [&]() { return Run(c, n, size, window); }, &elapsed, iters));
    *value = TestValue(c.test, size, window, *iters, elapsed);
    return Status::Ok();
  }

  void EndPair() override { host_.reset(); }

 private:
  struct HostSide {
    PinnedBuffer send, recv;
  };

  // One run of the test's loop.
  Status Run(const Ctx& c, int n, size_t size, int window) {
    char ack = 0;
    switch (c.test) {
      case Test::kLatency:
        if (c.rank == 0) {
          MPIGPU_RETURN_IF_ERROR(Send(c, n, size));
          MPIGPU_RETURN_IF_ERROR(Recv(c, n, size));
        } else {
          MPIGPU_RETURN_IF_ERROR(Recv(c, n, size));
          MPIGPU_RETURN_IF_ERROR(Send(c, n, size));
        }
        break;
      case Test::kBw:
        for (int w = 0; w < window; ++w) {
          if (c.rank == 0) MPIGPU_RETURN_IF_ERROR(Send(c, n, size));
          else MPIGPU_RETURN_IF_ERROR(Recv(c, n, size));
        }
        if (c.rank == 0)
          PERF_API(MPIGPU_Recv(&ack, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 1, kTagAck,
                               MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
        else
          PERF_API(MPIGPU_Send(&ack, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, kTagAck,
                               MPIGPU_COMM_WORLD));
        break;
      case Test::kBibw:
        for (int w = 0; w < window; ++w) {
          const void* out = nullptr;
          MPIGPU_RETURN_IF_ERROR(StageOut(c, size, &out));
          PERF_API(MPIGPU_Sendrecv(out, MPIGPU_BUF_HOST, n, MPIGPU_BYTE, c.peer, kTagData,
                                   InBuffer(c), MPIGPU_BUF_HOST, n, MPIGPU_BYTE, c.peer, kTagData,
                                   MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
          MPIGPU_RETURN_IF_ERROR(StageIn(c, size));
        }
        break;
    }
    return Status::Ok();
  }

  // The host buffer that goes out: the pinned copy of a device buffer, or the host buffer.
  Status StageOut(const Ctx& c, size_t size, const void** out) {
    if (c.my_loc == Loc::kHost) {
      *out = c.sbuf.ptr();
      return Status::Ok();
    }
    if (size > 0)
      MPIGPU_CUDA_CHECK(
          cudaMemcpy(host_->send.ptr(), c.sbuf.ptr(), size, cudaMemcpyDeviceToHost));
    *out = host_->send.ptr();
    return Status::Ok();
  }
  void* InBuffer(const Ctx& c) { return c.my_loc == Loc::kHost ? c.rbuf.ptr() : host_->recv.ptr(); }
  Status StageIn(const Ctx& c, size_t size) {
    if (c.my_loc == Loc::kDevice && size > 0)
      MPIGPU_CUDA_CHECK(
          cudaMemcpy(c.rbuf.ptr(), host_->recv.ptr(), size, cudaMemcpyHostToDevice));
    return Status::Ok();
  }
  Status Send(const Ctx& c, int n, size_t size) {
    const void* out = nullptr;
    MPIGPU_RETURN_IF_ERROR(StageOut(c, size, &out));
    PERF_API(MPIGPU_Send(out, MPIGPU_BUF_HOST, n, MPIGPU_BYTE, c.peer, kTagData,
                         MPIGPU_COMM_WORLD));
    return Status::Ok();
  }
  Status Recv(const Ctx& c, int n, size_t size) {
    PERF_API(MPIGPU_Recv(InBuffer(c), MPIGPU_BUF_HOST, n, MPIGPU_BYTE, c.peer, kTagData,
                         MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
    return StageIn(c, size);
  }

  std::unique_ptr<HostSide> host_;  // device-side ranks only
};

}  // namespace

std::unique_ptr<SeriesRunner> MakeNcclSeries() { return std::make_unique<NcclSeries>(); }
std::unique_ptr<SeriesRunner> MakeStagedSeries() { return std::make_unique<StagedSeries>(); }

}  // namespace sweep
}  // namespace mpigpu

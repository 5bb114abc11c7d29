// The mpigpu series: OSU's loops through the public API (mpigpu.h).
#include <string>
#include <vector>

#include "perf/api_check.h"
#include "tools/sweep_check.h"
#include "tools/sweep_series.h"

namespace mpigpu {
namespace sweep {
namespace {

class MpigpuSeries : public SeriesRunner {
 public:
  Status StartTest(Ctx& c, Series* s) override {
    s->note = "MPIGPU_LMT=" + c.setup->lmt;
    return Status::Ok();
  }

  // One size; *value is rank 0's.
  Status MeasureSize(Ctx& c, size_t size_index, size_t size, double* value, int* iters) override {
    const int window = c.o->window;
    const int n = Count(size);
    if (c.o->check) MPIGPU_RETURN_IF_ERROR(PrepareCheck(c, size_index, size));
    reqs_.assign(static_cast<size_t>(2 * window), MPIGPU_REQUEST_NULL);
    double elapsed = 0;
    MPIGPU_RETURN_IF_ERROR(TimedRuns(
        c, size, /*collective=*/true,
        [&]() -> Status {
          switch (c.test) {
            case Test::kLatency: return PingPong(c, n);
            case Test::kBw: return Window(c, n, window);
            case Test::kBibw: return BothWays(c, n, window);
          }
          return Status::Ok();
        },
        &elapsed, iters));
    if (c.o->check) MPIGPU_RETURN_IF_ERROR(CheckSize(c, size_index, size));
    *value = TestValue(c.test, size, window, *iters, elapsed);
    return Status::Ok();
  }

 private:
  // latency: rank 0 sends and receives, rank 1 receives and sends.
  static Status PingPong(const Ctx& c, int n) {
    if (c.rank == 0) {
      PERF_API(MPIGPU_Send(c.sbuf.ptr(), c.sbuf.tag(), n, MPIGPU_BYTE, 1, kTagData,
                           MPIGPU_COMM_WORLD));
      PERF_API(MPIGPU_Recv(c.rbuf.ptr(), c.rbuf.tag(), n, MPIGPU_BYTE, 1, kTagData,
                           MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
    } else {
      PERF_API(MPIGPU_Recv(c.rbuf.ptr(), c.rbuf.tag(), n, MPIGPU_BYTE, 0, kTagData,
                           MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
      PERF_API(MPIGPU_Send(c.sbuf.ptr(), c.sbuf.tag(), n, MPIGPU_BYTE, 0, kTagData,
                           MPIGPU_COMM_WORLD));
    }
    return Status::Ok();
  }

  // bw: a window of messages rank 0 -> rank 1, then a 1-byte ack back.
  Status Window(const Ctx& c, int n, int window) {
    char ack = 0;
    if (c.rank == 0) {
      for (int w = 0; w < window; ++w)
        PERF_API(MPIGPU_Isend(c.sbuf.ptr(), c.sbuf.tag(), n, MPIGPU_BYTE, 1, kTagData,
                              MPIGPU_COMM_WORLD, &reqs_[static_cast<size_t>(w)]));
      PERF_API(MPIGPU_Waitall(window, reqs_.data(), MPIGPU_STATUSES_IGNORE));
      PERF_API(MPIGPU_Recv(&ack, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 1, kTagAck, MPIGPU_COMM_WORLD,
                           MPIGPU_STATUS_IGNORE));
    } else {
      for (int w = 0; w < window; ++w)
        PERF_API(MPIGPU_Irecv(c.rbuf.ptr(), c.rbuf.tag(), n, MPIGPU_BYTE, 0, kTagData,
                              MPIGPU_COMM_WORLD, &reqs_[static_cast<size_t>(w)]));
      PERF_API(MPIGPU_Waitall(window, reqs_.data(), MPIGPU_STATUSES_IGNORE));
      PERF_API(MPIGPU_Send(&ack, MPIGPU_BUF_HOST, 1, MPIGPU_BYTE, 0, kTagAck, MPIGPU_COMM_WORLD));
    }
    return Status::Ok();
  }

  // bibw: windows both ways at once.
  Status BothWays(const Ctx& c, int n, int window) {
    for (int w = 0; w < window; ++w)
      PERF_API(MPIGPU_Irecv(c.rbuf.ptr(), c.rbuf.tag(), n, MPIGPU_BYTE, c.peer, kTagData,
                            MPIGPU_COMM_WORLD, &reqs_[static_cast<size_t>(w)]));
    for (int w = 0; w < window; ++w)
      PERF_API(MPIGPU_Isend(c.sbuf.ptr(), c.sbuf.tag(), n, MPIGPU_BYTE, c.peer, kTagData,
                            MPIGPU_COMM_WORLD, &reqs_[static_cast<size_t>(window + w)]));
    PERF_API(MPIGPU_Waitall(2 * window, reqs_.data(), MPIGPU_STATUSES_IGNORE));
    return Status::Ok();
  }

  std::vector<MPIGPU_Request> reqs_;  // 2 * window
};

}  // namespace

std::unique_ptr<SeriesRunner> MakeMpigpuSeries() { return std::make_unique<MpigpuSeries>(); }

}  // namespace sweep
}  // namespace mpigpu

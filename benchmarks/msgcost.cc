// The CPU work of one small host message, for instruction counts under callgrind:
//   msgcost engine|api|api-blocking ITERS [BYTES]
// Alone (no launcher): ITERS messages to itself (send, then receive), deterministic: `api` is
// Isend + Recv + Wait; `api-blocking` is Send (eager, so it completes without a receive) + Recv,
// the calls of `mpigpu-sweep latency`.
// Under `mpigpurun -n 2`: ITERS round trips (rank 0 sends first; both api modes use Send/Recv),
// as benchmarks/pingpong and `mpigpu-sweep latency` do; start one rank under valgrind to count
// its instructions.
// Count with two values of ITERS and divide the difference: start-up and finalize cancel out.
//   valgrind --tool=callgrind bazel-bin/benchmarks/msgcost engine 1000
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "transport/engine.h"
#include "wiring/job_source.h"
#include "wiring/start.h"

using namespace mpigpu;
using namespace mpigpu::transport;

namespace {

void Check(const Status& st, const char* what) {
  if (!st.ok()) {
    std::fprintf(stderr, "msgcost: %s: %s\n", what, st.ToString().c_str());
    std::exit(1);
  }
}

void CheckApi(int rc, const char* what) {
  if (rc != MPIGPU_SUCCESS) {
    std::fprintf(stderr, "msgcost: %s failed (%d)\n", what, rc);
    std::exit(1);
  }
}

void Finish(Engine& e, Request* r) {
  Check(e.Wait(r), "wait");
  Check(r->status(), "request");
  e.Release(r);
}

int RunEngine(int iters, size_t bytes) {
  JobInfo job;
  Check(wiring::JobFromLauncher(&job), "environment");  // mpigpurun, a PMIx launcher or none
  std::unique_ptr<Engine> e;
  Check(wiring::StartEngine(job, &e), "join");
  std::vector<char> sbuf(bytes, 1), rbuf(bytes, 0);
  UserBuffer s{sbuf.data(), MemLoc::Host(), Layout::Contiguous(bytes)};
  UserBuffer r{rbuf.data(), MemLoc::Host(), Layout::Contiguous(bytes)};
  const int peer = job.size == 1 ? 0 : 1 - job.rank;
  for (int i = 0; i < iters; ++i) {
    Request *sr = nullptr, *rr = nullptr;
    if (job.rank == 0) {
      Check(e->Isend(s, peer, 1, 0, &sr), "send");
      Check(e->Irecv(r, peer, 1, 0, &rr), "recv");
      Finish(*e, rr);
      Finish(*e, sr);
    } else {
      Check(e->Irecv(r, peer, 1, 0, &rr), "recv");
      Finish(*e, rr);
      Check(e->Isend(s, peer, 1, 0, &sr), "send");
      Finish(*e, sr);
    }
  }
  Check(e->Finalize(), "finalize");
  return 0;
}

int RunApi(int iters, size_t bytes, bool blocking) {
  CheckApi(MPIGPU_Init(nullptr, nullptr), "init");
  int rank = 0, size = 1;
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &size);
  std::vector<char> sbuf(bytes, 1), rbuf(bytes, 0);
  const int n = static_cast<int>(bytes);
  const int peer = size == 1 ? 0 : 1 - rank;
  auto send = [&] {
    CheckApi(MPIGPU_Send(sbuf.data(), MPIGPU_BUF_HOST, n, MPIGPU_BYTE, peer, 1, MPIGPU_COMM_WORLD),
             "send");
  };
  auto recv = [&] {
    CheckApi(MPIGPU_Recv(rbuf.data(), MPIGPU_BUF_HOST, n, MPIGPU_BYTE, peer, 1, MPIGPU_COMM_WORLD,
                         MPIGPU_STATUS_IGNORE),
             "recv");
  };
  for (int i = 0; i < iters; ++i) {
    if (size == 1 && !blocking) {  // to itself: the send cannot block on a receive posted after it
      MPIGPU_Request req;
      CheckApi(MPIGPU_Isend(sbuf.data(), MPIGPU_BUF_HOST, n, MPIGPU_BYTE, peer, 1,
                            MPIGPU_COMM_WORLD, &req), "isend");
      recv();
      CheckApi(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE), "wait");
    } else if (rank == 0) {  // as mpigpu-sweep latency (to itself: an eager send ends at once)
      send();
      recv();
    } else {
      recv();
      send();
    }
  }
  CheckApi(MPIGPU_Finalize(), "finalize");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc >= 3 ? argv[1] : "";
  if (mode != "engine" && mode != "api" && mode != "api-blocking") {
    std::fprintf(stderr, "usage: msgcost engine|api|api-blocking ITERS [BYTES]\n");
    return 2;
  }
  const int iters = std::atoi(argv[2]);
  const size_t bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 1;
  if (mode == "engine") return RunEngine(iters, bytes);
  return RunApi(iters, bytes, mode == "api-blocking");
}

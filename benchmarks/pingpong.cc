// Two-rank ping-pong latency and windowed bandwidth over the transport engine, OSU style:
// latency = half the round trip; bandwidth = a window of messages, then a 1-byte ack.
//   mpigpurun -n 2 bazel-bin/benchmarks/pingpong [H|P|D H|P|D] [max_bytes]
// H = pageable host memory (malloc), P = pinned host memory (cudaMallocHost), D = GPU memory.
// Output: one line per size, "bytes  latency_us  bandwidth_GBps", checked (first and last bytes).
//   ... pingpong D D 8192 exchange: instead, both ranks Irecv + Isend + wait for both (a halo
//   exchange), contiguous and as a column (rows of 8 bytes, 4104 apart); "bytes  contig_us
//   column_us" per exchange.
// peers/mpi_pingpong.c measures Open MPI the same way.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "transport/engine.h"
#include "wiring/job_source.h"
#include "wiring/start.h"

using namespace mpigpu;
using namespace mpigpu::transport;

namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Check(const Status& st, const char* what) {
  if (!st.ok()) {
    std::fprintf(stderr, "pingpong: %s: %s\n", what, st.ToString().c_str());
    std::exit(1);
  }
}

void WaitAll(Engine& e, std::vector<Request*>& reqs) {
  for (Request* r : reqs) {
    Check(e.Wait(r), "wait");
    Check(r->status(), "request");
    e.Release(r);
  }
  reqs.clear();
}

}  // namespace

int main(int argc, char** argv) {
  JobInfo job;
  Check(wiring::JobFromLauncher(&job), "environment");  // mpigpurun, a PMIx launcher or none
  if (job.size != 2) {
    std::fprintf(stderr, "pingpong: run with mpigpurun -n 2\n");
    return 2;
  }
  const char kind[2] = {argc > 1 ? argv[1][0] : 'H', argc > 2 ? argv[2][0] : 'H'};
  for (char k : kind)
    if (k != 'H' && k != 'P' && k != 'D') {
      std::fprintf(stderr, "pingpong: buffer kinds are H, P or D\n");
      return 2;
    }
  const bool dev[2] = {kind[0] == 'D', kind[1] == 'D'};
  const bool pinned = kind[job.rank] == 'P';
  const size_t max_bytes = argc > 3 ? std::strtoull(argv[3], nullptr, 10) : size_t{64} << 20;
  const bool mine_dev = dev[job.rank];
  int device = 0;
  if (dev[0] || dev[1] || kind[0] == 'P' || kind[1] == 'P') {
    int n = CudaDeviceCount();
    if (n == 0) {
      std::fprintf(stderr, "pingpong: D or P requested but no CUDA device\n");
      return 2;
    }
    device = job.rank % n;
    cudaSetDevice(device);
  }
  std::unique_ptr<Engine> e;
  Check(wiring::StartEngine(job, &e), "join");
  void* buf = nullptr;
  if (mine_dev) {
    if (cudaMalloc(&buf, max_bytes) != cudaSuccess) return 1;
    cudaMemset(buf, 1, max_bytes);
  } else if (pinned) {
    if (cudaMallocHost(&buf, max_bytes) != cudaSuccess) return 1;
    std::memset(buf, 1, max_bytes);
  } else {
    buf = std::malloc(max_bytes);
    std::memset(buf, 1, max_bytes);
  }
  MemLoc loc = mine_dev ? MemLoc::Device(device) : MemLoc::Host();
  const int peer = 1 - job.rank;
  char ack = 0;
  if (argc > 4 && std::strcmp(argv[4], "exchange") == 0) {
    if (job.rank == 0)
      std::printf("# mpigpu exchange %c<->%c  (bytes, contiguous us, column us)\n", kind[0], kind[1]);
    constexpr size_t kPitch = 4104;
    // Two halves of the buffer: one sent, one received into; each holds the column's extent.
    const size_t half = max_bytes / 2;
    for (size_t n = 8; n / 8 * kPitch <= half; n *= 4) {
      double us[2];
      for (int shape = 0; shape < 2; ++shape) {
        Layout l = shape == 0 ? Layout::Contiguous(n) : Layout::Vector(n / 8, 8, kPitch);
        UserBuffer out{buf, loc, l}, in{static_cast<char*>(buf) + half, loc, l};
        const int iters = 2000, warm = 200;
        std::vector<Request*> reqs;
        double t0 = 0;
        for (int i = 0; i < iters + warm; ++i) {
          if (i == warm) t0 = Seconds();
          Request* r;
          Check(e->Irecv(in, peer, 4, 0, &r), "recv");
          reqs.push_back(r);
          Check(e->Isend(out, peer, 4, 0, &r), "send");
          reqs.push_back(r);
          WaitAll(*e, reqs);
        }
        us[shape] = (Seconds() - t0) / iters * 1e6;
      }
      if (job.rank == 0) std::printf("%12zu %12.2f %12.2f\n", n, us[0], us[1]);
    }
    Check(e->Finalize(), "finalize");
    return 0;
  }
  if (job.rank == 0)
    std::printf("# mpigpu pingpong %c->%c  (bytes, latency us, bandwidth GB/s)\n", kind[0], kind[1]);
  for (size_t n = 1; n <= max_bytes; n *= 4) {
    UserBuffer ub{buf, loc, Layout::Contiguous(n)};
    const int iters = n <= 65536 ? 2000 : n <= (1 << 22) ? 200 : 20;
    const int warm = iters / 10 + 2;
    std::vector<Request*> reqs;
    double t0 = 0;
    for (int i = 0; i < iters + warm; ++i) {
      if (i == warm) t0 = Seconds();
      Request* r;
      if (job.rank == 0) {
        Check(e->Isend(ub, peer, 1, 0, &r), "send");
        reqs.push_back(r);
        Check(e->Irecv(ub, peer, 1, 0, &r), "recv");
        reqs.push_back(r);
      } else {
        Check(e->Irecv(ub, peer, 1, 0, &r), "recv");
        reqs.push_back(r);
        WaitAll(*e, reqs);
        Check(e->Isend(ub, peer, 1, 0, &r), "send");
        reqs.push_back(r);
      }
      WaitAll(*e, reqs);
    }
    const double lat_us = (Seconds() - t0) / iters / 2 * 1e6;
    // Bandwidth: a window of 64 messages, then an ack.
    const int window = 64, bw_iters = n <= (1 << 20) ? 20 : 4;
    UserBuffer ackb{&ack, MemLoc::Host(), Layout::Contiguous(1)};
    for (int i = 0; i < bw_iters + 2; ++i) {
      if (i == 2) t0 = Seconds();
      Request* r;
      for (int w = 0; w < window; ++w) {
        Check(job.rank == 0 ? e->Isend(ub, peer, 2, 0, &r) : e->Irecv(ub, peer, 2, 0, &r), "bw");
        reqs.push_back(r);
      }
      WaitAll(*e, reqs);
      Check(job.rank == 0 ? e->Irecv(ackb, peer, 3, 0, &r) : e->Isend(ackb, peer, 3, 0, &r), "ack");
      reqs.push_back(r);
      WaitAll(*e, reqs);
    }
    const double bw = double(n) * window * bw_iters / (Seconds() - t0) / 1e9;
    if (job.rank == 0) std::printf("%12zu %12.2f %12.2f\n", n, lat_us, bw);
    std::fflush(stdout);
  }
  Check(e->Finalize(), "finalize");
  return 0;
}

// Two ranks, one message size at a time, measured the way perftest measures verbs, so that a
// netmod can be set beside ib_write_lat / ib_write_bw on the same device:
//   latency: a ping-pong of `iters` round trips, half of each one timed alone: median (perftest's
//            t_typical) and mean (t_avg), in us. Each round trip is stamped with the CPU's time
//            stamp counter, converted by its rate over the whole run (perftest's get_cycles
//            way), since the clock can cost a system call itself (a VM whose clocksource has no
//            vDSO, e.g. hpet under TCG: one clock_gettime per round trip was a measurable part
//            of a small message's time); `steady` as a fifth argument stamps with the clock;
//   bandwidth: `iters` windows of 16 messages then a 1-byte ack, bytes moved / time, in Gb/s.
// Every message's first and last byte is checked.
//   mpigpurun -n 2 bazel-bin/benchmarks/netmod_bench lat|bw <bytes> <iters> [tsc|steady]
// Host buffers; the netmod is whatever the route gives (MPIGPU_NETMOD, MPIGPU_SHM=0 on one node).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "transport/engine.h"
#include "wiring/start.h"

using namespace mpigpu;
using namespace mpigpu::transport;

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

#if defined(__x86_64__)
constexpr bool kHaveTsc = true;
uint64_t Ticks() { return __rdtsc(); }
#else
constexpr bool kHaveTsc = false;
uint64_t Ticks() { return 0; }
#endif

void Check(const Status& st, const char* what) {
  if (!st.ok()) {
    std::fprintf(stderr, "netmod_bench: %s: %s\n", what, st.ToString().c_str());
    std::exit(1);
  }
}

void Wait(Engine& e, Request* r) {
  Check(e.Wait(r), "wait");
  Check(r->status(), "request");
  e.Release(r);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5 || (std::strcmp(argv[1], "lat") != 0 && std::strcmp(argv[1], "bw") != 0) ||
      (argc == 5 && std::strcmp(argv[4], "tsc") != 0 && std::strcmp(argv[4], "steady") != 0)) {
    std::fprintf(stderr, "usage: mpigpurun -n 2 netmod_bench lat|bw <bytes> <iters> [tsc|steady]\n");
    return 2;
  }
  const bool tsc = kHaveTsc && !(argc == 5 && std::strcmp(argv[4], "steady") == 0);
  const bool lat = std::strcmp(argv[1], "lat") == 0;
  const size_t n = std::strtoull(argv[2], nullptr, 10);
  const int iters = std::atoi(argv[3]);
  if (n == 0 || iters <= 0) return 2;
  JobInfo job;
  Check(JobInfo::FromEnvironment(&job), "environment");
  if (job.size != 2) return 2;
  std::unique_ptr<Engine> e;
  Check(wiring::StartEngine(job, &e), "join");
  const int peer = 1 - job.rank;
  const bool first = job.rank == 0;
  std::vector<unsigned char> buf(n, static_cast<unsigned char>(job.rank + 1));
  const UserBuffer ub{buf.data(), MemLoc::Host(), Layout::Contiguous(n)};
  auto check = [&] {
    if (buf[0] != peer + 1 || buf[n - 1] != peer + 1) {
      std::fprintf(stderr, "netmod_bench: wrong bytes received\n");
      std::exit(1);
    }
    buf[0] = buf[n - 1] = static_cast<unsigned char>(job.rank + 1);
  };
  const int warm = std::max(2, iters / 10);
  if (lat) {
    std::vector<double> half;  // seconds, or ticks until converted
    double run0 = 0;
    uint64_t tick0 = 0;
    for (int i = 0; i < warm + iters; ++i) {
      Request* r = nullptr;
      if (i == warm) {
        run0 = Now();
        tick0 = Ticks();
      }
      const double t0 = tsc ? static_cast<double>(Ticks()) : Now();
      if (first) {
        Check(e->Isend(ub, peer, 1, 0, &r), "send");
        Wait(*e, r);
        Check(e->Irecv(ub, peer, 1, 0, &r), "recv");
        Wait(*e, r);
        check();
      } else {
        Check(e->Irecv(ub, peer, 1, 0, &r), "recv");
        Wait(*e, r);
        check();
        Check(e->Isend(ub, peer, 1, 0, &r), "send");
        Wait(*e, r);
      }
      if (i >= warm) half.push_back(((tsc ? static_cast<double>(Ticks()) : Now()) - t0) / 2);
    }
    // Ticks per second over the measured round trips (their sum is the run's time).
    const double scale = tsc ? (Now() - run0) / static_cast<double>(Ticks() - tick0) : 1.0;
    for (double& h : half) h *= scale * 1e6;
    std::sort(half.begin(), half.end());
    double sum = 0;
    for (double h : half) sum += h;
    if (first)
      std::printf("mpigpu lat bytes=%zu iters=%d median_us=%.2f mean_us=%.2f p99_us=%.2f clock=%s\n",
                  n, iters, half[half.size() / 2], sum / half.size(),
                  half[std::min(half.size() - 1, half.size() * 99 / 100)], tsc ? "tsc" : "steady");
  } else {
    const int window = 16;
    char ack = 0;
    const UserBuffer ab{&ack, MemLoc::Host(), Layout::Contiguous(1)};
    std::vector<std::vector<unsigned char>> bufs(window, std::vector<unsigned char>(n, static_cast<unsigned char>(job.rank + 1)));
    double t0 = 0;
    for (int i = 0; i < warm + iters; ++i) {
      if (i == warm) t0 = Now();
      std::vector<Request*> reqs(window);
      for (int w = 0; w < window; ++w)
        Check(first ? e->Isend({bufs[w].data(), MemLoc::Host(), Layout::Contiguous(n)}, peer, 2, 0, &reqs[w])
                    : e->Irecv({bufs[w].data(), MemLoc::Host(), Layout::Contiguous(n)}, peer, 2, 0, &reqs[w]),
              "bw");
      for (Request* r : reqs) Wait(*e, r);
      if (!first)
        for (auto& b : bufs)
          if (b[0] != peer + 1 || b[n - 1] != peer + 1) {
            std::fprintf(stderr, "netmod_bench: wrong bytes received\n");
            return 1;
          }
      Request* r = nullptr;
      Check(first ? e->Irecv(ab, peer, 3, 0, &r) : e->Isend(ab, peer, 3, 0, &r), "ack");
      Wait(*e, r);
    }
    const double s = Now() - t0;
    if (first)
      std::printf("mpigpu bw bytes=%zu iters=%d window=%d gbit_s=%.4f\n", n, iters, window,
                  8.0 * n * window * iters / s / 1e9);
  }
  std::fflush(stdout);
  Check(e->Finalize(), "finalize");
  return 0;
}

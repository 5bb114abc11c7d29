#include "perf/cpu_line.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

namespace mpigpu {
namespace perf {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Spins until `line` holds `want` (or -1, the end of the run); the clock is read only every
// 4096 spins, so that it costs the trip nothing. False on timeout.
bool SpinFor(std::atomic<long>* line, long want, double timeout_s, long* seen) {
  const Clock::time_point t0 = Clock::now();
  for (unsigned spins = 1;; ++spins) {
    const long v = line->load(std::memory_order_acquire);
    if (v == want || v == -1) {
      *seen = v;
      return true;
    }
    if (spins % 4096 == 0 && SecondsSince(t0) > timeout_s) return false;
  }
}

}  // namespace

bool PinThisThread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

double LinePing(std::atomic<long>* line, const LineRun& run) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  long v = 1, seen = 0;
  long timed = 0, in_batch = 0;
  double best = kNaN;
  Clock::time_point t0 = Clock::now(), batch_t0 = t0;
  for (long i = 0; i < run.warmup + run.trips; ++i, v += 2) {
    if (i == run.warmup) t0 = batch_t0 = Clock::now();
    line->store(v, std::memory_order_release);
    if (!SpinFor(line, v + 1, run.timeout_s, &seen) || seen == -1) {
      line->store(-1, std::memory_order_release);
      return kNaN;
    }
    if (i < run.warmup) continue;
    ++timed;
    if (run.batch > 0 && ++in_batch == run.batch) {
      const double ns = SecondsSince(batch_t0) / in_batch * 1e9;
      if (!(ns >= best)) best = ns;  // also the first (best is NaN)
      in_batch = 0;
      batch_t0 = Clock::now();
    }
    if (timed % 256 == 0 && SecondsSince(t0) > run.budget_s) break;
  }
  const double s = SecondsSince(t0);
  line->store(-1, std::memory_order_release);
  // No whole batch within the budget: the trips there were.
  if (run.batch > 0 && std::isnan(best) && in_batch > 0)
    best = SecondsSince(batch_t0) / in_batch * 1e9;
  if (run.batch > 0) return best;
  return timed > 0 ? s / timed * 1e9 : kNaN;
}

bool LineEcho(std::atomic<long>* line, double timeout_s) {
  for (long v = 1;; v += 2) {
    long seen = 0;
    if (!SpinFor(line, v, timeout_s, &seen)) return false;
    if (seen == -1) return true;
    // Not over a -1 the pinger may have stored meanwhile (it gave up).
    long expect = v;
    line->compare_exchange_strong(expect, v + 1, std::memory_order_release,
                                  std::memory_order_relaxed);
  }
}

double LineRoundTripNs(int a, int b, const LineRun& run) {
  alignas(64) static std::atomic<long> line{0};
  line.store(0, std::memory_order_relaxed);
  std::thread echo([&] {
    PinThisThread(b);
    LineEcho(&line, run.timeout_s);
  });
  PinThisThread(a);
  const double ns = LinePing(&line, run);
  echo.join();
  return ns;
}

}  // namespace perf
}  // namespace mpigpu

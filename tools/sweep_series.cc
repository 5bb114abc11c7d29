#include "tools/sweep_series.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "tools/sweep_rule.h"

namespace mpigpu {
namespace sweep {

void Die(int code, const std::string& msg) {
  std::fprintf(stderr, "\nmpigpu-sweep: %s\n", msg.c_str());
  std::fflush(stderr);
  MPIGPU_Abort(MPIGPU_COMM_WORLD, code);
  _exit(code);
}

namespace {
constexpr int kPlanRuns = 8;
}  // namespace

Status PlanRow(Ctx& c, size_t size, bool collective, const std::function<Status()>& run,
               int* warmed) {
  *warmed = 0;
  if (c.row.decided) return Status::Ok();
  const Options& o = *c.o;
  const int n = Iterations(o, c.test, size), w = Warmup(o, c.test, size);
  c.row = RowPlan{true, w, n};
  if (!RuleApplies(o)) return Status::Ok();
  const int min_iters = MinIterations(c.test);
  if (collective) PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
  // The probe: the first warmup run (the coldest, so it errs towards fewer runs).
  double t0 = MPIGPU_Wtime();
  MPIGPU_RETURN_IF_ERROR(run());
  const double probe = MPIGPU_Wtime() - t0;
  // The rest of the warmup, at least kPlanRuns runs where the default has them: one noisy
  // probe must not set the count alone.
  const int scaled = ScaledWarmup(w, n, BudgetIterations(n, min_iters, probe, o.time_per_size));
  int more = std::max(0, std::max(scaled, std::min(w, kPlanRuns)) - 1);
  if (collective)
    PERF_API(MPIGPU_Bcast(&more, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, MPIGPU_COMM_WORLD));
  // Each run timed alone: the median is what a run costs, whatever one descheduled run took.
  std::vector<double> times;
  for (int k = 0; k < more; ++k) {
    t0 = MPIGPU_Wtime();
    MPIGPU_RETURN_IF_ERROR(run());
    times.push_back(MPIGPU_Wtime() - t0);
  }
  std::sort(times.begin(), times.end());
  const double per_run = times.empty() ? probe : times[times.size() / 2];
  int iters = BudgetIterations(n, min_iters, per_run, o.time_per_size);
  if (collective)
    PERF_API(MPIGPU_Bcast(&iters, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, MPIGPU_COMM_WORLD));
  c.row = RowPlan{true, 1 + more, iters};
  *warmed = 1 + more;
  return Status::Ok();
}

double TestValue(Test test, size_t size, int window, int iters, double seconds) {
  const double bytes = static_cast<double>(size) * window * iters;
  switch (test) {
    case Test::kLatency: return PingPongLatencyUs(seconds, iters);
    case Test::kBw: return BandwidthGBs(bytes, seconds);
    case Test::kBibw: return BandwidthGBs(2 * bytes, seconds);
  }
  return kNaN;
}

}  // namespace sweep
}  // namespace mpigpu

#include "tools/sweep_rule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace mpigpu {
namespace sweep {

int MinIterations(Test t) { return t == Test::kLatency ? 10 : 2; }

bool RuleApplies(const Options& o) { return o.iterations <= 0 && o.time_per_size > 0; }

int BudgetIterations(int default_iters, int min_iters, double seconds_per_run, double budget) {
  if (!(budget > 0) || !(seconds_per_run > 0)) return default_iters;
  const double fit = std::floor(budget / seconds_per_run);
  if (fit >= default_iters) return default_iters;
  const int floor_iters = std::min(min_iters, default_iters);
  return std::max(floor_iters, static_cast<int>(fit));
}

int ScaledWarmup(int default_warm, int default_iters, int iters) {
  if (default_warm <= 0 || iters >= default_iters) return default_warm;
  const long long scaled =
      (static_cast<long long>(default_warm) * iters + default_iters - 1) / default_iters;
  return static_cast<int>(std::max(1LL, std::min<long long>(scaled, default_warm)));
}

std::string IterationRuleText(const Options& o, Test t) {
  const int small = Iterations(o, t, 1), large = Iterations(o, t, kLargeMessage + 1);
  const int wsmall = Warmup(o, t, 1), wlarge = Warmup(o, t, kLargeMessage + 1);
  std::string text;
  if (small == large) text = std::to_string(small) + " runs a size";
  else
    text = std::to_string(small) + " runs up to " + SizeText(kLargeMessage) + ", " +
           std::to_string(large) + " above";
  text += wsmall == wlarge ? ", warmup " + std::to_string(wsmall)
                           : ", warmup " + std::to_string(wsmall) + "/" + std::to_string(wlarge);
  if (!RuleApplies(o)) return text + (o.iterations > 0 ? " (-i)" : " (--time-per-size 0)");
  char budget[32];
  std::snprintf(budget, sizeof budget, "%g", o.time_per_size);
  // The rule times a first warmup run to choose the counts, so it always has one.
  if (wsmall == 0 && wlarge == 0) text += " (1: the run timed to choose the counts)";
  return text + "; fewer (column iters) where they take over " + budget +
         " s (--time-per-size), at least " + std::to_string(MinIterations(t));
}

}  // namespace sweep
}  // namespace mpigpu

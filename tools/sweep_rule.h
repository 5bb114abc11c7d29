// mpigpu-sweep's iteration rule. OSU's fixed counts (Iterations(), Warmup(): 10000 latency runs
// a size up to 8K) take minutes where a message costs ~150 us (two ranks on one GPU without
// MPS). So, as OSU already does above its large-message threshold, slow sizes get fewer runs:
// a row's count is the default, or as many runs as fit in --time-per-size seconds, never fewer
// than MinIterations(). The row's first series (mpigpu) measures its time per run in the warmup
// and rank 0 decides; every other series of the row runs the same counts. -i (or
// --time-per-size 0) gives OSU's fixed counts.
#pragma once

#include <string>

#include "tools/sweep_options.h"

namespace mpigpu {
namespace sweep {

// The fewest timed runs the rule leaves a size: latency 10, bw/bibw 2 (a run is a window).
int MinIterations(Test t);

// Whether the rule cuts counts at all (no -i, a positive --time-per-size).
bool RuleApplies(const Options& o);

// Timed runs for a size whose run takes `seconds_per_run`: `default_iters`, or the runs that fit
// in `budget` seconds when fewer, but at least min(min_iters, default_iters). A budget <= 0 or
// an unknown time (<= 0, NaN) leaves the default.
int BudgetIterations(int default_iters, int min_iters, double seconds_per_run, double budget);

// Warmup runs for a size cut to `iters`: the default in OSU's proportion (warmup/iterations),
// rounded up, at least 1 (a default of 0 stays 0; the rule's first, timed run is one all the
// same).
int ScaledWarmup(int default_warm, int default_iters, int iters);

// The rule in words, for the table's "# iterations:" line.
std::string IterationRuleText(const Options& o, Test t);

}  // namespace sweep
}  // namespace mpigpu

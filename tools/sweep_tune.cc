#include "tools/sweep_tune.h"

#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace mpigpu {
namespace sweep {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool IsHostPair(const std::string& pair) { return pair == "HH"; }

// Mean score over the pairs `pick` accepts in trial `t` (NaN if none has a score).
template <typename Pick>
double MeanScore(const TuneTrial& t, Pick pick) {
  double sum = 0;
  int n = 0;
  for (size_t i = 0; i < t.pairs.size() && i < t.scores.size(); ++i) {
    if (!pick(t.pairs[i]) || !std::isfinite(t.scores[i])) continue;
    sum += t.scores[i];
    ++n;
  }
  return n > 0 ? sum / n : kNaN;
}

// The trial with the best MeanScore(pick), or nullptr.
template <typename Pick>
const TuneTrial* BestTrial(const std::vector<TuneTrial>& trials, Pick pick, double* score) {
  const TuneTrial* best = nullptr;
  *score = kNaN;
  for (const TuneTrial& t : trials) {
    double s = MeanScore(t, pick);
    if (std::isfinite(s) && (best == nullptr || s > *score)) {
      best = &t;
      *score = s;
    }
  }
  return best;
}

}  // namespace

std::vector<TuneSetting> TuneGrid() {
  std::vector<TuneSetting> grid;
  for (size_t unit = size_t{64} << 10; unit <= size_t{8} << 20; unit *= 2)
    for (size_t units = 2; units <= 16; units *= 2) grid.push_back({unit, units});
  return grid;
}

namespace {

// The GPU unit pinned (minimum = maximum), so every transfer uses it: in the trials, and in the
// recommendation that repeats the best of them.
std::vector<std::string> GpuUnitSettings(size_t unit) {
  return {"MPIGPU_LMT_UNIT_GPU=" + SizeText(unit), "MPIGPU_LMT_UNIT_GPU_MIN=" + SizeText(unit)};
}

}  // namespace

std::vector<std::string> TuneExports(const TuneSetting& s) {
  std::vector<std::string> ex = {"MPIGPU_LMT=ring", "MPIGPU_LMT_UNIT_HOST=" + SizeText(s.unit)};
  for (std::string& g : GpuUnitSettings(s.unit)) ex.push_back(std::move(g));
  ex.push_back("MPIGPU_LMT_UNITS=" + std::to_string(s.units));
  return ex;
}

double TuneScore(const Table& t) {
  const Series* s = t.Primary();
  return s == nullptr ? kNaN : GeoMean(s->values);
}

std::vector<std::string> BestExports(const std::vector<TuneTrial>& trials) {
  std::vector<std::string> out;
  char buf[160];
  double score;
  auto host = [](const std::string& p) { return IsHostPair(p); };
  auto gpu = [](const std::string& p) { return !IsHostPair(p); };
  size_t unit_host = 0, unit_gpu = 0;
  if (const TuneTrial* t = BestTrial(trials, host, &score)) {
    unit_host = t->unit;
    std::snprintf(buf, sizeof buf, "# host pairs: best %s units of %s, %.2f GB/s",
                  std::to_string(t->units).c_str(), SizeText(t->unit).c_str(), score);
    out.push_back(buf);
  }
  if (const TuneTrial* t = BestTrial(trials, gpu, &score)) {
    unit_gpu = t->unit;
    std::snprintf(buf, sizeof buf, "# device pairs: best %s units of %s, %.2f GB/s (mean)",
                  std::to_string(t->units).c_str(), SizeText(t->unit).c_str(), score);
    out.push_back(buf);
  }
  if (unit_host == 0 && unit_gpu == 0) return {};

  // Each pair's best score over all trials, to compare depths on one scale.
  std::vector<std::string> pairs = trials.front().pairs;
  std::vector<double> pair_best(pairs.size(), 0);
  for (const TuneTrial& t : trials)
    for (size_t i = 0; i < pairs.size() && i < t.scores.size(); ++i)
      if (std::isfinite(t.scores[i]) && t.scores[i] > pair_best[i]) pair_best[i] = t.scores[i];
  // Depth: the mean, over the pairs, of each pair's relative score at its chosen unit size.
  std::map<size_t, std::pair<double, int>> by_depth;  // units -> (sum, count)
  for (const TuneTrial& t : trials) {
    for (size_t i = 0; i < pairs.size() && i < t.scores.size(); ++i) {
      size_t want = IsHostPair(pairs[i]) ? unit_host : unit_gpu;
      if (t.unit != want || !std::isfinite(t.scores[i]) || pair_best[i] <= 0) continue;
      by_depth[t.units].first += t.scores[i] / pair_best[i];
      by_depth[t.units].second += 1;
    }
  }
  size_t best_units = 0;
  double best_rel = -1;
  for (const auto& [units, acc] : by_depth) {
    double rel = acc.first / acc.second;
    if (rel > best_rel) {
      best_rel = rel;
      best_units = units;
    }
  }
  out.push_back("# measured with MPIGPU_LMT=ring forced: the unit settings matter to the ring only");
  if (unit_host != 0) out.push_back("export MPIGPU_LMT_UNIT_HOST=" + SizeText(unit_host));
  if (unit_gpu != 0)
    for (const std::string& g : GpuUnitSettings(unit_gpu)) out.push_back("export " + g);
  if (best_units != 0) out.push_back("export MPIGPU_LMT_UNITS=" + std::to_string(best_units));
  return out;
}

}  // namespace sweep
}  // namespace mpigpu

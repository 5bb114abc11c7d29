// --tune: the grid of LMT ring settings to try and the choice of the best ones.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tools/sweep_report.h"

namespace mpigpu {
namespace sweep {

struct TuneSetting {
  size_t unit = 0;   // MPIGPU_LMT_UNIT_HOST and MPIGPU_LMT_UNIT_GPU (both: a pair uses one)
  size_t units = 0;  // MPIGPU_LMT_UNITS
};

// Unit sizes 64K, 128K, ... 8M times ring depths 2, 4, 8, 16.
std::vector<TuneSetting> TuneGrid();

// The -x exports that give ranks `s` (and force the ring, the only back-end they affect).
std::vector<std::string> TuneExports(const TuneSetting& s);

// A pair's bw score in one trial: the geometric mean of the primary mpigpu series of `t`.
double TuneScore(const Table& t);

// The best settings as "export MPIGPU_...=..." lines: MPIGPU_LMT_UNIT_HOST from the host-only
// pairs, MPIGPU_LMT_UNIT_GPU and _MIN (equal: the unit pinned, as in the trials) from the pairs
// with a device side (each: the best mean score over those pairs), MPIGPU_LMT_UNITS the depth
// with the best mean of every pair's score relative to that pair's best. Comment lines ("# ...")
// say which pair decided what. Empty when no trial has a score.
std::vector<std::string> BestExports(const std::vector<TuneTrial>& trials);

}  // namespace sweep
}  // namespace mpigpu

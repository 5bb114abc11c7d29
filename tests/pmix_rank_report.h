// What tests/pmix_rank printed about a killed rank (its "die" and "die-unseen" modes), read back
// by the launcher tests (pmix_launch_test, srun_test): when the victim died, and each survivor's
// word on it. Times are CLOCK_MONOTONIC seconds (steady_clock's), one clock for every process of
// a host and its network namespaces.
#pragma once

#include <string>
#include <vector>

namespace mpigpu::testing {

// "pmix_rank R dies at T": T, or -1 when the victim printed no such line.
double DeathTime(const std::string& err, int victim);

// A survivor's line: "pmix_rank: rank r: the receive from the killed rank ended with C at T: D"
// (die) or "pmix_rank r: finalize returned C at T: D" (die-unseen).
struct SurvivorWord {
  bool found = false;  // no line: its launcher ended it first
  int code = 0;        // the API's return code
  double at = 0;       // when
  std::string detail;  // MPIGPU_Error_string's text
};
SurvivorWord ReceiveWord(const std::string& err, int rank);
SurvivorWord FinalizeWord(const std::string& err, int rank);

// One line per survivor for the test's log: its word and how long after the death it came, or
// that it has none.
std::string DescribeWords(const std::vector<int>& survivors, double died,
                          SurvivorWord (*word)(const std::string&, int), const std::string& err);

// Now on the ranks' clock (steady_clock), to compare with their times.
double MonotonicNow();

}  // namespace mpigpu::testing

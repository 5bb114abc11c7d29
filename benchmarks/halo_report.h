// The halo application's results and rank 0's output: the table on stdout (a header, a row per
// mode and problem, mpigpu's speedups) and the CSV file.
//
// Times are the slowest rank's: total = the timed iterations' wall time (exchanges included),
// comm = the time inside the exchanges (after the preceding step finished on the GPU);
// xchg_us = the median exchange; net_us = the median from the moment the last rank entered the
// same exchange, i.e. without waiting for a later rank (one node: the ranks share one clock).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "benchmarks/halo_grid.h"
#include "memcopy/status.h"

namespace mpigpu::halo {

// One mode on one problem.
struct RunResult {
  Mode mode = Mode::kMpigpu;
  double total_s = 0, comm_s = 0;  // slowest rank's (rank 0 only)
  double exchange_median_s = 0;     // the largest of the ranks' median exchange times
  double exchange_net_median_s = 0;  // the same, counted from the last rank's entry
  bool checked = false;
};

// "RxC".
std::string Dims(int64_t r, int64_t c);

class Report {
 public:
  Report(int ranks, const Options& opt, ProcGrid grid) : ranks_(ranks), opt_(opt), grid_(grid) {}
  ~Report();
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  // Opens --csv's file (if any) and writes its header line.
  Status OpenCsv();
  // The table's header: the run, `device`, the modes skipped (if any), the column titles.
  void Header(const std::string& device, const std::string& skipped) const;
  // One problem's results (every mode), then mpigpu's speedups when all modes ran.
  void PrintProblem(const Problem& p, const std::vector<RunResult>& results) const;

 private:
  int ranks_;
  const Options& opt_;
  ProcGrid grid_;
  std::FILE* csv_ = nullptr;
};

}  // namespace mpigpu::halo

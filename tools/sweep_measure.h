// The rank side of mpigpu-sweep: every test on every pair through the public API (mpigpu.h),
// the copy limits measured by rank 0 alone with the CUDA runtime, and the peers (NCCL through
// dlopen, manual staging through pinned host memory). Call between MPIGPU_Init and
// MPIGPU_Finalize on both ranks of a 2-rank job. Each of those is a series (sweep_series.h) in
// the table that RunSweep's one loop runs (sweep_measure.cc).
#pragma once

#include <cstdio>
#include <string>

#include "memcopy/status.h"
#include "tools/sweep_options.h"
#include "tools/sweep_report.h"

namespace mpigpu {
namespace sweep {

struct RankSetup {
  int rank = 0;
  int device_count = 0;  // visible CUDA devices (0: host buffers only)
  int device = -1;       // this rank's device (local rank mod device_count), -1 without GPUs
  int peer_device = -1;  // the other rank's device (on this node; -1 when it is on another)
  bool same_node = true; // both ranks on this node (the launcher's local size is 2)
  std::string lmt;       // MPIGPU_LMT in effect ("auto" when unset)
};

// Runs every test of `o` on every pair, size by size (every series of a size, then the next
// size). Rank 0 fills `report` and, when `live` is not null, writes each table there as it goes
// (FormatTableHead, each row as soon as it is measured, FormatTableTail; flushed): the same text
// as FormatReport's tables. Rank 1 leaves `report` empty. A data check failure (-c) prints the
// first wrong byte and aborts the job with kExitCheckFailed. Errors of CUDA in the limit or
// peer columns make that column n/a with the reason.
Status RunSweep(const Options& o, const RankSetup& setup, Report* report, std::FILE* live);

}  // namespace sweep
}  // namespace mpigpu

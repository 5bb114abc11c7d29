// The halo application's runs: for every problem and mode, fresh grids, a warm-up, the timed
// iterations (a stencil step on the GPU or the CPU, an exchange every halo-width steps), the
// slowest rank's times, and with --check a bit-for-bit comparison with the serial reference.
#pragma once

#include <string>
#include <vector>

#include "benchmarks/halo_exchange.h"
#include "benchmarks/halo_grid.h"
#include "benchmarks/halo_report.h"
#include "memcopy/status.h"

namespace mpigpu::halo {

// Every problem, every mode (in order), with opt.type's elements; rank 0 prints each problem's
// results through `report`. A failed check ends the run with *check_failure set (on rank 0 the
// first difference, elsewhere a pointer to rank 0's message). Collective.
Status RunProblems(const Context& ctx, const Options& opt, const std::vector<Problem>& problems,
                   const std::vector<Mode>& modes, const Report& report,
                   std::string* check_failure);

}  // namespace mpigpu::halo

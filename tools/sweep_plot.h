// --plot: a log-log PNG drawn by gnuplot, one panel per test (latency; bw; bibw), one line per
// series of every pair ("HD mpigpu", "HD limit", ...).
#pragma once

#include <string>

#include "memcopy/status.h"
#include "tools/sweep_report.h"

namespace mpigpu {
namespace sweep {

// The full path of `program` found in $PATH (or "" when it is not there).
std::string FindInPath(const std::string& program);

// kInvalidArg "--plot needs gnuplot (apt-get install gnuplot-nox)" when gnuplot is missing.
Status CheckGnuplot();

// The gnuplot script that draws `r` into `png` with `terminal` ("pngcairo" or "png"). Sizes of
// 0 bytes and missing values are left out (log axes).
std::string GnuplotScript(const Report& r, const std::string& png, const std::string& terminal);

// Picks the terminal (pngcairo if this gnuplot has it, else png), runs gnuplot and checks that
// `png` was written and is not empty.
Status Plot(const Report& r, const std::string& png);

}  // namespace sweep
}  // namespace mpigpu

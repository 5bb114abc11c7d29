// The monotonic clock every waiting loop measures its deadlines with (seconds, CLOCK_MONOTONIC:
// not moved by changes to the wall clock).
#pragma once

#include <time.h>

namespace mpigpu {

inline double MonotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

}  // namespace mpigpu

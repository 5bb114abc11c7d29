#include "tools/sweep_series.h"

#include <unistd.h>

#include <cstdio>

namespace mpigpu {
namespace sweep {

void Die(int code, const std::string& msg) {
  std::fprintf(stderr, "\nmpigpu-sweep: %s\n", msg.c_str());
  std::fflush(stderr);
  MPIGPU_Abort(MPIGPU_COMM_WORLD, code);
  _exit(code);
}

void Progress::Show(const std::string& what) {
  if (!on_) return;
  std::fprintf(stderr, "\r%-78.78s", ("mpigpu-sweep: " + what).c_str());
  std::fflush(stderr);
  shown_ = true;
}

void Progress::Step(const std::string& what) {
  ++step_;
  Show(what + " (" + std::to_string(step_) + "/" + std::to_string(total_) + ")");
}

void Progress::Clear() {
  if (!on_ || !shown_) return;
  std::fprintf(stderr, "\r%78s\r", "");
  std::fflush(stderr);
  shown_ = false;
}

double TestValue(Test test, size_t size, int window, int iters, double seconds) {
  const double bytes = static_cast<double>(size) * window * iters;
  switch (test) {
    case Test::kLatency: return PingPongLatencyUs(seconds, iters);
    case Test::kBw: return BandwidthGBs(bytes, seconds);
    case Test::kBibw: return BandwidthGBs(2 * bytes, seconds);
  }
  return kNaN;
}

}  // namespace sweep
}  // namespace mpigpu

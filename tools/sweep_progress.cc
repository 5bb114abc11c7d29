#include "tools/sweep_progress.h"

#include <algorithm>
#include <cmath>

#include "memcopy/clock.h"

namespace mpigpu {
namespace sweep {

std::string DurationText(double seconds) {
  char buf[32];
  const long s = std::lround(std::max(0.0, seconds));
  if (s < 60) std::snprintf(buf, sizeof buf, "%lds", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%ldm%02lds", s / 60, s % 60);
  else std::snprintf(buf, sizeof buf, "%ldh%02ldm", s / 3600, (s % 3600) / 60);
  return buf;
}

Progress::Progress(bool on, int total_rows, std::FILE* out, std::function<double()> now)
    : on_(on), total_(total_rows), out_(out), now_(now ? std::move(now) : MonotonicSeconds) {
  start_ = now_();
}

void Progress::Row(const std::string& what) {
  ++row_;
  what_ = what;
  detail_.clear();
  Draw();
}

void Progress::Detail(const std::string& detail) {
  detail_ = detail;
  Draw();
}

void Progress::Draw() {
  if (!on_) return;
  const int done = row_ - 1;
  std::string left = "estimating the time left";
  if (done > 0)
    left = DurationText((now_() - start_) / done * (total_ - done)) + " left";
  std::string line = "mpigpu-sweep: " + what_ + (detail_.empty() ? "" : " " + detail_) + " (" +
                     std::to_string(row_) + "/" + std::to_string(total_) + "), " + left;
  std::fprintf(out_, "\r%-*.*s", kWidth, kWidth, line.c_str());
  std::fflush(out_);
  shown_ = true;
}

void Progress::Clear() {
  if (!on_ || !shown_) return;
  std::fprintf(out_, "\r%*s\r", kWidth, "");
  std::fflush(out_);
  shown_ = false;
}

}  // namespace sweep
}  // namespace mpigpu

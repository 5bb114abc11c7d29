#include "memcopy/log_limit.h"

namespace mpigpu {

void LogLimit::Flush(const Print& print, double now) {
  if (start_ < 0 || now - start_ < interval_s_) return;
  if (held_ > 0)
    print(what_ + ": " + std::to_string(held_) + " more in the last " +
          std::to_string(static_cast<long>(now - start_ + 0.5)) + " s (not shown one by one)");
  start_ = -1;
  printed_ = 0;
  held_ = 0;
}

void LogLimit::Log(const Print& print, const std::string& line, double now) {
  Flush(print, now);
  if (start_ < 0) start_ = now;
  if (printed_ < burst_) {
    ++printed_;
    print(line);
  } else {
    ++held_;
  }
}

}  // namespace mpigpu

// LogLimit: a rate limit for log lines that strangers can cause (refused and dropped
// connections), as sshd and the kernel's printk_ratelimit do: the first `burst` lines of an
// interval are printed, the rest are counted, and one summary line with the count follows once
// the interval is over (at the next event, or at Flush, which a server's loop calls when idle).
// A flood of any size writes at most burst + 1 lines per interval. Not thread-safe: one per log
// site, used by one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace mpigpu {

class LogLimit {
 public:
  using Print = std::function<void(const std::string&)>;
  // `what`: the summary's subject ("tcp channel: connections refused or dropped").
  explicit LogLimit(std::string what, int burst = 5, double interval_s = 10)
      : what_(std::move(what)), burst_(burst), interval_s_(interval_s) {}

  // One event at `now` (seconds, MonotonicSeconds): `line` is printed, or counted.
  void Log(const Print& print, const std::string& line, double now);
  // The summary of an interval that is over, if lines were held back in it.
  void Flush(const Print& print, double now);
  uint64_t held() const { return held_; }  // held back in the current interval

  static constexpr int kBurst = 5;
  static constexpr double kIntervalS = 10;

 private:
  std::string what_;
  int burst_;
  double interval_s_;
  double start_ = -1;    // the current interval's start (-1: none yet)
  int printed_ = 0;      // lines printed in it
  uint64_t held_ = 0;    // lines counted, not printed, in it
};

}  // namespace mpigpu

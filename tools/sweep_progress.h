// mpigpu-sweep's progress line: rank 0 redraws one line on stderr ("\r", padded to a fixed
// width) for every row it starts measuring, with the estimated time left, and clears it before
// anything else is written to the terminal (a table row) and at the end.
#pragma once

#include <cstdio>
#include <functional>
#include <string>

namespace mpigpu {
namespace sweep {

// "45s", "3m05s", "1h02m".
std::string DurationText(double seconds);

class Progress {
 public:
  static constexpr int kWidth = 78;  // the line's width: ~ a terminal's, left room for the cursor

  // `on`: draw at all (stderr is a terminal, or --progress); `total_rows`: the sweep's rows;
  // `now`: the clock in seconds (monotonic; tests pass their own).
  Progress(bool on, int total_rows, std::FILE* out = stderr,
           std::function<double()> now = nullptr);
  ~Progress() { Clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The next row starts: "mpigpu-sweep: <what> (row/total), <time> left" (the time left is the
  // time per row so far times the rows left; "estimating" before the first row is done).
  void Row(const std::string& what);
  // Within the row: the row's line with " <detail>" after <what> (the series measured now).
  void Detail(const std::string& detail);
  // Removes the line (blanks, then "\r"); the next Row/Detail draws it again.
  void Clear();

 private:
  void Draw();

  bool on_;
  int total_;
  std::FILE* out_;
  std::function<double()> now_;
  double start_ = 0;
  int row_ = 0;  // rows started
  std::string what_, detail_;
  bool shown_ = false;
};

}  // namespace sweep
}  // namespace mpigpu

// The measuring side of mpigpu-sweep, shared by its series (the columns of a table; the table of
// them and the driver loop are in sweep_measure.cc): the state of the pair under test, the
// interface a series implements, OSU's timed loop, and the fatal end of a run.
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "memcopy/status.h"
#include "mpigpu_api/mpigpu.h"
#include "perf/api_check.h"
#include "tools/sweep_cuda.h"
#include "tools/sweep_measure.h"
#include "tools/sweep_options.h"
#include "tools/sweep_report.h"

namespace mpigpu {
namespace sweep {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr int kTagData = 1;
inline constexpr int kTagAck = 2;
inline constexpr int kTagCheck = 3;
inline constexpr int kTagSetup = 4;

// Ends the job after a failure on the measured path (both ranks must stay in step, so there is
// no recovery): "\nmpigpu-sweep: msg" on stderr (off the progress line), MPIGPU_Abort(code).
[[noreturn]] void Die(int code, const std::string& msg);

// Rank 0's progress line on stderr, only on a terminal.
class Progress {
 public:
  Progress(bool on, int total_steps) : on_(on), total_(total_steps) {}
  ~Progress() { Clear(); }
  // "mpigpu-sweep: what".
  void Show(const std::string& what);
  // The next of the sweep's steps (one mpigpu size): "mpigpu-sweep: what (step/total)".
  void Step(const std::string& what);
  void Clear();

 private:
  bool on_;
  bool shown_ = false;
  int step_ = 0;
  int total_;
};

// One test on one pair: what every series reads, and the measured messages' buffers.
struct Ctx {
  const Options* o = nullptr;
  const RankSetup* setup = nullptr;
  const std::vector<size_t>* sizes = nullptr;  // the message sizes, in order
  Progress* progress = nullptr;
  int rank = 0;
  int peer = 1;
  Test test = Test::kLatency;
  Pair pair;
  Loc my_loc = Loc::kHost;
  Buffer sbuf, rbuf;        // the measured messages (max_size each)
  Buffer check_s, check_r;  // -c: window slots
};

inline int Count(size_t size) { return static_cast<int>(size); }  // size <= kMaxMessage < INT_MAX

// Whether this rank receives (sends) data messages in the test.
inline bool Receives(const Ctx& c) { return c.test != Test::kBw || c.rank == 1; }
inline bool Sends(const Ctx& c) { return c.test != Test::kBw || c.rank == 0; }

// OSU's timing: a barrier, `warm` untimed runs of `body` (a Status-returning callable), then
// `iters` timed ones; *seconds is the timed runs' wall time.
template <typename Body>
Status TimedLoop(int warm, int iters, Body body, double* seconds) {
  PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
  double t0 = MPIGPU_Wtime();
  for (int i = 0; i < warm + iters; ++i) {
    if (i == warm) t0 = MPIGPU_Wtime();
    MPIGPU_RETURN_IF_ERROR(body());
  }
  *seconds = MPIGPU_Wtime() - t0;
  return Status::Ok();
}

// Runs `measure` (a callable (size_t size_index, size_t size, double* value) -> Status) for
// every message size in order, appending each value (NaN unless it sets one) to s->values.
template <typename Measure>
Status ForEachSize(const Ctx& c, Series* s, Measure measure) {
  for (size_t i = 0; i < c.sizes->size(); ++i) {
    double v = kNaN;
    MPIGPU_RETURN_IF_ERROR(measure(i, (*c.sizes)[i], &v));
    s->values.push_back(v);
  }
  return Status::Ok();
}

// A test's value from its timed loop of `iters` runs: one-way latency (us) of a ping-pong, or
// the bandwidth (GB/s) of `window` messages of `size` bytes a run, one way (bw) or both (bibw).
double TestValue(Test test, size_t size, int window, int iters, double seconds);

// One series: a column of every table whose pair it applies to (sweep_measure.cc's table says
// which). One object serves the whole sweep; for each pair the driver calls StartPair, Measure
// once per test, then EndPair, on both ranks alike. A failed Status ends the job (Die).
class SeriesRunner {
 public:
  virtual ~SeriesRunner() = default;
  // Set-up for the pair in `c` (collective where it needs to be).
  virtual Status StartPair(Ctx& c) { return Status::Ok(); }
  // One test (c.test) over every size: s->values (one per size; rank 0's count) and s->note.
  virtual Status Measure(Ctx& c, Series* s) = 0;
  // Frees what StartPair or Measure took for the pair.
  virtual void EndPair() {}
};

std::unique_ptr<SeriesRunner> MakeMpigpuSeries();  // sweep_mpigpu.cc
std::unique_ptr<SeriesRunner> MakeLimitSeries();   // sweep_limit.cc
std::unique_ptr<SeriesRunner> MakeNcclSeries();    // sweep_peers.cc
std::unique_ptr<SeriesRunner> MakeStagedSeries();  // sweep_peers.cc

}  // namespace sweep
}  // namespace mpigpu

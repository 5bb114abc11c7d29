// The measuring side of mpigpu-sweep, shared by its series (the columns of a table; the table of
// them and the driver loop are in sweep_measure.cc): the state of the pair under test, the
// interface a series implements, OSU's timed loop, and the fatal end of a run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
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
#include "tools/sweep_progress.h"
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

// The counts of the row (one size of one test) being measured: the row's first series decides
// them under the iteration rule (sweep_rule.h); every later series of the row runs them too.
struct RowPlan {
  bool decided = false;
  int warmup = 0;
  int iterations = 0;
};

// One test on one pair: what every series reads, and the measured messages' buffers.
struct Ctx {
  const Options* o = nullptr;
  const RankSetup* setup = nullptr;
  const std::vector<size_t>* sizes = nullptr;  // the message sizes, in order
  Progress* progress = nullptr;
  RowPlan row;  // the size being measured (the driver resets it for each)
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

// Decides c.row if the row's counts are not decided yet: with the iteration rule, a first
// warmup run of `run` timed on rank 0 sets the rest of the warmup, whose median run then sets
// the timed count (rank 0 decides; MPIGPU_Bcast when `collective`, i.e. both ranks run `run`).
// *warmed: the warmup runs this call already made (0 when c.row was decided before).
Status PlanRow(Ctx& c, size_t size, bool collective, const std::function<Status()>& run,
               int* warmed);

// One size of a series, timed under the row's counts: PlanRow, the rest of the warmup, the
// timed runs of `body`; *iters: how many were timed.
template <typename Body>
Status TimedRuns(Ctx& c, size_t size, bool collective, Body body, double* seconds, int* iters) {
  int warmed = 0;
  MPIGPU_RETURN_IF_ERROR(PlanRow(c, size, collective, body, &warmed));
  *iters = c.row.iterations;
  return TimedLoop(std::max(0, c.row.warmup - warmed), c.row.iterations, body, seconds);
}

// A test's value from its timed loop of `iters` runs: one-way latency (us) of a ping-pong, or
// the bandwidth (GB/s) of `window` messages of `size` bytes a run, one way (bw) or both (bibw).
double TestValue(Test test, size_t size, int window, int iters, double seconds);

// One series: a column of every table whose pair it applies to (sweep_measure.cc's table says
// which). One object serves the whole sweep; for each pair the driver calls StartPair, then per
// test StartTest, MeasureSize for each size in order (the row's series one after the other, so
// that a row is printed as soon as it is measured), EndTest; then EndPair; on both ranks alike.
// A failed Status ends the job (Die).
class SeriesRunner {
 public:
  virtual ~SeriesRunner() = default;
  // Set-up for the pair in `c` (collective where it needs to be).
  virtual Status StartPair(Ctx& c) { return Status::Ok(); }
  // A test (c.test) starts: s->note may be set here or in EndTest.
  virtual Status StartTest(Ctx& c, Series* s) { return Status::Ok(); }
  // Size `size` (index i): *value (rank 0's; NaN: n/a) and *iters, the timed runs behind it
  // (0 when not measured). Counts come from c.row (TimedRuns).
  virtual Status MeasureSize(Ctx& c, size_t i, size_t size, double* value, int* iters) = 0;
  virtual void EndTest(Ctx& c, Series* s) {}
  // Frees what StartPair or MeasureSize took for the pair.
  virtual void EndPair() {}
};

std::unique_ptr<SeriesRunner> MakeMpigpuSeries();  // sweep_mpigpu.cc
std::unique_ptr<SeriesRunner> MakeLimitSeries();   // sweep_limit.cc (also the copy floor)
std::unique_ptr<SeriesRunner> MakeCacheLineFloor(); // sweep_floor.cc
std::unique_ptr<SeriesRunner> MakeGpuFlagFloor();   // sweep_floor.cc
std::unique_ptr<SeriesRunner> MakeNcclSeries();    // sweep_peers.cc
std::unique_ptr<SeriesRunner> MakeStagedSeries();  // sweep_peers.cc

}  // namespace sweep
}  // namespace mpigpu

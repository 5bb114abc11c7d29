// A cache line handed back and forth between two CPUs: the floor of any message between two
// ranks of one node (a message cannot arrive sooner than one line's trip between their cores).
// cpu_pair_probe runs it between two pinned threads; mpigpu-sweep between its two rank processes
// over shared memory.
#pragma once

#include <atomic>

namespace mpigpu {
namespace perf {

// Pins the calling thread to `cpu`; false when it may not run there.
bool PinThisThread(int cpu);

struct LineRun {
  long warmup = 1000;     // untimed round trips first
  long trips = 200000;    // timed round trips, at most
  double budget_s = 1e9;  // stop the timed trips after this long (a busy or shared CPU)
  double timeout_s = 10;  // the other side does not answer one trip: give up
  long batch = 0;         // > 0: the result is the fastest batch of this many trips' mean (a
                          // floor: trips the scheduler or a neighbour interrupted do not count)
};

// The two sides of the round trip over `line`, which holds 0 at the start and is seen by both
// (a static for two threads, shared memory for two processes). The pinger stores odd values,
// the echo answers each with the next even one; each store is released and the other side's
// load acquires it (the value is the whole message). The pinger ends the run with -1.
// LinePing: the mean round trip in ns (of the fastest batch with run.batch), NaN when the echo
// did not answer within the timeout.
double LinePing(std::atomic<long>* line, const LineRun& run);
// LineEcho: answers until the pinger ends the run; false when it went silent (timeout).
bool LineEcho(std::atomic<long>* line, double timeout_s);

// A round trip (ns) between a thread pinned to CPU a and one pinned to CPU b (this thread runs
// a's side); NaN when one of them did not answer.
double LineRoundTripNs(int a, int b, const LineRun& run = LineRun());

}  // namespace perf
}  // namespace mpigpu

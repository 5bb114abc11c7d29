// Helpers of the launcher's end-to-end tests (launcher_e2e_test, launcher_hosts_e2e_test,
// launcher_netns_test): mpigpurun runs with a bounded wait, what the probe ranks recorded, and
// checks that a job left nothing behind (no rank, no janitor, no /dev/shm name).
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "tests/e2e_util.h"

namespace mpigpu::testing {

inline constexpr int kLauncherWaitMs = 20000;

using Env = std::map<std::string, std::string>;

std::string Probe();        // //tests:launcher_probe
std::string RankProgram();  // //tests:launcher_rank
std::string TempDir();      // a fresh scratch directory

// A launcher run in the background: Wait() is bounded and kills a hung launcher. Its stdout and
// stderr go to out_dir/stdout and out_dir/stderr (a fresh directory when out_dir is ""). `unset`:
// more variables to remove from its environment.
BoundedRun StartLauncher(const std::vector<std::string>& args, const Env& env = {},
                         const std::string& out_dir = "",
                         const std::vector<std::string>& unset = {});
Result RunLauncher(const std::vector<std::string>& args, const Env& env = {});

// Live processes (not zombies) other than this one whose command line contains `text`: the
// ranks of a job and its janitor (a fork of the launcher) all name the job's scratch directory.
std::vector<std::string> ProcessesMentioning(const std::string& text);

// Waits (at most `ms`) until `done()` holds; returns whether it did.
template <typename F>
bool WaitUntil(int ms, F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    usleep(10000);
  }
  return true;
}

// The environment a probe rank recorded (empty when it wrote no file).
Env ReadRankEnv(const std::string& dir, int rank);

// Names in /dev/shm that belong to the job (the probe records MPIGPU_JOBID).
std::vector<std::string> JobShmLeft(const std::string& jobid);

// Ranks that recorded themselves must all be gone once the launcher returned, and so must the
// job's shared memory. Returns the job id (from any rank that wrote one).
std::string ExpectJobGone(const std::string& dir, int nranks);

// Lines of `text` that start with `start`.
int CountLines(const std::string& text, const std::string& start);

// The rank pid files of launcher_rank recv-forever (rank-R.pid), or of probes (rank-R.env).
bool AllRecorded(const std::string& dir, int nranks, const std::string& suffix);

// After `kill -9 mpigpurun`: within 2 s no rank and no janitor runs on, and /dev/shm holds no
// name of the job.
void ExpectGoneAfterLauncherDeath(const std::string& dir, const std::string& jobid);

// What `launcher_probe DIR chatter N` ranks 0..nranks-1 wrote, as mpigpurun --tag-output forwards
// it: `text` (the launcher's stdout for stream "stdout", its stderr for "stderr") must hold, per
// rank in order, exactly its N lines, each whole behind "[R]<stream>:" (and on stdout its tail
// line), and nothing else but the launcher's own "mpigpurun: " lines. "" when it does, else the
// first problem.
std::string CheckTaggedChatter(const std::string& text, const std::string& stream, int nranks,
                               int lines);

}  // namespace mpigpu::testing

#include "tests/launcher_e2e_util.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace mpigpu::testing {

std::string Probe() { return Runfile("tests/launcher_probe"); }
std::string RankProgram() { return Runfile("tests/launcher_rank"); }
std::string TempDir() { return MakeTempDir("launcher"); }

// A launcher run in the background: Wait() is bounded and kills a hung launcher. Its stdout and
// stderr go to out_dir/stdout and out_dir/stderr (a fresh directory when out_dir is "").
BoundedRun StartLauncher(const std::vector<std::string>& args, const Env& env,
                         const std::string& out_dir, const std::vector<std::string>& unset) {
  std::vector<std::string> argv = {Mpigpurun()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.timeout_ms = kLauncherWaitMs;
  options.env = env;
  options.dir = out_dir;
  // Not a rank of any job of the test runner.
  options.unset = {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_JOBID", "MPIGPU_LAUNCHER_FD"};
  options.unset.insert(options.unset.end(), unset.begin(), unset.end());
  return BoundedRun(argv, options);
}

// Live processes (not zombies) other than this one whose command line contains `text`: the
// ranks of a job and its janitor (a fork of the launcher) all name the job's scratch directory.
std::vector<std::string> ProcessesMentioning(const std::string& text) {
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (struct dirent* e = readdir(proc)) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    const int pid = std::atoi(e->d_name);
    if (pid == getpid()) continue;
    std::string cmdline = ReadFile(std::string("/proc/") + e->d_name + "/cmdline");
    if (cmdline.empty()) continue;  // a zombie, or gone meanwhile
    for (char& c : cmdline)
      if (c == '\0') c = ' ';
    std::string stat = ReadFile(std::string("/proc/") + e->d_name + "/stat");
    size_t close = stat.rfind(')');
    if (close != std::string::npos && close + 2 < stat.size() &&
        (stat[close + 2] == 'Z' || stat[close + 2] == 'X'))
      continue;
    if (cmdline.find(text) != std::string::npos)
      found.push_back(std::string(e->d_name) + ": " + cmdline);
  }
  closedir(proc);
  return found;
}

Result RunLauncher(const std::vector<std::string>& args, const Env& env) {
  return StartLauncher(args, env).Wait();
}

// The environment a probe rank recorded (empty when it wrote no file).
Env ReadRankEnv(const std::string& dir, int rank) {
  Env env;
  std::ifstream f(dir + "/rank-" + std::to_string(rank) + ".env");
  std::string line;
  while (std::getline(f, line)) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return env;
}

// Names in /dev/shm that belong to the job (the probe records MPIGPU_JOBID).
std::vector<std::string> JobShmLeft(const std::string& jobid) {
  std::vector<std::string> left;
  if (jobid.empty()) return left;
  std::string prefix = "mpigpu-" + std::to_string(getuid()) + "-" + jobid;
  if (DIR* d = opendir("/dev/shm")) {
    while (struct dirent* e = readdir(d))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0) left.push_back(e->d_name);
    closedir(d);
  }
  return left;
}

// Ranks that recorded themselves must all be gone once the launcher returned, and so must the
// job's shared memory. Returns the job id (from any rank that wrote one).
std::string ExpectJobGone(const std::string& dir, int nranks) {
  std::string jobid;
  for (int r = 0; r < nranks; ++r) {
    Env env = ReadRankEnv(dir, r);
    if (env.empty()) continue;  // ended before it recorded itself
    jobid = env["MPIGPU_JOBID"];
    pid_t pid = std::stoi(env["probe.pid"]);
    EXPECT_NE(kill(pid, 0), 0) << "rank " << r << " (pid " << pid << ") outlived the launcher";
  }
  EXPECT_FALSE(jobid.empty()) << "no rank recorded itself";
  EXPECT_TRUE(JobShmLeft(jobid).empty()) << "left in /dev/shm: " << JobShmLeft(jobid)[0];
  // Nothing of the job runs on: no rank, and no janitor (it names the directory too).
  std::vector<std::string> left = ProcessesMentioning(dir);
  EXPECT_TRUE(left.empty()) << "still running: " << left[0];
  return jobid;
}

int CountLines(const std::string& text, const std::string& start) {
  int n = 0;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) n += line.rfind(start, 0) == 0;
  return n;
}
// The rank pid files of launcher_rank recv-forever (rank-R.pid), or of probes (rank-R.env).
bool AllRecorded(const std::string& dir, int nranks, const std::string& suffix) {
  for (int r = 0; r < nranks; ++r)
    if (access((dir + "/rank-" + std::to_string(r) + suffix).c_str(), F_OK) != 0) return false;
  return true;
}

// After `kill -9 mpigpurun`: within 2 s no rank and no janitor runs on, and /dev/shm holds no
// name of the job.
void ExpectGoneAfterLauncherDeath(const std::string& dir, const std::string& jobid) {
  const bool gone = WaitUntil(2000, [&] {
    return ProcessesMentioning(dir).empty() && JobShmLeft(jobid).empty();
  });
  std::vector<std::string> procs = ProcessesMentioning(dir);
  std::vector<std::string> shm = JobShmLeft(jobid);
  EXPECT_TRUE(gone) << (procs.empty() ? "" : "still running: " + procs[0] + "\n")
                    << (shm.empty() ? "" : "left in /dev/shm: " + shm[0]);
  for (const std::string& p : procs) {  // no orphan outlives a failed test for long
    kill(std::atoi(p.c_str()), SIGKILL);
  }
}

std::string CheckTaggedChatter(const std::string& text, const std::string& stream, int nranks,
                               int lines) {
  const bool out = stream == "stdout";
  std::vector<int> next(static_cast<size_t>(nranks), 0);  // per rank: its next line's index
  std::stringstream ss(text);
  std::string line;
  int n = 0;
  while (std::getline(ss, line)) {
    ++n;
    if (line.rfind("mpigpurun: ", 0) == 0) continue;
    const std::string where = "line " + std::to_string(n) + " '" + line.substr(0, 80) + "'";
    int rank = -1;
    for (int r = 0; r < nranks && rank < 0; ++r)
      if (line.rfind("[" + std::to_string(r) + "]<" + stream + ">:", 0) == 0) rank = r;
    if (rank < 0) return where + ": no rank's tag";
    const std::string body = line.substr(line.find(':') + 1);
    int& i = next[static_cast<size_t>(rank)];
    const std::string rs = std::to_string(rank);
    std::string want;
    if (i < lines) {
      want = "rank " + rs + (out ? " out " : " err ") + std::to_string(i) + " " +
             std::string(static_cast<size_t>(i * 131 % 5000), static_cast<char>('a' + rank % 26));
    } else if (out && i == lines) {
      want = "rank " + rs + " tail";
    } else {
      return where + ": more lines than rank " + rs + " wrote";
    }
    if (body != want)
      return where + ": rank " + rs + "'s line " + std::to_string(i) + " is not whole or not next";
    ++i;
  }
  for (int r = 0; r < nranks; ++r)
    if (next[static_cast<size_t>(r)] != lines + (out ? 1 : 0))
      return "rank " + std::to_string(r) + ": " + std::to_string(next[static_cast<size_t>(r)]) +
             " lines on " + stream + ", not " + std::to_string(lines + (out ? 1 : 0));
  return "";
}

}  // namespace mpigpu::testing

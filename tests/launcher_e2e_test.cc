// End-to-end tests of //tools:mpigpurun with //tests:launcher_probe as the ranks' program (and
// //tests:launcher_rank, on the public API, where the library's side of the launcher counts).
// Every launcher run has a bounded wait: a hung launcher is killed and fails the test; after a
// launcher is killed, what it leaves behind must be gone within a deadline.
#include <dirent.h>
#include <gtest/gtest.h>
#include <hwloc.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e_util.h"

namespace mpigpu::testing {
namespace {

constexpr int kLauncherWaitMs = 20000;

using Env = std::map<std::string, std::string>;

std::string Probe() { return Runfile("tests/launcher_probe"); }
std::string RankProgram() { return Runfile("tests/launcher_rank"); }
std::string TempDir() { return MakeTempDir("launcher"); }

// A launcher run in the background: Wait() is bounded and kills a hung launcher. Its stdout and
// stderr go to out_dir/stdout and out_dir/stderr (a fresh directory when out_dir is "").
BoundedRun StartLauncher(const std::vector<std::string>& args, const Env& env = {},
                         const std::string& out_dir = "") {
  std::vector<std::string> argv = {Mpigpurun()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.timeout_ms = kLauncherWaitMs;
  options.env = env;
  options.dir = out_dir;
  // Not a rank of any job of the test runner.
  options.unset = {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_JOBID", "MPIGPU_LAUNCHER_FD"};
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

Result RunLauncher(const std::vector<std::string>& args, const Env& env = {}) {
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

std::set<int> ParseCpuList(const std::string& list) {
  std::set<int> cpus;
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) cpus.insert(std::stoi(item));
  return cpus;
}

std::set<int> CpusOf(hwloc_const_bitmap_t set) {
  std::set<int> cpus;
  for (int c = hwloc_bitmap_first(set); c >= 0; c = hwloc_bitmap_next(set, c)) cpus.insert(c);
  return cpus;
}

std::set<int> MyCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::set<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.insert(c);
  return cpus;
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

TEST(LauncherE2E, HelpAndVersion) {
  Result help = RunLauncher({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--bind-to none|core|numa"), std::string::npos) << help.out;
  Result version = RunLauncher({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out.rfind("mpigpurun (mpigpu) ", 0), 0u) << version.out;
}

TEST(LauncherE2E, EveryRankGetsItsVariables) {
  std::set<std::string> jobids;
  for (int n = 1; n <= 8; ++n) {
    SCOPED_TRACE("n=" + std::to_string(n));
    std::string dir = TempDir();
    Result r = RunLauncher({"-n", std::to_string(n), Probe(), dir, "ok"},
                           {{"CUDA_VISIBLE_DEVICES", "launcher-value"}});
    ASSERT_FALSE(r.hung);
    ASSERT_EQ(r.code, 0) << r.err;
    std::string jobid;
    for (int rank = 0; rank < n; ++rank) {
      Env env = ReadRankEnv(dir, rank);
      ASSERT_FALSE(env.empty()) << "rank " << rank << " wrote nothing";
      const std::string rs = std::to_string(rank), ns = std::to_string(n);
      for (const char* v : {"MPIGPU_RANK", "MPIGPU_LOCAL_RANK", "PMI_RANK", "MPI_LOCALRANKID",
                            "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK"})
        EXPECT_EQ(env[v], rs) << v;
      for (const char* v : {"MPIGPU_SIZE", "MPIGPU_LOCAL_SIZE", "PMI_SIZE", "MPI_LOCALNRANKS",
                            "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "WORLD_SIZE"})
        EXPECT_EQ(env[v], ns) << v;
      EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "launcher-value");
      const std::string& id = env["MPIGPU_JOBID"];
      EXPECT_EQ(id.size(), 16u);
      EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
      if (rank == 0) jobid = id;
      EXPECT_EQ(id, jobid) << "ranks of one job disagree on the job id";
    }
    jobids.insert(jobid);
    ExpectJobGone(dir, n);  // each probe made a /dev/shm name: the normal-exit sweep took it
  }
  EXPECT_EQ(jobids.size(), 8u) << "job ids repeat";
}

TEST(LauncherE2E, ExportsSetAndPassVariables) {
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", "2", "-x", "LAUNCHER_TEST_A=override", "-x", "LAUNCHER_TEST_B",
                          "-x", "LAUNCHER_TEST_C=new=value", Probe(), dir, "ok"},
                         {{"LAUNCHER_TEST_A", "inherited"}, {"LAUNCHER_TEST_B", "from-launcher"}});
  ASSERT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    Env env = ReadRankEnv(dir, rank);
    EXPECT_EQ(env["LAUNCHER_TEST_A"], "override");
    EXPECT_EQ(env["LAUNCHER_TEST_B"], "from-launcher");
    EXPECT_EQ(env["LAUNCHER_TEST_C"], "new=value");
  }
  Result unset = RunLauncher({"-n", "2", "-x", "LAUNCHER_TEST_UNSET", Probe(), dir, "ok"});
  EXPECT_EQ(unset.code, 2);
  EXPECT_NE(unset.err.find("LAUNCHER_TEST_UNSET is not set"), std::string::npos) << unset.err;
}

TEST(LauncherE2E, FailingRankExitStatusEndsTheJob) {
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", "3", Probe(), dir, "exit", "2", "7"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 7);
  Env env = ReadRankEnv(dir, 2);
  ASSERT_FALSE(env.empty());
  EXPECT_NE(r.err.find("mpigpurun: rank 2 (pid " + env["probe.pid"] +
                       ") exited with status 7; ending the job"),
            std::string::npos)
      << r.err;
  ExpectJobGone(dir, 3);
}

TEST(LauncherE2E, KilledRankEndsTheOthersAndSweepsShm) {
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", "4", Probe(), dir, "kill", "1", "9"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 128 + 9);
  Env env = ReadRankEnv(dir, 1);
  ASSERT_FALSE(env.empty());  // rank 1 made its /dev/shm name before dying
  EXPECT_NE(r.err.find("mpigpurun: rank 1 (pid " + env["probe.pid"] +
                       ") was killed by signal 9 (Killed); ending the job"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(CountLines(r.err, "mpigpurun: rank "), 1) << "only the first failure is reported\n"
                                                      << r.err;
  ExpectJobGone(dir, 4);
}

TEST(LauncherE2E, RanksIgnoringSigtermGetSigkill) {
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", "3", Probe(), dir, "exit-stubborn", "0", "5"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 5);
  ExpectJobGone(dir, 3);
}

TEST(LauncherE2E, AllRanksSucceed) {
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", "4", Probe(), dir, "ok"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ExpectJobGone(dir, 4);
}

TEST(LauncherE2E, TimeoutEndsTheJobWith124) {
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", "2", "--timeout", "0.5", Probe(), dir, "sleep"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 124);
  EXPECT_NE(r.err.find("mpigpurun: job timed out after 0.5 s"), std::string::npos) << r.err;
  ExpectJobGone(dir, 2);
}

TEST(LauncherE2E, SigtermToTheLauncherIsForwarded) {
  std::string dir = TempDir();
  BoundedRun run = StartLauncher({"-n", "3", Probe(), dir, "sleep"});
  // Wait (bounded) until every rank is up, so the signal reaches running ranks.
  for (int ms = 0; ms < 10000; ms += 10) {
    if (!ReadRankEnv(dir, 0).empty() && !ReadRankEnv(dir, 1).empty() &&
        !ReadRankEnv(dir, 2).empty())
      break;
    usleep(10000);
  }
  kill(run.pid(), SIGTERM);
  Result r = run.Wait();
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 128 + SIGTERM);
  EXPECT_NE(r.err.find("mpigpurun: got signal 15"), std::string::npos) << r.err;
  ExpectJobGone(dir, 3);
}

TEST(LauncherE2E, BadUsageExits2WithAMessage) {
  const std::string probe = Probe();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "give -n N"},
      {{probe}, "give -n N"},
      {{"-n", "0", probe}, "bad -n '0'"},
      {{"-np", "x", probe}, "bad -np 'x'"},
      {{"-n", "2"}, "no program given"},
      {{"--frob", "-n", "2", probe}, "unknown option '--frob'"},
      {{"-n", "2", "--bind-to", "socket", probe}, "bad --bind-to 'socket'"},
      {{"-n", "2", "--timeout", "soon", probe}, "bad --timeout 'soon'"},
      {{"-n"}, "option -n needs a value"},
  };
  for (const auto& [args, needle] : cases) {
    Result r = RunLauncher(args);
    EXPECT_EQ(r.code, 2) << needle;
    EXPECT_EQ(r.err.rfind("mpigpurun: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(needle), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("usage:"), std::string::npos) << r.err;
  }
}

TEST(LauncherE2E, ProgramThatCannotRunExits127) {
  Result missing = RunLauncher({"-n", "2", "/nonexistent/launcher_probe_missing"});
  EXPECT_EQ(missing.code, 127);
  EXPECT_NE(missing.err.find("mpigpurun: cannot execute '/nonexistent/launcher_probe_missing': "
                             "No such file or directory"),
            std::string::npos)
      << missing.err;
  Result not_in_path = RunLauncher({"-n", "1", "launcher-probe-not-in-path"});
  EXPECT_EQ(not_in_path.code, 127);

  std::string plain = TempDir() + "/not-executable";
  std::ofstream(plain) << "data\n";
  chmod(plain.c_str(), 0644);
  Result denied = RunLauncher({"-n", "2", plain});
  EXPECT_EQ(denied.code, 127);
  EXPECT_NE(denied.err.find("cannot execute '" + plain + "': Permission denied"),
            std::string::npos)
      << denied.err;
}

TEST(LauncherE2E, ReportBindingsPrintsOneLinePerRank) {
  for (const char* policy : {"none", "core", "numa"}) {
    SCOPED_TRACE(policy);
    std::string dir = TempDir();
    Result r = RunLauncher({"-n", "3", "--report-bindings", "--bind-to", policy, Probe(), dir,
                            "ok"});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(CountLines(r.err, "mpigpurun: rank "), 3) << r.err;
    for (int rank = 0; rank < 3; ++rank) {
      std::string line = "mpigpurun: rank " + std::to_string(rank) + " (pid " +
                         ReadRankEnv(dir, rank)["probe.pid"] + ") " +
                         (std::string(policy) == "none" ? "not bound" : "bound to cpus ");
      EXPECT_NE(r.err.find(line), std::string::npos) << line << "\n" << r.err;
    }
  }
}

// ---- the launcher's death (issue 15, item 4) ----

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

TEST(LauncherE2E, SigkillToTheLauncherEndsRanksAndRemovesShm) {
  const std::string dir = TempDir(), out = MakeTempDir("run");
  BoundedRun run = StartLauncher({"-n", "3", Probe(), dir, "sleep"}, {}, out);
  ASSERT_TRUE(WaitUntil(10000, [&] { return AllRecorded(dir, 3, ".env"); }));
  const std::string jobid = ReadRankEnv(dir, 0)["MPIGPU_JOBID"];
  ASSERT_EQ(JobShmLeft(jobid).size(), 3u);  // each probe made one
  const pid_t launcher = run.pid();
  ASSERT_EQ(kill(launcher, SIGKILL), 0);
  run.Wait();
  ExpectGoneAfterLauncherDeath(dir, jobid);
  // The janitor says what it did, in one line.
  WaitUntil(1000, [&] { return ReadFile(out + "/stderr").find("janitor") != std::string::npos; });
  std::string err = ReadFile(out + "/stderr");
  EXPECT_NE(err.find("mpigpurun: the launcher (pid " + std::to_string(launcher) + ") of job " +
                     jobid + " died; its janitor"),
            std::string::npos)
      << err;
  EXPECT_EQ(CountLines(err, "mpigpurun: "), 1) << err;
}

// Ranks that are not the launcher's children (started through a shell) get no parent-death
// signal and are not in the janitor's list: they notice the launcher's death through the link,
// on the engine's peer-check cadence, while blocked in MPIGPU_Recv.
TEST(LauncherE2E, SigkillToTheLauncherEndsRanksStartedThroughAShell) {
  const std::string dir = TempDir(), out = MakeTempDir("run");
  // "; true": the shell must stay, so the rank is its child, not the launcher's.
  BoundedRun run = StartLauncher(
      {"-n", "2", "/bin/sh", "-c", RankProgram() + " recv-forever " + dir + "; true"}, {}, out);
  ASSERT_TRUE(WaitUntil(20000, [&] { return AllRecorded(dir, 2, ".pid"); }))
      << ReadFile(out + "/stderr");
  // "pid jobid" (launcher_rank writes both).
  const std::string record = ReadFile(dir + "/rank-0.pid");
  const std::string jobid = record.substr(record.find(' ') + 1, 16);
  ASSERT_EQ(JobShmLeft(jobid).size(), 2u) << record;  // each rank made one
  ASSERT_FALSE(jobid.empty());
  ASSERT_EQ(kill(run.pid(), SIGKILL), 0);
  run.Wait();
  ExpectGoneAfterLauncherDeath(dir, jobid);
  std::string err = ReadFile(out + "/stderr");
  for (int r = 0; r < 2; ++r)
    EXPECT_NE(err.find("mpigpu: rank " + std::to_string(r) +
                       ": the launcher (mpigpurun) is gone; ending this rank"),
              std::string::npos)
        << err;
}

// Ctrl-C reaches the launcher's process group: the ranks and the launcher, not the janitor (its
// own session), which leaves quietly once the launcher has ended the job.
TEST(LauncherE2E, CtrlCEndsTheJobAndTheJanitorLeavesQuietly) {
  const std::string dir = TempDir();
  std::vector<std::string> argv = {Mpigpurun(), "-n", "2", Probe(), dir, "sleep"};
  RunOptions options;
  options.timeout_ms = kLauncherWaitMs;
  options.own_group = true;
  BoundedRun run(argv, options);
  ASSERT_TRUE(WaitUntil(10000, [&] { return AllRecorded(dir, 2, ".env"); }));
  ASSERT_EQ(kill(-run.pid(), SIGINT), 0);
  Result r = run.Wait();
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 128 + SIGINT);
  EXPECT_EQ(r.err.find("janitor"), std::string::npos) << r.err;
  ExpectJobGone(dir, 2);
}

// ---- ranks that leave without MPIGPU_Finalize (item 5) ----

TEST(LauncherE2E, RankThatSkipsFinalizeFailsTheJob) {
  Result r = RunLauncher({"-n", "2", RankProgram(), "no-finalize", "1"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("mpigpurun: rank 1 exited without calling MPIGPU_Finalize"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(CountLines(r.err, "mpigpurun: rank "), 1) << r.err;
}

// The same with ranks that do not end by themselves: the launcher ends them as for a failed rank.
TEST(LauncherE2E, RankThatSkipsFinalizeEndsTheOthers) {
  const std::string dir = TempDir();
  Result r = RunLauncher({"-n", "3", Probe(), dir, "joined-only", "2"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("mpigpurun: rank 2 exited without calling MPIGPU_Finalize (pid " +
                       ReadRankEnv(dir, 2)["probe.pid"] + ", status 0); ending the job"),
            std::string::npos)
      << r.err;
  ExpectJobGone(dir, 3);
}

TEST(LauncherE2E, RankThatSkipsFinalizeBehindAShellFailsTheJob) {
  // The shell is the launcher's child and exits 0; the rank's records name the rank.
  Result r = RunLauncher(
      {"-n", "2", "/bin/sh", "-c", RankProgram() + " no-finalize 0; true"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("mpigpurun: rank 0 exited without calling MPIGPU_Finalize"),
            std::string::npos)
      << r.err;
}

TEST(LauncherE2E, RanksThatFinalizeSucceed) {
  for (const std::vector<std::string>& prog :
       {std::vector<std::string>{RankProgram(), "ok"},
        std::vector<std::string>{"/bin/sh", "-c", RankProgram() + " ok; true"}}) {
    std::vector<std::string> args = {"-n", "3"};
    args.insert(args.end(), prog.begin(), prog.end());
    Result r = RunLauncher(args);
    ASSERT_FALSE(r.hung);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("mpigpurun:"), std::string::npos) << r.err;
    // The internal variables are known to the library's configuration.
    EXPECT_EQ(r.err.find("unknown variable"), std::string::npos) << r.err;
  }
}

TEST(LauncherE2E, ProgramWithoutMpigpuInitIsFine) {
  Result r = RunLauncher({"-n", "2", "/bin/true"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err, "");
}

// ---- a failing creator in a large job (item 9) ----

// Rank 0 (the creator) exits 1 at once while the others busy-wait as ranks waiting for it do.
// The launcher supervises while it starts ranks: it stops starting them and ends the job at
// once, instead of first starting all 64 on CPUs the waiting ranks crowd.
TEST(LauncherE2E, FailingCreatorEndsA64RankJobFast) {
  const std::string dir = TempDir();
  const auto start = std::chrono::steady_clock::now();
  Result r = RunLauncher({"-n", "64", "--bind-to", "none", Probe(), dir, "exit-now", "0", "1"});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(r.hung) << "the launcher did not end within " << kLauncherWaitMs / 1000 << " s";
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(r.code, 1);
  Env env = ReadRankEnv(dir, 0);
  ASSERT_FALSE(env.empty());
  EXPECT_NE(r.err.find("mpigpurun: rank 0 (pid " + env["probe.pid"] +
                       ") exited with status 1; ending the job"),
            std::string::npos)
      << r.err;
  ExpectJobGone(dir, 64);
}

TEST(LauncherE2E, EveryRankKnowsTheCreatorPidAndTheLink) {
  const std::string dir = TempDir();
  Result r = RunLauncher({"-n", "4", Probe(), dir, "ok"});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string creator = ReadRankEnv(dir, 0)["probe.pid"];
  ASSERT_FALSE(creator.empty());
  for (int rank = 0; rank < 4; ++rank) {
    Env env = ReadRankEnv(dir, rank);
    EXPECT_EQ(env["MPIGPU_CREATOR_PID"], creator) << "rank " << rank;
    const std::string& fd = env["MPIGPU_LAUNCHER_FD"];
    EXPECT_FALSE(fd.empty()) << "rank " << rank;
    EXPECT_EQ(fd.find_first_not_of("0123456789"), std::string::npos) << fd;
  }
}

// ---- another user's /dev/shm names with the job's prefix (item 2) ----

TEST(LauncherE2E, OtherUsersShmNamesAreLeftAndReportedOnce) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to make another user's names";
  const std::string dir = TempDir();
  Result r = RunLauncher({"-n", "3", Probe(), dir, "foreign"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string jobid = ReadRankEnv(dir, 0)["MPIGPU_JOBID"];
  ASSERT_FALSE(jobid.empty());
  std::vector<std::string> left = JobShmLeft(jobid);
  EXPECT_EQ(left.size(), 3u) << "another user's names were removed (or ours were left)";
  for (const std::string& n : left) {
    EXPECT_NE(n.find("-foreign-"), std::string::npos) << n;
    unlink(("/dev/shm/" + n).c_str());
  }
  EXPECT_EQ(CountLines(r.err, "mpigpurun: "), 1) << r.err;
  EXPECT_NE(r.err.find("mpigpurun: 3 names in /dev/shm with this job's prefix belong to "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("uid 65534"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("cannot remove"), std::string::npos) << r.err;
  ExpectJobGone(dir, 3);
}

// The topology as the launcher sees it (same process restrictions as this test).
class Topology {
 public:
  Topology() {
    hwloc_topology_init(&topo_);
    hwloc_topology_load(topo_);
  }
  ~Topology() { hwloc_topology_destroy(topo_); }
  hwloc_topology_t get() const { return topo_; }

 private:
  hwloc_topology_t topo_;
};

TEST(LauncherE2E, BindToCoreBindsRankToCoreRModCores) {
  Topology topo;
  int ncores = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_CORE);
  ASSERT_GT(ncores, 0);
  int n = std::min(ncores + 1, 8);  // wraps around once where there are few cores
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", std::to_string(n), "--bind-to", "core", Probe(), dir, "ok"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < n; ++rank) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_CORE,
                                             static_cast<unsigned>(rank % ncores));
    EXPECT_EQ(ParseCpuList(ReadRankEnv(dir, rank)["probe.affinity"]), CpusOf(core->cpuset))
        << "rank " << rank;
  }
}

TEST(LauncherE2E, BindToNumaBindsRankToOneNode) {
  Topology topo;
  std::vector<std::set<int>> nodes;
  for (int i = 0; i < hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_NUMANODE); ++i)
    nodes.push_back(CpusOf(
        hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i))->cpuset));
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", "2", "--bind-to", "numa", Probe(), dir, "ok"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    std::set<int> cpus = ParseCpuList(ReadRankEnv(dir, rank)["probe.affinity"]);
    bool one_node = false;
    for (const auto& node : nodes) one_node = one_node || cpus == node;
    EXPECT_TRUE(one_node) << "rank " << rank << " is not bound to one NUMA node";
  }
}

TEST(LauncherE2E, BindToNoneKeepsTheLaunchersCpus) {
  std::string dir = TempDir();
  Result r = RunLauncher({"-n", "2", "--bind-to", "none", Probe(), dir, "ok"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(ParseCpuList(ReadRankEnv(dir, rank)["probe.affinity"]), MyCpus()) << rank;
}

// ---- jobs across hosts (--host, --launch-agent) ----

// A launch agent that runs the "remote" command on this machine: 127.0.0.2 is not one of this
// machine's addresses to the launcher (exact match), so its ranks start as remote ranks.
std::string LocalAgent() { return Runfile("tests/testdata/local_agent.sh"); }

std::vector<std::string> TwoHosts(const std::vector<std::string>& program) {
  std::vector<std::string> args = {"-n", "4", "--host", "127.0.0.1:2,127.0.0.2:2",
                                   "--launch-agent", LocalAgent()};
  args.insert(args.end(), program.begin(), program.end());
  return args;
}

TEST(LauncherE2E, RemoteRanksGetTheirVariablesAndNoSecretOnACommandLine) {
  const std::string dir = TempDir(), log = dir + "/agent.log";
  Result r = RunLauncher(TwoHosts({Probe(), dir, "ok"}), {{"LOCAL_AGENT_LOG", log}});
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string secret = ReadRankEnv(dir, 0)["MPIGPU_JOB_SECRET"];
  ASSERT_EQ(secret.size(), 32u);
  const std::string creator = ReadRankEnv(dir, 0)["probe.pid"];
  for (int rank = 0; rank < 4; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    Env env = ReadRankEnv(dir, rank);
    EXPECT_EQ(env["MPIGPU_RANK"], std::to_string(rank));
    EXPECT_EQ(env["MPIGPU_SIZE"], "4");
    EXPECT_EQ(env["MPIGPU_LOCAL_RANK"], std::to_string(rank % 2));
    EXPECT_EQ(env["MPIGPU_LOCAL_SIZE"], "2");
    EXPECT_EQ(env["MPIGPU_NODE_MAP"], "0*2,1*2");
    EXPECT_EQ(env["MPIGPU_BOOT_ADDR"].rfind("127.0.0.1:", 0), 0u) << env["MPIGPU_BOOT_ADDR"];
    EXPECT_EQ(env["MPIGPU_JOB_SECRET"], secret);
    EXPECT_EQ(env["MPIGPU_JOBID"], ReadRankEnv(dir, 0)["MPIGPU_JOBID"]);
    // The launcher's link, the creator's pid and the job's CPUs are this node's only.
    EXPECT_EQ(env.count("MPIGPU_LAUNCHER_FD"), rank < 2 ? 1u : 0u);
    EXPECT_EQ(env.count("MPIGPU_CREATOR_PID"), rank < 2 ? 1u : 0u);
    if (rank < 2) EXPECT_EQ(env["MPIGPU_CREATOR_PID"], creator);
  }
  const std::string agents = ReadFile(log);
  EXPECT_EQ(CountLines(agents, "127.0.0.2 sh -c "), 2) << agents;
  EXPECT_EQ(agents.find(secret), std::string::npos) << "the secret is on an agent's command line";
  ExpectJobGone(dir, 4);
}

TEST(LauncherE2E, FailingRemoteRankEndsTheJobWithItsStatus) {
  const std::string dir = TempDir();
  Result r = RunLauncher(TwoHosts({Probe(), dir, "exit", "3", "3"}));
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("mpigpurun: rank 3 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(") exited with status 3; ending the job"), std::string::npos) << r.err;
  ExpectJobGone(dir, 4);
}

TEST(LauncherE2E, TimeoutEndsRemoteRanks) {
  const std::string dir = TempDir();
  Result r = RunLauncher(
      {"-n", "2", "--timeout", "0.5", "--host", "127.0.0.1,127.0.0.2", "--launch-agent",
       LocalAgent(), Probe(), dir, "sleep"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 124) << r.err;
  ExpectJobGone(dir, 2);
}

TEST(LauncherE2E, MissingLaunchAgentExits127) {
  Result r = RunLauncher({"--host", "127.0.0.1,127.0.0.2", "--launch-agent",
                          "/nonexistent/agent -x", "/bin/true"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 127);
  EXPECT_NE(r.err.find("cannot execute '/nonexistent/agent'"), std::string::npos) << r.err;
}

// Every pair of ranks exchanges messages; peers on the other "host" go by tcp, those on the
// same one by shm.
TEST(LauncherE2E, TwoHostJobTalksTcpAcrossAndShmWithin) {
  Result r = RunLauncher(TwoHosts({"-x", "MPIGPU_DEBUG=info", RankProgram(), "pairs"}));
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string me = "[mpigpu " + std::to_string(rank) + "] info: ";
    const bool first = rank < 2;
    EXPECT_NE(r.err.find(me + "ranks 0-1: " + (first ? "shm" : "tcp")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(me + "ranks 2-3: " + (first ? "tcp" : "shm")), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace mpigpu::testing

// End-to-end tests of //tools:mpigpurun with //tests:launcher_probe as the ranks' program (and
// //tests:launcher_rank, on the public API, where the library's side of the launcher counts).
// Every launcher run has a bounded wait: a hung launcher is killed and fails the test; after a
// launcher is killed, what it leaves behind must be gone within a deadline. Jobs across hosts:
// launcher_hosts_e2e_test (a local launch agent) and launcher_netns_test (namespace hosts).
#include <dirent.h>
#include <fcntl.h>
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

#include "tests/launcher_e2e_util.h"

namespace mpigpu::testing {
namespace {

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


TEST(LauncherE2E, HelpAndVersion) {
  Result help = RunLauncher({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--bind-to none|core|numa"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--tag-output"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("[R]<stdout>:"), std::string::npos) << help.out;
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

// A process's state letter from /proc/<pid>/stat ('Z': a zombie, not yet reaped); 0 when gone.
char ProcessState(pid_t pid) {
  const std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() ? 0 : stat[paren + 2];
}

// Rank 1 is killed, then rank 0 exits with an error (as a survivor that saw its peer die does),
// both before the launcher looks (it is stopped meanwhile, so both are reaped in one round, rank
// 0 first in the kernel's order): the launcher names the killed rank as the cause and ends
// with its status, not the survivor's.
TEST(LauncherE2E, TheKilledRankIsNamedNotTheSurvivorThatFailedAfterIt) {
  const std::string dir = TempDir(), out = MakeTempDir("run");
  const std::string script =
      "echo $$ > " + dir + "/pid-$MPIGPU_RANK.tmp && mv " + dir + "/pid-$MPIGPU_RANK.tmp " + dir +
      "/pid-$MPIGPU_RANK; if [ $MPIGPU_RANK = 0 ]; then i=0; while [ ! -e " + dir +
      "/go ] && [ $i -lt 3000 ]; do sleep 0.01; i=$((i+1)); done; exit 6; else exec sleep 60; fi";
  BoundedRun run = StartLauncher({"-n", "2", "/bin/sh", "-c", script}, {}, out);
  auto pid_of = [&](int r) {
    return std::atoi(ReadFile(dir + "/pid-" + std::to_string(r)).c_str());
  };
  ASSERT_TRUE(WaitUntil(20000, [&] { return pid_of(0) > 0 && pid_of(1) > 0; }));
  ASSERT_EQ(kill(run.pid(), SIGSTOP), 0);
  ASSERT_EQ(kill(pid_of(1), SIGKILL), 0);
  ASSERT_EQ(close(open((dir + "/go").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)), 0);
  const bool both = WaitUntil(20000, [&] {
    return ProcessState(pid_of(0)) == 'Z' && ProcessState(pid_of(1)) == 'Z';
  });
  ASSERT_EQ(kill(run.pid(), SIGCONT), 0);
  ASSERT_TRUE(both);
  const Result r = run.Wait();
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 128 + SIGKILL) << r.err;
  EXPECT_NE(r.err.find("mpigpurun: rank 1 (pid " + std::to_string(pid_of(1)) +
                       ") was killed by signal 9"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("rank 0 (pid " + std::to_string(pid_of(0)) + ") exited with status 6"),
            std::string::npos)
      << r.err;
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

// ---- --tag-output ----

// Three ranks write 300 lines each to stdout and stderr, every line in three pieces with pauses
// (so pieces of different ranks meet in the launcher): every line comes out whole behind its
// rank's tag, in its rank's order, on the stream it was written to; the last line without a
// newline gets one.
TEST(LauncherE2E, TagOutputPrefixesEveryWholeLine) {
  const std::string dir = TempDir();
  Result r = RunLauncher({"-n", "3", "--tag-output", Probe(), dir, "chatter", "300"});
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_EQ(CheckTaggedChatter(r.out, "stdout", 3, 300), "");
  EXPECT_EQ(CheckTaggedChatter(r.err, "stderr", 3, 300), "");
  ExpectJobGone(dir, 3);
}

// A failing rank's last words are tagged too, and the launcher's own lines are not.
TEST(LauncherE2E, TagOutputKeepsTheLaunchersOwnLinesPlain) {
  Result r = RunLauncher({"-n", "2", "--tag-output", "/bin/sh", "-c",
                          "echo bye from $MPIGPU_RANK >&2; [ $MPIGPU_RANK = 1 ] && exit 3; "
                          "exec sleep 10"});
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("[0]<stderr>:bye from 0\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[1]<stderr>:bye from 1\n"), std::string::npos) << r.err;
  EXPECT_EQ(CountLines(r.err, "mpigpurun: rank "), 1) << r.err;
  EXPECT_EQ(r.out, "");
}

}  // namespace
}  // namespace mpigpu::testing

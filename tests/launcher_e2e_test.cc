// End-to-end tests of //tools:mpigpurun with //tests:launcher_probe as the ranks' program.
// Every launcher run has a bounded wait: a hung launcher is killed and fails the test.
#include <dirent.h>
#include <gtest/gtest.h>
#include <hwloc.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

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
std::string TempDir() { return MakeTempDir("launcher"); }

// A launcher run in the background: Wait() is bounded and kills a hung launcher.
BoundedRun StartLauncher(const std::vector<std::string>& args, const Env& env = {}) {
  std::vector<std::string> argv = {Mpigpurun()};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.timeout_ms = kLauncherWaitMs;
  options.env = env;
  return BoundedRun(argv, options);
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

}  // namespace
}  // namespace mpigpu::testing

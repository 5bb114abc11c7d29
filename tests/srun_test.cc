// mpigpu ranks started by Slurm's `srun --mpi=pmix` (Slurm 22.05's mpi_pmix_v4 plugin, a PMIx
// server inside slurmstepd): a private, throw-away cluster (tests/slurm/cluster.sh: its own
// munged, slurmctld and slurmds, ports and files in a temporary directory) runs tests/pmix_rank,
// whose job comes from PMIx (internode/pmix). On one node: the cases every PMIx launcher's test
// runs (tests/pmix_launcher.h: 2 and 4 ranks by shared memory with each rank's node-local rank
// as SLURM_LOCALID, MPIGPU_SHM=0 by tcp with cards and secret through PMIx, the secret in no
// world-readable file, a libpmix that cannot be loaded, a killed rank: srun reports it and Slurm
// kills the others, a survivor that saw the death first names it with PROC_FAILED; a killed
// srun), and C programs over mpi.h. Then a two-node cluster (the slurmds in two network
// namespaces joined by a veth pair): 4 ranks, 2 per node, shm within and tcp across, a rank
// killed on the other node, a start-up exchange that times out, mpi.h programs. One cluster runs
// at a time: each is started on first use (stopping the other) and stopped at the end.
// Skips with the reason where the cluster cannot exist (not root, Slurm or munge not installed:
// Debian's slurmctld slurmd slurm-client munge; for two nodes ip, nsenter, unshare); fails when
// they exist and it does not start.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mpigpu_api/mpigpu.h"
#include "tests/e2e_util.h"
#include "tests/pmix_launcher.h"
#include "tests/pmix_rank_report.h"

extern char** environ;

namespace {

using mpigpu::testing::Info;
using mpigpu::testing::PmixLauncherCases;
using mpigpu::testing::Result;
using mpigpu::testing::RunOptions;
using mpigpu::testing::Runfile;
using mpigpu::testing::SurvivorWord;

const char kSrun[] = "/usr/bin/srun";

std::string Rank() { return mpigpu::testing::PmixRank(); }

// A cluster of `nodes` nodes (one: on this host; two: network namespaces joined by a veth pair,
// slurmctld and srun in the first).
class SlurmCluster {
 public:
  explicit SlurmCluster(int nodes) : nodes_(nodes) {}

  // Up, started now if need be: "" ; else *skip says why it cannot exist here, or the return
  // says why it did not start where it should have. Once it could not, it is not tried again.
  std::string Start(std::string* skip) {
    if (!up_ && skip_.empty() && failure_.empty()) DoStart();
    *skip = skip_;
    return failure_;
  }

  void Stop() {
    if (dir_.empty()) return;
    RunOptions o;
    o.timeout_ms = 30000;
    (void)mpigpu::testing::RunBounded({Runfile("tests/slurm/cluster.sh"), "stop", dir_}, o);
    rmdir(dir_.substr(0, dir_.size() - 2).c_str());
    dir_.clear();
    up_ = false;
  }

  const std::string& dir() const { return dir_; }

  // srun's environment: the cluster's config, none of an enclosing job's SLURM_* (a CI runner
  // inside a Slurm job must not reach the real cluster) and none of mpigpurun's variables.
  RunOptions SrunOptions() const {
    RunOptions o;
    o.timeout_ms = 60000;
    o.own_group = true;  // a hang kills srun and its local helpers
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string kv = *e;
      if (kv.rfind("SLURM_", 0) == 0 || kv.rfind("SBATCH_", 0) == 0 ||
          kv.rfind("SALLOC_", 0) == 0 || kv.rfind("PMIX_", 0) == 0 || kv.rfind("OMPI_", 0) == 0)
        o.unset.push_back(kv.substr(0, kv.find('=')));
    }
    for (const char* v : {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_JOBID", "MPIGPU_NODE_MAP"})
      o.unset.push_back(v);
    o.env["SLURM_CONF"] = dir_ + "/slurm.conf";
    return o;
  }

  // srun --mpi=pmix -n N [--export=ALL,<vars>] program args..., where srun must run (through
  // cluster.sh exec, which execs it: the pid is srun's); on two nodes N/2 ranks on each.
  std::vector<std::string> SrunArgv(int n, const std::string& vars,
                                    const std::vector<std::string>& program,
                                    const std::vector<std::string>& srun_options = {}) const {
    std::vector<std::string> argv = {Runfile("tests/slurm/cluster.sh"), "exec", dir_, kSrun,
                                     "--mpi=pmix", "-n", std::to_string(n), "--time=2"};
    argv.insert(argv.end(), srun_options.begin(), srun_options.end());
    if (nodes_ > 1) {
      argv.push_back("-N" + std::to_string(nodes_));
      argv.push_back("--ntasks-per-node=" + std::to_string(n / nodes_));
    }
    if (!vars.empty()) argv.push_back("--export=ALL," + vars);
    argv.insert(argv.end(), program.begin(), program.end());
    return argv;
  }

 private:
  void DoStart();

  const int nodes_;
  bool up_ = false;
  // dir_: the cluster's directory; skip_: why it cannot exist here; failure_: why it did not
  // start where it should have.
  std::string dir_, skip_, failure_;
};

// The two clusters; at most one runs at a time (DoStart stops the other).
SlurmCluster& Cluster(int nodes) {
  static SlurmCluster* one = new SlurmCluster(1);
  static SlurmCluster* two = new SlurmCluster(2);
  return nodes == 1 ? *one : *two;
}

void SlurmCluster::DoStart() {
  Cluster(nodes_ == 1 ? 2 : 1).Stop();
  // Short (sockets' paths have 108 bytes): under /tmp, not the test's deep scratch.
  char tmpl[] = "/tmp/mgslurm-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) {
    failure_ = std::string("mkdtemp: ") + std::strerror(errno);
    return;
  }
  dir_ = std::string(tmpl) + "/c";  // cluster.sh makes it, and removes it on stop
  RunOptions o;
  o.timeout_ms = 60000;
  const Result r = mpigpu::testing::RunBounded(
      {Runfile("tests/slurm/cluster.sh"), "start", dir_, std::to_string(nodes_),
       std::to_string(getpid())},
      o);
  if (r.code == 77) {
    skip_ = r.err;
  } else if (r.code != 0) {
    failure_ = "the Slurm cluster did not start (exit " + std::to_string(r.code) + "):\n" + r.err;
  } else {
    up_ = true;
  }
}

// The clusters end with the test program's tests (cluster.sh's watcher also ends them within a
// second of the program's end, should it be killed).
class StopClusters : public ::testing::Environment {
 public:
  void TearDown() override {
    Cluster(1).Stop();
    Cluster(2).Stop();
  }
};
[[maybe_unused]] ::testing::Environment* const kStopClusters =
    ::testing::AddGlobalTestEnvironment(new StopClusters);

// srun on the one-node cluster as the shared cases' launcher: --export passes the variables;
// the PMIx server's store is in the cluster's directory (slurmd's spool).
class SrunLauncher final : public mpigpu::testing::PmixLauncher {
 public:
  std::string name() const override { return "srun"; }
  std::string Prepare(std::string* skip) override { return Cluster(1).Start(skip); }
  std::vector<std::string> Argv(int n, const std::vector<std::string>& vars,
                                const std::vector<std::string>& program) const override {
    std::string joined;
    for (const std::string& v : vars) joined += (joined.empty() ? "" : ",") + v;
    return Cluster(1).SrunArgv(n, joined, program);
  }
  RunOptions Options() const override { return Cluster(1).SrunOptions(); }
  std::string StoreDir(const RunOptions&) const override { return Cluster(1).dir(); }
  std::string KilledReport(int r) const override {
    return "task " + std::to_string(r) + ": Killed";
  }
};
SrunLauncher srun_launcher;
INSTANTIATE_TEST_SUITE_P(Srun, PmixLauncherCases, ::testing::Values(&srun_launcher),
                         mpigpu::testing::LauncherName);

// srun_test's own cases on a cluster of kNodes nodes.
template <int kNodes>
class OnCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip;
    const std::string failure = Cluster(kNodes).Start(&skip);
    if (!skip.empty()) GTEST_SKIP() << "SKIPPED: " << skip;
    ASSERT_TRUE(failure.empty()) << failure;
  }
  static RunOptions SrunOptions() { return Cluster(kNodes).SrunOptions(); }
  static std::vector<std::string> SrunArgv(int n, const std::string& vars,
                                           const std::vector<std::string>& program,
                                           const std::vector<std::string>& srun_options = {}) {
    return Cluster(kNodes).SrunArgv(n, vars, program, srun_options);
  }
};

class Srun : public OnCluster<1> {};

// C programs over mpi.h (libmpi of this build, its job from PMIx): point-to-point on 2 and 3
// ranks, collectives on 3; each prints " No Errors" only when every check held.
TEST_F(Srun, MpiHProgramsRunUnderSrun) {
  struct Case { const char* program; int n; };
  for (const Case c : {Case{"tests/mpi/mpi_p2p_test", 2}, Case{"tests/mpi/mpi_p2p_test", 3},
                       Case{"tests/mpi/mpi_coll_test", 3}}) {
    const Result r =
        mpigpu::testing::RunBounded(SrunArgv(c.n, "", {Runfile(c.program)}), SrunOptions());
    EXPECT_FALSE(r.hung) << c.program << " -n " << c.n << "\n" << r.err;
    EXPECT_EQ(r.code, 0) << c.program << " -n " << c.n << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(" No Errors\n"), std::string::npos)
        << c.program << " -n " << c.n << "\n" << r.out << r.err;
  }
}

class SrunTwoNodes : public OnCluster<2> {};

// A survivor that saw the death before Slurm killed it says MPIGPU_ERR_PROC_FAILED naming the
// rank; printed: how long after the death srun had ended and each survivor's word. Slurm 22.05's
// PMIx plugin kills the whole step once a rank's PMIx connection is lost (whatever
// --kill-on-bad-exit says) and sends the others no PMIx event, nor answers a process-table
// query: survivors are told nothing by PMIx, only killed.
void ExpectSurvivorsWords(const Result& r, int victim, const std::vector<int>& survivors,
                          double ended) {
  const double died = mpigpu::testing::DeathTime(r.err, victim);
  for (int rank : survivors) {
    const SurvivorWord w = mpigpu::testing::ReceiveWord(r.err, rank);
    if (!w.found) continue;
    EXPECT_EQ(w.code, MPIGPU_ERR_PROC_FAILED) << r.err;
    EXPECT_NE(w.detail.find("rank " + std::to_string(victim) + " "), std::string::npos)
        << w.detail;
  }
  std::printf("srun had ended the step %.3f s after rank %d's death (-1: no death line)\n%s",
              died >= 0 ? ended - died : -1.0, victim,
              mpigpu::testing::DescribeWords(survivors, died, mpigpu::testing::ReceiveWord, r.err)
                  .c_str());
}

// 4 ranks, 2 per node: shared memory within a node, TCP across (on the veth addresses each
// rank chose from the addresses exchanged through Slurm's PMIx servers), every pair's bytes
// checked, each rank on the node Slurm put it on.
TEST_F(SrunTwoNodes, FourRanksTwoPerNodeShmWithinTcpAcross) {
  const Result r = mpigpu::testing::RunBounded(
      SrunArgv(4, "MPIGPU_DEBUG=info", {Rank(), "pairs"}), SrunOptions());
  mpigpu::testing::ExpectPairsOk(r, 4, 2);
  for (int rank = 0; rank < 4; ++rank) {
    const bool first = rank < 2;
    EXPECT_NE(r.err.find(Info(rank) + "ranks 0-1: " + (first ? "shm" : "tcp")), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(Info(rank) + "ranks 2-3: " + (first ? "tcp" : "shm")), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(Info(rank) + "joined job "), std::string::npos) << r.err;
  }
  EXPECT_NE(r.err.find(" rank 1 of 4 on node 0"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" rank 3 of 4 on node 1"), std::string::npos) << r.err;
}

// A rank on the second node kills itself while the others wait for it: srun reports it and
// the job ends on both nodes, no hang.
TEST_F(SrunTwoNodes, ARankKilledOnTheOtherNodeEndsTheJob) {
  RunOptions o = SrunOptions();
  o.timeout_ms = 30000;
  const Result r =
      mpigpu::testing::RunBounded(SrunArgv(4, "MPIGPU_DEBUG=info", {Rank(), "die", "3"}), o);
  const double ended = mpigpu::testing::MonotonicNow();
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_NE(r.code, 0) << r.err;
  for (int rank = 0; rank < 4; ++rank)
    EXPECT_NE(r.err.find(Info(rank) + "joined job "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("mg1: task 3: Killed"), std::string::npos) << r.err;
  ExpectSurvivorsWords(r, 3, {0, 1, 2}, ended);
}

// A rank on the other node comes 20 s late while MPIGPU_BOOTSTRAP_TIMEOUT is 2: the others'
// PMIx exchange ends in a timeout error at 2 s (ours or Slurm's PMIx server's, the same
// length) and, with --kill-on-bad-exit (srun's default lets the other tasks run on), the job
// ends instead of waiting for the late rank.
TEST_F(SrunTwoNodes, AnExchangeARankNeverReachesTimesOut) {
  RunOptions o = SrunOptions();
  o.timeout_ms = 15000;
  const auto start = std::chrono::steady_clock::now();
  const Result r = mpigpu::testing::RunBounded(
      SrunArgv(4, "MPIGPU_BOOTSTRAP_TIMEOUT=2", {Rank(), "late", "3", "20"},
               {"--kill-on-bad-exit=1"}),
      o);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_NE(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("did not all reach the exchange within 2 s"), std::string::npos) << r.err;
  // Each failed Init names its own rank (from PMIx's PMIX_RANK: the job is not known yet).
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.err.find("mpigpu: rank " + std::to_string(rank) + ": MPIGPU_Init: "),
              std::string::npos)
        << r.err;
  std::printf("the job ended %.2f s after its start\n", took);
}

// mpi.h across the nodes: point-to-point and collectives on 4 ranks, 2 per node.
TEST_F(SrunTwoNodes, MpiHProgramsRunAcrossTheNodes) {
  for (const char* program : {"tests/mpi/mpi_p2p_test", "tests/mpi/mpi_coll_test"}) {
    const Result r =
        mpigpu::testing::RunBounded(SrunArgv(4, "", {Runfile(program)}), SrunOptions());
    EXPECT_FALSE(r.hung) << program << "\n" << r.err;
    EXPECT_EQ(r.code, 0) << program << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find(" No Errors\n"), std::string::npos) << program << "\n" << r.out << r.err;
  }
}

}  // namespace

// mpigpu ranks started by Slurm's `srun --mpi=pmix` (Slurm 22.05's mpi_pmix_v4 plugin, a PMIx
// server inside slurmstepd): a private, throw-away one-node cluster (tests/slurm/cluster.sh: its
// own munged, slurmctld and slurmd, ports and files in a temporary directory) runs
// tests/pmix_rank, whose job comes from PMIx (internode/pmix). The checks pmix_launch_test makes
// under Open MPI's mpirun: 2 and 3 ranks, every pair's bytes checked, every pair by shared
// memory, each rank's node-local rank equal to Slurm's SLURM_LOCALID; with MPIGPU_SHM=0 the TCP
// netmod (cards and the secret through PMIx's Fence) and the secret in no world-readable file;
// a library that cannot be loaded; a killed rank (srun reports it, the others end: Slurm kills
// them, a survivor that saw the death first names it with PROC_FAILED; printed: when); a killed
// srun (its ranks end). Also C programs over mpi.h (tests/mpi) under srun. Then a two-node
// cluster (the slurmds in two network namespaces joined by a veth pair): 4 ranks, 2 per node,
// shm within and tcp across, a rank killed on the other node, a start-up exchange that times
// out, mpi.h programs.
// Skips with the reason where the cluster cannot exist (not root, Slurm or munge not installed:
// Debian's slurmctld slurmd slurm-client munge; for two nodes ip, nsenter, unshare); fails when
// they exist and it does not start.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "mpigpu_api/mpigpu.h"
#include "tests/e2e_util.h"
#include "tests/pmix_rank_report.h"

extern char** environ;

namespace {

using mpigpu::testing::BoundedRun;
using mpigpu::testing::Result;
using mpigpu::testing::RunOptions;
using mpigpu::testing::Runfile;
using mpigpu::testing::SurvivorWord;

const char kSrun[] = "/usr/bin/srun";

std::string Rank() { return Runfile("tests/pmix_rank"); }
std::string Info(int rank) { return "[mpigpu " + std::to_string(rank) + "] info: "; }

// A cluster of kNodes nodes for the test suite (one: on this host; two: network namespaces
// joined by a veth pair, slurmctld and srun in the first), started once and stopped at the end.
template <int kNodes>
class Cluster : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
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
        {Runfile("tests/slurm/cluster.sh"), "start", dir_, std::to_string(kNodes),
         std::to_string(getpid())},
        o);
    if (r.code == 77) {
      skip_ = r.err;
    } else if (r.code != 0) {
      failure_ = "the Slurm cluster did not start (exit " + std::to_string(r.code) + "):\n" + r.err;
    } else {
      conf_ = dir_ + "/slurm.conf";
      up_ = true;
    }
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) {
      RunOptions o;
      o.timeout_ms = 30000;
      (void)mpigpu::testing::RunBounded({Runfile("tests/slurm/cluster.sh"), "stop", dir_}, o);
      rmdir(dir_.substr(0, dir_.size() - 2).c_str());
    }
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << "SKIPPED: " << skip_;
    ASSERT_TRUE(failure_.empty()) << failure_;
    ASSERT_TRUE(up_);
  }

  // srun's environment: the cluster's config, none of an enclosing job's SLURM_* (a CI runner
  // inside a Slurm job must not reach the real cluster) and none of mpigpurun's variables.
  RunOptions SrunOptions() {
    RunOptions o;
    o.timeout_ms = 60000;
    o.own_group = true;  // a hang kills srun and its local helpers
    for (char** e = environ; *e != nullptr; ++e) {
      const std::string kv = *e;
      if (kv.rfind("SLURM_", 0) == 0 || kv.rfind("SBATCH_", 0) == 0 || kv.rfind("SALLOC_", 0) == 0 ||
          kv.rfind("PMIX_", 0) == 0 || kv.rfind("OMPI_", 0) == 0)
        o.unset.push_back(kv.substr(0, kv.find('=')));
    }
    for (const char* v : {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_JOBID", "MPIGPU_NODE_MAP"})
      o.unset.push_back(v);
    o.env["SLURM_CONF"] = conf_;
    return o;
  }

  // srun --mpi=pmix -n N [--export=ALL,<vars>] program args..., where srun must run (through
  // cluster.sh exec, which execs it: the pid is srun's); on two nodes N/2 ranks on each.
  static std::vector<std::string> SrunArgv(int n, const std::string& vars,
                                           std::vector<std::string> program,
                                           std::vector<std::string> srun_options = {}) {
    std::vector<std::string> argv = {Runfile("tests/slurm/cluster.sh"), "exec", dir_, kSrun,
                                     "--mpi=pmix", "-n", std::to_string(n), "--time=2"};
    argv.insert(argv.end(), srun_options.begin(), srun_options.end());
    if (kNodes > 1) {
      argv.push_back("-N" + std::to_string(kNodes));
      argv.push_back("--ntasks-per-node=" + std::to_string(n / kNodes));
    }
    if (!vars.empty()) argv.push_back("--export=ALL," + vars);
    argv.insert(argv.end(), program.begin(), program.end());
    return argv;
  }

  // Every rank of an n-rank job reached the end with its bytes right; its node-local rank (by
  // MPIGPU_Comm_split_type) among its node's n/kNodes ranks is the one SLURM_LOCALID says.
  static void ExpectPairsOk(const Result& r, int n) {
    EXPECT_FALSE(r.hung) << r.err;
    EXPECT_EQ(r.code, 0) << r.err;
    const int per_node = n / kNodes;
    for (int rank = 0; rank < n; ++rank) {
      const std::string me = "pmix_rank " + std::to_string(rank) + "/" + std::to_string(n);
      const std::string local = std::to_string(rank % per_node);
      EXPECT_EQ(r.Count(me + " ok\n"), 1) << r.out << r.err;
      EXPECT_EQ(r.Count(me + " local " + local + "/" + std::to_string(per_node) + " launcher " +
                        local + "\n"),
                1)
          << r.out;
    }
  }

  // dir_: the cluster's directory; skip_: why it cannot exist here; failure_: why it did not
  // start where it should have.
  static std::string dir_, conf_, skip_, failure_;
  static bool up_;
};
template <int kNodes>
std::string Cluster<kNodes>::dir_;
template <int kNodes>
std::string Cluster<kNodes>::conf_;
template <int kNodes>
std::string Cluster<kNodes>::skip_;
template <int kNodes>
std::string Cluster<kNodes>::failure_;
template <int kNodes>
bool Cluster<kNodes>::up_ = false;

class Srun : public Cluster<1> {};

TEST_F(Srun, TwoRanksUseSharedMemory) {
  const Result r = mpigpu::testing::RunBounded(
      SrunArgv(2, "MPIGPU_DEBUG=info", {Rank(), "pairs"}), SrunOptions());
  ExpectPairsOk(r, 2);
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(r.err.find(Info(rank) + "ranks 0-1: shm"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(Info(rank) + "joined job "), std::string::npos) << r.err;
  }
  EXPECT_NE(r.err.find(" rank 1 of 2 on node 0"), std::string::npos) << r.err;
}

TEST_F(Srun, ThreeRanksUseSharedMemory) {
  const Result r = mpigpu::testing::RunBounded(
      SrunArgv(3, "MPIGPU_DEBUG=info", {Rank(), "pairs"}), SrunOptions());
  ExpectPairsOk(r, 3);
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.err.find(Info(rank) + "ranks 0-2: shm"), std::string::npos) << r.err;
}

// MPIGPU_SHM=0: TCP between the ranks, so their cards and the job's secret go through Slurm's
// PMIx server (Put, Commit, Fence, Get) and every connection proves the secret.
TEST_F(Srun, WithoutSharedMemoryCardsAndSecretGoThroughPmix) {
  const Result r = mpigpu::testing::RunBounded(
      SrunArgv(3, "MPIGPU_DEBUG=info,MPIGPU_SHM=0", {Rank(), "pairs"}), SrunOptions());
  ExpectPairsOk(r, 3);
  EXPECT_NE(r.err.find(Info(0) + "ranks 1-2: tcp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(Info(1) + "ranks 0-0: tcp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(Info(1) + "ranks 2-2: tcp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(Info(2) + "ranks 0-1: tcp"), std::string::npos) << r.err;
}

// The secret is in no world-readable file of the cluster's directory (slurmd's spool with the
// PMIx server's store) or /dev/shm, and on no command line.
TEST_F(Srun, TheSecretIsInNoWorldReadableFileAndOnNoCommandLine) {
  const Result r = mpigpu::testing::RunBounded(
      SrunArgv(2, "MPIGPU_SHM=0", {Runfile("tests/pmix_secret_rank"), dir_, "/dev/shm"}),
      SrunOptions());
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_NE(r.out.find("pmix_secret_rank " + std::to_string(rank) + ": "), std::string::npos)
        << r.out << r.err;
  EXPECT_EQ(r.Count(", clean\n"), 2) << r.out << r.err;
  EXPECT_EQ(r.out.find(": 0 world-readable files"), std::string::npos) << r.out;
  std::printf("%s", r.out.c_str());
}

TEST_F(Srun, AMissingLibraryIsAClearError) {
  const Result r = mpigpu::testing::RunBounded(
      SrunArgv(2, "MPIGPU_PMIX_LIB=/nonexistent/libpmix.so.2", {Rank(), "pairs"}), SrunOptions());
  EXPECT_FALSE(r.hung);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("cannot load the PMIx library /nonexistent/libpmix.so.2"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.Count(" ok\n"), 0);
}

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

// Rank 1 SIGKILLs itself while the others wait for it: srun says so and ends with an error; the
// others end (no hang).
TEST_F(Srun, AKilledRankEndsTheJobAndSrunReportsIt) {
  RunOptions o = SrunOptions();
  o.timeout_ms = 30000;
  const Result r =
      mpigpu::testing::RunBounded(SrunArgv(3, "MPIGPU_DEBUG=info", {Rank(), "die", "1"}), o);
  const double ended = mpigpu::testing::MonotonicNow();
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_NE(r.code, 0) << r.err;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.err.find(Info(rank) + "joined job "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("task 1: Killed"), std::string::npos) << r.err;
  ExpectSurvivorsWords(r, 1, {0, 2}, ended);
}

// kill -9 of srun while its ranks block in a receive: Slurm ends the step and the ranks end
// within seconds (their own alarm is 60 s).
TEST_F(Srun, KillingSrunEndsItsRanks) {
  const std::string pids_dir = mpigpu::testing::MakeTempDir("ranks");
  RunOptions o = SrunOptions();
  o.own_group = false;  // srun alone gets the SIGKILL
  BoundedRun run(SrunArgv(2, "", {Rank(), "block", pids_dir}), o);
  std::vector<int> pids;
  const auto start = std::chrono::steady_clock::now();
  while (pids.size() < 2 && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    pids.clear();
    for (int rank = 0; rank < 2; ++rank) {
      const std::string text =
          mpigpu::testing::ReadFile(pids_dir + "/rank-" + std::to_string(rank) + ".pid");
      if (!text.empty() && text.back() == '\n') pids.push_back(std::atoi(text.c_str()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(pids.size(), 2u) << "the ranks did not start";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(run.pid(), SIGKILL), 0);
  (void)run.Wait();
  const auto killed = std::chrono::steady_clock::now();
  bool any = true;
  while (any && std::chrono::steady_clock::now() - killed < std::chrono::seconds(15)) {
    any = false;
    for (int pid : pids) any |= kill(pid, 0) == 0;  // slurmstepd reaps them: no zombies here
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  for (int pid : pids) {
    EXPECT_NE(kill(pid, 0), 0) << "rank pid " << pid << " outlived srun by 15 s";
    if (kill(pid, 0) == 0) kill(pid, SIGKILL);
  }
  std::printf("the ranks ended %.2f s after srun's SIGKILL\n", took);
}

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

class SrunTwoNodes : public Cluster<2> {};

// 4 ranks, 2 per node: shared memory within a node, TCP across (on the veth addresses each
// rank chose from the addresses exchanged through Slurm's PMIx servers), every pair's bytes
// checked, each rank on the node Slurm put it on.
TEST_F(SrunTwoNodes, FourRanksTwoPerNodeShmWithinTcpAcross) {
  const Result r = mpigpu::testing::RunBounded(
      SrunArgv(4, "MPIGPU_DEBUG=info", {Rank(), "pairs"}), SrunOptions());
  ExpectPairsOk(r, 4);
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

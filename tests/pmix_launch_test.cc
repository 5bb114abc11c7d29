// mpigpu ranks started by a PMIx launcher: Open MPI 4.1's mpirun (a PMIx server, built against
// libpmix) runs tests/pmix_rank, whose job, cards and secret come from PMIx (internode/pmix).
// On one host: the cases every PMIx launcher's test runs (tests/pmix_launcher.h: 2 and 4 ranks
// by shared memory, MPIGPU_SHM=0 by tcp with cards and secret through PMIx, the secret in no
// world-readable file, a libpmix that cannot be loaded, a killed rank, a killed mpirun), and
// under --enable-recovery a killed rank whose peers' receives fail with PROC_FAILED naming it.
// Across two network namespaces as hosts (the remote orted started through a launch agent that
// runs `ip netns exec`): 4 ranks, 2 per host, shm within and tcp across, and a rank killed on the
// other host (while the others wait for it, and unseen while they finalize; each also under
// --enable-recovery, where the survivors name it). Killed-rank cases print how long after the
// death each survivor knew. Skips with the reason without mpirun (or, for the namespaces,
// without root, ip or unshare).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mpigpu_api/mpigpu.h"
#include "tests/e2e_util.h"
#include "tests/netns_hosts.h"
#include "tests/pmix_launcher.h"
#include "tests/pmix_rank_report.h"

namespace {

using mpigpu::testing::Info;
using mpigpu::testing::PmixLauncherCases;
using mpigpu::testing::Result;
using mpigpu::testing::RunOptions;
using mpigpu::testing::Runfile;
using mpigpu::testing::SurvivorWord;

const char kMpirun[] = "/usr/bin/mpirun";

using mpigpu::testing::Sh;

std::string Rank() { return mpigpu::testing::PmixRank(); }

// Open MPI refuses root without these; the tests run as root in CI.
RunOptions MpirunOptions() {
  RunOptions o;
  o.timeout_ms = 60000;
  o.own_group = true;  // a hang kills mpirun and its ranks
  o.env["OMPI_ALLOW_RUN_AS_ROOT"] = "1";
  o.env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1";
  o.unset = {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_JOBID", "MPIGPU_NODE_MAP"};
  // Open MPI's session directory (PMIx's store among it): in the test's scratch, so a killed
  // mpirun leaves nothing in /tmp.
  o.env["TMPDIR"] = mpigpu::testing::MakeTempDir("ompi");
  return o;
}

std::vector<std::string> Mpirun(int n, std::vector<std::string> extra) {
  std::vector<std::string> argv = {kMpirun, "--oversubscribe", "-n", std::to_string(n)};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// Open MPI's mpirun as the shared cases' launcher: -x passes the variables; each run's session
// directory (PMIx's store among it) is a fresh one in the test's scratch.
class MpirunLauncher final : public mpigpu::testing::PmixLauncher {
 public:
  std::string name() const override { return "mpirun"; }
  std::string Prepare(std::string* skip) override {
    if (access(kMpirun, X_OK) != 0)
      *skip = std::string(kMpirun) + " is missing (Debian: openmpi-bin): no PMIx launcher to test";
    return "";
  }
  std::vector<std::string> Argv(int n, const std::vector<std::string>& vars,
                                const std::vector<std::string>& program) const override {
    std::vector<std::string> extra;
    for (const std::string& v : vars) extra.insert(extra.end(), {"-x", v});
    extra.insert(extra.end(), program.begin(), program.end());
    return Mpirun(n, extra);
  }
  RunOptions Options() const override { return MpirunOptions(); }
  std::string StoreDir(const RunOptions& o) const override { return o.env.at("TMPDIR"); }
  std::string KilledReport(int) const override { return ""; }
};
MpirunLauncher mpirun_launcher;
INSTANTIATE_TEST_SUITE_P(Mpirun, PmixLauncherCases, ::testing::Values(&mpirun_launcher),
                         mpigpu::testing::LauncherName);

// mpirun's own cases: skipped as the shared ones are.
class PmixLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string skip;
    (void)mpirun_launcher.Prepare(&skip);
    if (!skip.empty()) GTEST_SKIP() << skip;
  }
};

// Every survivor's word: `word`'s line with MPIGPU_ERR_PROC_FAILED whose detail contains `names`.
void ExpectProcFailed(const Result& r, const std::vector<int>& survivors,
                      SurvivorWord (*word)(const std::string&, int), const std::string& names) {
  for (int rank : survivors) {
    const SurvivorWord w = word(r.err, rank);
    EXPECT_TRUE(w.found) << "rank " << rank << " said nothing\n" << r.err;
    EXPECT_EQ(w.code, MPIGPU_ERR_PROC_FAILED) << "rank " << rank << "\n" << r.err;
    EXPECT_NE(w.detail.find(names), std::string::npos) << "rank " << rank << ": " << w.detail;
  }
}

// mpirun --enable-recovery lets the others run on after a rank's death: their receives from it
// fail with MPIGPU_ERR_PROC_FAILED naming it (the launcher's process table, or the engine's own
// check of the pid), and the job ends. Printed: how long after the death each survivor knew.
TEST_F(PmixLaunch, UnderEnableRecoveryAKilledRanksPeersGetProcFailedNamingIt) {
  RunOptions o = MpirunOptions();
  o.timeout_ms = 30000;
  const Result r = mpigpu::testing::RunBounded(
      Mpirun(3, {"--enable-recovery", "-x", "MPIGPU_DEBUG=info", Rank(), "die", "1"}), o);
  EXPECT_FALSE(r.hung) << r.err;
  const double died = mpigpu::testing::DeathTime(r.err, 1);
  EXPECT_GE(died, 0) << r.err;
  ExpectProcFailed(r, {0, 2}, mpigpu::testing::ReceiveWord, "rank 1 ");
  std::printf("%s", mpigpu::testing::DescribeWords({0, 2}, died, mpigpu::testing::ReceiveWord,
                                                   r.err).c_str());
}

// Two network namespaces joined by a veth pair (10.93.<n>.1 and .2) as hosts; mpirun runs in the
// first under its own host name and starts the second host's orted through
// testdata/pmix_netns_agent.sh (ip netns exec, as ssh would on a real host).
class PmixNetns : public PmixLaunch {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() == 0 && !Sh("command -v unshare")) {
      skip_ = "no unshare (util-linux): the namespaces cannot have host names of their own";
      return;
    }
    hosts_ = new mpigpu::testing::NetnsHosts("pmx", "10.93");
    a_ = hosts_->a();
    b_ = hosts_->b();
    ip_a_ = hosts_->ip_a();
    ip_b_ = hosts_->ip_b();
    subnet_ = hosts_->subnet();
    skip_ = hosts_->skip_reason();
  }
  static void TearDownTestSuite() {
    delete hosts_;
    hosts_ = nullptr;
  }
  void SetUp() override {
    PmixLaunch::SetUp();
    if (IsSkipped()) return;
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  // mpirun in the first namespace over both hosts, 2 ranks each, running `program args`
  // (pmix_rank by default).
  Result RunAcross(const std::string& args, int timeout_ms, const std::string& mpirun_args = "",
                   const std::string& program = Rank()) {
    RunOptions o = MpirunOptions();
    o.timeout_ms = timeout_ms;
    o.env["NETNS_AGENT_MAP"] = ip_b_ + "=" + b_;
    const std::string mpirun =
        std::string(kMpirun) + " --host " + ip_a_ + ":2," + ip_b_ + ":2 -n 4 --mca plm_rsh_agent " +
        Runfile("tests/testdata/pmix_netns_agent.sh") + " --mca oob_tcp_if_include " + subnet_ +
        " -x MPIGPU_DEBUG=info " + mpirun_args + " " + program + " " + args;
    return mpigpu::testing::RunBounded(
        {"/bin/sh", "-c",
         "exec ip netns exec " + a_ + " unshare --uts sh -c 'hostname " + a_ + "; exec " + mpirun + "'"},
        o);
  }

  // pmix_rank `args` (rank 3 dies) under mpirun --enable-recovery, ended by a 12 s bound (that
  // mpirun does not end: `hung` is not checked): ranks 0-2 each say PROC_FAILED, `names` in its
  // detail (`word`: which line). Printed: how long after the death each knew.
  void ExpectSurvivorsNameRank3(const std::string& args,
                                SurvivorWord (*word)(const std::string&, int),
                                const std::string& names) {
    const Result r = RunAcross(args, 12000, "--enable-recovery");
    const double died = mpigpu::testing::DeathTime(r.err, 3);
    EXPECT_GE(died, 0) << r.err;
    ExpectProcFailed(r, {0, 1, 2}, word, names);
    std::printf("%s", mpigpu::testing::DescribeWords({0, 1, 2}, died, word, r.err).c_str());
  }

  static mpigpu::testing::NetnsHosts* hosts_;
  static std::string a_, b_, ip_a_, ip_b_, subnet_, skip_;
};
mpigpu::testing::NetnsHosts* PmixNetns::hosts_ = nullptr;
std::string PmixNetns::a_, PmixNetns::b_, PmixNetns::ip_a_, PmixNetns::ip_b_, PmixNetns::subnet_,
    PmixNetns::skip_;

// 4 ranks, 2 per host: shared memory within a host, TCP across (on the hosts' veth addresses,
// which each rank chose from the addresses exchanged through PMIx), every pair's bytes checked.
TEST_F(PmixNetns, FourRanksTwoPerHostShmWithinTcpAcross) {
  const Result r = RunAcross("pairs", 60000);
  mpigpu::testing::ExpectPairsOk(r, 4, 2);
  for (int rank = 0; rank < 4; ++rank) {
    const bool first = rank < 2;
    EXPECT_NE(r.err.find(Info(rank) + "ranks 0-1: " + (first ? "shm" : "tcp")), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(Info(rank) + "ranks 2-3: " + (first ? "tcp" : "shm")), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(Info(rank) + "joined job "), std::string::npos) << r.err;
    const std::string local = std::to_string(rank % 2);
    EXPECT_EQ(r.Count("pmix_rank " + std::to_string(rank) + "/4 local " + local + "/2 launcher " +
                      local + "\n"),
              1)
        << r.out;
  }
  EXPECT_NE(r.err.find(" rank 3 of 4 on node 1"), std::string::npos) << r.err;
}

// A rank on the other host kills itself while the others wait for it: the job ends, no hang.
TEST_F(PmixNetns, ARankKilledOnTheOtherHostEndsTheJob) {
  const Result r = RunAcross("die 3", 30000);
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_NE(r.code, 0) << r.err;
  for (int rank = 0; rank < 4; ++rank)  // the job ran: every rank joined before rank 3 died
    EXPECT_NE(r.err.find(Info(rank) + "joined job "), std::string::npos) << r.err;
}

// A rank on the other host kills itself before any message while the others finalize. The
// finalize fence (PmixBootstrap::Depart) cannot complete without it, so no survivor's Finalize
// succeeds; mpirun (by default) ends the job and names the rank. Printed: what
// each survivor's Finalize returned before mpirun ended it (MPIGPU_ERR_PROC_FAILED is 9).
TEST_F(PmixNetns, ARankKilledUnseenOnTheOtherHostFailsTheJob) {
  const Result r = RunAcross("die-unseen 3", 30000);
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_NE(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("process rank 3 with PID"), std::string::npos) << r.err;
  for (int rank = 0; rank < 3; ++rank) {
    const std::string line = "pmix_rank " + std::to_string(rank) + ": finalize returned ";
    const size_t at = r.err.find(line);
    EXPECT_EQ(r.err.find(line + "0 at "), std::string::npos) << r.err;
    std::printf("rank %d: %s\n", rank,
                at == std::string::npos ? "no line (mpirun ended it first, or dropped its output)"
                                        : r.err.substr(at, r.err.find('\n', at) - at).c_str());
  }
}

// The halo benchmark on the API, unchanged, across the hosts: its exchange checked against a
// serial reference (exact).
TEST_F(PmixNetns, HaloChecksAcrossTheHosts) {
  const Result r = RunAcross("--cpu --check --size 128 --iters 50", 60000, "",
                             Runfile("benchmarks/halo"));
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" ok"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find(Info(0) + "ranks 2-3: tcp"), std::string::npos) << r.err;
}

// A rank on the other host comes 20 s late while MPIGPU_BOOTSTRAP_TIMEOUT is 2: the others'
// PMIx exchange (the hosts' addresses) ends in a timeout error at 2 s and the job ends, instead
// of waiting for it.
TEST_F(PmixNetns, AnExchangeARankNeverReachesTimesOut) {
  const auto start = std::chrono::steady_clock::now();
  const Result r = RunAcross("late 3 20", 15000, "-x MPIGPU_BOOTSTRAP_TIMEOUT=2");
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_NE(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("did not all reach the exchange within 2 s"), std::string::npos) << r.err;
  // A failed Init names its own rank (from PMIX_RANK: the job is not known yet); mpirun may end
  // the others before they print, so one of ranks 0-2 is enough.
  bool named = false;
  for (int rank = 0; rank < 3; ++rank)
    named |= r.err.find("mpigpu: rank " + std::to_string(rank) + ": MPIGPU_Init: ") !=
             std::string::npos;
  EXPECT_TRUE(named) << r.err;
  std::printf("the job ended %.2f s after its start\n", took);
}


// mpirun --enable-recovery across the hosts: a rank on the other host kills itself while the
// others wait for it; each survivor's receive fails with MPIGPU_ERR_PROC_FAILED naming rank 3
// (its own host's by the pid, the others by the launcher's process table or the TCP probe).
// Open MPI 4.1's mpirun does not end such a job even once every rank has ended (its orted on
// the other host stays): the bound (12 s) ends it, so `hung` is not checked; every survivor's
// line is. Printed: how long after the death each survivor knew.
TEST_F(PmixNetns, UnderEnableRecoveryARankKilledOnTheOtherHostFailsThePeersReceives) {
  ExpectSurvivorsNameRank3("die 3", mpigpu::testing::ReceiveWord, "rank 3 ");
}

// mpirun --enable-recovery across the hosts: a rank on the other host kills itself before any
// message while the others finalize. The finalize fence completes without it; ranks 0 and 1
// never talked to it, so only the launcher's process table (PmixBootstrap::Departed) can say it
// ended: every survivor's Finalize fails with MPIGPU_ERR_PROC_FAILED naming rank 3 (before, ranks
// 0 and 1 returned success). The bound ends mpirun, as above.
TEST_F(PmixNetns, UnderEnableRecoveryARankKilledUnseenIsNamedAtFinalize) {
  ExpectSurvivorsNameRank3("die-unseen 3", mpigpu::testing::FinalizeWord, "rank(s) 3 failed");
}

}  // namespace

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "mpigpu_api/mpigpu.h"
#include "tests/pmix_launcher.h"
#include "tests/pmix_rank_report.h"

namespace mpigpu::testing {

std::string LauncherName(const ::testing::TestParamInfo<PmixLauncher*>& info) {
  return info.param->name();
}

void PmixLauncherCases::SetUp() {
  std::string skip;
  const std::string failure = launcher().Prepare(&skip);
  if (!skip.empty()) GTEST_SKIP() << "SKIPPED: " << skip;
  ASSERT_TRUE(failure.empty()) << failure;
}

std::string PmixRank() { return Runfile("tests/pmix_rank"); }
std::string PmixSecretRank() { return Runfile("tests/pmix_secret_rank"); }
std::string Info(int rank) { return "[mpigpu " + std::to_string(rank) + "] info: "; }

void ExpectPairsOk(const Result& r, int n, int per_node, bool says_local) {
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < n; ++rank) {
    const std::string me = "pmix_rank " + std::to_string(rank) + "/" + std::to_string(n);
    const std::string local = std::to_string(rank % per_node);
    EXPECT_EQ(r.Count(me + " ok\n"), 1) << r.out << r.err;
    EXPECT_EQ(r.Count(me + " local " + local + "/" + std::to_string(per_node) + " launcher " +
                      (says_local ? local : "?") + "\n"),
              1)
        << r.out;
  }
}

bool Running(int pid) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, comm, state;
  stat >> pid_field >> comm >> state;
  return state != "Z";
}

namespace {

// n ranks on this host exchange checked messages by shared memory ("ranks 0-<n-1>: shm" on
// every rank); one job (one jobid from the namespace), one node; each rank's node-local rank
// (Comm_split_type SHARED) is the one its launcher gives it.
void ExpectShmJob(PmixLauncher& l, int n) {
  const Result r = RunBounded(l.Argv(n, {"MPIGPU_DEBUG=info"}, {PmixRank(), "pairs"}), l.Options());
  ExpectPairsOk(r, n, n, l.SaysLocalRank());
  for (int rank = 0; rank < n; ++rank) {
    EXPECT_NE(r.err.find(Info(rank) + "ranks 0-" + std::to_string(n - 1) + ": shm"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find(Info(rank) + "joined job "), std::string::npos) << r.err;
  }
  EXPECT_NE(r.err.find(" rank " + std::to_string(n - 1) + " of " + std::to_string(n) +
                       " on node 0"),
            std::string::npos)
      << r.err;
}

}  // namespace

TEST_P(PmixLauncherCases, TwoRanksUseSharedMemory) { ExpectShmJob(launcher(), 2); }

TEST_P(PmixLauncherCases, FourRanksUseSharedMemory) { ExpectShmJob(launcher(), 4); }

// MPIGPU_SHM=0: the ranks reach each other by TCP, so their cards and the job's secret go
// through the launcher's PMIx server (Put, Commit, Fence, Get) and every connection proves the
// secret.
TEST_P(PmixLauncherCases, WithoutSharedMemoryCardsAndSecretGoThroughPmix) {
  PmixLauncher& l = launcher();
  const Result r = RunBounded(l.Argv(3, {"MPIGPU_DEBUG=info", "MPIGPU_SHM=0"}, {PmixRank(), "pairs"}),
                              l.Options());
  ExpectPairsOk(r, 3, 3, l.SaysLocalRank());
  EXPECT_NE(r.err.find(Info(0) + "ranks 1-2: tcp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(Info(1) + "ranks 0-0: tcp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(Info(1) + "ranks 2-2: tcp"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(Info(2) + "ranks 0-1: tcp"), std::string::npos) << r.err;
}

// The job's secret, made by rank 0 and handed out through PMIx, is in no file other users may
// read (the directory of the launcher's PMIx store, /dev/shm) and on no command line.
TEST_P(PmixLauncherCases, TheSecretIsInNoWorldReadableFileAndOnNoCommandLine) {
  PmixLauncher& l = launcher();
  const RunOptions o = l.Options();
  const Result r = RunBounded(
      l.Argv(2, {"MPIGPU_SHM=0"}, {PmixSecretRank(), l.StoreDir(o), "/dev/shm"}), o);
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_NE(r.out.find("pmix_secret_rank " + std::to_string(rank) + ": "), std::string::npos)
        << r.out << r.err;
  EXPECT_EQ(r.Count(", clean\n"), 2) << r.out << r.err;
  if (l.StoreHasWorldReadableFiles()) {
    EXPECT_EQ(r.out.find(": 0 world-readable files"), std::string::npos)  // it looked somewhere
        << r.out;
  }
  std::printf("%s", r.out.c_str());
}

// Started by a PMIx launcher but the library cannot be loaded: MPIGPU_Init fails with a message
// that names the library, and nothing crashes.
TEST_P(PmixLauncherCases, AMissingLibraryIsAClearError) {
  PmixLauncher& l = launcher();
  const Result r = RunBounded(
      l.Argv(2, {"MPIGPU_PMIX_LIB=/nonexistent/libpmix.so.2"}, {PmixRank(), "pairs"}), l.Options());
  EXPECT_FALSE(r.hung);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("cannot load the PMIx library /nonexistent/libpmix.so.2"),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("signal"), std::string::npos) << r.err;  // no rank crashed
  EXPECT_EQ(r.Count(" ok\n"), 0);
}

// Rank 1 SIGKILLs itself while the others wait for it: the launcher says so and the job ends
// with an error, no hang. Both launchers end the others on the death by default (Slurm 22.05's
// PMIx plugin always); one that saw the death first has its receive fail with
// MPIGPU_ERR_PROC_FAILED naming rank 1. Printed: how long after the death the launcher had ended
// the job, and each survivor's word.
TEST_P(PmixLauncherCases, AKilledRankEndsTheJob) {
  PmixLauncher& l = launcher();
  RunOptions o = l.Options();
  o.timeout_ms = 30000;
  const Result r = RunBounded(l.Argv(3, {"MPIGPU_DEBUG=info"}, {PmixRank(), "die", "1"}), o);
  const double ended = MonotonicNow();
  EXPECT_FALSE(r.hung) << r.err;
  EXPECT_NE(r.code, 0) << r.err;
  for (int rank = 0; rank < 3; ++rank)  // the job ran: every rank joined before rank 1 died
    EXPECT_NE(r.err.find(Info(rank) + "joined job "), std::string::npos) << r.err;
  if (!l.KilledReport(1).empty()) {
    EXPECT_NE(r.err.find(l.KilledReport(1)), std::string::npos) << r.err;
  }
  const double died = DeathTime(r.err, 1);
  for (int rank : {0, 2}) {
    const SurvivorWord w = ReceiveWord(r.err, rank);
    if (!w.found) continue;
    EXPECT_EQ(w.code, MPIGPU_ERR_PROC_FAILED) << r.err;
    EXPECT_NE(w.detail.find("rank 1 "), std::string::npos) << w.detail;
  }
  std::printf("%s had ended the job %.3f s after rank 1's death (-1: no death line)\n%s",
              l.name().c_str(), died >= 0 ? ended - died : -1.0,
              DescribeWords({0, 2}, died, ReceiveWord, r.err).c_str());
}

// kill -9 of the launcher while its ranks block in a receive: the ranks end within seconds
// (their own alarm is 60 s): mpirun's through PMIx's lost connection (PmixBootstrap::
// LauncherGone), srun's by Slurm ending the step. Printed: when.
TEST_P(PmixLauncherCases, KillingTheLauncherEndsItsRanks) {
  PmixLauncher& l = launcher();
  const std::string dir = MakeTempDir("ranks");
  RunOptions o = l.Options();
  o.own_group = false;  // the launcher alone gets the SIGKILL; its ranks must end without it
  BoundedRun run(l.Argv(2, {}, {PmixRank(), "block", dir}), o);
  std::vector<int> pids;
  const auto start = std::chrono::steady_clock::now();
  while (pids.size() < 2 && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    pids.clear();
    for (int rank = 0; rank < 2; ++rank) {
      const std::string text = ReadFile(dir + "/rank-" + std::to_string(rank) + ".pid");
      if (!text.empty() && text.back() == '\n') pids.push_back(std::atoi(text.c_str()));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(pids.size(), 2u) << "the ranks did not start";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both block in the receive
  ASSERT_EQ(kill(run.pid(), SIGKILL), 0);
  (void)run.Wait();
  const auto killed = std::chrono::steady_clock::now();
  bool any = true;
  while (any && std::chrono::steady_clock::now() - killed < std::chrono::seconds(15)) {
    any = false;
    for (int pid : pids) any |= Running(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  for (int pid : pids) {
    EXPECT_FALSE(Running(pid)) << "rank pid " << pid << " outlived " << l.name() << " by 15 s";
    if (Running(pid)) kill(pid, SIGKILL);
  }
  std::printf("the ranks ended %.2f s after %s's SIGKILL\n", took, l.name().c_str());
}

}  // namespace mpigpu::testing

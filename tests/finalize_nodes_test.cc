// Finalize in a job that spans nodes (run with MULTIPROC_NODES=2: ranks in blocks on two nodes of
// this machine joined by a boot server, tests/multiproc.h). A rank on the other node that dies
// (SIGKILL) or leaves without finalizing while no survivor talks to it: the survivors' Finalize
// names it (kPeerFailed) within seconds, as on one node (transport_faults_test's
// FinalizeReportsARankThatDied), instead of succeeding as if it had finalized. A rank that only
// finalizes late is waited for and not reported.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/engine_util.h"
#include "tests/multiproc.h"
#include "transport/engine.h"

namespace mpigpu::transport {
namespace {

using mpigpu::testing::RunJob;
using Clock = std::chrono::steady_clock;

// How the doomed rank ends.
enum class End { kKilledAtOnce, kKilledWhileTheOthersWait, kExitsWithoutFinalize };

// A survivor's Finalize: kPeerFailed naming `dead`, well before MPIGPU_BOOTSTRAP_TIMEOUT (60 s
// here) would have ended a wait for it.
void FinalizeNames(Engine* e, int dead) {
  const auto t0 = Clock::now();
  Status st = e->Finalize();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string text = st.ToString();
  std::fprintf(stderr, "rank finalize after %.2f s: %s\n", s, text.c_str());
  RANK_CHECK(st.code() == Err::kPeerFailed);
  RANK_CHECK(text.find("rank(s) " + std::to_string(dead) + " ") != std::string::npos);
  RANK_CHECK(s < 20);
}

std::string RunWithDeadRank(int n, int dead, End end) {
  return RunJob(n, [=](int rank) {
    auto e = mpigpu::testing::JoinJob();
    RANK_CHECK(e->job().info().NodeOf(dead) != e->job().info().NodeOf(0));
    if (rank == dead) {
      if (end == End::kKilledWhileTheOthersWait) usleep(500 * 1000);
      if (end == End::kExitsWithoutFinalize) _exit(0);
      raise(SIGKILL);
    }
    FinalizeNames(e.get(), dead);
    return 0;
  }, 60, {dead});
}

class FinalizeNodes : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* nodes = std::getenv("MULTIPROC_NODES");
    if (nodes == nullptr || std::atoi(nodes) != 2) GTEST_SKIP() << "needs MULTIPROC_NODES=2";
  }
};

// Ranks 0, 1 on node 0, rank 2 alone on node 1, killed before any message.
TEST_F(FinalizeNodes, ARemoteRankKilledUnseenIsNamed) {
  EXPECT_EQ(RunWithDeadRank(3, 2, End::kKilledAtOnce), "");
}

TEST_F(FinalizeNodes, ARemoteRankKilledWhileTheOthersWaitInFinalizeIsNamed) {
  EXPECT_EQ(RunWithDeadRank(3, 2, End::kKilledWhileTheOthersWait), "");
}

TEST_F(FinalizeNodes, ARemoteRankThatExitsWithoutFinalizeIsNamed) {
  EXPECT_EQ(RunWithDeadRank(3, 2, End::kExitsWithoutFinalize), "");
}

// Two per node, rank 3 killed: its node's rank 2 names it (the segment), and so do ranks 0 and 1
// on the other node.
TEST_F(FinalizeNodes, EverySurvivorOnEitherNodeNamesTheKilledRank) {
  EXPECT_EQ(RunWithDeadRank(4, 3, End::kKilledAtOnce), "");
}

// No rank died: a rank on the other node that finalizes a second late is waited for (it marks a
// file before its Finalize; the others find it once theirs returned), and every Finalize succeeds.
TEST_F(FinalizeNodes, ALateRemoteRankIsWaitedForNotReported) {
  char dir[] = "/tmp/finalize_nodes_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string mark = std::string(dir) + "/rank2-finalizing";
  const std::string r = RunJob(3, [&](int rank) {
    auto e = mpigpu::testing::JoinJob();
    if (rank == 2) {
      usleep(1000 * 1000);
      const int fd = ::open(mark.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
      RANK_CHECK(fd >= 0);
      ::close(fd);
    }
    Status st = e->Finalize();
    if (!st.ok()) std::fprintf(stderr, "finalize: %s\n", st.ToString().c_str());
    RANK_CHECK(st.ok());
    RANK_CHECK(::access(mark.c_str(), F_OK) == 0);
    return 0;
  });
  EXPECT_EQ(r, "");
  ::unlink(mark.c_str());
  ::rmdir(dir);
}

// A rank on the other node that lives on without finalizing: the others' Finalize ends in
// kTimeout at MPIGPU_BOOTSTRAP_TIMEOUT (2 s here), no hang; the late rank's own Finalize, after
// every other rank's goodbye, succeeds.
TEST_F(FinalizeNodes, ARemoteRankThatNeverFinalizesEndsTheWaitAtTheTimeout) {
  const std::string r = RunJob(3, [](int rank) {
    setenv("MPIGPU_BOOTSTRAP_TIMEOUT", "2", 1);
    auto e = mpigpu::testing::JoinJob();
    if (rank == 2) usleep(4000 * 1000);
    Status st = e->Finalize();
    std::fprintf(stderr, "rank %d finalize: %s\n", rank, st.ToString().c_str());
    RANK_CHECK(rank == 2 ? st.ok() : st.code() == Err::kTimeout);
    return 0;
  });
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::transport

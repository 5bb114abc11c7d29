// internode/pmix's pure parts and wiring/job_source's choice, without a PMIx launcher: the
// jobid from a namespace, node numbering, local rank and size, which launcher's variables win,
// and a PMIx environment whose server is not there (an error, no crash, no wait).
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "internode/pmix/pmix_bootstrap.h"
#include "wiring/job_source.h"

namespace mpigpu::internode {
namespace {

TEST(PmixBootstrap, JobIdIsSixteenHexDigitsOfTheNamespace) {
  const std::string a = PmixBootstrap::JobIdOf("2145452033");
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos) << a;
  EXPECT_EQ(a, PmixBootstrap::JobIdOf("2145452033"));  // every rank computes the same
  EXPECT_NE(a, PmixBootstrap::JobIdOf("2145452034"));
  // Names with characters shared memory names cannot hold (PRRTE: "prterun-host-123@1").
  const std::string b = PmixBootstrap::JobIdOf("prterun-h/1 2@1");
  EXPECT_EQ(b.find_first_not_of("0123456789abcdef"), std::string::npos) << b;
}

TEST(PmixBootstrap, NodesAreNumberedInTheOrderOfTheirLowestRank) {
  EXPECT_EQ(PmixBootstrap::NumberNodes({5, 5, 2, 2}), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(PmixBootstrap::NumberNodes({3, 1, 3, 1}), (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ(PmixBootstrap::NumberNodes({7}), (std::vector<int>{0}));
  // PMIX_LOCAL_PEERS' fallback: this node's ranks labelled by their lowest, others by their own.
  EXPECT_EQ(PmixBootstrap::NumberNodes({0, 1, 1, 3}), (std::vector<int>{0, 1, 1, 2}));
}

TEST(JobInfo, LocalRankAndSizeCountTheNodesRanks) {
  transport::JobInfo job;
  job.size = 4;
  job.rank = 2;
  job.node_of = {0, 1, 0, 1};
  EXPECT_EQ(job.LocalRank(), 1);
  EXPECT_EQ(job.LocalSize(), 2);
  job.node_of.clear();  // one node
  EXPECT_EQ(job.LocalRank(), 2);
  EXPECT_EQ(job.LocalSize(), 4);
}

TEST(JobSource, MpigpurunsVariablesWinOverPmix) {
  setenv("PMIX_RANK", "0", 1);
  setenv("PMIX_NAMESPACE", "not-a-job", 1);
  setenv("MPIGPU_RANK", "1", 1);
  setenv("MPIGPU_SIZE", "2", 1);
  setenv("MPIGPU_JOBID", "abc123", 1);
  transport::JobInfo job;
  EXPECT_TRUE(PmixBootstrap::Launched());
  ASSERT_TRUE(wiring::JobFromLauncher(&job).ok());
  EXPECT_EQ(job.rank, 1);
  EXPECT_EQ(job.size, 2);
  EXPECT_EQ(job.launcher_boot, nullptr);
  unsetenv("MPIGPU_RANK");
  unsetenv("MPIGPU_SIZE");
  unsetenv("MPIGPU_JOBID");
  unsetenv("PMIX_RANK");
  unsetenv("PMIX_NAMESPACE");
  EXPECT_FALSE(PmixBootstrap::Launched());
  ASSERT_TRUE(wiring::JobFromLauncher(&job).ok());  // no launcher: one rank
  EXPECT_EQ(job.size, 1);
  EXPECT_EQ(job.launcher_boot, nullptr);
}

// PMIx's variables without a server behind them (a stale environment): Init fails at once and
// says so; the process goes on.
TEST(JobSource, APmixEnvironmentWithoutItsServerIsAClearError) {
  setenv("PMIX_RANK", "0", 1);
  setenv("PMIX_NAMESPACE", "no-such-job", 1);
  transport::JobInfo job;
  const Status st = wiring::JobFromLauncher(&job);
  unsetenv("PMIX_RANK");
  unsetenv("PMIX_NAMESPACE");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("started by a PMIx launcher (PMIX_NAMESPACE=no-such-job)"),
            std::string::npos) << st.message();
  // Either libpmix is missing (named) or its Init found no server.
  EXPECT_TRUE(st.message().find("PMIx_Init failed") != std::string::npos ||
              st.message().find("cannot load the PMIx library") != std::string::npos)
      << st.message();
  EXPECT_EQ(job.launcher_boot, nullptr);
}

}  // namespace
}  // namespace mpigpu::internode

namespace mpigpu::internode {
namespace {

std::string NoRoute(uint32_t) { return ""; }
std::string RouteVia42(uint32_t) { return "10.42.0.7"; }

TEST(PmixBootstrap, TheListenAddressIsInASubnetAnotherHostHas) {
  // docker0 (the same 172.17.0.1 on both hosts) does not count; the shared 10.0.0.0/24 does.
  EXPECT_EQ(PmixBootstrap::PickAddress("172.17.0.1/16,10.0.0.1/24", {"172.17.0.1/16,10.0.0.2/24"},
                                       NoRoute),
            "10.0.0.1");
  EXPECT_EQ(PmixBootstrap::PickAddress("192.168.1.5/24,10.1.0.1/16", {"", "10.1.5.3/16"}, NoRoute),
            "10.1.0.1");
  // No shared subnet: the route's source, else this host's first address, else none.
  EXPECT_EQ(PmixBootstrap::PickAddress("10.42.0.7/24,192.168.9.1/24", {"10.99.0.2/24"}, RouteVia42),
            "10.42.0.7");
  EXPECT_EQ(PmixBootstrap::PickAddress("192.168.9.1/24", {"10.99.0.2/24"}, NoRoute), "192.168.9.1");
  EXPECT_EQ(PmixBootstrap::PickAddress("", {"10.99.0.2/24"}, NoRoute), "");
  // Hostile lists: garbage and bad prefixes are skipped, never a crash.
  EXPECT_EQ(PmixBootstrap::PickAddress("x/99,10.0.0.1/24,/,,1.2.3.4/-1,1.2.3.5/99999999999999999999", {"zz,10.0.0.9/40,10.0.0.3"},
                                       NoRoute),
            "10.0.0.1");
}

}  // namespace
}  // namespace mpigpu::internode

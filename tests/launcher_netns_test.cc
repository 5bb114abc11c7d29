// mpigpurun across two hosts that are network namespaces of this machine, joined by a veth pair
// (10.94.<n>.1 and .2, namespaces mpl2a<pid>/mpl2b<pid>, made and removed by the suite). The
// launcher runs in the first (the test process enters it); the launch agent
// (tests/testdata/netns_agent.sh) runs each remote command in the second, as ssh would on a real
// host. Cases: a job all on the other host (no boot server: its ranks' links to the launcher carry
// its supervision), a remote rank that skips MPIGPU_Finalize, one that dies before any message
// (through its agent's status, and behind a shell through its link's close), the launcher's
// death, --tag-output, the hosts' link going down under a job. Every launcher run has a bounded
// wait; faults must end the job within seconds. Needs root and `ip`: skips with the reason where
// namespaces cannot be made.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "memcopy/log_limit.h"
#include "tests/launcher_e2e_util.h"
#include "tests/netns_hosts.h"

namespace mpigpu::testing {
namespace {

class LauncherNetns : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hosts_ = new mpigpu::testing::NetnsHosts("mpl2", "10.94");
    a_ = hosts_->a();
    b_ = hosts_->b();
    ip_a_ = hosts_->ip_a();
    ip_b_ = hosts_->ip_b();
    link_a_ = hosts_->link_a();
    // The launcher (a child of this process) runs in the first host.
    (void)hosts_->EnterA();
    skip_ = hosts_->skip_reason();
  }
  static void TearDownTestSuite() {
    delete hosts_;
    hosts_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  static Env AgentEnv() { return {{"NETNS_AGENT_MAP", ip_b_ + "=" + b_}}; }
  // --host H --launch-agent netns_agent, then `program`.
  static std::vector<std::string> Args(const std::string& hosts,
                                       const std::vector<std::string>& program) {
    std::vector<std::string> args = {"--host", hosts, "--launch-agent",
                                     Runfile("tests/testdata/netns_agent.sh")};
    args.insert(args.end(), program.begin(), program.end());
    return args;
  }
  static Result Run(const std::string& hosts, const std::vector<std::string>& program,
                    double* seconds = nullptr) {
    const auto start = std::chrono::steady_clock::now();
    Result r = RunLauncher(Args(hosts, program), AgentEnv());
    if (seconds != nullptr)
      *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }
  static std::string Both() { return ip_a_ + ":1," + ip_b_ + ":1"; }
  static std::string OnlyB(int n) { return ip_b_ + ":" + std::to_string(n); }

  static mpigpu::testing::NetnsHosts* hosts_;
  static std::string a_, b_, link_a_, ip_a_, ip_b_, skip_;
};
mpigpu::testing::NetnsHosts* LauncherNetns::hosts_ = nullptr;
std::string LauncherNetns::a_, LauncherNetns::b_, LauncherNetns::link_a_, LauncherNetns::ip_a_,
    LauncherNetns::ip_b_, LauncherNetns::skip_;

// A job whose ranks are all on the other host: they meet over shared memory there, and the
// launcher hears from them through their links (a rank's end, its records).
TEST_F(LauncherNetns, AJobAllOnTheOtherHostRunsAndIsSupervised) {
  Result r = Run(OnlyB(3), {"-x", "MPIGPU_DEBUG=info", RankProgram(), "pairs"});
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(r.err.find("[mpigpu " + std::to_string(rank) + "] info: ranks 0-2: shm"),
              std::string::npos)
        << r.err;
  const std::string dir = TempDir();
  Result env = Run(OnlyB(2), {Probe(), dir, "ok"});
  ASSERT_EQ(env.code, 0) << env.err;
  for (int rank = 0; rank < 2; ++rank)
    EXPECT_EQ(ReadRankEnv(dir, rank)["MPIGPU_LAUNCHER_ADDR"].rfind(ip_a_ + ":", 0), 0u)
        << "the link goes to the launcher's address towards the other host";
  ExpectJobGone(dir, 2);
  // One rank fails: the launcher ends the other and reports the first with its status.
  const std::string dir2 = TempDir();
  Result fail = Run(OnlyB(2), {Probe(), dir2, "exit", "1", "5"});
  ASSERT_FALSE(fail.hung);
  EXPECT_EQ(fail.code, 5) << fail.err;
  EXPECT_NE(fail.err.find("its launch agent for host " + ip_b_ + ") exited with status 5"),
            std::string::npos)
      << fail.err;
  ExpectJobGone(dir2, 2);
}

// Strangers hold twice as many silent connections to the launcher's boot server as it lets wait
// for a hello, from before the remote rank starts (its launch agent waits for a file the test
// makes once the attack is in place: slow_netns_agent.sh) until the job's end, each one made
// again as soon as it is dropped. The remote rank still joins (dropped while silent, it dials
// again), every pair's messages arrive, and the boot server's log is a few lines and a count.
TEST_F(LauncherNetns, SilentConnectionsAtTheBootServerDuringASlowRemoteStartDoNotStopTheJob) {
  const std::string dir = TempDir();
  Env env = AgentEnv();
  env["SLOW_AGENT_DIR"] = dir;
  BoundedRun run = StartLauncher({"--host", Both(), "--launch-agent",
                                  Runfile("tests/testdata/slow_netns_agent.sh"), RankProgram(),
                                  "pairs"},
                                 env);
  ASSERT_TRUE(WaitUntil(20000, [&] { return access((dir + "/boot-addr").c_str(), F_OK) == 0; }));
  std::string addr = ReadFile(dir + "/boot-addr");
  addr = addr.substr(0, addr.find('\n'));
  const pid_t stranger = HoldSilentConnections(addr, 2 * 64);  // BootServer::kMaxStrangers
  ASSERT_GT(stranger, 0) << "no hold on '" << addr << "'";
  ASSERT_EQ(close(open((dir + "/go").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600)), 0);
  const Result r = run.Wait();
  StopHolding(stranger);
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("have not said who they are"), std::string::npos) << r.err;
  EXPECT_LE(CountLines(r.err, "mpigpurun: boot server: "), LogLimit::kBurst + 2) << r.err;
}

// kill -9 of the launcher: ranks on the other host, behind a shell that stays (no parent-death
// signal), end through their links' close within 2 s, whether the job is all there or split.
TEST_F(LauncherNetns, KillingTheLauncherEndsAJobAllOnTheOtherHost) {
  for (const std::string& hosts : {OnlyB(2), Both()}) {
    SCOPED_TRACE(hosts);
    const std::string dir = TempDir(), out = MakeTempDir("run");
    BoundedRun run = StartLauncher(
        Args(hosts, {"/bin/sh", "-c", RankProgram() + " recv-forever " + dir + "; true"}),
        AgentEnv(), out);
    ASSERT_TRUE(WaitUntil(20000, [&] { return AllRecorded(dir, 2, ".pid"); }))
        << ReadFile(out + "/stderr");
    const std::string record = ReadFile(dir + "/rank-1.pid");
    const std::string jobid = record.substr(record.find(' ') + 1, 16);
    ASSERT_EQ(kill(run.pid(), SIGKILL), 0);
    run.Wait();
    ExpectGoneAfterLauncherDeath(dir, jobid);
    const std::string err = ReadFile(out + "/stderr");
    EXPECT_NE(err.find("mpigpu: rank 1: the launcher (mpigpurun) is gone; ending this rank"),
              std::string::npos)
        << err;
  }
}

// A rank on the other host returns 0 from main without MPIGPU_Finalize: the job fails naming it,
// split across the hosts or all on the other one.
TEST_F(LauncherNetns, ARemoteRankThatSkipsFinalizeFailsTheJob) {
  for (const std::string& hosts : {Both(), OnlyB(2)}) {
    SCOPED_TRACE(hosts);
    double seconds = 0;
    Result r = Run(hosts, {RankProgram(), "no-finalize", "1"}, &seconds);
    ASSERT_FALSE(r.hung);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("mpigpurun: rank 1 exited without calling MPIGPU_Finalize (pid "),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("its launch agent for host " + ip_b_ + ", status 0); ending the job"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(CountLines(r.err, "mpigpurun: rank "), 1) << r.err;
    EXPECT_LT(seconds, 10.0);
  }
}

// Rank 1, on the other host, dies (SIGKILL) right after MPIGPU_Init, before any message; rank 0
// finalizes without ever having talked to it. The launcher reports it: through the agent's status
// (the agent execs the rank), or, behind a shell that lives on, through its link's close ~1 s
// later. Within seconds either way.
TEST_F(LauncherNetns, ARemoteRankThatDiesUnseenIsReported) {
  double seconds = 0;
  Result r = Run(Both(), {RankProgram(), "die-unseen", "1"}, &seconds);
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 128 + SIGKILL) << r.err;
  EXPECT_NE(r.err.find("its launch agent for host " + ip_b_ + ") was killed by signal 9"),
            std::string::npos)
      << r.err;
  EXPECT_LT(seconds, 10.0);

  Result behind =
      Run(Both(), {"/bin/sh", "-c", RankProgram() + " die-unseen 1; sleep 8"}, &seconds);
  ASSERT_FALSE(behind.hung);
  EXPECT_EQ(behind.code, 1) << behind.err;
  EXPECT_NE(behind.err.find("mpigpurun: rank 1 on host " + ip_b_ +
                            " left the job without MPIGPU_Finalize: its link to the launcher "
                            "closed"),
            std::string::npos)
      << behind.err;
  EXPECT_LT(seconds, 6.0) << "the lost rank was not noticed before its shell ended";
  std::fprintf(stderr, "a rank lost on the other host ended the job in %.2f s\n", seconds);
}

// --tag-output: ranks on both hosts write 200 lines to each stream in pieces; every line comes out
// whole behind its rank's tag, in order.
TEST_F(LauncherNetns, TagOutputAcrossTheHosts) {
  const std::string dir = TempDir();
  Result r = RunLauncher(Args(ip_a_ + ":1," + ip_b_ + ":2",
                              {"--tag-output", Probe(), dir, "chatter", "200"}),
                         AgentEnv());
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_EQ(CheckTaggedChatter(r.out, "stdout", 3, 200), "");
  EXPECT_EQ(CheckTaggedChatter(r.err, "stderr", 3, 200), "");
  ExpectJobGone(dir, 3);
}

// The link between the hosts goes down under a job all on the other host (its ranks wait in a
// receive there, over shared memory): nothing closes, but keepalives on both ends of the ranks'
// links notice within about 10 s, and the job ends in an error instead of hanging. Last in the
// suite (Z): the link is brought back up after it.
TEST_F(LauncherNetns, ZTheHostsLinkGoingDownEndsTheJob) {
  const std::string dir = TempDir(), out = MakeTempDir("run");
  BoundedRun run = StartLauncher(
      Args(OnlyB(2), {RankProgram(), "recv-forever", dir}), AgentEnv(), out);
  ASSERT_TRUE(WaitUntil(20000, [&] { return AllRecorded(dir, 2, ".pid"); }))
      << ReadFile(out + "/stderr");
  ASSERT_TRUE(Sh("ip -n " + a_ + " link set " + link_a_ + " down"));
  const auto cut = std::chrono::steady_clock::now();
  Result r = run.Wait();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - cut).count();
  Sh("ip -n " + a_ + " link set " + link_a_ + " up");
  ASSERT_FALSE(r.hung) << ReadFile(out + "/stderr");
  const std::string err = ReadFile(out + "/stderr");
  EXPECT_EQ(r.code, 1) << err;
  // Whichever end's keepalives give up first: the launcher's (the rank is lost) or the ranks'
  // (their launcher is gone, and they exit 1).
  EXPECT_TRUE(err.find("left the job without MPIGPU_Finalize: its link to the launcher closed") !=
                  std::string::npos ||
              err.find("the launcher (mpigpurun) is gone") != std::string::npos)
      << err;
  EXPECT_LT(seconds, 20.0);
  std::fprintf(stderr, "the job ended %.1f s after its hosts' link went down\n", seconds);
  for (int rank = 0; rank < 2; ++rank) {
    const pid_t pid = std::atoi(ReadFile(dir + "/rank-" + std::to_string(rank) + ".pid").c_str());
    EXPECT_TRUE(pid > 0 && kill(pid, 0) != 0) << "rank " << rank << " outlived the job";
  }
}

}  // namespace
}  // namespace mpigpu::testing

// End-to-end tests of //tools:mpigpurun across hosts (--host, --hostfile, --launch-agent) with a
// local launch agent (tests/testdata/local_agent.sh): 127.0.0.2 is not one of this machine's
// addresses to the launcher (exact match), so its ranks start as remote ranks, through the
// agent, with the launcher's link server and (on two hosts) boot server. Every launcher run has
// a bounded wait. The same across network-namespace hosts: launcher_netns_test.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/launcher_e2e_util.h"

namespace mpigpu::testing {
namespace {

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
    // Remote ranks' link is a TCP connection to the launcher's link server.
    EXPECT_EQ(env.count("MPIGPU_LAUNCHER_ADDR"), rank < 2 ? 0u : 1u);
    if (rank >= 2) EXPECT_EQ(env["MPIGPU_LAUNCHER_ADDR"].rfind("127.0.0.1:", 0), 0u);
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

// ---- a job all on one other host (no boot server: one node) ----

std::vector<std::string> OneRemoteHost(int n, const std::vector<std::string>& program) {
  std::vector<std::string> args = {"--host", "127.0.0.2:" + std::to_string(n), "--launch-agent",
                                   LocalAgent()};
  args.insert(args.end(), program.begin(), program.end());
  return args;
}

// After MPIGPU_Init no rank, local or remote, has the job's secret in its environment, and no
// child process inherits it; the ranks' connections made afterwards still prove it (every pair
// talks, by tcp across the hosts), whichever reader took it first (launcher link, boot client).
TEST(LauncherE2E, TheJobSecretLeavesTheEnvironmentAtInit) {
  for (const auto& args : {TwoHosts({RankProgram(), "secret-gone"}),
                           OneRemoteHost(2, {RankProgram(), "secret-gone"})}) {
    Result r = RunLauncher(args);
    ASSERT_FALSE(r.hung);
    EXPECT_EQ(r.code, 0) << r.err;
  }
}

// Its ranks get a link to the launcher (MPIGPU_LAUNCHER_ADDR, the secret through the agent's
// stdin) but no node map or boot server, and meet over shared memory.
TEST(LauncherE2E, AJobAllOnOneRemoteHostGetsALinkAndUsesShm) {
  const std::string dir = TempDir(), log = dir + "/agent.log";
  Result r = RunLauncher(OneRemoteHost(2, {Probe(), dir, "ok"}), {{"LOCAL_AGENT_LOG", log}});
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    Env env = ReadRankEnv(dir, rank);
    EXPECT_EQ(env["MPIGPU_LOCAL_RANK"], std::to_string(rank));
    EXPECT_EQ(env["MPIGPU_LAUNCHER_ADDR"].rfind("127.0.0.1:", 0), 0u)
        << env["MPIGPU_LAUNCHER_ADDR"];
    EXPECT_EQ(env["MPIGPU_JOB_SECRET"].size(), 32u);
    EXPECT_EQ(env.count("MPIGPU_NODE_MAP"), 0u);
    EXPECT_EQ(env.count("MPIGPU_BOOT_ADDR"), 0u);
    EXPECT_EQ(env.count("MPIGPU_LAUNCHER_FD"), 0u);
    EXPECT_EQ(ReadFile(log).find(env["MPIGPU_JOB_SECRET"]), std::string::npos);
  }
  ExpectJobGone(dir, 2);
  Result pairs = RunLauncher(OneRemoteHost(3, {"-x", "MPIGPU_DEBUG=info", RankProgram(), "pairs"}));
  ASSERT_FALSE(pairs.hung);
  ASSERT_EQ(pairs.code, 0) << pairs.err;
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_NE(pairs.err.find("[mpigpu " + std::to_string(rank) + "] info: ranks 0-2: shm"),
              std::string::npos)
        << pairs.err;
}

TEST(LauncherE2E, AJobAllOnOneRemoteHostEndsOnAFailure) {
  const std::string dir = TempDir();
  Result r = RunLauncher(OneRemoteHost(3, {Probe(), dir, "exit", "1", "6"}));
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 6) << r.err;
  EXPECT_NE(r.err.find("mpigpurun: rank 1 (pid "), std::string::npos) << r.err;
  EXPECT_NE(
      r.err.find(", its launch agent for host 127.0.0.2) exited with status 6; ending the job"),
      std::string::npos)
      << r.err;
  ExpectJobGone(dir, 3);
}

// kill -9 of the launcher: its remote ranks, started through a shell that stays (no parent-death
// signal reaches them), end through their links within 2 s.
TEST(LauncherE2E, AJobAllOnOneRemoteHostEndsWithItsLauncher) {
  const std::string dir = TempDir(), out = MakeTempDir("run");
  BoundedRun run = StartLauncher(
      OneRemoteHost(2, {"/bin/sh", "-c", RankProgram() + " recv-forever " + dir + "; true"}), {},
      out);
  ASSERT_TRUE(WaitUntil(20000, [&] { return AllRecorded(dir, 2, ".pid"); }))
      << ReadFile(out + "/stderr");
  const std::string record = ReadFile(dir + "/rank-0.pid");
  const std::string jobid = record.substr(record.find(' ') + 1, 16);
  ASSERT_EQ(kill(run.pid(), SIGKILL), 0);
  run.Wait();
  ExpectGoneAfterLauncherDeath(dir, jobid);
  const std::string err = ReadFile(out + "/stderr");
  for (int r = 0; r < 2; ++r)
    EXPECT_NE(err.find("mpigpu: rank " + std::to_string(r) +
                       ": the launcher (mpigpurun) is gone; ending this rank"),
              std::string::npos)
        << err;
}

// ---- remote ranks that leave without MPIGPU_Finalize, or die unseen ----

TEST(LauncherE2E, RemoteRankThatSkipsFinalizeFailsTheJob) {
  for (const std::vector<std::string>& hosts :
       {std::vector<std::string>{"--host", "127.0.0.1,127.0.0.2"},
        std::vector<std::string>{"--host", "127.0.0.2:2"}}) {
    std::vector<std::string> args = hosts;
    for (const std::string& w : {std::string("--launch-agent"), LocalAgent(), RankProgram(),
                                 std::string("no-finalize"), std::string("1")})
      args.push_back(w);
    Result r = RunLauncher(args);
    ASSERT_FALSE(r.hung);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("mpigpurun: rank 1 exited without calling MPIGPU_Finalize (pid "),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("its launch agent for host 127.0.0.2, status 0); ending the job"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(CountLines(r.err, "mpigpurun: rank "), 1) << r.err;
  }
}

// The probe's "joined" record over the remote link, then exit 0: the others, which would sleep,
// are ended.
TEST(LauncherE2E, RemoteRankThatSkipsFinalizeEndsTheOthers) {
  const std::string dir = TempDir();
  Result r = RunLauncher(TwoHosts({Probe(), dir, "joined-only", "3"}));
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("mpigpurun: rank 3 exited without calling MPIGPU_Finalize (pid "),
            std::string::npos)
      << r.err;
  ExpectJobGone(dir, 4);
}

// Rank 1 (the other host) kills itself right after MPIGPU_Init, before any message: its agent's
// status names it (the agent execs the rank). Behind a shell that stays, its link's close does,
// about 1 s later; either way the job fails within seconds.
TEST(LauncherE2E, RemoteRankThatDiesUnseenFailsTheJob) {
  const std::vector<std::string> two = {"--host", "127.0.0.1,127.0.0.2", "--launch-agent",
                                        LocalAgent()};
  std::vector<std::string> args = two;
  args.insert(args.end(), {RankProgram(), "die-unseen", "1"});
  Result r = RunLauncher(args);
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 128 + SIGKILL) << r.err;
  EXPECT_NE(r.err.find("mpigpurun: rank 1 (pid "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("its launch agent for host 127.0.0.2) was killed by signal 9"),
            std::string::npos)
      << r.err;

  args = two;
  args.insert(args.end(), {"/bin/sh", "-c", RankProgram() + " die-unseen 1; sleep 8"});
  const auto start = std::chrono::steady_clock::now();
  Result behind = RunLauncher(args);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_FALSE(behind.hung);
  EXPECT_EQ(behind.code, 1) << behind.err;
  EXPECT_NE(behind.err.find("mpigpurun: rank 1 on host 127.0.0.2 left the job without "
                            "MPIGPU_Finalize: its link to the launcher closed"),
            std::string::npos)
      << behind.err;
  EXPECT_LT(seconds, 6.0) << "the lost rank was not noticed before its shell ended";
  std::fprintf(stderr, "a remote rank lost behind its shell ended the job in %.2f s\n", seconds);
}

// ---- --tag-output across hosts ----

TEST(LauncherE2E, TagOutputTagsRemoteRanksWholeLines) {
  const std::string dir = TempDir();
  Result r = RunLauncher({"--tag-output", "--host", "127.0.0.1:1,127.0.0.2:2", "--launch-agent",
                          LocalAgent(), Probe(), dir, "chatter", "200"});
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err.substr(0, 2000);
  EXPECT_EQ(CheckTaggedChatter(r.out, "stdout", 3, 200), "");
  EXPECT_EQ(CheckTaggedChatter(r.err, "stderr", 3, 200), "");
  ExpectJobGone(dir, 3);
}

}  // namespace
}  // namespace mpigpu::testing

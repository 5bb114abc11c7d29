// mpigpurun --mps end to end without a GPU: the GPUs' facts come from MPIGPURUN_TEST_GPUS and
// nvidia-cuda-mps-control is testdata/fake_mps_control.sh, first on PATH, which records every
// start, client command and the daemon's exit. Checked: one daemon per job when ranks share a
// GPU, started with the job folder's pipe and log directories, which every rank gets; stopped at
// a normal end, after a rank is killed, after the launcher is SIGKILLed (by the janitor), and by
// SIGKILL when it ignores quit; never with --mps off or without a shared GPU; one line and the
// job runs on when it cannot start (auto), a failed job before any rank with --mps on. The same
// on a real GPU: launcher_mps_gpu_test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/launcher_e2e_util.h"
#include "tools/mps_host.h"

namespace mpigpu::testing {
namespace {

using launcher::MpsDaemonProcesses;

// A fake control program on PATH, and the record it keeps.
struct FakeMps {
  std::string bin, record;

  FakeMps() {
    bin = MakeTempDir("mpsbin");
    record = bin + "/record";
    const std::string script = ReadFile(Runfile("tests/testdata/fake_mps_control.sh"));
    EXPECT_FALSE(script.empty());
    const std::string path = bin + "/nvidia-cuda-mps-control";
    FILE* f = std::fopen(path.c_str(), "w");
    EXPECT_NE(f, nullptr);
    if (f != nullptr) {
      std::fwrite(script.data(), 1, script.size(), f);
      std::fclose(f);
    }
    chmod(path.c_str(), 0755);
  }

  // The launcher's environment: the fake first on PATH, the record, these GPUs.
  Env With(const std::string& gpus, Env more = {}) const {
    const char* path = std::getenv("PATH");
    more["PATH"] = bin + ":" + (path != nullptr ? path : "/usr/bin:/bin");
    more["FAKE_MPS_RECORD"] = record;
    more["MPIGPURUN_TEST_GPUS"] = gpus;
    return more;
  }

  std::string Record() const { return ReadFile(record); }
  int Starts() const { return CountLines(Record(), "start "); }
  // The pipe directory of the (first) start.
  std::string Pipe() const {
    const std::string r = Record();
    const size_t at = r.find("start pipe=");
    if (at == std::string::npos) return "";
    const size_t from = at + 11;
    return r.substr(from, r.find(' ', from) - from);
  }
};

// A launcher run with no MPS variables of the test runner's own.
BoundedRun Start(const std::vector<std::string>& args, const Env& env,
                 const std::string& out = "") {
  return StartLauncher(args, env, out, {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"});
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string Parent(const std::string& path) { return path.substr(0, path.rfind('/')); }

// The daemon of `pipe` is gone, and so is its job folder.
void ExpectDaemonGone(const FakeMps& mps, const std::string& pipe) {
  ASSERT_FALSE(pipe.empty()) << mps.Record();
  EXPECT_TRUE(WaitUntil(5000, [&] { return MpsDaemonProcesses(pipe).empty(); }))
      << "the MPS daemon of " << pipe << " still runs";
  EXPECT_TRUE(WaitUntil(5000, [&] { return !Exists(Parent(pipe)); }))
      << Parent(pipe) << " is still there";
}

TEST(LauncherMpsE2E, RanksSharingAGpuGetOneDaemonStoppedAtTheEnd) {
  FakeMps mps;
  const std::string dir = TempDir();
  Result r = Start({"-n", "2", Probe(), dir, "ok"}, mps.With("default")).Wait();
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "") << "a started daemon is not news";
  EXPECT_EQ(mps.Starts(), 1) << mps.Record();
  const std::string pipe = mps.Pipe();
  EXPECT_EQ(pipe.rfind("/tmp/mpigpu-mps-", 0), 0u) << pipe;
  EXPECT_EQ(pipe.substr(pipe.size() - 5), "/pipe");
  EXPECT_NE(mps.Record().find("start pipe=" + pipe + " log=" + Parent(pipe) + "/log"),
            std::string::npos)
      << mps.Record();
  for (int rank = 0; rank < 2; ++rank) {
    Env env = ReadRankEnv(dir, rank);
    EXPECT_EQ(env["CUDA_MPS_PIPE_DIRECTORY"], pipe) << "rank " << rank;
    EXPECT_EQ(env["CUDA_MPS_LOG_DIRECTORY"], Parent(pipe) + "/log") << "rank " << rank;
  }
  EXPECT_EQ(CountLines(mps.Record(), "client quit"), 1) << mps.Record();
  EXPECT_EQ(CountLines(mps.Record(), "stopped"), 1) << mps.Record();
  ExpectDaemonGone(mps, pipe);
  ExpectJobGone(dir, 2);
}

// One daemon serves every GPU: 4 ranks on 2 GPUs (2 each) and 3 ranks on 2 GPUs (GPU 0 shared)
// start one; 2 ranks on 2 GPUs share none and start none.
TEST(LauncherMpsE2E, OneDaemonPerJobWhicheverGpusAreShared) {
  for (const auto& [n, starts] : std::vector<std::pair<int, int>>{{4, 1}, {3, 1}, {2, 0}}) {
    FakeMps mps;
    const std::string dir = TempDir();
    Result r = Start({"-n", std::to_string(n), Probe(), dir, "ok"}, mps.With("default,default"))
                   .Wait();
    ASSERT_FALSE(r.hung);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(mps.Starts(), starts) << n << " ranks: " << mps.Record();
    for (int rank = 0; rank < n; ++rank)
      EXPECT_EQ(ReadRankEnv(dir, rank).count("CUDA_MPS_PIPE_DIRECTORY"), starts ? 1u : 0u)
          << n << " ranks, rank " << rank;
    if (starts) ExpectDaemonGone(mps, mps.Pipe());
  }
}

TEST(LauncherMpsE2E, MpsOffNeverStartsOne) {
  FakeMps mps;
  const std::string dir = TempDir();
  Result r = Start({"--mps", "off", "-n", "2", Probe(), dir, "ok"}, mps.With("default")).Wait();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(mps.Record(), "");
  EXPECT_EQ(ReadRankEnv(dir, 0).count("CUDA_MPS_PIPE_DIRECTORY"), 0u);
}

TEST(LauncherMpsE2E, StoppedAfterARankIsKilled) {
  FakeMps mps;
  const std::string dir = TempDir();
  Result r = Start({"-n", "3", Probe(), dir, "kill", "1", "9"}, mps.With("default")).Wait();
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 128 + 9) << r.err;
  EXPECT_EQ(mps.Starts(), 1) << mps.Record();
  EXPECT_EQ(CountLines(mps.Record(), "stopped"), 1) << mps.Record();
  ExpectDaemonGone(mps, mps.Pipe());
  ExpectJobGone(dir, 3);
}

TEST(LauncherMpsE2E, StoppedByTheJanitorAfterTheLauncherIsKilled) {
  FakeMps mps;
  const std::string dir = TempDir(), out = MakeTempDir("run");
  BoundedRun run = Start({"-n", "2", Probe(), dir, "sleep"}, mps.With("default"), out);
  ASSERT_TRUE(WaitUntil(10000, [&] { return AllRecorded(dir, 2, ".env"); }));
  const std::string pipe = mps.Pipe();
  ASSERT_FALSE(MpsDaemonProcesses(pipe).empty()) << "the daemon runs while the job does";
  const std::string jobid = ReadRankEnv(dir, 0)["MPIGPU_JOBID"];
  ASSERT_EQ(kill(run.pid(), SIGKILL), 0);
  run.Wait();
  ExpectGoneAfterLauncherDeath(dir, jobid);
  EXPECT_TRUE(WaitUntil(5000, [&] { return CountLines(mps.Record(), "stopped") == 1; }))
      << mps.Record();
  ExpectDaemonGone(mps, pipe);
  WaitUntil(2000, [&] {
    return ReadFile(out + "/stderr").find("MPS daemon") != std::string::npos;
  });
  const std::string err = ReadFile(out + "/stderr");
  EXPECT_NE(err.find("its janitor killed"), std::string::npos) << err;
  EXPECT_NE(err.find("and stopped the job's MPS daemon"), std::string::npos) << err;
}

TEST(LauncherMpsE2E, ADaemonThatIgnoresQuitIsKilled) {
  FakeMps mps;
  const std::string dir = TempDir();
  Result r = Start({"-n", "2", Probe(), dir, "ok"}, mps.With("default", {{"FAKE_MPS_QUIT", "ignore"}}))
                 .Wait();
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(CountLines(mps.Record(), "client quit"), 1) << mps.Record();
  EXPECT_EQ(CountLines(mps.Record(), "stopped"), 0) << mps.Record();
  EXPECT_NE(r.err.find("mpigpurun: the MPS daemon did not quit within 3 s: killed 1 of its "
                       "process(es)"),
            std::string::npos)
      << r.err;
  ExpectDaemonGone(mps, mps.Pipe());
}

TEST(LauncherMpsE2E, AutoWithAFailingDaemonSaysSoOnceAndRuns) {
  FakeMps mps;
  const std::string dir = TempDir();
  Result r = Start({"-n", "2", Probe(), dir, "ok"}, mps.With("default", {{"FAKE_MPS_START", "fail"}}))
                 .Wait();
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(mps.Starts(), 1);
  EXPECT_EQ(CountLines(r.err, "mpigpurun: "), 1) << r.err;
  EXPECT_NE(r.err.find("mpigpurun: MPS not started: nvidia-cuda-mps-control -d exited with status "
                       "1: fake-mps: An MPS daemon cannot start here (as told); ranks sharing a "
                       "GPU run without it (time-sliced)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadRankEnv(dir, 1).count("CUDA_MPS_PIPE_DIRECTORY"), 0u);
  EXPECT_FALSE(Exists(Parent(mps.Pipe()))) << "the folder goes too";
}

TEST(LauncherMpsE2E, OnWithAFailingDaemonFailsBeforeAnyRank) {
  FakeMps mps;
  const std::string dir = TempDir();
  Result r = Start({"--mps", "on", "-n", "2", Probe(), dir, "ok"},
                   mps.With("default", {{"FAKE_MPS_START", "fail"}}))
                 .Wait();
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("MPS not started: nvidia-cuda-mps-control -d exited with status 1: "
                       "fake-mps: An MPS daemon cannot start here (as told) (--mps on)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(ReadRankEnv(dir, 0).empty()) << "no rank started";
}

// --mps on starts it for a GPU that only one rank uses.
TEST(LauncherMpsE2E, OnStartsOneForAnUnsharedGpu) {
  FakeMps mps;
  const std::string dir = TempDir();
  Result r = Start({"--mps=on", "-n", "1", Probe(), dir, "ok"}, mps.With("default")).Wait();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(mps.Starts(), 1) << mps.Record();
  EXPECT_EQ(ReadRankEnv(dir, 0)["CUDA_MPS_PIPE_DIRECTORY"], mps.Pipe());
  ExpectDaemonGone(mps, mps.Pipe());
}

// Where MPS cannot run or is not wanted: one line (auto), nothing started, the job runs.
TEST(LauncherMpsE2E, WhereItCannotStartAutoSaysWhyOnceAndRuns) {
  const struct {
    std::string gpus;
    bool no_control;
    std::string why;
  } cases[] = {
      {"mig", false, "MPS not started: GPU 0 is a MIG slice"},
      {"prohibited", false, "MPS not started: GPU 0 is in the prohibited compute mode"},
      {"default", true, "MPS not started: nvidia-cuda-mps-control is not in PATH"},
  };
  for (const auto& c : cases) {
    FakeMps mps;
    const std::string dir = TempDir();
    Env env = mps.With(c.gpus);
    if (c.no_control) env["PATH"] = MakeTempDir("emptypath");
    Result r = Start({"-n", "2", Probe(), dir, "ok"}, env).Wait();
    ASSERT_FALSE(r.hung);
    EXPECT_EQ(r.code, 0) << c.gpus << ": " << r.err;
    EXPECT_EQ(mps.Record(), "") << c.gpus;
    EXPECT_EQ(CountLines(r.err, "mpigpurun: "), 1) << r.err;
    EXPECT_NE(r.err.find("mpigpurun: " + c.why + "; ranks sharing a GPU run without it"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(ReadRankEnv(dir, 0).count("CUDA_MPS_PIPE_DIRECTORY"), 0u);
  }
}

// An exclusive-process GPU takes MPS (its one process is the server); one that MPS serves
// already gets no second daemon (the ranks inherit the launcher's pipe directory).
TEST(LauncherMpsE2E, ExclusiveProcessStartsOneAndAServedGpuNone) {
  {
    FakeMps mps;
    const std::string dir = TempDir();
    Result r = Start({"-n", "2", Probe(), dir, "ok"}, mps.With("exclusive")).Wait();
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(mps.Starts(), 1) << mps.Record();
    ExpectDaemonGone(mps, mps.Pipe());
  }
  FakeMps mps;
  const std::string dir = TempDir();
  Result r = StartLauncher({"--report-bindings", "-n", "2", Probe(), dir, "ok"},
                           mps.With("served", {{"CUDA_MPS_PIPE_DIRECTORY", "/somewhere/else"}}))
                 .Wait();
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(mps.Record(), "");
  EXPECT_NE(r.err.find("mpigpurun: MPS already serves GPU 0 (said by MPIGPURUN_TEST_GPUS): not "
                       "starting another"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(ReadRankEnv(dir, 1)["CUDA_MPS_PIPE_DIRECTORY"], "/somewhere/else");
}

}  // namespace
}  // namespace mpigpu::testing

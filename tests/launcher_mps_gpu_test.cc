// mpigpurun's MPS on a real GPU: two ranks on one GPU (CUDA_VISIBLE_DEVICES=0) under default
// settings get a job-private MPS daemon, the library detects it by itself (the CUDA driver) and
// keeps the shared-GPU fast path (resident copy kernel, CUDA IPC single copy at every size: its
// MPIGPU_DEBUG=info line), device round trips arrive whole (mps_rank), and after the job no
// daemon, server or job folder is left. With --mps off the same job runs on today's safe path.
// Skips without a GPU, without nvidia-cuda-mps-control, or where MPS serves the GPU already.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "memcopy/mps.h"
#include "tests/launcher_e2e_util.h"
#include "tools/mps_host.h"

namespace mpigpu::testing {
namespace {

std::string RankProgram() { return Runfile("tests/mps_rank"); }

// Every process of this machine named nvidia-cuda-mps* (daemons and servers, anyone's).
int MpsProcesses() {
  int n = 0;
  for (const std::string& p : ProcessesMentioning("nvidia-cuda-mps")) n += p.empty() ? 0 : 1;
  return n;
}

// Why this machine cannot run the test ("" when it can). The launcher is exec'ed, so the test
// process may use CUDA itself.
std::string CannotRun() {
  if (CudaDeviceCount() == 0) return "no CUDA device";
  if (!launcher::InPath(launcher::kMpsControl, std::getenv("PATH")))
    return "nvidia-cuda-mps-control is not in PATH";
  if (MpsOfDevice(0).active)
    return "MPS serves GPU 0 already (" + MpsOfDevice(0).how + "): mpigpurun would not start one";
  return "";
}

Result RunJob(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"--report-bindings", "-n", "2"};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.push_back(RankProgram());
  BoundedRun run = StartLauncher(argv, {{"CUDA_VISIBLE_DEVICES", "0"}, {"MPIGPU_DEBUG", "info"}},
                                 "", {"CUDA_MPS_PIPE_DIRECTORY", "CUDA_MPS_LOG_DIRECTORY"});
  return run.Wait();
}

// The pipe directory rank `rank` printed ("" when it printed none).
std::string PipeOf(const Result& r, int rank) {
  const std::string key = "mps_rank: rank " + std::to_string(rank) + " pipe=";
  const size_t at = r.out.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  return r.out.substr(from, r.out.find('\n', from) - from);
}

TEST(LauncherMpsGpuTest, TwoRanksOnOneGpuRunUnderAJobPrivateDaemonThatGoesAtTheEnd) {
  const std::string why = CannotRun();
  if (!why.empty()) GTEST_SKIP() << why;
  const int before = MpsProcesses();
  Result r = RunJob({});
  ASSERT_FALSE(r.hung) << r.out << r.err;
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("mpigpurun: starting a job-private MPS control daemon for GPU 0"),
            std::string::npos)
      << r.err;
  const std::string pipe = PipeOf(r, 0);
  EXPECT_EQ(pipe.rfind("/tmp/mpigpu-mps-", 0), 0u) << r.out;
  EXPECT_EQ(PipeOf(r, 1), pipe);
  // Each rank found MPS by itself and kept the fast path.
  auto count = [&](const std::string& s) {
    int n = 0;
    for (size_t at = r.err.find(s); at != std::string::npos; at = r.err.find(s, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("MPS yes (the CUDA driver: contexts on this GPU are shared via MPS"), 2) << r.err;
  EXPECT_EQ(count("share this GPU: the resident copy kernel and the CUDA IPC single copy stay on "
                  "at every size (MPIGPU_GPU_COPIER_SHARED=auto)"),
            2)
      << r.err;
  EXPECT_NE(r.out.find("mps_rank: 8 B D->D"), std::string::npos) << r.out;
  // Gone: the daemon, its server, the folder.
  EXPECT_TRUE(launcher::MpsDaemonProcesses(pipe).empty());
  EXPECT_TRUE(WaitUntil(5000, [&] { return MpsProcesses() <= before; }))
      << MpsProcesses() << " nvidia-cuda-mps processes, " << before << " before the job";
  struct stat st;
  EXPECT_NE(stat(pipe.substr(0, pipe.rfind('/')).c_str(), &st), 0) << "the job folder is left";
}

TEST(LauncherMpsGpuTest, WithMpsOffTheSameJobTakesTheSafePath) {
  const std::string why = CannotRun();
  if (!why.empty()) GTEST_SKIP() << why;
  Result r = RunJob({"--mps", "off"});
  ASSERT_FALSE(r.hung) << r.out << r.err;
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(PipeOf(r, 0), "-");
  EXPECT_EQ(r.err.find("MPS control daemon"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("share this GPU: the resident copy kernel stays off"), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace mpigpu::testing

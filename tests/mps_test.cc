// MPS without a GPU: the library's detection (memcopy/mps.h) with fake sources and real control
// pipes (a FIFO with and without a reader, a listening and a dead socket), the shared-GPU setting
// MPIGPU_GPU_COPIER_SHARED (auto | 0 | 1) and its decision, and mpigpurun's --mps plan
// (tools/mps_plan.h) from given GPU facts. The processes: launcher_mps_e2e_test.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "memcopy/mps.h"
#include "tests/e2e_util.h"
#include "tools/launcher.h"
#include "tools/mps_plan.h"
#include "transport/transport_config.h"

namespace mpigpu {
namespace {

using launcher::GpuFacts;
using launcher::MpsInputs;
using launcher::MpsMode;
using launcher::MpsPlan;
using launcher::PlanMps;

// ---- detection ----

struct Fakes {
  int driver = -1;  // -1: the driver does not answer; else its answer
  std::map<std::string, std::string> env;
  MpsPipe pipe = MpsPipe::kNone;
  std::vector<std::string> probed;

  MpsSources Sources() {
    MpsSources s;
    s.driver = [this](int, bool* enabled) {
      if (driver < 0) return false;
      *enabled = driver != 0;
      return true;
    };
    s.getenv = [this](const char* n) -> const char* {
      auto it = env.find(n);
      return it == env.end() ? nullptr : it->second.c_str();
    };
    s.probe = [this](const std::string& dir) {
      probed.push_back(dir);
      return pipe;
    };
    return s;
  }
};

TEST(MpsDetectTest, TheDriversAnswerIsFinal) {
  for (int answer : {0, 1}) {
    Fakes f;
    f.driver = answer;
    f.pipe = answer ? MpsPipe::kNone : MpsPipe::kLive;  // the pipe says the opposite
    const MpsState st = DetectMps(0, f.Sources());
    EXPECT_EQ(st.active, answer == 1);
    EXPECT_TRUE(f.probed.empty()) << "the pipe is not asked when the driver answers";
    EXPECT_NE(st.how.find("cudaDevAttrMpsEnabled"), std::string::npos) << st.how;
    EXPECT_NE(st.how.find(answer ? "are shared via MPS" : "are not shared via MPS"),
              std::string::npos)
        << st.how;
  }
}

TEST(MpsDetectTest, WithoutTheDriversAnswerTheControlPipeDecides) {
  Fakes f;
  f.pipe = MpsPipe::kLive;
  MpsState st = DetectMps(0, f.Sources());
  EXPECT_TRUE(st.active);
  EXPECT_EQ(f.probed, std::vector<std::string>{"/tmp/nvidia-mps"});
  EXPECT_NE(st.how.find("a control daemon reads /tmp/nvidia-mps/control (the default directory)"),
            std::string::npos)
      << st.how;

  f.probed.clear();
  f.env["CUDA_MPS_PIPE_DIRECTORY"] = "/job/pipe";
  f.pipe = MpsPipe::kStale;
  st = DetectMps(0, f.Sources());
  EXPECT_FALSE(st.active);
  EXPECT_EQ(f.probed, std::vector<std::string>{"/job/pipe"});
  EXPECT_NE(st.how.find("no control daemon reads /job/pipe/control (CUDA_MPS_PIPE_DIRECTORY)"),
            std::string::npos)
      << st.how;

  f.pipe = MpsPipe::kNone;
  st = DetectMps(0, f.Sources());
  EXPECT_FALSE(st.active);
  EXPECT_NE(st.how.find("no control pipe at /job/pipe/control"), std::string::npos) << st.how;
}

TEST(MpsDetectTest, NoDeviceNoMps) {
  Fakes f;
  f.driver = 1;
  const MpsState st = DetectMps(-1, f.Sources());
  EXPECT_FALSE(st.active);
  EXPECT_EQ(st.how, "no GPU");
}

TEST(MpsDetectTest, PipeDirectoryFromTheEnvironment) {
  std::map<std::string, std::string> env;
  auto lookup = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(MpsPipeDirectory(lookup), "/tmp/nvidia-mps");
  env["CUDA_MPS_PIPE_DIRECTORY"] = "";
  EXPECT_EQ(MpsPipeDirectory(lookup), "/tmp/nvidia-mps");
  env["CUDA_MPS_PIPE_DIRECTORY"] = "/x/y";
  EXPECT_EQ(MpsPipeDirectory(lookup), "/x/y");
}

TEST(MpsPipeTest, AFifoIsLiveOnlyWhileSomeoneReadsIt) {
  const std::string dir = testing::MakeTempDir("mpspipe");
  EXPECT_EQ(ProbeMpsPipe(dir), MpsPipe::kNone);
  const std::string control = dir + "/control";
  ASSERT_EQ(mkfifo(control.c_str(), 0600), 0);
  EXPECT_EQ(ProbeMpsPipe(dir), MpsPipe::kStale);
  const int reader = open(control.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_EQ(ProbeMpsPipe(dir), MpsPipe::kLive);
  char c;
  EXPECT_LE(read(reader, &c, 1), 0) << "the probe writes nothing";
  close(reader);
  EXPECT_EQ(ProbeMpsPipe(dir), MpsPipe::kStale);
}

TEST(MpsPipeTest, ASocketIsLiveOnlyWhileItListens) {
  char tmpl[] = "/tmp/mps_test-XXXXXX";  // short: a socket path has 108 bytes (TEST_TMPDIR is long)
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string control = dir + "/control";
  struct sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(control.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, control.c_str());
  const int s = socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(s, 4), 0);
  EXPECT_EQ(ProbeMpsPipe(dir), MpsPipe::kLive);
  close(s);
  EXPECT_EQ(ProbeMpsPipe(dir), MpsPipe::kStale);
  unlink(control.c_str());
  rmdir(dir.c_str());
}

TEST(MpsPipeTest, APlainFileIsNoPipe) {
  const std::string dir = testing::MakeTempDir("mpsfile");
  const int fd = open((dir + "/control").c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  EXPECT_EQ(ProbeMpsPipe(dir), MpsPipe::kNone);
}

// ---- the transport's setting ----

Status ParseShared(const char* value, TransportConfig* c) {
  return TransportParams().Parse(
      [&](const char* n) -> const char* {
        return value != nullptr && std::strcmp(n, "MPIGPU_GPU_COPIER_SHARED") == 0 ? value
                                                                                   : nullptr;
      },
      c);
}

TEST(SharedGpuSettingTest, AutoByDefaultAndExplicitValuesWin) {
  TransportConfig c;
  ASSERT_TRUE(ParseShared(nullptr, &c).ok());
  EXPECT_EQ(c.gpu_copier_shared, SharedGpuMode::kAuto);
  for (const char* on : {"1", "yes", "on"}) {
    ASSERT_TRUE(ParseShared(on, &c).ok()) << on;
    EXPECT_EQ(c.gpu_copier_shared, SharedGpuMode::kOn) << on;
  }
  for (const char* off : {"0", "no", "off"}) {
    ASSERT_TRUE(ParseShared(off, &c).ok()) << off;
    EXPECT_EQ(c.gpu_copier_shared, SharedGpuMode::kOff) << off;
  }
  ASSERT_TRUE(ParseShared("auto", &c).ok());
  EXPECT_EQ(c.gpu_copier_shared, SharedGpuMode::kAuto);
  const Status bad = ParseShared("maybe", &c);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("MPIGPU_GPU_COPIER_SHARED"), std::string::npos) << bad.message();
  EXPECT_EQ(c.gpu_copier_shared, SharedGpuMode::kAuto) << "a refused value keeps the default";

  EXPECT_TRUE(KeepSharedGpuPath(SharedGpuMode::kAuto, true));
  EXPECT_FALSE(KeepSharedGpuPath(SharedGpuMode::kAuto, false));
  EXPECT_TRUE(KeepSharedGpuPath(SharedGpuMode::kOn, false));
  EXPECT_FALSE(KeepSharedGpuPath(SharedGpuMode::kOff, true));
}

// ---- mpigpurun --mps ----

GpuFacts Gpu(GpuFacts::Mode mode = GpuFacts::Mode::kDefault, bool mig = false,
             bool served = false) {
  GpuFacts g;
  g.compute_mode = mode;
  g.mig = mig;
  g.mps_served = served;
  g.served_how = served ? "a daemon" : "";
  return g;
}

MpsPlan Plan(MpsMode mode, int ranks, std::vector<GpuFacts> gpus, bool control = true) {
  MpsInputs in;
  in.mode = mode;
  in.local_ranks = ranks;
  in.gpus = std::move(gpus);
  in.have_control = control;
  return PlanMps(in);
}

TEST(MpsPlanTest, RanksGoToLocalRankModGpus) {
  EXPECT_EQ(launcher::RanksPerGpu(5, 2), (std::vector<int>{3, 2}));
  EXPECT_EQ(launcher::RanksPerGpu(2, 4), (std::vector<int>{1, 1, 0, 0}));
  EXPECT_EQ(launcher::RanksPerGpu(3, 0), std::vector<int>{});
}

TEST(MpsPlanTest, AutoStartsOneWhenTwoRanksShareAGpu) {
  MpsPlan p = Plan(MpsMode::kAuto, 2, {Gpu()});
  EXPECT_TRUE(p.start);
  EXPECT_FALSE(p.fail);
  EXPECT_EQ(p.gpus, std::vector<int>{0});
  EXPECT_EQ(p.why_not, "");
  EXPECT_EQ(p.info, "starting a job-private MPS control daemon for GPU 0 (shared by this host's "
                    "ranks)");
  p = Plan(MpsMode::kAuto, 6, {Gpu(), Gpu(), Gpu(), Gpu()});
  EXPECT_TRUE(p.start);
  EXPECT_EQ(p.gpus, (std::vector<int>{0, 1}));
  EXPECT_NE(p.info.find("GPUs 0,1"), std::string::npos) << p.info;
}

TEST(MpsPlanTest, AutoStartsNoneWithoutASharedGpu) {
  for (const MpsPlan& p : {Plan(MpsMode::kAuto, 2, {Gpu(), Gpu()}), Plan(MpsMode::kAuto, 1, {Gpu()}),
                           Plan(MpsMode::kAuto, 4, {}), Plan(MpsMode::kAuto, 0, {Gpu()})}) {
    EXPECT_FALSE(p.start);
    EXPECT_FALSE(p.fail);
    EXPECT_EQ(p.why_not, "");
  }
}

TEST(MpsPlanTest, OffNeverStarts) {
  const MpsPlan p = Plan(MpsMode::kOff, 8, {Gpu()});
  EXPECT_FALSE(p.start);
  EXPECT_FALSE(p.fail);
  EXPECT_EQ(p.why_not, "");
  EXPECT_EQ(p.info, "");
}

TEST(MpsPlanTest, AServedGpuGetsNoSecondDaemon) {
  const MpsPlan p = Plan(MpsMode::kAuto, 4, {Gpu(), Gpu(GpuFacts::Mode::kDefault, false, true)});
  EXPECT_FALSE(p.start);
  EXPECT_FALSE(p.fail);
  EXPECT_EQ(p.why_not, "");
  EXPECT_EQ(p.info, "MPS already serves GPU 1 (a daemon): not starting another");
  EXPECT_FALSE(Plan(MpsMode::kOn, 1, {Gpu(GpuFacts::Mode::kDefault, false, true)}).fail);
}

TEST(MpsPlanTest, WhereItCannotRunAutoSaysWhyAndOnFails) {
  const struct {
    std::vector<GpuFacts> gpus;
    bool control;
    std::string why;
  } cases[] = {
      {{Gpu(GpuFacts::Mode::kDefault, true)}, true, "GPU 0 is a MIG slice"},
      {{Gpu(GpuFacts::Mode::kProhibited)}, true, "GPU 0 is in the prohibited compute mode"},
      {{Gpu()}, false, "nvidia-cuda-mps-control is not in PATH"},
  };
  for (const auto& c : cases) {
    MpsPlan p = Plan(MpsMode::kAuto, 2, c.gpus, c.control);
    EXPECT_FALSE(p.start);
    EXPECT_FALSE(p.fail);
    EXPECT_EQ(p.why_not, "MPS not started: " + c.why +
                             "; ranks sharing a GPU run without it (time-sliced)");
    p = Plan(MpsMode::kOn, 2, c.gpus, c.control);
    EXPECT_FALSE(p.start);
    EXPECT_TRUE(p.fail);
    EXPECT_EQ(p.why_not, "MPS not started: " + c.why + " (--mps on)");
  }
  // Exclusive-process and unknown modes take MPS: its server is the GPU's one process.
  EXPECT_TRUE(Plan(MpsMode::kAuto, 2, {Gpu(GpuFacts::Mode::kExclusiveProcess)}).start);
  EXPECT_TRUE(Plan(MpsMode::kAuto, 2, {Gpu(GpuFacts::Mode::kUnknown)}).start);
  // A blocked GPU that no two ranks share does not matter.
  EXPECT_TRUE(Plan(MpsMode::kAuto, 3, {Gpu(), Gpu(GpuFacts::Mode::kProhibited)}).start);
}

TEST(MpsPlanTest, OnStartsForEveryGpuInUseAndFailsWithoutOne) {
  MpsPlan p = Plan(MpsMode::kOn, 2, {Gpu(), Gpu(), Gpu()});
  EXPECT_TRUE(p.start);
  EXPECT_EQ(p.gpus, (std::vector<int>{0, 1}));
  p = Plan(MpsMode::kOn, 2, {});
  EXPECT_TRUE(p.fail);
  EXPECT_EQ(p.why_not, "MPS not started: mpigpurun sees no GPU (--mps on)");
  p = Plan(MpsMode::kOn, 0, {Gpu()});
  EXPECT_TRUE(p.fail);
  EXPECT_NE(p.why_not.find("no rank of this job runs on this host"), std::string::npos);
}

TEST(MpsPlanTest, TheMpsOption) {
  auto parse = [](std::vector<std::string> args, launcher::Options* o) {
    return launcher::ParseArgs(args, [](const char*) -> const char* { return nullptr; }, o);
  };
  launcher::Options o;
  ASSERT_TRUE(parse({"-n", "2", "prog"}, &o).ok());
  EXPECT_EQ(o.mps, MpsMode::kAuto);
  ASSERT_TRUE(parse({"--mps", "off", "-n", "2", "prog"}, &o).ok());
  EXPECT_EQ(o.mps, MpsMode::kOff);
  ASSERT_TRUE(parse({"--mps=on", "-n", "2", "prog"}, &o).ok());
  EXPECT_EQ(o.mps, MpsMode::kOn);
  const Status bad = parse({"--mps", "yes", "-n", "2", "prog"}, &o);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "bad --mps 'yes': expected auto, on or off");
  EXPECT_FALSE(parse({"-n", "2", "--mps"}, &o).ok());
  EXPECT_NE(launcher::UsageText().find("--mps auto|on|off"), std::string::npos);
}

TEST(MpsPlanTest, SetEnvVarReplacesOrAppends) {
  std::vector<std::string> env = {"A=1", "CUDA_MPS_PIPE_DIRECTORY=/old", "AB=2"};
  launcher::SetEnvVar(&env, "CUDA_MPS_PIPE_DIRECTORY", "/new");
  launcher::SetEnvVar(&env, "A", "3");
  launcher::SetEnvVar(&env, "C", "4");
  EXPECT_EQ(env, (std::vector<std::string>{"A=3", "CUDA_MPS_PIPE_DIRECTORY=/new", "AB=2", "C=4"}));
}

}  // namespace
}  // namespace mpigpu

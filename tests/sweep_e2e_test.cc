// //tools:mpigpu-sweep end to end: the binary launches its two ranks through //tools:mpigpurun
// (or runs under it), measures, verifies data (-c) and writes its outputs. Every run is bounded:
// a hung sweep is killed with its whole process group and fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "tests/e2e_util.h"
#include "tools/sweep_json.h"
#include "tools/sweep_plot.h"
#include "tools/sweep_progress.h"
#include "tools/sweep_report.h"

namespace mpigpu::sweep {
namespace {

using STest = ::mpigpu::sweep::Test;  // gtest has its own Test
using ::mpigpu::testing::MakeTempDir;
using ::mpigpu::testing::Mpigpurun;
using ::mpigpu::testing::ReadFile;
using ::mpigpu::testing::Result;
using ::mpigpu::testing::RunBounded;
using ::mpigpu::testing::RunOptions;
using ::mpigpu::testing::Runfile;

constexpr int kWaitSeconds = 120;

std::string Sweep() { return Runfile("tools/mpigpu-sweep"); }
std::string TempDir() { return MakeTempDir("sweep"); }

// Runs argv in its own process group with stdout/stderr in files in dir; kills the group at the
// deadline.
Result RunInDir(const std::vector<std::string>& argv, const std::string& dir) {
  RunOptions options;
  options.timeout_ms = kWaitSeconds * 1000;
  options.own_group = true;
  options.dir = dir;
  return RunBounded(argv, options);
}

Result RunSweep(std::vector<std::string> args, const std::string& dir) {
  args.insert(args.begin(), Sweep());
  return RunInDir(args, dir);
}

Report ReadJson(const std::string& path) {
  Json j;
  Report r;
  Status st = ParseJson(ReadFile(path), &j);
  EXPECT_TRUE(st.ok()) << st.ToString();
  st = FromJson(j, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return r;
}

void ExpectAllMeasured(const Series& s) {
  for (double v : s.values) EXPECT_TRUE(std::isfinite(v) && v > 0) << s.name << ": " << v;
}

// The median of a series' values (NaN when it has none).
double Median(std::vector<double> v) {
  if (v.empty()) return std::nan("");
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

TEST(SweepE2E, LatencyBwBibwHostHostThroughTheLauncher) {
  const std::string dir = TempDir();
  Result r = RunSweep({"latency", "bw", "bibw", "H", "H", "-m", "1:4K", "-i", "20", "-x", "2",
                       "-W", "8", "--json", dir + "/out.json", "--csv", dir + "/out.csv"},
                      dir);
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* header :
       {"# mpigpu-sweep latency [HH]: rank 0 H (host) -> rank 1 H (host)",
        "# mpigpu-sweep bw [HH]", "# mpigpu-sweep bibw [HH]", "Latency (us)", "Bandwidth (GB/s)",
        "# floor cacheline: half a cache line's round trip between the two ranks' cores",
        "mpigpu/cacheline", "# cacheline: half a cache line's round trip between the ranks' cores "
        "(CPU ", "mpigpu/limit"})
    EXPECT_NE(r.out.find(header), std::string::npos) << header << "\n" << r.out;

  Report rep = ReadJson(dir + "/out.json");
  ASSERT_EQ(rep.tables.size(), 3u);
  const STest order[] = {STest::kLatency, STest::kBw, STest::kBibw};
  for (size_t i = 0; i < 3; ++i) {
    const Table& t = rep.tables[i];
    EXPECT_EQ(t.test, order[i]);
    EXPECT_EQ(t.sizes.size(), 13u);  // 1 .. 4K
    ASSERT_NE(t.Find("mpigpu"), nullptr);
    ExpectAllMeasured(*t.Find("mpigpu"));
    // Latency has the cache line's floor, no copy "limit"; bandwidth the limit, no floor.
    const char* beside = i == 0 ? kFloorCacheLine : "limit";
    const char* absent = i == 0 ? "limit" : kFloorCacheLine;
    ASSERT_NE(t.Find(beside), nullptr) << beside;
    EXPECT_EQ(t.Find(absent), nullptr) << absent;
    EXPECT_EQ(t.Find(beside)->kind, i == 0 ? kKindFloor : kKindLimit);
    ExpectAllMeasured(*t.Find(beside));
  }
  // The floor is one value for every size, below what a message takes.
  const Series& floor = *rep.tables[0].Find(kFloorCacheLine);
  for (double v : floor.values) EXPECT_EQ(v, floor.values[0]);
  EXPECT_LT(floor.values[0], Median(rep.tables[0].Find("mpigpu")->values));
  // One CSV row per point: 3 tables x 2 series x 13 sizes, plus the header; the floor's rows
  // are named.
  const std::string csv = ReadFile(dir + "/out.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 3 * 2 * 13);
  EXPECT_NE(csv.find("latency,HH,host,host,cacheline,floor,1,"), std::string::npos) << csv;
}

// -c across the eager / rendezvous boundary (64 KiB by default), every test.
TEST(SweepE2E, CheckedDataAcrossProtocols) {
  const std::string dir = TempDir();
  Result r = RunSweep({"all", "-c", "-m", "1:1M", "-i", "3", "-x", "1", "-W", "4", "--no-limits"},
                      dir);
  ASSERT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("DATA CHECK FAILED"), std::string::npos) << r.err;
}

// --lmt all relaunches the ranks per back-end (host pairs: auto, ring, cma) and merges them.
TEST(SweepE2E, EveryBackEndChecked) {
  const std::string dir = TempDir();
  Result r = RunSweep({"bw", "-c", "-m", "32K:512K", "-i", "3", "-x", "1", "-W", "4", "--lmt",
                       "all", "--json", dir + "/lmt.json"},
                      dir);
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err;
  Report rep = ReadJson(dir + "/lmt.json");
  ASSERT_EQ(rep.tables.size(), 1u);
  const Table& t = rep.tables[0];
  for (const char* name : {"mpigpu[auto]", "mpigpu[ring]", "mpigpu[cma]", "limit"}) {
    ASSERT_NE(t.Find(name), nullptr) << name << "\n" << r.out;
    ExpectAllMeasured(*t.Find(name));
  }
  EXPECT_EQ(t.Find("mpigpu[ipc]"), nullptr);  // device buffers only
  EXPECT_NE(r.out.find("MPIGPU_LMT=ipc not run"), std::string::npos) << r.out;
  // mpigpu columns first.
  EXPECT_EQ(t.series[0].kind, kKindMpigpu);
  EXPECT_EQ(t.series.back().kind, kKindLimit);
}

TEST(SweepE2E, PlotWritesAPng) {
  const std::string dir = TempDir();
  const std::string png = dir + "/sweep.png";
  Result r = RunSweep({"latency", "bw", "-m", "1:1K", "-i", "5", "-x", "1", "--plot", png}, dir);
  ASSERT_FALSE(r.hung);
  if (r.code == 2 && r.err.find("needs gnuplot") != std::string::npos)
    GTEST_SKIP() << "gnuplot is not installed";
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string data = ReadFile(png);
  ASSERT_GT(data.size(), 1000u);
  EXPECT_EQ(data.substr(1, 3), "PNG");
}

// A sweep measured here, then drawn again from its JSON alone: the same tables and the same
// CSV, a PNG where gnuplot exists, and nothing launched.
TEST(SweepE2E, ReplotRedrawsAJsonReport) {
  const std::string dir = TempDir();
  Result run = RunSweep({"latency", "bw", "H", "H", "-m", "1:2K", "-i", "5", "-x", "1", "-W", "4",
                         "--json", dir + "/run.json", "--csv", dir + "/run.csv"},
                        dir);
  ASSERT_FALSE(run.hung);
  ASSERT_EQ(run.code, 0) << run.err;
  const std::string csv = ReadFile(dir + "/run.csv");
  ASSERT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 2 * 2 * 12);  // 2 tests x 2 series

  const bool gnuplot = !FindInPath("gnuplot").empty();
  std::vector<std::string> args = {"--replot", dir + "/run.json", "--csv", dir + "/replot.csv"};
  if (gnuplot) args.insert(args.end(), {"--plot", dir + "/replot.png"});
  Result re = RunSweep(args, dir);
  ASSERT_FALSE(re.hung);
  ASSERT_EQ(re.code, 0) << re.err;
  EXPECT_EQ(re.out, run.out);  // the same OSU-style tables
  const std::string replot_csv = ReadFile(dir + "/replot.csv");
  EXPECT_FALSE(replot_csv.empty());
  EXPECT_EQ(replot_csv, csv);
  if (!gnuplot) GTEST_SKIP() << "gnuplot is not installed: the PNG is not checked";
  const std::string png = ReadFile(dir + "/replot.png");
  ASSERT_GT(png.size(), 1000u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
}

TEST(SweepE2E, ReplotBadInputsExit2WithAMessage) {
  const std::string dir = TempDir();
  {
    std::ofstream(dir + "/garbage.json") << "{\"tables\": [1, 2";
    std::ofstream(dir + "/other.json") << "{\"answer\": 42}\n";
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--replot", dir + "/missing.json"}, "cannot open '" + dir + "/missing.json'"},
      {{"--replot", dir + "/garbage.json"}, "is not a mpigpu-sweep --json report"},
      {{"--replot", dir + "/other.json"}, "'tables'"},
      {{"--replot", dir + "/other.json", "-m", "1:4"}, "'-m' only applies to measuring"},
      {{"bw", "--replot", dir + "/other.json"}, "'bw' only applies to measuring"},
      {{"--replot", dir + "/other.json", "--tune"}, "'--tune' only applies to measuring"},
  };
  for (const auto& [args, message] : cases) {
    Result r = RunSweep(args, dir);
    ASSERT_FALSE(r.hung);
    EXPECT_EQ(r.code, 2) << args[0] << " " << args[1];
    EXPECT_NE(r.err.find("mpigpu-sweep: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// Rows come out as they are measured. With stdout and stderr on one file (their order there is
// the order of the writes), each row is written after the progress line of its own row and
// before the next row's; the text without the progress lines is the report of --replot on the
// run's JSON; without --progress (stderr not a terminal) no progress line is drawn.
TEST(SweepE2E, RowsAppearAsTheyAreMeasured) {
  const std::string dir = TempDir();
  Result r = RunInDir({"/bin/sh", "-c", "exec \"$0\" \"$@\" 2>&1", Sweep(), "latency", "bw", "H",
                       "H", "-m", "1:64", "-i", "5", "-x", "1", "--progress", "--json",
                       dir + "/live.json"},
                      dir);
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string& out = r.out;
  const std::vector<size_t> sizes = {1, 2, 4, 8, 16, 32, 64};
  const size_t rows = 2 * sizes.size();
  size_t pos = 0;
  for (size_t j = 0; j < rows; ++j) {
    const std::string step = " (" + std::to_string(j + 1) + "/" + std::to_string(rows) + "), ";
    const size_t progress = out.find(step, pos);
    ASSERT_NE(progress, std::string::npos) << step << "\n" << out;
    // The progress line: "\rmpigpu-sweep: <test> HH <size> B (j/N), ..." padded to its width.
    const size_t start = out.rfind("\rmpigpu-sweep: ", progress);
    ASSERT_NE(start, std::string::npos);
    const std::string test = j < sizes.size() ? "latency" : "bw";
    const std::string label = test + " HH " + std::to_string(sizes[j % sizes.size()]) + " B";
    EXPECT_EQ(out.substr(start + 15, label.size()), label) << out.substr(start, 80);
    EXPECT_EQ(out.find_first_of("\r\n", start + 1), start + 1 + Progress::kWidth);
    const size_t row = out.find("\r" + std::to_string(sizes[j % sizes.size()]) + " ", progress);
    ASSERT_NE(row, std::string::npos) << "row " << j << "\n" << out;
    if (j + 1 < rows) {
      const std::string next = " (" + std::to_string(j + 2) + "/" + std::to_string(rows) + "), ";
      EXPECT_LT(row, out.find(next, progress)) << "row " << j << " came after the next row's "
                                                  "progress line\n"
                                               << out;
    }
    pos = row;
  }
  // The progress lines out (each drawn, then blanked): the report, as --replot prints it.
  std::string text = out;
  for (size_t at; (at = text.find("\rmpigpu-sweep: ")) != std::string::npos;)
    text.erase(at, 1 + Progress::kWidth);
  const std::string blank = "\r" + std::string(Progress::kWidth, ' ') + "\r";
  for (size_t at; (at = text.find(blank)) != std::string::npos;) text.erase(at, blank.size());
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  Result replot = RunSweep({"--replot", dir + "/live.json"}, dir);
  ASSERT_EQ(replot.code, 0) << replot.err;
  EXPECT_EQ(text, replot.out);
  EXPECT_EQ(ReadJson(dir + "/live.json").tables.size(), 2u);

  Result quiet = RunSweep({"latency", "H", "H", "-m", "1:4", "-i", "5", "-x", "1"}, dir);
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find('\r'), std::string::npos) << quiet.err;
  EXPECT_EQ(quiet.out.find('\r'), std::string::npos) << quiet.out;
}

// Without -i the iteration rule says how many runs each row had.
TEST(SweepE2E, TheIterationRuleIsInTheTable) {
  const std::string dir = TempDir();
  Result r = RunSweep({"latency", "bw", "H", "H", "-m", "1:4K", "--time-per-size", "0.01", "--json",
                       dir + "/rule.json"},
                      dir);
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("# iterations: 10000 runs up to 8K, 1000 above, warmup 100/10; fewer "
                       "(column iters) where they take over 0.01 s (--time-per-size), at least 10"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.Count(" iters\n"), 2) << r.out;
  Report rep = ReadJson(dir + "/rule.json");
  ASSERT_EQ(rep.tables.size(), 2u);
  for (const Table& t : rep.tables) {
    EXPECT_TRUE(t.iters_column);
    const int most = t.test == STest::kLatency ? 10000 : 100;
    const int least = t.test == STest::kLatency ? 10 : 2;
    for (const Series& s : t.series) {
      ASSERT_EQ(s.iterations.size(), t.sizes.size()) << s.name;
      if (s.name == kFloorCacheLine) {  // measured once, not with the row's runs
        for (int n : s.iterations) EXPECT_EQ(n, 0);
        continue;
      }
      for (size_t i = 0; i < t.sizes.size(); ++i) {
        EXPECT_GE(s.iterations[i], least) << s.name << " " << t.sizes[i];
        EXPECT_LE(s.iterations[i], most) << s.name << " " << t.sizes[i];
        // Every series of a row ran the row's counts.
        EXPECT_EQ(s.iterations[i], t.series[0].iterations[i]) << s.name << " " << t.sizes[i];
      }
    }
  }
}

TEST(SweepE2E, DeviceBuffers) {
  const std::string dir = TempDir();
  if (CudaDeviceCount() == 0) {
    Result r = RunSweep({"D", "H", "-m", "1:4"}, dir);
    ASSERT_FALSE(r.hung);
    EXPECT_EQ(r.code, 2);
    EXPECT_NE(r.err.find("buffer location D needs a GPU"), std::string::npos) << r.err;
    r = RunSweep({"--all-pairs", "-m", "1:4"}, dir);
    EXPECT_EQ(r.code, 2);
    return;
  }
  // A GPU: every pair, every test, data checked, with the limit (bandwidth), the floors
  // (latency) and the peer columns.
  Result r = RunSweep({"all", "--all-pairs", "-c", "-m", "1:4M", "-i", "5", "-x", "1", "-W", "8",
                       "--json", dir + "/gpu.json"},
                      dir);
  ASSERT_FALSE(r.hung);
  ASSERT_EQ(r.code, 0) << r.err;
  Report rep = ReadJson(dir + "/gpu.json");
  ASSERT_EQ(rep.tables.size(), 12u);
  for (const Table& t : rep.tables) {
    ExpectAllMeasured(*t.Find("mpigpu"));
    if (t.test != STest::kLatency) {
      ExpectAllMeasured(*t.Find("limit"));
    } else if (!t.pair.has_device()) {
      ExpectAllMeasured(*t.Find(kFloorCacheLine));
    } else {
      ASSERT_EQ(t.Find("limit"), nullptr);
      ExpectAllMeasured(*t.Find(kFloorCopy));  // one host-driven copy, size by size
      const bool dd = t.pair.src == Loc::kDevice && t.pair.dst == Loc::kDevice;
      ASSERT_EQ(t.Find(kFloorGpuFlag) != nullptr, dd) << PairName(t.pair);
      if (dd) {
        // Measured (a GPU pair with peer access, or one GPU's two kernels), or n/a with why.
        const Series& flag = *t.Find(kFloorGpuFlag);
        if (std::isnan(flag.values[0])) ADD_FAILURE() << "gpuflag: " << flag.note;
        else ExpectAllMeasured(flag);
        EXPECT_NE(r.out.find("# floor gpuflag: half a flag's round trip"), std::string::npos);
        EXPECT_NE(r.out.find("mpigpu/gpuflag"), std::string::npos);
        EXPECT_NE(r.out.find("mpigpu/copy"), std::string::npos);
      }
    }
    if (t.pair.has_device()) {
      ASSERT_NE(t.Find("staged"), nullptr);
      ExpectAllMeasured(*t.Find("staged"));
    }
    if (t.pair.src == Loc::kDevice && t.pair.dst == Loc::kDevice) {
      EXPECT_NE(t.Find("nccl"), nullptr);  // measured, or n/a with the reason
    }
  }
}

TEST(SweepE2E, BadInputsExit2WithAMessage) {
  const std::string dir = TempDir();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"pingpong"}, "unknown test 'pingpong'"},
      {{"-m", "4M:1K"}, "larger than MAX"},
      {{"-m", "lots"}, "is not a size"},
      {{"-n", "4"}, "exactly 2 ranks"},
      {{"--no-such-flag"}, "unknown option '--no-such-flag'"},
      {{"H"}, "come in a pair"},
  };
  for (const auto& [args, message] : cases) {
    Result r = RunSweep(args, dir);
    EXPECT_EQ(r.code, 2) << args[0];
    EXPECT_NE(r.err.find("mpigpu-sweep: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  Result help = RunSweep({"--help"}, dir);
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("usage: mpigpu-sweep"), std::string::npos);
}

TEST(SweepE2E, UnderAnExternalLauncher) {
  const std::string dir = TempDir();
  Result three = RunInDir({Mpigpurun(), "-n", "3", Sweep(), "-m", "1:4"}, dir);
  ASSERT_FALSE(three.hung);
  EXPECT_EQ(three.code, 2);
  EXPECT_NE(three.err.find("needs exactly 2 ranks"), std::string::npos) << three.err;

  Result two = RunInDir(
      {Mpigpurun(), "-n", "2", Sweep(), "bw", "-m", "1:1K", "-i", "5", "--lmt", "all"}, dir);
  ASSERT_FALSE(two.hung);
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_NE(two.out.find("# mpigpu-sweep bw [HH]"), std::string::npos);
  EXPECT_NE(two.out.find("only the environment's MPIGPU_LMT=auto is measured"), std::string::npos)
      << two.out;

  Result tune = RunInDir({Mpigpurun(), "-n", "2", Sweep(), "--tune"}, dir);
  EXPECT_EQ(tune.code, 2);
  EXPECT_NE(tune.err.find("--tune launches its ranks"), std::string::npos) << tune.err;
}

}  // namespace
}  // namespace mpigpu::sweep

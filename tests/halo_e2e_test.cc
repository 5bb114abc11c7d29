// //benchmarks:halo end to end under //tools:mpigpurun: CPU runs (--cpu --check: the distributed
// result equals the serial reference bit for bit) over 1, 2, 3, 4 and 6 ranks, odd grids, halo
// widths 1..3, float and double; bad input exits 2 with its message; on a GPU machine, the GPU
// modes with --check. Every run has a bounded wait: a hung job is killed and fails the test.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "tests/e2e_util.h"

namespace mpigpu::testing {
namespace {

constexpr int kWaitMs = 60000;  // beyond the launcher's own --timeout below

// Runs argv with a bounded wait (kWaitMs).
Result RunProgram(const std::vector<std::string>& argv) {
  RunOptions options;
  options.timeout_ms = kWaitMs;
  return RunBounded(argv, options);
}

// mpigpurun -n ranks halo args...
Result Halo(int ranks, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {Mpigpurun(), "-n", std::to_string(ranks),
                                   "--timeout", "50", Runfile("benchmarks/halo")};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProgram(argv);
}

#define EXPECT_RUN_OK(r, checked_rows)                                          \
  do {                                                                          \
    EXPECT_FALSE((r).hung);                                                     \
    EXPECT_EQ((r).code, 0) << "stdout:\n" << (r).out << "stderr:\n" << (r).err; \
    EXPECT_EQ((r).Count("  ok\n"), (checked_rows)) << (r).out;                  \
  } while (0)

TEST(HaloE2E, FourRanksAllModesCheck) {
  Result r = Halo(4, {"--cpu", "--check", "--mode", "all", "--size", "24", "--iters", "9",
                      "--warmup", "2"});
  EXPECT_RUN_OK(r, 2);  // mpigpu and staged; nccl needs a GPU
  EXPECT_NE(r.out.find("4 ranks (grid 2x2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  mpigpu  48x48"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  staged  48x48"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# nccl skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("# speedup of mpigpu over staged at 48x48: total"), std::string::npos)
      << r.out;
}

TEST(HaloE2E, TwoRanks) {
  Result r = Halo(2, {"--cpu", "--check", "--mode", "all", "--size", "33", "--halo", "2",
                      "--type", "float", "--iters", "11"});
  EXPECT_RUN_OK(r, 2);
  EXPECT_NE(r.out.find("grid 1x2"), std::string::npos) << r.out;
}

TEST(HaloE2E, OneRankWithAndWithoutLauncher) {
  Result r = Halo(1, {"--cpu", "--check", "--size", "20", "--halo", "3", "--iters", "10"});
  EXPECT_RUN_OK(r, 1);
  Result direct = RunProgram({Runfile("benchmarks/halo"), "--cpu", "--check", "--mode", "staged",
                       "--size", "21", "--iters", "5"});
  EXPECT_RUN_OK(direct, 1);
}

TEST(HaloE2E, OddGrids) {
  Result a = Halo(4, {"--cpu", "--check", "--global", "37x29", "--halo", "2", "--iters", "8"});
  EXPECT_RUN_OK(a, 1);
  Result b = Halo(3, {"--cpu", "--check", "--mode", "all", "--global", "19x34", "--iters", "7",
                      "--type", "float"});
  EXPECT_RUN_OK(b, 2);
  EXPECT_NE(b.out.find("grid 1x3"), std::string::npos) << b.out;
  Result c = Halo(4, {"--cpu", "--check", "--grid", "4x1", "--global", "41x13", "--halo", "3",
                      "--iters", "10"});
  EXPECT_RUN_OK(c, 1);
  Result d = Halo(6, {"--cpu", "--check", "--mode", "staged", "--global", "23x26", "--iters",
                      "6"});
  EXPECT_RUN_OK(d, 1);
  EXPECT_NE(d.out.find("grid 2x3"), std::string::npos) << d.out;
}

TEST(HaloE2E, HaloWidthsAndTypes) {
  for (const char* type : {"float", "double"})
    for (const char* halo : {"1", "2", "3"}) {
      SCOPED_TRACE(std::string(type) + " halo " + halo);
      Result r = Halo(4, {"--cpu", "--check", "--mode", "all", "--type", type, "--halo", halo,
                          "--size", "12,17", "--iters", "10", "--warmup", "3"});
      EXPECT_RUN_OK(r, 4);  // two sizes x two modes
    }
}

TEST(HaloE2E, CsvFile) {
  const std::string csv = MakeTempDir("halo") + "/halo.csv";
  Result r = Halo(2, {"--cpu", "--mode", "all", "--size", "16", "--iters", "4", "--csv", csv});
  EXPECT_RUN_OK(r, 0);
  const std::string text = ReadFile(csv);
  EXPECT_EQ(text.rfind("mode,type,ranks,grid,global_rows,global_cols,local_rows,local_cols,", 0),
            0u)
      << text;
  EXPECT_NE(text.find("\nmpigpu,double,2,1x2,16,32,16,16,1,4,"), std::string::npos) << text;
  EXPECT_NE(text.find("\nstaged,double,2,1x2,16,32,16,16,1,4,"), std::string::npos) << text;
  // The last two columns: the median exchange, and the median from the last rank's entry, which
  // leaves out waiting for the other rank and so is never longer.
  EXPECT_NE(text.find(",exchange_median_us,exchange_net_median_us\n"), std::string::npos) << text;
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);  // the header
  int rows = 0;
  while (std::getline(lines, line)) {
    const size_t last = line.rfind(','), before = line.rfind(',', last - 1);
    ASSERT_NE(before, std::string::npos) << line;
    const double median = std::stod(line.substr(before + 1, last - before - 1));
    const double net = std::stod(line.substr(last + 1));
    EXPECT_GE(net, 0.0) << line;
    EXPECT_LE(net, median) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 2) << text;
}

TEST(HaloE2E, BadInputExitsTwoWithItsMessage) {
  struct Case {
    int ranks;
    std::vector<std::string> args;
    std::string want;
  };
  const std::vector<Case> cases = {
      {4, {"--cpu", "--grid", "3x3"}, "grid 3x3 does not fit the job: it needs 9 ranks"},
      {4, {"--cpu", "--size", "8", "--halo", "9"}, "halo width 9 is larger than the smallest"},
      {2, {"--cpu", "--global", "64x1"}, "global domain 64x1 is smaller than the grid 1x2"},
      {2, {"--cpu", "--mode", "bogus"}, "unknown mode 'bogus'"},
      {2, {"--cpu", "--mode", "nccl"}, "--mode nccl needs a GPU"},
      {2, {"--cpu", "--frobnicate"}, "unknown option '--frobnicate'"},
      {2, {"--cpu", "--size", "16", "--csv", "/nonexistent-dir/x.csv"}, "--csv: cannot write"},
  };
  for (const Case& c : cases) {
    Result r = Halo(c.ranks, c.args);
    EXPECT_FALSE(r.hung) << c.want;
    EXPECT_EQ(r.code, 2) << c.want << "\nstderr:\n" << r.err;
    EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
  }
}

TEST(HaloE2E, NoGpuWithoutCpuExitsTwo) {
  if (mpigpu::CudaDeviceCount() > 0) GTEST_SKIP() << "a CUDA device exists";
  Result r = Halo(2, {"--size", "16"});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("no CUDA device: run with --cpu"), std::string::npos) << r.err;
}

// The GPU paths (kernel, device buffers into mpigpu, staging, NCCL where present) with --check.
TEST(HaloE2E, GpuModesCheck) {
  if (mpigpu::CudaDeviceCount() == 0) GTEST_SKIP() << "no CUDA device";
  for (const char* type : {"float", "double"})
    for (const char* halo : {"1", "3"}) {
      SCOPED_TRACE(std::string(type) + " halo " + halo);
      Result r = Halo(2, {"--check", "--mode", "all", "--type", type, "--halo", halo, "--size",
                          "64,257", "--iters", "20"});
      EXPECT_FALSE(r.hung);
      EXPECT_EQ(r.code, 0) << r.out << r.err;
      EXPECT_GE(r.Count("  ok\n"), 4) << r.out;  // two sizes x (mpigpu, staged[, nccl])
      Result four = Halo(4, {"--check", "--mode", "all", "--type", type, "--halo", halo,
                             "--global", "131x77", "--iters", "9"});
      EXPECT_EQ(four.code, 0) << four.out << four.err;
      EXPECT_GE(four.Count("  ok\n"), 2) << four.out;
    }
}

}  // namespace
}  // namespace mpigpu::testing

// The public API under the real launcher: `mpigpurun -n 4 api_c_smoke` (a C program) exits 0;
// the same program runs as a one-rank job without the launcher; a fatal error in one rank ends
// the job with status 1. Every run has a bounded wait.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/e2e_util.h"

namespace mpigpu::testing {
namespace {

// Runs argv (bounded); its exit status, or -1 (signal, or killed at the deadline). Its output is
// passed on to this test's.
int RunProgram(const std::vector<std::string>& args) {
  RunOptions options;
  options.timeout_ms = 60000;
  // Not a rank of any job of the test runner.
  options.unset = {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_JOBID"};
  Result r = RunBounded(args, options);
  std::fwrite(r.out.data(), 1, r.out.size(), stdout);
  std::fwrite(r.err.data(), 1, r.err.size(), stderr);
  if (r.hung) ADD_FAILURE() << args[0] << " hung: killed at the deadline";
  return r.code;
}

const std::string kLauncher = Mpigpurun();
const std::string kSmoke = Runfile("tests/api_c_smoke");

TEST(ApiLauncherTest, FourRanksThroughMpigpurun) {
  EXPECT_EQ(RunProgram({kLauncher, "-n", "4", "--timeout", "50", kSmoke}), 0);
}

TEST(ApiLauncherTest, OneRankWithoutLauncher) { EXPECT_EQ(RunProgram({kSmoke}), 0); }

TEST(ApiLauncherTest, FatalErrorInOneRankEndsTheJob) {
  EXPECT_EQ(RunProgram({kLauncher, "-n", "3", "--timeout", "50", kSmoke, "fail"}), 1);
}

}  // namespace
}  // namespace mpigpu::testing

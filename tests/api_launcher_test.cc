// The public API under the real launcher: `mpigpurun -n 4 api_c_smoke` (a C program) exits 0;
// the same program runs as a one-rank job without the launcher; a fatal error in one rank ends
// the job with status 1. Every run has a bounded wait.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

std::string Runfile(const std::string& rel) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (srcdir && ws) return std::string(srcdir) + "/" + ws + "/" + rel;
  return rel;
}

// Runs argv with stdout/stderr passed through; its exit status, or -1 (signal, or killed at
// the deadline).
int RunProgram(const std::vector<std::string>& args, int timeout_s = 60) {
  pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    // Not a rank of any job of the test runner.
    for (const char* v : {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_JOBID"}) unsetenv(v);
    execv(argv[0], argv.data());
    _exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
      ADD_FAILURE() << args[0] << " hung: killed at the deadline";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

const std::string kLauncher = Runfile("tools/mpigpurun");
const std::string kSmoke = Runfile("tests/api_c_smoke");

TEST(ApiLauncherTest, FourRanksThroughMpigpurun) {
  EXPECT_EQ(RunProgram({kLauncher, "-n", "4", "--timeout", "50", kSmoke}), 0);
}

TEST(ApiLauncherTest, OneRankWithoutLauncher) { EXPECT_EQ(RunProgram({kSmoke}), 0); }

TEST(ApiLauncherTest, FatalErrorInOneRankEndsTheJob) {
  EXPECT_EQ(RunProgram({kLauncher, "-n", "3", "--timeout", "50", kSmoke, "fail"}), 1);
}

}  // namespace

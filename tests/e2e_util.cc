#include "tests/e2e_util.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace mpigpu::testing {

std::string Runfile(const std::string& rel) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* ws = std::getenv("TEST_WORKSPACE");
  if (srcdir && ws) return std::string(srcdir) + "/" + ws + "/" + rel;
  return rel;
}

std::string Mpigpurun() { return Runfile("tools/mpigpurun"); }

std::string TestTmpDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return tmp ? tmp : "/tmp";
}

std::string MakeTempDir(const std::string& tag) {
  std::string dir = TestTmpDir() + "/" + tag + "-XXXXXX";
  if (mkdtemp(&dir[0]) == nullptr) ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
  return dir;
}

std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

int Result::Count(const std::string& s) const {
  int n = 0;
  for (size_t at = out.find(s); at != std::string::npos; at = out.find(s, at + 1)) ++n;
  return n;
}

BoundedRun::BoundedRun(const std::vector<std::string>& argv, const RunOptions& options)
    : options_(options) {
  if (options_.dir.empty()) options_.dir = MakeTempDir("run");
  // Built before fork: the child only redirects, sets its environment and execs.
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(&a[0]);
  cargv.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    if (options_.own_group) setpgid(0, 0);
    if (!std::freopen((options_.dir + "/stdout").c_str(), "w", stdout) ||
        !std::freopen((options_.dir + "/stderr").c_str(), "w", stderr))
      _exit(120);
    for (const auto& [name, value] : options_.env) setenv(name.c_str(), value.c_str(), 1);
    for (const std::string& name : options_.unset) unsetenv(name.c_str());
    execv(cargv[0], cargv.data());
    _exit(121);
  }
  if (pid_ < 0) ADD_FAILURE() << "fork: " << std::strerror(errno);
  // Set on both sides, so the group exists whichever runs first.
  if (pid_ > 0 && options_.own_group) setpgid(pid_, pid_);
}

Result BoundedRun::Wait() {
  Result r;
  if (pid_ < 0) return r;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(options_.own_group ? -pid_ : pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      r.hung = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;  // reaped: a second Wait() must not wait for some other child
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.out = ReadFile(options_.dir + "/stdout");
  r.err = ReadFile(options_.dir + "/stderr");
  return r;
}

Result RunBounded(const std::vector<std::string>& argv, const RunOptions& options) {
  return BoundedRun(argv, options).Wait();
}

}  // namespace mpigpu::testing

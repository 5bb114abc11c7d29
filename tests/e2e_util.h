// Helpers of the end-to-end tests, which run built programs (//tools:mpigpurun, the sweep, the
// halo benchmark, test rank programs) as child processes: runfile paths, scratch directories,
// and a run with a bounded wait that captures stdout and stderr. A hung program is killed at
// its deadline and reported, so the test fails instead of hanging.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace mpigpu::testing {

// A data dependency of the test: TEST_SRCDIR/TEST_WORKSPACE/rel under Bazel, rel elsewhere.
std::string Runfile(const std::string& rel);

// //tools:mpigpurun (the test must list it in its data).
std::string Mpigpurun();

// The test's scratch directory: TEST_TMPDIR, or /tmp outside Bazel.
std::string TestTmpDir();

// A fresh directory TestTmpDir()/tag-XXXXXX; adds a test failure when it cannot be made.
std::string MakeTempDir(const std::string& tag);

// The whole file, byte for byte ("" when it cannot be read).
std::string ReadFile(const std::string& path);

// How a bounded run ended.
struct Result {
  int code = -1;         // exit status; -1 when it did not exit normally (signal, or killed)
  bool hung = false;     // it was still running at the deadline and was killed
  std::string out, err;  // what it wrote to stdout and stderr

  // How many times s occurs in out.
  int Count(const std::string& s) const;
};

struct RunOptions {
  int timeout_ms = 60000;                  // counted from Wait(); then the program is killed
  std::map<std::string, std::string> env;  // set in the child's environment
  std::vector<std::string> unset;          // removed from the child's environment
  // The child leads a new process group and a hang kills the whole group (children included).
  bool own_group = false;
  std::string dir;  // where the files "stdout" and "stderr" go; "" = a fresh MakeTempDir("run")
};

// Starts argv[0] (a path: no PATH lookup) with argv in the background; stdout and stderr go to
// files that Wait() reads back.
class BoundedRun {
 public:
  explicit BoundedRun(const std::vector<std::string>& argv, const RunOptions& options = {});

  pid_t pid() const { return pid_; }

  // Waits at most options.timeout_ms for the program to end; kills it if it has not.
  Result Wait();

 private:
  RunOptions options_;
  pid_t pid_ = -1;
};

// BoundedRun(argv, options).Wait().
Result RunBounded(const std::vector<std::string>& argv, const RunOptions& options = {});

}  // namespace mpigpu::testing

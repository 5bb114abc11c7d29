// How mpigpu-sweep started without mpigpurun starts its own two ranks: find the launcher (next
// to the binary in an install or bundle directory, or in Bazel runfiles), build its command
// line, then exec it (one job) or run it once per configuration (--lmt all, --tune).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "memcopy/status.h"

namespace mpigpu {
namespace sweep {

// The places the launcher may be, in the order they are tried: <dir of exe>/mpigpurun, then
// tools/mpigpurun under <argv0>.runfiles/<ws>, $RUNFILES_DIR/<ws> and $TEST_SRCDIR/<ws> (ws =
// $TEST_WORKSPACE or "mpigpu").
std::vector<std::string> LauncherCandidates(const std::string& exe, const std::string& argv0,
                                            const std::function<const char*(const char*)>& getenv);

// The first candidate that is an executable file, or "".
std::string FindLauncher(const std::string& argv0);

// This process's executable (/proc/self/exe), or argv0 when that cannot be read.
std::string SelfExe(const std::string& argv0);

// launcher -n 2 [-x VAR=VALUE ...] -- exe args...
std::vector<std::string> LauncherArgv(const std::string& launcher,
                                      const std::vector<std::string>& exports,
                                      const std::string& exe,
                                      const std::vector<std::string>& args);

// Replaces this process with argv (returns only on failure, with the reason).
Status ExecArgv(const std::vector<std::string>& argv);

// Runs argv to its end and returns its exit status (128 + signal when killed), or -1 with
// `error` set when it could not start.
int RunArgv(const std::vector<std::string>& argv, std::string* error);

}  // namespace sweep
}  // namespace mpigpu

#include "tools/sweep_launch.h"

#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace mpigpu {
namespace sweep {
namespace {

std::string DirName(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::vector<char*> CArgv(std::vector<std::string>& args) {
  std::vector<char*> v;
  for (std::string& a : args) v.push_back(&a[0]);
  v.push_back(nullptr);
  return v;
}

}  // namespace

std::vector<std::string> LauncherCandidates(const std::string& exe, const std::string& argv0,
                                            const std::function<const char*(const char*)>& getenv) {
  std::vector<std::string> c;
  if (!exe.empty()) c.push_back(DirName(exe) + "/mpigpurun");
  const char* ws_env = getenv("TEST_WORKSPACE");
  const std::string ws = ws_env && *ws_env ? ws_env : "mpigpu";
  const std::string rel = "/" + ws + "/tools/mpigpurun";
  if (!argv0.empty()) c.push_back(argv0 + ".runfiles" + rel);
  if (!exe.empty()) c.push_back(exe + ".runfiles" + rel);
  for (const char* var : {"RUNFILES_DIR", "TEST_SRCDIR"}) {
    const char* dir = getenv(var);
    if (dir && *dir) c.push_back(dir + rel);
  }
  return c;
}

std::string FindLauncher(const std::string& argv0) {
  for (const std::string& c : LauncherCandidates(SelfExe(argv0), argv0, std::getenv))
    if (IsExecutableFile(c)) return c;
  return "";
}

std::string SelfExe(const std::string& argv0) {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return argv0;
  return std::string(buf, static_cast<size_t>(n));
}

std::vector<std::string> LauncherArgv(const std::string& launcher,
                                      const std::vector<std::string>& exports,
                                      const std::string& exe,
                                      const std::vector<std::string>& args) {
  std::vector<std::string> argv = {launcher, "-n", "2"};
  for (const std::string& e : exports) {
    argv.push_back("-x");
    argv.push_back(e);
  }
  argv.push_back("--");
  argv.push_back(exe);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

Status ExecArgv(const std::vector<std::string>& argv) {
  std::vector<std::string> copy = argv;
  std::vector<char*> cargv = CArgv(copy);
  execv(cargv[0], cargv.data());
  return SysError(("exec " + argv[0]).c_str());
}

int RunArgv(const std::vector<std::string>& argv, std::string* error) {
  std::vector<std::string> copy = argv;
  std::vector<char*> cargv = CArgv(copy);
  pid_t pid;
  int rc = posix_spawn(&pid, cargv[0], nullptr, nullptr, cargv.data(), environ);
  if (rc != 0) {
    *error = "cannot start " + argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      *error = std::string("waitpid: ") + std::strerror(errno);
      return -1;
    }
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace sweep
}  // namespace mpigpu

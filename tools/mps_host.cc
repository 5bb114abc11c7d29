#include "tools/mps_host.h"

#include <cuda_runtime_api.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "memcopy/clock.h"
#include "memcopy/memcopy.h"
#include "memcopy/mps.h"
#include "tools/launcher.h"

namespace mpigpu {
namespace launcher {
namespace {

constexpr double kControlTimeoutS = 10.0;  // one run of the control program (start or quit)

void SleepSeconds(double s) {
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(s);
  ts.tv_nsec = static_cast<long>((s - std::floor(s)) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur, sep)) out.push_back(cur);
  return out;
}

GpuFacts FactsFromWord(const std::string& w) {
  GpuFacts g;
  if (w == "exclusive") g.compute_mode = GpuFacts::Mode::kExclusiveProcess;
  else if (w == "prohibited") g.compute_mode = GpuFacts::Mode::kProhibited;
  else if (w == "unknown") g.compute_mode = GpuFacts::Mode::kUnknown;
  g.mig = w == "mig";
  if (w == "served") {
    g.mps_served = true;
    g.served_how = "said by " + std::string(kTestGpusVar);
  }
  return g;
}

// Runs `argv` with `env`, `input` on its stdin (nullptr: /dev/null) and its stdout and stderr in
// `out_path` ("": /dev/null); waits at most `timeout_s` (then SIGKILL). Returns the wait status,
// or -1 when it could not be started or timed out (`*timed_out` says which).
int RunControl(const std::vector<std::string>& argv, const std::vector<std::string>& env,
               const char* input, const std::string& out_path, double timeout_s,
               bool* timed_out) {
  *timed_out = false;
  std::vector<std::string> a = argv, e = env;
  std::vector<char*> av, ev;
  for (std::string& s : a) av.push_back(&s[0]);
  av.push_back(nullptr);
  for (std::string& s : e) ev.push_back(&s[0]);
  ev.push_back(nullptr);
  int in_pipe[2] = {-1, -1};
  if (input != nullptr && pipe2(in_pipe, O_CLOEXEC) != 0) return -1;
  const int out_fd = open(out_path.empty() ? "/dev/null" : out_path.c_str(),
                          O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // Only async-signal-safe calls: the launcher may have threads (the CUDA runtime's).
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);  // the daemon must hear its signals
    signal(SIGPIPE, SIG_DFL);
    dup2(input != nullptr ? in_pipe[0] : null_fd, STDIN_FILENO);
    if (out_fd >= 0) {
      dup2(out_fd, STDOUT_FILENO);
      dup2(out_fd, STDERR_FILENO);
    }
    execvpe(av[0], av.data(), ev.data());
    _exit(127);
  }
  if (out_fd >= 0) close(out_fd);
  if (null_fd >= 0) close(null_fd);
  if (input != nullptr) {
    close(in_pipe[0]);
    if (pid > 0) {
      const size_t len = std::strlen(input);
      ssize_t w;
      do {
        w = write(in_pipe[1], input, len);  // a few bytes: fits the pipe, never blocks
      } while (w < 0 && errno == EINTR);
    }
    close(in_pipe[1]);
  }
  if (pid < 0) return -1;
  const double give_up = MonotonicSeconds() + timeout_s;
  int status = 0;
  while (true) {
    const pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) return status;
    if (got < 0 && errno != EINTR) return -1;
    if (MonotonicSeconds() >= give_up) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      *timed_out = true;
      return -1;
    }
    SleepSeconds(0.005);
  }
}

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
  return "";
}

std::string ReadSmall(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool IsMpsComm(pid_t pid) {
  return ReadSmall("/proc/" + std::to_string(pid) + "/comm").rfind("nvidia-cuda-mps", 0) == 0;
}

pid_t ParentOf(pid_t pid) {
  // /proc/PID/stat: "pid (comm) state ppid ...": comm may hold spaces and parentheses.
  const std::string stat = ReadSmall("/proc/" + std::to_string(pid) + "/stat");
  const size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos) return -1;
  char state;
  int ppid = -1;
  if (std::sscanf(stat.c_str() + close_paren + 1, " %c %d", &state, &ppid) != 2) return -1;
  return ppid;
}

int RemoveEntry(const char* path, const struct stat*, int, struct FTW*) {
  (void)remove(path);
  return 0;
}

std::vector<std::string> ClientEnv(const std::string& dir, const std::vector<std::string>& base) {
  std::vector<std::string> env = base;
  for (const auto& [name, value] : MpsClientVariables(dir)) SetEnvVar(&env, name, value);
  return env;
}

}  // namespace

std::vector<GpuFacts> GatherGpuFacts() {
  std::vector<GpuFacts> gpus;
  if (const char* test = std::getenv(kTestGpusVar)) {
    for (const std::string& w : Split(test, ','))
      if (!w.empty()) gpus.push_back(FactsFromWord(w));
    return gpus;
  }
  const int n = CudaDeviceCount();
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::vector<std::string> names = Split(visible != nullptr ? visible : "", ',');
  for (int d = 0; d < n; ++d) {
    GpuFacts g;
    int mode = 0;
    if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d) != cudaSuccess) {
      (void)cudaGetLastError();
      g.compute_mode = GpuFacts::Mode::kUnknown;
    } else {
      g.compute_mode = mode == cudaComputeModeProhibited ? GpuFacts::Mode::kProhibited
                       : mode == cudaComputeModeExclusiveProcess
                           ? GpuFacts::Mode::kExclusiveProcess
                           : GpuFacts::Mode::kDefault;
    }
    g.mig = static_cast<size_t>(d) < names.size() && names[static_cast<size_t>(d)].rfind("MIG-", 0) == 0;
    const MpsState mps = MpsOfDevice(d);
    g.mps_served = mps.active;
    g.served_how = mps.how;
    gpus.push_back(g);
  }
  return gpus;
}

bool InPath(const std::string& name, const char* path) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0;
  for (const std::string& d : Split(path != nullptr ? path : "", ':')) {
    const std::string full = (d.empty() ? "." : d) + "/" + name;
    struct stat st;
    if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(full.c_str(), X_OK) == 0)
      return true;
  }
  return false;
}

Status MakeMpsFolder(std::string* dir) {
  char tmpl[] = "/tmp/mpigpu-mps-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return SysError("mkdtemp /tmp/mpigpu-mps-XXXXXX");
  *dir = tmpl;
  for (const char* sub : {"/pipe", "/log"})
    if (mkdir((*dir + sub).c_str(), 0700) != 0) {
      Status st = SysError(("mkdir " + *dir + sub).c_str());
      rmdir((*dir + "/pipe").c_str());
      rmdir(dir->c_str());
      return st;
    }
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> MpsClientVariables(const std::string& dir) {
  return {{"CUDA_MPS_PIPE_DIRECTORY", dir + "/pipe"}, {"CUDA_MPS_LOG_DIRECTORY", dir + "/log"}};
}

Status StartMpsDaemon(const std::string& dir, const std::vector<std::string>& base_env,
                      double timeout_s) {
  const std::string out = dir + "/log/start.out";
  bool timed_out = false;
  const int status = RunControl({kMpsControl, "-d"}, ClientEnv(dir, base_env), nullptr, out,
                                kControlTimeoutS, &timed_out);
  std::string said = FirstLine(out);
  if (!said.empty()) said = ": " + said;
  if (timed_out)
    return Status(Err::kSystem, std::string(kMpsControl) + " -d did not return within " +
                                    std::to_string(static_cast<int>(kControlTimeoutS)) + " s");
  if (status < 0) return Status(Err::kSystem, std::string("cannot start ") + kMpsControl);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && said.empty())
    return Status(Err::kSystem, std::string("cannot execute ") + kMpsControl);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status(Err::kSystem, std::string(kMpsControl) + " -d " +
                                    DescribeWaitStatus(status).what + said);
  const double give_up = MonotonicSeconds() + timeout_s;
  // Up once its control endpoint exists while the daemon that made it runs. Nothing connects
  // to it: a connection the daemon has not accepted yet would sit in its queue as a client.
  const std::string pipe = dir + "/pipe";
  auto up = [&] {
    struct stat st;
    return stat((pipe + "/control").c_str(), &st) == 0 && !MpsDaemonProcesses(pipe).empty();
  };
  while (!up()) {
    if (MonotonicSeconds() >= give_up) {
      std::string log = FirstLine(dir + "/log/control.log");
      (void)StopMpsDaemon(dir, base_env, 1.0);  // whatever started; the folder goes too
      return Status(Err::kSystem, "no MPS control daemon answered at " + dir + "/pipe/control within " +
                                      std::to_string(static_cast<int>(timeout_s)) + " s" +
                                      (log.empty() ? "" : " (its log: " + log + ")"));
    }
    SleepSeconds(0.01);
  }
  return Status::Ok();
}

std::vector<pid_t> MpsDaemonProcesses(const std::string& pipe_dir) {
  const std::string want = "CUDA_MPS_PIPE_DIRECTORY=" + pipe_dir;
  std::set<pid_t> found;
  std::vector<std::pair<pid_t, pid_t>> mps_like;  // (pid, parent) of every nvidia-cuda-mps*
  DIR* d = opendir("/proc");
  if (d == nullptr) return {};
  while (struct dirent* e = readdir(d)) {
    char* end = nullptr;
    const long v = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || v <= 0) continue;
    const pid_t pid = static_cast<pid_t>(v);
    if (!IsMpsComm(pid)) continue;
    mps_like.emplace_back(pid, ParentOf(pid));
    const std::string env = ReadSmall("/proc/" + std::to_string(pid) + "/environ");
    for (size_t at = 0; at < env.size();) {
      const size_t nul = env.find('\0', at);
      const size_t len = (nul == std::string::npos ? env.size() : nul) - at;
      if (env.compare(at, len, want) == 0) found.insert(pid);
      if (nul == std::string::npos) break;
      at = nul + 1;
    }
  }
  closedir(d);
  // The server the daemon starts is its child (whatever its environment holds).
  for (bool more = true; more;) {
    more = false;
    for (const auto& [pid, parent] : mps_like)
      if (!found.count(pid) && found.count(parent)) more = found.insert(pid).second;
  }
  return std::vector<pid_t>(found.begin(), found.end());
}

std::string StopMpsDaemon(const std::string& dir, const std::vector<std::string>& base_env,
                          double grace_s) {
  if (dir.empty()) return "";
  const std::string pipe = dir + "/pipe";
  const double give_up = MonotonicSeconds() + grace_s;
  std::string said;
  struct stat st;
  if (stat((pipe + "/control").c_str(), &st) == 0 || !MpsDaemonProcesses(pipe).empty()) {
    bool timed_out = false;
    const int status = RunControl({kMpsControl}, ClientEnv(dir, base_env), "quit\n", "", grace_s,
                                  &timed_out);
    if (timed_out) said = "quit did not return within " + std::to_string(grace_s) + " s";
    else if (status < 0) said = std::string("cannot run ") + kMpsControl;
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      said = "quit " + DescribeWaitStatus(status).what;
  }
  std::vector<pid_t> left;
  while (!(left = MpsDaemonProcesses(pipe)).empty() && MonotonicSeconds() < give_up)
    SleepSeconds(0.02);
  std::string what;
  if (!left.empty()) {
    for (pid_t pid : left) kill(pid, SIGKILL);
    const double killed_by = MonotonicSeconds() + 1.0;
    while (!MpsDaemonProcesses(pipe).empty() && MonotonicSeconds() < killed_by) SleepSeconds(0.01);
    what = "the MPS daemon did not quit" + (said.empty() ? "" : " (" + said + ")") + " within " +
           std::to_string(static_cast<int>(std::ceil(grace_s))) + " s: killed " +
           std::to_string(left.size()) + " of its process(es)";
  }
  nftw(dir.c_str(), RemoveEntry, 8, FTW_DEPTH | FTW_PHYS);
  return what;
}

}  // namespace launcher
}  // namespace mpigpu

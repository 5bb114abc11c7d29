#include "tools/spawn.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tools/launcher.h"

namespace mpigpu {
namespace launcher {
namespace {

constexpr int kExitCannotExec = 127;
constexpr int kExitInternal = 1;

// Null-terminated char* view of strings (for execvpe); `strings` must outlive it.
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> v;
  for (std::string& s : strings) v.push_back(&s[0]);
  v.push_back(nullptr);
  return v;
}

}  // namespace

pid_t StartProcess(std::vector<std::string> args, std::vector<std::string> env,
                   const cpu_set_t* cpus, const StdFds& std_fds, const ChildSetup& setup,
                   int* exec_errno,
                   int* fork_errno) {
  std::vector<char*> argv = CStrings(args);
  std::vector<char*> envp = CStrings(env);
  // Local rank 0 learns its own pid as the job's creator in the child (see kSelfPidPlaceholder).
  char* self_pid = nullptr;
  const std::string self_entry = std::string(kCreatorPidVar) + "=" + kSelfPidPlaceholder;
  for (std::string& e : env)
    if (e == self_entry) self_pid = &e[std::strlen(kCreatorPidVar) + 1];
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *fork_errno = errno;
    return -1;
  }
  std::fflush(nullptr);  // no buffered output may be written twice
  pid_t pid = fork();
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec (the launcher may have threads).
    close(fds[0]);
    // Die with the launcher; if it died before this line, no signal will come: leave now.
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != setup.launcher) _exit(kExitInternal);
    sigaction(SIGPIPE, setup.sigpipe, nullptr);
    sigprocmask(SIG_SETMASK, setup.mask, nullptr);
    if (setup.link_fd >= 0) fcntl(setup.link_fd, F_SETFD, 0);
    // dup2 clears close-on-exec on the copy; the originals (close on exec) go at exec.
    const int wanted[3] = {std_fds.in, std_fds.out, std_fds.err};
    for (int target = 0; target < 3; ++target)
      if (wanted[target] >= 0 && wanted[target] != target) dup2(wanted[target], target);
    if (self_pid != nullptr) WriteSelfPid(self_pid, getpid());
    if (cpus != nullptr) sched_setaffinity(0, sizeof(*cpus), cpus);
    execvpe(argv[0], argv.data(), envp.data());
    int e = errno;
    ssize_t w = write(fds[1], &e, sizeof(e));
    (void)w;
    _exit(kExitCannotExec);
  }
  close(fds[1]);
  if (pid < 0) {
    *fork_errno = errno;
    close(fds[0]);
    return -1;
  }
  int e = 0;
  ssize_t got;
  do {
    got = read(fds[0], &e, sizeof(e));
  } while (got < 0 && errno == EINTR);
  close(fds[0]);
  if (got == static_cast<ssize_t>(sizeof(e))) {
    *exec_errno = e;
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    return -1;
  }
  return pid;
}

}  // namespace launcher
}  // namespace mpigpu

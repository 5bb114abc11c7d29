// Starting one of the launcher's children (a rank, or a launch agent for a rank on another host):
// fork, a few async-signal-safe steps, exec, and the exec's failure reported back.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace mpigpu {
namespace launcher {

// What the child does between fork and exec besides exec itself.
struct ChildSetup {
  const sigset_t* mask = nullptr;             // the signal mask the launcher started with
  const struct sigaction* sigpipe = nullptr;  // SIGPIPE's original disposition
  pid_t launcher = -1;
  int link_fd = -1;  // the ranks' end of the link: inherited by the program (not close on exec)
};

// The child's standard descriptors where they are not the launcher's own (-1: inherited). Each is
// dup2'ed into place in the child and the original closed there.
struct StdFds {
  int in = -1;
  int out = -1;
  int err = -1;
};

// Forks and execs argv[0] (searched in PATH) with `env`, bound to `cpus` when given, with
// `std_fds` as its stdin/stdout/stderr where given. The child dies
// with the launcher (PR_SET_PDEATHSIG). Returns the child's pid, or -1 with `exec_errno` set when
// the exec failed (the child reports errno through a close-on-exec pipe: EOF means the exec
// succeeded) or `fork_errno` when there was no child at all. An entry
// "MPIGPU_CREATOR_PID=<kSelfPidPlaceholder>" in `env` gets the child's own pid.
pid_t StartProcess(std::vector<std::string> argv, std::vector<std::string> env,
                   const cpu_set_t* cpus, const StdFds& std_fds, const ChildSetup& setup,
                   int* exec_errno,
                   int* fork_errno);

}  // namespace launcher
}  // namespace mpigpu

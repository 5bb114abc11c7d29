// Helpers for the ringbuf tests: forked children with a bounded life, unique segment names.
#pragma once

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "ringbuf/segment.h"

namespace mpigpu::testing {

// Forks a child that runs fn() and _exits with its result; alarm() ends a hung child.
inline pid_t ForkChild(const std::function<int()>& fn, unsigned timeout_s) {
  pid_t pid = fork();
  if (pid == 0) {
    alarm(timeout_s);
    _exit(fn());
  }
  return pid;
}

// Waits for `pid` at most timeout_s, then kills it. Returns its exit code, 128 + signal if a
// signal ended it, or -1 if it had to be killed (or waitpid failed).
inline int WaitChild(pid_t pid, unsigned timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0) return -1;
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

// A segment name no other test run uses.
inline std::string FreshSegmentName(const char* tag) {
  std::string jobid;
  if (!RandomJobId(&jobid).ok()) jobid = std::to_string(getpid());
  return SegmentName(std::string(tag) + "-" + jobid);
}

// Removes a segment name at the end of a scope, whatever happened.
struct NameGuard {
  std::string name;
  ~NameGuard() { (void)ShmSegment::Remove(name); }
};

}  // namespace mpigpu::testing

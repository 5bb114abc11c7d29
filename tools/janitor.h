// Cleaning up after a job: the sweep of its /dev/shm names when it ends, and the janitor, a child
// forked before the ranks that cleans up when the launcher dies without ending the job (even by
// SIGKILL): it holds the read end of a pipe whose write end only the launcher holds, hears the
// pids of the ranks as they start and end, then "done". When the pipe closes without "done", it
// SIGKILLs the ranks still running and removes the job's /dev/shm names; with a job-private MPS
// daemon (tools/mps_host.h) it also stops that daemon and removes its folder.
#pragma once

#include <sys/types.h>

#include <string>

namespace mpigpu {
namespace launcher {

inline constexpr const char* kShmDir = "/dev/shm";

// Removes the job's /dev/shm names; another user's names with the prefix get one line.
void SweepJobShm(const std::string& prefix);

class Janitor {
 public:
  // Forks the janitor (before any thread starts: it runs on in the fork); without one (fork
  // failed) the job runs as before, with a warning.
  // `mps_dir`: the job's MPS folder, made before this call ("": none).
  void Start(const std::string& jobid, const std::string& prefix, const std::string& mps_dir = "");

  pid_t pid() const { return pid_; }
  void RankStarted(pid_t pid) { Send('S', pid); }
  void RankReaped(pid_t pid) { Send('E', pid); }

  // The job ended normally: the janitor leaves without doing anything; reaped here (bounded).
  void Done();

 private:
  void Send(char kind, pid_t pid);

  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace launcher
}  // namespace mpigpu

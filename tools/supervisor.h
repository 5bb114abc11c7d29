// mpigpurun's supervision of a job once its first rank starts (tools/mpigpurun.cc starts the
// ranks): who runs, what each rank's link says, how the job ends and with which exit code.
//
// A launch agent is supervised as its rank: its exit status is the rank's, and it gets the
// end signal with the others. Whenever a rank runs on another host (even when all of them share
// one), the job has a secret and a link server (link_server.h): each remote rank's link is a TCP
// connection to it carrying the same records as the local link (mpigpurun.cc), so a remote rank
// that exits 0 without "F" fails the job as a local one does (its agent's exit may come before
// its last records: they get kLinkSettleSeconds), and a remote rank whose link closes without
// "F" while its agent runs on (the rank died behind a shell, its host went away) fails it
// kLinkLostGraceSeconds later. With --tag-output (tag_output.h) every rank's stdout and stderr
// come through pipes polled in the same loop.
//
// Supervision runs with SIGCHLD, SIGINT, SIGTERM and SIGHUP blocked and read from a signalfd,
// polled together with the ranks' link (mpigpurun.cc), so there are no signal handlers and no
// races between a rank's end, a signal to the launcher, a record from a rank and the timeout:
// the loop sees each in turn (mpigpurun.cc sets the mask before any thread exists). The loop
// also reaps at least every kReapPollSeconds whatever it heard. Ending a job: the signal
// (SIGTERM, or the one the launcher got) to every running rank, then SIGKILL after
// kGraceSeconds; a second signal to the launcher kills at once.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/janitor.h"
#include "tools/link_server.h"
#include "tools/tag_output.h"

namespace mpigpu {
namespace launcher {

// The launcher's exit codes besides a failed rank's own (RankEnd::exit_code).
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCannotExec = 127;
inline constexpr int kExitTimeout = 124;
inline constexpr int kExitInternal = 1;
// A rank exited 0 after MPIGPU_Init without MPIGPU_Finalize.
inline constexpr int kExitNoFinalize = 1;
// A remote rank's link closed without MPIGPU_Finalize.
inline constexpr int kExitLost = 1;

// One rank of the job as the supervisor sees it.
struct Rank {
  pid_t pid = -1;
  bool running = false;
  bool joined = false;     // sent "J": MPIGPU_Init joined the job
  bool finalized = false;  // sent "F": MPIGPU_Finalize ended
  // A rank on another host: `pid` is its launch agent's; its records come over its TCP link.
  bool remote = false;
  std::string host;
  bool link_closed = false;  // its remote link closed (after its records)
  double judge_at = 0;       // its agent exited 0 with the link still open: judge by then
  double lost_at = 0;        // its link closed without "F" while its agent runs: fail by then
};

// The job's life once its first rank starts: who runs, how it ends, with which exit code.
class Supervisor {
 public:
  // `signal_fd`: a signalfd of the blocked signals; `link_fd`: the launcher's end of the link
  // (-1: none); `links`: the link server of the ranks on other hosts, `output`: --tag-output's
  // pipes (nullptr: none).
  Supervisor(std::vector<Rank>* ranks, double timeout_s, int signal_fd, int link_fd,
             Janitor* janitor, LinkServer* links, TaggedOutput* output);

  bool ending() const { return ending_; }

  // Rank r runs as `pid`.
  void Started(size_t r, pid_t pid);

  // Ends the job with `exit_code` (if it is not ending already) by sending `sig` to every rank
  // after `delay` seconds; SIGKILL follows kGraceSeconds later.
  void End(int exit_code, int sig, double delay = 0);

  // While ranks are being started: takes in what happened so far without waiting (ended ranks,
  // records, signals, the timeout). ending() tells whether to stop starting ranks.
  void Poll() { Step(0); }

  // Waits until every rank has been reaped (and judged); returns the job's exit code.
  int Run();

 private:
  bool Done() const { return Running() == 0 && (ending_ || !RankDeadline(nullptr)); }
  void Step(double max_wait);
  int Running() const;
  void SignalAll(int sig);
  void SignalNow();
  void KillAll();
  bool RankDeadline(double* at) const;
  double Deadline() const;
  void Escalate();
  std::string Who(const Rank& rank) const;
  void Judge(size_t r);
  void CheckRankDeadlines(double now);
  void DrainLink();
  void ServeLinks();
  void ReapEnded();
  void WaitForEvent(double wait);

  std::vector<Rank>* ranks_;
  std::unordered_map<pid_t, size_t> index_;  // pid -> rank
  int signal_fd_;
  int link_fd_;
  Janitor* janitor_;
  LinkServer* links_;
  TaggedOutput* output_;
  double timeout_s_ = 0;
  double timeout_at_ = 0;  // 0: no timeout
  bool ending_ = false;
  bool signalled_ = false;  // the end signal went out
  bool killed_ = false;
  int end_signal_ = SIGTERM;
  double signal_at_ = 0;
  double kill_at_ = 0;
  int exit_code_ = 0;
  // The job ends because a rank exited with an error: a rank reaped killed by a signal before
  // the end signal went out is named as the cause instead.
  bool ended_by_exit_ = false;
};

}  // namespace launcher
}  // namespace mpigpu

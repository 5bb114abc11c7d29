// mpigpurun's supervision of a job (tools/supervisor.h): the loop over ended ranks, the ranks'
// links, signals and deadlines.
#include "tools/supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "memcopy/clock.h"
#include "tools/launcher.h"

namespace mpigpu {
namespace launcher {
namespace {

// The longest the supervision loop sleeps before it reaps again, whatever it heard.
constexpr double kReapPollSeconds = 0.25;
constexpr double kGraceSeconds = 2.0;
// A rank that exits with an error status often has peers failing the same way (a bad argument):
// they get this long to finish and print their own message before the others are signalled.
constexpr double kExitGraceSeconds = 0.5;
// A remote rank's agent exited 0 while its link is still open: its "F" and close may still be on
// the way (another connection, another host); they get this long before it is judged on what came.
constexpr double kLinkSettleSeconds = 2.0;
// A remote rank's link closed without "F" while its agent runs: the agent gets this long to exit
// with the rank's own status (a clearer report) before the rank counts as lost.
constexpr double kLinkLostGraceSeconds = 1.0;

}  // namespace

Supervisor::Supervisor(std::vector<Rank>* ranks, double timeout_s, int signal_fd, int link_fd,
                       Janitor* janitor, LinkServer* links, TaggedOutput* output)
    : ranks_(ranks), signal_fd_(signal_fd), link_fd_(link_fd), janitor_(janitor),
      links_(links), output_(output) {
  if (timeout_s > 0) timeout_at_ = MonotonicSeconds() + timeout_s;
  timeout_s_ = timeout_s;
}

void Supervisor::Started(size_t r, pid_t pid) {
  (*ranks_)[r].pid = pid;
  (*ranks_)[r].running = true;
  index_[pid] = r;
  if (janitor_ != nullptr) janitor_->RankStarted(pid);
}

void Supervisor::End(int exit_code, int sig, double delay) {
  if (ending_) return;
  ending_ = true;
  exit_code_ = exit_code;
  end_signal_ = sig;
  signal_at_ = MonotonicSeconds() + delay;
  if (delay <= 0) SignalNow();
}

int Supervisor::Run() {
  while (true) {
    ReapEnded();
    if (Done()) return exit_code_;
    Step(-1);
  }
}

// One round: reap ended ranks, act on a deadline that passed, else wait at most `max_wait`
// seconds (< 0: until the next deadline, or for ever) for a signal, a record or output.
void Supervisor::Step(double max_wait) {
  ReapEnded();
  if (max_wait < 0 && Done()) return;  // Run returns
  double now = MonotonicSeconds();
  if (!ending_) CheckRankDeadlines(now);
  const double deadline = Deadline();
  if (deadline > 0 && now >= deadline) {
    if (ending_) {
      Escalate();
    } else if (timeout_at_ > 0 && now >= timeout_at_) {
      std::fprintf(stderr, "mpigpurun: job timed out after %g s; ending the job\n", timeout_s_);
      End(kExitTimeout, SIGTERM);
    }
    return;
  }
  double wait = deadline > 0 ? deadline - now : -1;
  if (max_wait >= 0 && (wait < 0 || wait > max_wait)) wait = max_wait;
  if (wait < 0 || wait > kReapPollSeconds) wait = kReapPollSeconds;  // a SIGCHLD lost anyway
  WaitForEvent(wait);
}

int Supervisor::Running() const {
  int n = 0;
  for (const Rank& r : *ranks_) n += r.running ? 1 : 0;
  return n;
}

void Supervisor::SignalAll(int sig) {
  for (const Rank& r : *ranks_)
    if (r.running) kill(r.pid, sig);
}

void Supervisor::SignalNow() {
  signalled_ = true;
  SignalAll(end_signal_);
  kill_at_ = MonotonicSeconds() + kGraceSeconds;
}

void Supervisor::KillAll() {
  signalled_ = killed_ = true;
  SignalAll(SIGKILL);
}

// The earliest per-rank deadline of a job that is not ending (judge_at, lost_at); false: none.
bool Supervisor::RankDeadline(double* at) const {
  double first = 0;
  for (const Rank& r : *ranks_)
    for (double t : {r.judge_at, r.lost_at})
      if (t > 0 && (first == 0 || t < first)) first = t;
  if (at != nullptr) *at = first;
  return first > 0;
}

// The next deadline (-1: none): the timeout or a rank's, the delayed end signal, or SIGKILL
// after the grace period, whichever the job is waiting for.
double Supervisor::Deadline() const {
  if (!ending_) {
    double d = timeout_at_ > 0 ? timeout_at_ : -1, rank_at = 0;
    if (RankDeadline(&rank_at) && (d < 0 || rank_at < d)) d = rank_at;
    return d;
  }
  if (!signalled_) return signal_at_;
  return killed_ ? -1 : kill_at_;
}

// The next step of an ending job: the end signal if it has not gone out, else SIGKILL.
void Supervisor::Escalate() {
  if (!signalled_) SignalNow();
  else if (!killed_) KillAll();
}

// "(pid N)" for a rank here; a remote rank's pid is its launch agent's.
std::string Supervisor::Who(const Rank& rank) const {
  std::string who = "pid " + std::to_string(rank.pid);
  if (rank.remote) who += ", its launch agent for host " + rank.host;
  return who;
}

// A rank whose process (or agent) exited 0, once its records are all in: it fails the job when
// it joined (or had a link) and did not finalize.
void Supervisor::Judge(size_t r) {
  Rank& rank = (*ranks_)[r];
  rank.judge_at = 0;
  if (ending_ || rank.finalized || !(rank.joined || rank.link_closed)) return;
  std::fprintf(stderr,
               "mpigpurun: rank %zu exited without calling MPIGPU_Finalize (%s, status 0); "
               "ending the job\n",
               r, Who(rank).c_str());
  End(kExitNoFinalize, SIGTERM, kExitGraceSeconds);
}

// Per-rank deadlines that passed: an exited rank's link that did not close in time is judged
// on what it sent; a running rank whose link closed without "F" has failed.
void Supervisor::CheckRankDeadlines(double now) {
  for (size_t r = 0; r < ranks_->size() && !ending_; ++r) {
    Rank& rank = (*ranks_)[r];
    if (rank.judge_at > 0 && now >= rank.judge_at) Judge(r);
    if (rank.lost_at > 0 && now >= rank.lost_at) {
      rank.lost_at = 0;
      if (!rank.running || rank.finalized) continue;
      std::fprintf(stderr,
                   "mpigpurun: rank %zu on host %s left the job without MPIGPU_Finalize: its "
                   "link to the launcher closed while its launch agent (pid %d) runs on (the "
                   "rank died, or its host cannot be reached); ending the job\n",
                   r, rank.host.c_str(), static_cast<int>(rank.pid));
      End(kExitLost, SIGTERM);
    }
  }
}

// Takes every record queued on the link ("J r" / "F r").
void Supervisor::DrainLink() {
  if (link_fd_ < 0) return;
  const int size = static_cast<int>(ranks_->size());
  char buf[64];
  while (true) {
    ssize_t n = recv(link_fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return;  // EAGAIN: nothing more for now
    if (n == 0) {       // every holder of the ranks' end closed it: nothing more will come
      link_fd_ = -1;
      return;
    }
    char kind;
    int r;
    if (!ParseLinkRecord(buf, static_cast<size_t>(n), size, &kind, &r)) continue;
    if (kind == 'J') (*ranks_)[static_cast<size_t>(r)].joined = true;
    if (kind == 'F') (*ranks_)[static_cast<size_t>(r)].finalized = true;
  }
}

// Takes what the remote ranks' links say (records, closes).
void Supervisor::ServeLinks() {
  if (links_ == nullptr) return;
  std::vector<LinkEvent> events;
  links_->Serve(&events);
  for (const LinkEvent& e : events) {
    Rank& rank = (*ranks_)[static_cast<size_t>(e.rank)];
    if (e.kind == LinkEvent::kJoined) rank.joined = true;
    if (e.kind == LinkEvent::kFinalized) rank.finalized = true;
    if (e.kind != LinkEvent::kClosed) continue;
    rank.link_closed = true;
    if (ending_ || rank.finalized) continue;
    if (!rank.running) {
      if (rank.judge_at > 0) Judge(static_cast<size_t>(e.rank));  // its last records are in
    } else {
      // Its agent may be about to exit with the rank's own status: that says more.
      rank.lost_at = MonotonicSeconds() + kLinkLostGraceSeconds;
    }
  }
}

// Reaps every rank that has ended; the first failure ends the job.
void Supervisor::ReapEnded() {
  std::vector<std::pair<pid_t, int>> ended;
  int status;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) ended.emplace_back(pid, status);
  if (ended.empty()) return;
  // A rank sends its records before it exits: once it is reaped they are queued. Read them
  // now, after waitpid, so a rank's "F" is never missed. (A remote rank's may still be on the
  // way: see judge_at.)
  DrainLink();
  ServeLinks();
  // A rank killed by a signal is the cause of its peers' errors, not one of them (they see it
  // die and exit with an error): those reaped together are named in that order.
  std::stable_sort(ended.begin(), ended.end(), [](const auto& a, const auto& b) {
    return WIFSIGNALED(a.second) && !WIFSIGNALED(b.second);
  });
  for (const auto& [pid, status] : ended) {
    auto it = index_.find(pid);
    if (it == index_.end()) continue;  // not a rank (the janitor)
    const size_t r = it->second;
    Rank& rank = (*ranks_)[r];
    if (!rank.running) continue;
    rank.running = false;
    rank.lost_at = 0;
    if (janitor_ != nullptr) janitor_->RankReaped(pid);
    RankEnd end = DescribeWaitStatus(status);
    if (ending_ && ended_by_exit_ && !signalled_ && WIFSIGNALED(status)) {
      // Killed before our end signal went out, reaped after a peer's error exit (which followed
      // its death, most likely): it is what ended the job.
      ended_by_exit_ = false;
      exit_code_ = end.exit_code;
      std::fprintf(stderr, "mpigpurun: rank %zu (%s) %s: the cause of the job's end\n", r,
                   Who(rank).c_str(), end.what.c_str());
      SignalNow();
      continue;
    }
    if (ending_) continue;
    if (end.failed) {
      std::fprintf(stderr, "mpigpurun: rank %zu (%s) %s; ending the job\n", r,
                   Who(rank).c_str(), end.what.c_str());
      End(end.exit_code, SIGTERM, WIFEXITED(status) ? kExitGraceSeconds : 0);
      ended_by_exit_ = WIFEXITED(status);
    } else if (rank.remote && !rank.finalized && links_ != nullptr &&
               links_->Open(static_cast<int>(r))) {
      rank.judge_at = MonotonicSeconds() + kLinkSettleSeconds;  // its "F" may be on the way
    } else {
      Judge(r);
    }
  }
}

// Sleeps until a signal, a record, a link's event or output arrives or `wait` seconds (< 0:
// no limit) pass.
void Supervisor::WaitForEvent(double wait) {
  std::vector<pollfd> fds = {{signal_fd_, POLLIN, 0}};
  if (link_fd_ >= 0) fds.push_back({link_fd_, POLLIN, 0});
  if (links_ != nullptr) links_->AppendPollFds(&fds);
  if (output_ != nullptr) output_->AppendPollFds(&fds);
  const int ms = wait < 0 ? -1 : static_cast<int>(std::ceil(wait * 1000));
  if (poll(fds.data(), fds.size(), ms) <= 0) return;  // timeout or EINTR: the loop looks
  DrainLink();  // each of these takes what is ready, without waiting
  ServeLinks();
  if (output_ != nullptr) output_->Serve();
  if (fds[0].revents == 0) return;
  struct signalfd_siginfo info;
  while (read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    const int sig = static_cast<int>(info.ssi_signo);
    if (sig == SIGCHLD) continue;  // a rank ended: the loop reaps
    if (!ending_) {
      std::fprintf(stderr, "mpigpurun: got signal %d (%s); ending the job\n", sig,
                   strsignal(sig));
      End(128 + sig, sig);  // forward the launcher's signal itself
    } else {
      Escalate();  // asked while ending: do not wait out the delay or the grace period
    }
  }
}

}  // namespace launcher
}  // namespace mpigpu

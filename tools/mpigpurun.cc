// mpigpurun: starts N ranks of a program on this node, supervises them, cleans up after them.
//
//   parse -> job id -> binding plan -> start ranks (fork + execvpe) -> supervise -> sweep /dev/shm
//
// Supervision runs with SIGCHLD, SIGINT, SIGTERM and SIGHUP blocked and waits for them with
// sigtimedwait, so there are no signal handlers and no races between a rank's end, a signal to
// the launcher and the timeout: the loop sees each in turn. Ranks get the original mask back
// before exec. Ending a job: the signal (SIGTERM, or the one the launcher got) to every running
// rank, then SIGKILL after kGraceSeconds; a second signal to the launcher kills at once.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tools/binding.h"
#include "ringbuf/segment.h"
#include "tools/launcher.h"

extern char** environ;

namespace mpigpu {
namespace launcher {
namespace {

constexpr double kGraceSeconds = 2.0;
// A rank that exits with an error status often has peers failing the same way (a bad argument):
// they get this long to finish and print their own message before the others are signalled.
constexpr double kExitGraceSeconds = 0.5;
constexpr int kExitUsage = 2;
constexpr int kExitCannotExec = 127;
constexpr int kExitTimeout = 124;
constexpr int kExitInternal = 1;

struct Rank {
  pid_t pid = -1;
  bool running = false;
};

double Now() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Null-terminated char* view of strings (for execvpe); `strings` must outlive it.
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> v;
  for (std::string& s : strings) v.push_back(&s[0]);
  v.push_back(nullptr);
  return v;
}

// Forks rank `r` and execs the program in it. Returns the child's pid, or -1 with `exec_errno`
// set when the exec failed (the child reports errno through a close-on-exec pipe: EOF on the
// pipe means the exec succeeded) or `fork_errno` when there was no child at all.
pid_t StartRank(const Options& opts, std::vector<std::string> env, const RankBinding& binding,
                const sigset_t& child_mask, int* exec_errno, int* fork_errno) {
  std::vector<std::string> args = opts.program;
  std::vector<char*> argv = CStrings(args);
  std::vector<char*> envp = CStrings(env);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *fork_errno = errno;
    return -1;
  }
  std::fflush(nullptr);  // no buffered output may be written twice
  pid_t pid = fork();
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    close(fds[0]);
    sigprocmask(SIG_SETMASK, &child_mask, nullptr);
    if (binding.bound) sched_setaffinity(0, sizeof(binding.cpus), &binding.cpus);
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

// The job's life after the ranks started: who runs, how it ends, with which exit code.
class Supervisor {
 public:
  Supervisor(std::vector<Rank>* ranks, double timeout_s) : ranks_(ranks) {
    if (timeout_s > 0) timeout_at_ = Now() + timeout_s;
    timeout_s_ = timeout_s;
  }

  // Ends the job with `exit_code` (if it is not ending already) by sending `sig` to every rank
  // after `delay` seconds; SIGKILL follows kGraceSeconds later.
  void End(int exit_code, int sig, double delay = 0) {
    if (ending_) return;
    ending_ = true;
    exit_code_ = exit_code;
    end_signal_ = sig;
    signal_at_ = Now() + delay;
    if (delay <= 0) SignalNow();
  }

  // Waits until every rank has been reaped; returns the job's exit code.
  int Run(const sigset_t& wait_set) {
    while (true) {
      ReapEnded();
      if (Running() == 0) return exit_code_;
      const double now = Now(), deadline = Deadline();
      if (deadline > 0 && now >= deadline) {
        if (ending_) {
          Escalate();
        } else {
          std::fprintf(stderr, "mpigpurun: job timed out after %g s; ending the job\n", timeout_s_);
          End(kExitTimeout, SIGTERM);
        }
        continue;
      }
      WaitForEvent(wait_set, now, deadline);
    }
  }

 private:
  int Running() const {
    int n = 0;
    for (const Rank& r : *ranks_) n += r.running ? 1 : 0;
    return n;
  }

  void SignalAll(int sig) {
    for (const Rank& r : *ranks_)
      if (r.running) kill(r.pid, sig);
  }

  void SignalNow() {
    signalled_ = true;
    SignalAll(end_signal_);
    kill_at_ = Now() + kGraceSeconds;
  }

  void KillAll() {
    signalled_ = killed_ = true;
    SignalAll(SIGKILL);
  }

  // The next deadline (-1: none): the timeout, the delayed end signal, or SIGKILL after the grace
  // period, whichever the job is waiting for.
  double Deadline() const {
    if (!ending_) return timeout_at_ > 0 ? timeout_at_ : -1;
    if (!signalled_) return signal_at_;
    return killed_ ? -1 : kill_at_;
  }

  // The next step of an ending job: the end signal if it has not gone out, else SIGKILL.
  void Escalate() {
    if (!signalled_) SignalNow();
    else if (!killed_) KillAll();
  }

  // Reaps every rank that has ended; the first failure ends the job.
  void ReapEnded() {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      for (size_t r = 0; r < ranks_->size(); ++r) {
        Rank& rank = (*ranks_)[r];
        if (rank.pid != pid || !rank.running) continue;
        rank.running = false;
        RankEnd end = DescribeWaitStatus(status);
        if (end.failed && !ending_) {
          std::fprintf(stderr, "mpigpurun: rank %zu (pid %d) %s; ending the job\n", r,
                       static_cast<int>(pid), end.what.c_str());
          End(end.exit_code, SIGTERM, WIFEXITED(status) ? kExitGraceSeconds : 0);
        }
      }
    }
  }

  // Sleeps until a signal arrives or `deadline` (Deadline(); -1: none) passes.
  void WaitForEvent(const sigset_t& wait_set, double now, double deadline) {
    struct timespec ts;
    struct timespec* tsp = nullptr;
    if (deadline > 0) {
      double left = std::max(0.0, deadline - now);
      ts.tv_sec = static_cast<time_t>(left);
      ts.tv_nsec = static_cast<long>((left - std::floor(left)) * 1e9);
      tsp = &ts;
    }
    siginfo_t info;
    int sig = sigtimedwait(&wait_set, &info, tsp);
    if (sig <= 0 || sig == SIGCHLD) return;  // timeout, EINTR, or a rank ended: the loop looks
    if (!ending_) {
      std::fprintf(stderr, "mpigpurun: got signal %d (%s); ending the job\n", sig, strsignal(sig));
      End(128 + sig, sig);  // forward the launcher's signal itself
    } else {
      Escalate();  // asked while ending: do not wait out the delay or the grace period
    }
  }

  std::vector<Rank>* ranks_;
  double timeout_s_ = 0;
  double timeout_at_ = 0;  // 0: no timeout
  bool ending_ = false;
  bool signalled_ = false;  // the end signal went out
  bool killed_ = false;
  int end_signal_ = SIGTERM;
  double signal_at_ = 0;
  double kill_at_ = 0;
  int exit_code_ = 0;
};

void SweepJobShm(const std::string& prefix) {
  std::vector<std::string> failed;
  SweepShm("/dev/shm", prefix, &failed);
  for (const std::string& f : failed)
    std::fprintf(stderr, "mpigpurun: cannot remove /dev/shm/%s\n", f.c_str());
}

int Main(int argc, char** argv) {
  Options opts;
  Status st = ParseArgs(std::vector<std::string>(argv + 1, argv + argc),
                        [](const char* n) { return static_cast<const char*>(std::getenv(n)); },
                        &opts);
  if (!st.ok()) {
    std::fprintf(stderr, "mpigpurun: %s\nusage: mpigpurun -n N [options] prog [args...]"
                 " (mpigpurun --help for more)\n", st.message().c_str());
    return kExitUsage;
  }
  if (opts.help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  if (opts.version) {
    std::printf("mpigpurun (mpigpu) %s\n", kVersion);
    return 0;
  }

  std::string jobid;
  st = RandomJobId(&jobid);
  BindingPlan plan;
  if (st.ok()) st = PlanBindings(opts.bind_to, opts.nranks, &plan);
  if (!st.ok()) {
    std::fprintf(stderr, "mpigpurun: %s\n", st.message().c_str());
    return kExitInternal;
  }
  const std::string shm_prefix = SegmentName(jobid);

  // A launcher started with SIGCHLD ignored would have its ranks reaped by the kernel.
  signal(SIGCHLD, SIG_DFL);
  sigset_t wait_set, child_mask;
  sigemptyset(&wait_set);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&wait_set, s);
  sigprocmask(SIG_BLOCK, &wait_set, &child_mask);

  std::vector<std::string> base_env;
  for (char** e = environ; e && *e; ++e) base_env.emplace_back(*e);

  std::vector<Rank> ranks(static_cast<size_t>(opts.nranks));
  Supervisor supervisor(&ranks, opts.timeout_s);
  for (int r = 0; r < opts.nranks; ++r) {
    RankInfo info{r, opts.nranks, r, opts.nranks};
    int exec_errno = 0, fork_errno = 0;
    pid_t pid = StartRank(opts, BuildRankEnv(base_env, opts.exports, info, jobid),
                          plan.ranks[static_cast<size_t>(r)], child_mask, &exec_errno, &fork_errno);
    if (pid < 0) {
      if (exec_errno != 0) {
        std::fprintf(stderr, "mpigpurun: cannot execute '%s': %s\n", opts.program[0].c_str(),
                     std::strerror(exec_errno));
        supervisor.End(kExitCannotExec, SIGTERM);
      } else {
        std::fprintf(stderr, "mpigpurun: cannot start rank %d: %s\n", r, std::strerror(fork_errno));
        supervisor.End(kExitInternal, SIGTERM);
      }
      break;
    }
    ranks[static_cast<size_t>(r)] = Rank{pid, true};
    if (opts.report_bindings)
      std::fprintf(stderr, "mpigpurun: rank %d (pid %d) %s\n", r, static_cast<int>(pid),
                   DescribeBinding(plan.ranks[static_cast<size_t>(r)]).c_str());
  }

  int code = supervisor.Run(wait_set);
  SweepJobShm(shm_prefix);  // the transport unlinks its names; this is the safety net
  return code;
}

}  // namespace
}  // namespace launcher
}  // namespace mpigpu

int main(int argc, char** argv) { return mpigpu::launcher::Main(argc, argv); }

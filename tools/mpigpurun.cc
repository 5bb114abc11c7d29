// mpigpurun: starts N ranks of a program on this node, supervises them, cleans up after them.
//
//   parse -> job id -> binding plan -> janitor -> start ranks (fork + execvpe), supervising
//   them already -> supervise -> sweep /dev/shm -> tell the janitor "done"
//
// Supervision runs with SIGCHLD, SIGINT, SIGTERM and SIGHUP blocked and read from a signalfd,
// polled together with the ranks' link (below), so there are no signal handlers and no races
// between a rank's end, a signal to the launcher, a record from a rank and the timeout: the loop
// sees each in turn. Ranks get the original mask back before exec. Ending a job: the signal
// (SIGTERM, or the one the launcher got) to every running rank, then SIGKILL after
// kGraceSeconds; a second signal to the launcher kills at once.
//
// The launcher's own death (SIGKILL, a crash) must not leave ranks or shared memory behind:
//   - each rank asks for SIGKILL when the launcher dies (PR_SET_PDEATHSIG, set between fork and
//     exec, then a getppid() check for a launcher that died before);
//   - the link: one AF_UNIX SOCK_SEQPACKET socket pair. The launcher keeps one end (close on
//     exec), every rank gets the other as MPIGPU_LAUNCHER_FD. Ranks send "J <rank>" when
//     MPIGPU_Init joined the job and "F <rank>" when MPIGPU_Finalize ended; a rank that exits 0
//     after J without F is a failure. When the launcher dies its end closes and the ranks' end
//     hangs up: the engine checks on its peer-check cadence and ends the rank, which reaches
//     ranks that are grandchildren (started through `sh -c`) where the death signal does not;
//   - the janitor: a child forked before the ranks, in its own session (a Ctrl-C to the
//     foreground group does not reach it), reading a pipe from the launcher: the pids of the
//     ranks as they start and end, then "done". When the pipe closes without "done", it
//     SIGKILLs the ranks still running and removes the job's /dev/shm names.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "tools/binding.h"
#include "memcopy/clock.h"
#include "memcopy/process.h"
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
constexpr int kExitNoFinalize = 1;  // a rank exited 0 after MPIGPU_Init without MPIGPU_Finalize
constexpr const char* kShmDir = "/dev/shm";

struct Rank {
  pid_t pid = -1;
  bool running = false;
  bool joined = false;     // sent "J": MPIGPU_Init joined the job
  bool finalized = false;  // sent "F": MPIGPU_Finalize ended
};

void SleepSeconds(double s) {
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(s);
  ts.tv_nsec = static_cast<long>((s - std::floor(s)) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

// Null-terminated char* view of strings (for execvpe); `strings` must outlive it.
std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> v;
  for (std::string& s : strings) v.push_back(&s[0]);
  v.push_back(nullptr);
  return v;
}

// Removes the job's /dev/shm names; another user's names with the prefix get one line.
void SweepJobShm(const std::string& prefix) {
  std::vector<std::string> failed;
  std::vector<ForeignEntry> foreign;
  SweepShm(kShmDir, prefix, &failed, &foreign);
  for (const std::string& f : failed)
    std::fprintf(stderr, "mpigpurun: cannot remove %s/%s\n", kShmDir, f.c_str());
  if (!foreign.empty())
    std::fprintf(stderr, "mpigpurun: %s\n", DescribeForeignEntries(kShmDir, foreign).c_str());
}

// The janitor's side of its pipe: 8-byte records, written whole (< PIPE_BUF, so atomic).
struct JanitorRecord {
  char kind;  // 'S' rank started, 'E' rank reaped, 'D' the job ended normally
  char pad[3];
  int32_t pid;
};
static_assert(sizeof(JanitorRecord) == 8, "one record, one atomic write");

// Cleans up after a launcher that died: started before the ranks, it holds the read end of a
// pipe whose write end only the launcher holds. Never returns.
[[noreturn]] void JanitorMain(int fd, pid_t launcher, const std::string& jobid,
                              const std::string& prefix) {
  std::set<pid_t> ranks;  // started and not reaped by the launcher
  char buf[4096];
  size_t have = 0;
  while (true) {
    ssize_t n = read(fd, buf + have, sizeof buf - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF (or an error): the launcher is gone without saying "done"
    have += static_cast<size_t>(n);
    size_t at = 0;
    for (; at + sizeof(JanitorRecord) <= have; at += sizeof(JanitorRecord)) {
      JanitorRecord rec;
      std::memcpy(&rec, buf + at, sizeof rec);
      if (rec.kind == 'D') _exit(0);
      if (rec.kind == 'S') ranks.insert(rec.pid);
      if (rec.kind == 'E') ranks.erase(rec.pid);
    }
    std::memmove(buf, buf + at, have - at);
    have -= at;
  }
  // The launcher died. Ranks that are its children got SIGKILL from the kernel already (parent
  // death signal); this covers the rest, then the names they left.
  int killed = 0;
  for (pid_t pid : ranks)
    if (pid > 0 && ProcessAlive(pid) && kill(pid, SIGKILL) == 0) ++killed;
  const double give_up = MonotonicSeconds() + 1.0;
  for (pid_t pid : ranks)
    while (ProcessAlive(pid) && MonotonicSeconds() < give_up) SleepSeconds(0.005);
  std::vector<std::string> failed;
  std::vector<ForeignEntry> foreign;
  int removed = SweepShm(kShmDir, prefix, &failed, &foreign);
  // Ranks the launcher did not start itself (through `sh -c`) end at their next mpigpu call
  // (the link hangs up), within ~20 ms; sweep again for names they made meanwhile.
  SleepSeconds(0.3);
  failed.clear();
  foreign.clear();
  removed += SweepShm(kShmDir, prefix, &failed, &foreign);
  std::fprintf(stderr,
               "mpigpurun: the launcher (pid %d) of job %s died; its janitor killed %d more "
               "rank(s) and removed %d shared-memory name(s)\n",
               static_cast<int>(launcher), jobid.c_str(), killed, removed);
  for (const std::string& f : failed)
    std::fprintf(stderr, "mpigpurun: cannot remove %s/%s\n", kShmDir, f.c_str());
  if (!foreign.empty())
    std::fprintf(stderr, "mpigpurun: %s\n", DescribeForeignEntries(kShmDir, foreign).c_str());
  std::fflush(stderr);
  _exit(0);
}

class Janitor {
 public:
  // Forks the janitor; without one (fork failed) the job runs as before, with a warning.
  void Start(const std::string& jobid, const std::string& prefix) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      std::fprintf(stderr, "mpigpurun: warning: no janitor (pipe: %s)\n", std::strerror(errno));
      return;
    }
    const pid_t launcher = getpid();
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[1]);
      setsid();  // its own session: a terminal's Ctrl-C or hang-up does not reach it
      int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd >= 0) {
        dup2(null_fd, STDIN_FILENO);
        dup2(null_fd, STDOUT_FILENO);  // keeps no reader of the job's stdout waiting
      }
      prctl(PR_SET_NAME, "mpigpu-janitor", 0, 0, 0);
      JanitorMain(fds[0], launcher, jobid, prefix);
    }
    close(fds[0]);
    if (pid < 0) {
      std::fprintf(stderr, "mpigpurun: warning: no janitor (fork: %s)\n", std::strerror(errno));
      close(fds[1]);
      return;
    }
    pid_ = pid;
    fd_ = fds[1];
  }

  pid_t pid() const { return pid_; }
  void RankStarted(pid_t pid) { Send('S', pid); }
  void RankReaped(pid_t pid) { Send('E', pid); }

  // The job ended normally: the janitor leaves without doing anything; reaped here (bounded).
  void Done() {
    if (fd_ < 0) return;
    Send('D', 0);
    close(fd_);
    fd_ = -1;
    const double give_up = MonotonicSeconds() + 2.0;
    int st;
    while (waitpid(pid_, &st, WNOHANG) == 0) {
      if (MonotonicSeconds() >= give_up) {
        kill(pid_, SIGKILL);
        waitpid(pid_, &st, 0);
        break;
      }
      SleepSeconds(0.001);
    }
  }

 private:
  void Send(char kind, pid_t pid) {
    if (fd_ < 0) return;
    JanitorRecord rec{kind, {0, 0, 0}, static_cast<int32_t>(pid)};
    ssize_t w;
    do {
      w = write(fd_, &rec, sizeof rec);  // SIGPIPE is ignored: a dead janitor is EPIPE
    } while (w < 0 && errno == EINTR);
  }

  int fd_ = -1;
  pid_t pid_ = -1;
};

// What the child does between fork and exec besides exec itself.
struct ChildSetup {
  const sigset_t* mask = nullptr;                // the signal mask the launcher started with
  const struct sigaction* sigpipe = nullptr;     // SIGPIPE's original disposition
  pid_t launcher = -1;
  int link_fd = -1;  // the ranks' end of the link: inherited by the program (not close on exec)
};

// Forks rank `r` and execs the program in it. Returns the child's pid, or -1 with `exec_errno`
// set when the exec failed (the child reports errno through a close-on-exec pipe: EOF on the
// pipe means the exec succeeded) or `fork_errno` when there was no child at all.
pid_t StartRank(const Options& opts, std::vector<std::string> env, const RankBinding& binding,
                const ChildSetup& setup, int* exec_errno, int* fork_errno) {
  std::vector<std::string> args = opts.program;
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
    // Child: only async-signal-safe calls until exec.
    close(fds[0]);
    // Die with the launcher; if it died before this line, no signal will come: leave now.
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != setup.launcher) _exit(kExitInternal);
    sigaction(SIGPIPE, setup.sigpipe, nullptr);
    sigprocmask(SIG_SETMASK, setup.mask, nullptr);
    if (setup.link_fd >= 0) fcntl(setup.link_fd, F_SETFD, 0);
    if (self_pid != nullptr) WriteSelfPid(self_pid, getpid());
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

// The job's life once its first rank starts: who runs, how it ends, with which exit code.
class Supervisor {
 public:
  // `signal_fd`: a signalfd of the blocked signals; `link_fd`: the launcher's end of the link
  // (-1: none).
  Supervisor(std::vector<Rank>* ranks, double timeout_s, int signal_fd, int link_fd,
             Janitor* janitor)
      : ranks_(ranks), signal_fd_(signal_fd), link_fd_(link_fd), janitor_(janitor) {
    if (timeout_s > 0) timeout_at_ = MonotonicSeconds() + timeout_s;
    timeout_s_ = timeout_s;
  }

  bool ending() const { return ending_; }

  // Rank r runs as `pid`.
  void Started(size_t r, pid_t pid) {
    (*ranks_)[r].pid = pid;
    (*ranks_)[r].running = true;
    index_[pid] = r;
    if (janitor_ != nullptr) janitor_->RankStarted(pid);
  }

  // Ends the job with `exit_code` (if it is not ending already) by sending `sig` to every rank
  // after `delay` seconds; SIGKILL follows kGraceSeconds later.
  void End(int exit_code, int sig, double delay = 0) {
    if (ending_) return;
    ending_ = true;
    exit_code_ = exit_code;
    end_signal_ = sig;
    signal_at_ = MonotonicSeconds() + delay;
    if (delay <= 0) SignalNow();
  }

  // While ranks are being started: takes in what happened so far without waiting (ended ranks,
  // records, signals, the timeout). ending() tells whether to stop starting ranks.
  void Poll() { Step(0); }

  // Waits until every rank has been reaped; returns the job's exit code.
  int Run() {
    while (true) {
      ReapEnded();
      if (Running() == 0) return exit_code_;
      Step(-1);
    }
  }

 private:
  // One round: reap ended ranks, act on a deadline that passed, else wait at most `max_wait`
  // seconds (< 0: until the next deadline, or for ever) for a signal or a record.
  void Step(double max_wait) {
    ReapEnded();
    if (max_wait < 0 && Running() == 0) return;  // Run returns
    const double now = MonotonicSeconds(), deadline = Deadline();
    if (deadline > 0 && now >= deadline) {
      if (ending_) {
        Escalate();
      } else {
        std::fprintf(stderr, "mpigpurun: job timed out after %g s; ending the job\n", timeout_s_);
        End(kExitTimeout, SIGTERM);
      }
      return;
    }
    double wait = deadline > 0 ? deadline - now : -1;
    if (max_wait >= 0 && (wait < 0 || wait > max_wait)) wait = max_wait;
    WaitForEvent(wait);
  }

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
    kill_at_ = MonotonicSeconds() + kGraceSeconds;
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

  // Takes every record queued on the link ("J r" / "F r").
  void DrainLink() {
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

  // Reaps every rank that has ended; the first failure ends the job.
  void ReapEnded() {
    std::vector<std::pair<pid_t, int>> ended;
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) ended.emplace_back(pid, status);
    if (ended.empty()) return;
    // A rank sends its records before it exits: once it is reaped they are queued. Read them
    // now, after waitpid, so a rank's "F" is never missed.
    DrainLink();
    for (const auto& [pid, status] : ended) {
      auto it = index_.find(pid);
      if (it == index_.end()) continue;  // not a rank (the janitor)
      const size_t r = it->second;
      Rank& rank = (*ranks_)[r];
      if (!rank.running) continue;
      rank.running = false;
      if (janitor_ != nullptr) janitor_->RankReaped(pid);
      RankEnd end = DescribeWaitStatus(status);
      if (ending_) continue;
      if (end.failed) {
        std::fprintf(stderr, "mpigpurun: rank %zu (pid %d) %s; ending the job\n", r,
                     static_cast<int>(pid), end.what.c_str());
        End(end.exit_code, SIGTERM, WIFEXITED(status) ? kExitGraceSeconds : 0);
      } else if (rank.joined && !rank.finalized) {
        std::fprintf(stderr,
                     "mpigpurun: rank %zu exited without calling MPIGPU_Finalize (pid %d, "
                     "status 0); ending the job\n",
                     r, static_cast<int>(pid));
        End(kExitNoFinalize, SIGTERM, kExitGraceSeconds);
      }
    }
  }

  // Sleeps until a signal or a record arrives or `wait` seconds (< 0: no limit) pass.
  void WaitForEvent(double wait) {
    struct pollfd fds[2] = {{signal_fd_, POLLIN, 0}, {link_fd_, POLLIN, 0}};
    const nfds_t nfds = link_fd_ >= 0 ? 2 : 1;
    const int ms = wait < 0 ? -1 : static_cast<int>(std::ceil(wait * 1000));
    if (poll(fds, nfds, ms) <= 0) return;  // timeout or EINTR: the loop looks
    if (nfds == 2 && fds[1].revents != 0) DrainLink();
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

  std::vector<Rank>* ranks_;
  std::unordered_map<pid_t, size_t> index_;  // pid -> rank
  int signal_fd_;
  int link_fd_;
  Janitor* janitor_;
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

  // A launcher started with SIGCHLD ignored would have its ranks reaped by the kernel. SIGPIPE:
  // a janitor that died must not kill the launcher (ranks get the original disposition back).
  signal(SIGCHLD, SIG_DFL);
  struct sigaction ignore_pipe = {}, orig_pipe = {};
  ignore_pipe.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore_pipe, &orig_pipe);

  // Before the link and the ranks: it must hold neither.
  Janitor janitor;
  janitor.Start(jobid, shm_prefix);

  sigset_t wait_set, child_mask;
  sigemptyset(&wait_set);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&wait_set, s);
  sigprocmask(SIG_BLOCK, &wait_set, &child_mask);
  const int signal_fd = signalfd(-1, &wait_set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) {
    std::fprintf(stderr, "mpigpurun: signalfd: %s\n", std::strerror(errno));
    janitor.Done();
    return kExitInternal;
  }
  // The link: [0] stays here, [1] goes to every rank (close on exec until the child clears it).
  int link[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, link) != 0) {
    std::fprintf(stderr, "mpigpurun: warning: no link to the ranks (socketpair: %s)\n",
                 std::strerror(errno));
    link[0] = link[1] = -1;
  }

  std::vector<std::string> base_env;
  for (char** e = environ; e && *e; ++e) base_env.emplace_back(*e);

  std::vector<Rank> ranks(static_cast<size_t>(opts.nranks));
  Supervisor supervisor(&ranks, opts.timeout_s, signal_fd, link[0], &janitor);
  ChildSetup setup;
  setup.mask = &child_mask;
  setup.sigpipe = &orig_pipe;
  setup.launcher = getpid();
  setup.link_fd = link[1];
  pid_t creator = -1;
  // The CPUs the job may use, before any binding narrows a rank's mask (MPIGPU_JOB_CPUS).
  cpu_set_t allowed;
  const int job_cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 0;
  for (int r = 0; r < opts.nranks; ++r) {
    // Supervise while starting: a rank that already failed (or a signal, or the timeout) stops
    // the start at once instead of after N forks.
    supervisor.Poll();
    if (supervisor.ending()) break;
    RankInfo info{r, opts.nranks, r, opts.nranks};
    info.creator_pid = r == 0 ? 0 : creator;  // local rank 0 creates the job segment
    info.launcher_fd = link[1];
    info.job_cpus = job_cpus;
    int exec_errno = 0, fork_errno = 0;
    pid_t pid = StartRank(opts, BuildRankEnv(base_env, opts.exports, info, jobid),
                          plan.ranks[static_cast<size_t>(r)], setup, &exec_errno, &fork_errno);
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
    if (r == 0) creator = pid;
    supervisor.Started(static_cast<size_t>(r), pid);
    if (opts.report_bindings)
      std::fprintf(stderr, "mpigpurun: rank %d (pid %d) %s\n", r, static_cast<int>(pid),
                   DescribeBinding(plan.ranks[static_cast<size_t>(r)]).c_str());
  }
  // Only ranks hold their end now: once they all closed it, the launcher's end reads EOF.
  if (link[1] >= 0) close(link[1]);

  int code = supervisor.Run();
  SweepJobShm(shm_prefix);  // the transport unlinks its names; this is the safety net
  janitor.Done();
  if (link[0] >= 0) close(link[0]);
  close(signal_fd);
  return code;
}

}  // namespace
}  // namespace launcher
}  // namespace mpigpu

int main(int argc, char** argv) { return mpigpu::launcher::Main(argc, argv); }

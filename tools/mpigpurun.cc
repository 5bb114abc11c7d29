// mpigpurun: starts N ranks of a program on this node (or on the --host hosts), supervises them,
// cleans up after them.
//
//   parse -> placement (hosts.h) -> job id -> binding plan -> janitor (janitor.h) -> boot server
//   when the job spans hosts -> start ranks (spawn.h; other hosts: through the launch agent,
//   remote_start.h), supervising them already -> supervise -> sweep /dev/shm -> janitor "done"
//
// A launch agent is supervised as its rank: its exit status is the rank's, and it gets the
// end signal with the others.
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
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "internode/boot/boot_server.h"
#include "transport/core/job_secret.h"
#include "memcopy/clock.h"
#include "memcopy/process.h"
#include "ringbuf/segment.h"
#include "tools/binding.h"
#include "tools/hosts.h"
#include "tools/janitor.h"
#include "tools/launcher.h"
#include "tools/remote_start.h"
#include "tools/spawn.h"
#include "transport/local_job.h"

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

struct Rank {
  pid_t pid = -1;
  bool running = false;
  bool joined = false;     // sent "J": MPIGPU_Init joined the job
  bool finalized = false;  // sent "F": MPIGPU_Finalize ended
};

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

  // Where ranks run: without --host all on this node, one node, as always.
  const bool hosts_given = !opts.hosts.empty();
  const LocalIdentity me = hosts_given ? ThisHost() : LocalIdentity{};
  const Placement place = PlaceRanks(
      hosts_given ? opts.hosts : std::vector<HostSlots>{{"localhost", opts.nranks}}, opts.nranks,
      [&](const std::string& h) { return !hosts_given || IsLocalHost(h, me); });
  const int local_count = place.local_node >= 0 ? place.local_size[place.local_node] : 0;

  std::string jobid, boot_ip;
  st = RandomJobId(&jobid);
  BindingPlan plan;
  if (st.ok()) st = PlanBindings(opts.bind_to, std::max(local_count, 1), &plan);
  // The boot server listens where the other hosts reach this one (the first remote host's route).
  for (int n = 0; st.ok() && place.nodes() > 1 && n < place.nodes() && boot_ip.empty(); ++n)
    if (!place.node_local[n]) st = AddressTowards(place.node_host[n], &boot_ip);
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

  // Before the link, the ranks and the boot server's thread: it must hold none of them.
  Janitor janitor;
  janitor.Start(jobid, shm_prefix);

  // A job on several nodes: its secret and boot server, alive until the job has ended.
  std::unique_ptr<boot::BootServer> boot_server;
  std::string secret_hex, node_map;
  if (place.nodes() > 1) {
    std::string secret;
    st = transport::NewJobSecret(&secret);
    secret_hex = transport::JobSecretHex(secret);
    if (st.ok())
      st = boot::BootServer::Start(
          boot_ip, opts.nranks, secret,
          [](const std::string& line) { std::fprintf(stderr, "mpigpurun: %s\n", line.c_str()); },
          &boot_server);
    if (!st.ok()) {
      std::fprintf(stderr, "mpigpurun: %s\n", st.message().c_str());
      janitor.Done();
      return kExitInternal;
    }
    node_map = transport::JobInfo::FormatNodeMap(place.node_of);
  }

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
  const std::vector<std::string> agent_env = AgentEnv(base_env);
  char cwd_buf[4096];
  const std::string cwd = getcwd(cwd_buf, sizeof cwd_buf) != nullptr ? cwd_buf : "";

  std::vector<Rank> ranks(static_cast<size_t>(opts.nranks));
  Supervisor supervisor(&ranks, opts.timeout_s, signal_fd, link[0], &janitor);
  ChildSetup setup;
  setup.mask = &child_mask;
  setup.sigpipe = &orig_pipe;
  setup.launcher = getpid();
  setup.link_fd = link[1];
  ChildSetup agent_setup = setup;
  agent_setup.link_fd = -1;  // the link is this node's: an agent holding it would keep it open
  pid_t creator = -1;
  // The CPUs the job may use, before any binding narrows a rank's mask (MPIGPU_JOB_CPUS).
  cpu_set_t allowed;
  const int job_cpus = sched_getaffinity(0, sizeof allowed, &allowed) == 0 ? CPU_COUNT(&allowed) : 0;
  for (int r = 0; r < opts.nranks; ++r) {
    // Supervise while starting: a rank that already failed (or a signal, or the timeout) stops
    // the start at once instead of after N forks.
    supervisor.Poll();
    if (supervisor.ending()) break;
    const int node = place.node_of[static_cast<size_t>(r)];
    const int local_rank = place.local_rank[static_cast<size_t>(r)];
    RankInfo info;
    info.rank = r;
    info.size = opts.nranks;
    info.local_rank = local_rank;
    info.local_size = place.local_size[static_cast<size_t>(node)];
    info.node_map = node_map;
    if (boot_server) info.boot_addr = boot_server->address();
    const bool local = place.node_local[static_cast<size_t>(node)];
    const RankBinding& binding = plan.ranks[static_cast<size_t>(local ? local_rank : 0)];
    int exec_errno = 0, fork_errno = 0;
    pid_t pid;
    if (local) {
      info.creator_pid = local_rank == 0 ? 0 : creator;  // local rank 0 creates the job segment
      info.launcher_fd = link[1];
      info.job_cpus = job_cpus;
      info.job_secret = secret_hex;
      pid = StartProcess(opts.program, BuildRankEnv(base_env, opts.exports, info, jobid),
                         binding.bound ? &binding.cpus : nullptr, -1, setup, &exec_errno,
                         &fork_errno);
      if (local_rank == 0) creator = pid;
    } else {
      const std::string command =
          RemoteCommand(RemoteRankVariables(base_env, opts.exports, info, jobid), opts.program,
                        cwd, !secret_hex.empty());
      pid = StartAgent(AgentArgv(opts.launch_agent, place.node_host[static_cast<size_t>(node)],
                                 command),
                       agent_env, secret_hex, agent_setup, &exec_errno, &fork_errno);
    }
    if (pid < 0) {
      if (exec_errno != 0) {
        std::fprintf(stderr, "mpigpurun: cannot execute '%s': %s\n",
                     (local ? opts.program : opts.launch_agent)[0].c_str(),
                     std::strerror(exec_errno));
        supervisor.End(kExitCannotExec, SIGTERM);
      } else {
        std::fprintf(stderr, "mpigpurun: cannot start rank %d: %s\n", r, std::strerror(fork_errno));
        supervisor.End(kExitInternal, SIGTERM);
      }
      break;
    }
    supervisor.Started(static_cast<size_t>(r), pid);
    if (opts.report_bindings)
      std::fprintf(stderr, "mpigpurun: rank %d (pid %d) %s\n", r, static_cast<int>(pid),
                   local ? DescribeBinding(binding).c_str()
                         : ("on " + place.node_host[static_cast<size_t>(node)] +
                            " through the launch agent, not bound").c_str());
  }
  // Only ranks hold their end now: once they all closed it, the launcher's end reads EOF.
  if (link[1] >= 0) close(link[1]);

  int code = supervisor.Run();
  boot_server.reset();      // the job has ended: remote ranks see its connections close
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

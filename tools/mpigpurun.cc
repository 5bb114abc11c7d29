// mpigpurun: starts N ranks of a program on this node (or on the --host hosts), supervises them,
// cleans up after them.
//
//   parse -> placement (hosts.h) -> job id -> binding plan -> MPS plan (mps_plan.h) -> janitor
//   (janitor.h) -> job-private MPS daemon when ranks share a GPU (mps_host.h) -> link server
//   when a rank is remote, boot server when the job spans hosts -> start ranks (spawn.h; other
//   hosts: through the launch agent, remote_start.h), supervising them already -> supervise ->
//   sweep /dev/shm -> stop the MPS daemon -> janitor "done"
//
// A launch agent is supervised as its rank: its exit status is the rank's, and it gets the
// end signal with the others. Whenever a rank runs on another host (even when all of them share
// one), the job has a secret and a link server (link_server.h): each remote rank's link is a TCP
// connection to it carrying the same records as the local link below, so a remote rank that
// exits 0 without "F" fails the job as a local one does (its agent's exit may come before its
// last records: they get kLinkSettleSeconds), and a remote rank whose link closes without "F"
// while its agent runs on (the rank died behind a shell, its host went away) fails it
// kLinkLostGraceSeconds later. With --tag-output (tag_output.h) every rank's stdout and stderr
// come through pipes polled in the same loop.
//
// Supervision runs with SIGCHLD, SIGINT, SIGTERM and SIGHUP blocked and read from a signalfd,
// polled together with the ranks' link (below), so there are no signal handlers and no races
// between a rank's end, a signal to the launcher, a record from a rank and the timeout: the loop
// sees each in turn. The mask is set first thing in Main, before anything starts a thread (the
// CUDA runtime that PlanBindings or the MPS check may load, the boot server, NCCL's probes): a
// thread made earlier would inherit an open mask and take SIGCHLD, whose default action drops
// it, and the signalfd would never hear that a rank ended (device run 60: the launcher waited on
// with both ranks zombies; the pre-seam build too). The loop also reaps at least every
// kReapPollSeconds whatever it heard. Ranks get the original mask back before exec. Ending a job: the signal
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
#include "tools/link_server.h"
#include "tools/mps_host.h"
#include "tools/mps_plan.h"
#include "tools/remote_start.h"
#include "tools/spawn.h"
#include "tools/tag_output.h"
#include "transport/local_job.h"

extern char** environ;

namespace mpigpu {
namespace launcher {
namespace {

// The longest the supervision loop sleeps before it reaps again, whatever it heard.
constexpr double kReapPollSeconds = 0.25;
constexpr double kGraceSeconds = 2.0;
// A rank that exits with an error status often has peers failing the same way (a bad argument):
// they get this long to finish and print their own message before the others are signalled.
constexpr double kExitGraceSeconds = 0.5;
constexpr int kExitUsage = 2;
constexpr int kExitCannotExec = 127;
constexpr int kExitTimeout = 124;
constexpr int kExitInternal = 1;
constexpr int kExitNoFinalize = 1;  // a rank exited 0 after MPIGPU_Init without MPIGPU_Finalize
constexpr int kExitLost = 1;        // a remote rank's link closed without MPIGPU_Finalize
// A remote rank's agent exited 0 while its link is still open: its "F" and close may still be on
// the way (another connection, another host); they get this long before it is judged on what came.
constexpr double kLinkSettleSeconds = 2.0;
// A remote rank's link closed without "F" while its agent runs: the agent gets this long to exit
// with the rank's own status (a clearer report) before the rank counts as lost.
constexpr double kLinkLostGraceSeconds = 1.0;
// --tag-output: once every rank has ended, their pipes get this long to close (a rank's own child
// may hold one open for ever).
constexpr double kOutputDrainSeconds = 2.0;

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
             Janitor* janitor, LinkServer* links, TaggedOutput* output)
      : ranks_(ranks), signal_fd_(signal_fd), link_fd_(link_fd), janitor_(janitor),
        links_(links), output_(output) {
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

  // Waits until every rank has been reaped (and judged); returns the job's exit code.
  int Run() {
    while (true) {
      ReapEnded();
      if (Done()) return exit_code_;
      Step(-1);
    }
  }

 private:
  bool Done() const { return Running() == 0 && (ending_ || !RankDeadline(nullptr)); }

  // One round: reap ended ranks, act on a deadline that passed, else wait at most `max_wait`
  // seconds (< 0: until the next deadline, or for ever) for a signal, a record or output.
  void Step(double max_wait) {
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

  // The earliest per-rank deadline of a job that is not ending (judge_at, lost_at); false: none.
  bool RankDeadline(double* at) const {
    double first = 0;
    for (const Rank& r : *ranks_)
      for (double t : {r.judge_at, r.lost_at})
        if (t > 0 && (first == 0 || t < first)) first = t;
    if (at != nullptr) *at = first;
    return first > 0;
  }

  // The next deadline (-1: none): the timeout or a rank's, the delayed end signal, or SIGKILL
  // after the grace period, whichever the job is waiting for.
  double Deadline() const {
    if (!ending_) {
      double d = timeout_at_ > 0 ? timeout_at_ : -1, rank_at = 0;
      if (RankDeadline(&rank_at) && (d < 0 || rank_at < d)) d = rank_at;
      return d;
    }
    if (!signalled_) return signal_at_;
    return killed_ ? -1 : kill_at_;
  }

  // The next step of an ending job: the end signal if it has not gone out, else SIGKILL.
  void Escalate() {
    if (!signalled_) SignalNow();
    else if (!killed_) KillAll();
  }

  // "(pid N)" for a rank here; a remote rank's pid is its launch agent's.
  std::string Who(const Rank& rank) const {
    std::string who = "pid " + std::to_string(rank.pid);
    if (rank.remote) who += ", its launch agent for host " + rank.host;
    return who;
  }

  // A rank whose process (or agent) exited 0, once its records are all in: it fails the job when
  // it joined (or had a link) and did not finalize.
  void Judge(size_t r) {
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
  void CheckRankDeadlines(double now) {
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

  // Takes what the remote ranks' links say (records, closes).
  void ServeLinks() {
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
  void ReapEnded() {
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
      if (ending_) continue;
      if (end.failed) {
        std::fprintf(stderr, "mpigpurun: rank %zu (%s) %s; ending the job\n", r,
                     Who(rank).c_str(), end.what.c_str());
        End(end.exit_code, SIGTERM, WIFEXITED(status) ? kExitGraceSeconds : 0);
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
  void WaitForEvent(double wait) {
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
};

int Main(int argc, char** argv) {
  // Before any thread exists (see the header): the supervised signals blocked, the original mask
  // kept for the ranks.
  sigset_t wait_set, child_mask;
  sigemptyset(&wait_set);
  for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&wait_set, s);
  sigprocmask(SIG_BLOCK, &wait_set, &child_mask);
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
  const bool any_remote = local_count < opts.nranks;

  std::string jobid, boot_ip;
  st = RandomJobId(&jobid);
  BindingPlan plan;
  if (st.ok()) st = PlanBindings(opts.bind_to, std::max(local_count, 1), &plan);
  // The boot and link servers listen where the other hosts reach this one (the first remote
  // host's route).
  for (int n = 0; st.ok() && any_remote && n < place.nodes() && boot_ip.empty(); ++n)
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

  std::vector<std::string> base_env;
  for (char** e = environ; e && *e; ++e) base_env.emplace_back(*e);

  // --mps: decided before the janitor, which learns the daemon's folder; started after it, so a
  // launcher killed from then on leaves no daemon behind (tools/mps_host.h).
  std::string mps_dir;
  if (opts.mps != MpsMode::kOff && (local_count >= 2 || opts.mps == MpsMode::kOn)) {
    MpsInputs in;
    in.mode = opts.mps;
    in.local_ranks = local_count;
    in.gpus = GatherGpuFacts();
    in.have_control = InPath(kMpsControl, std::getenv("PATH"));
    const MpsPlan mps_plan = PlanMps(in);
    if (!mps_plan.why_not.empty()) std::fprintf(stderr, "mpigpurun: %s\n", mps_plan.why_not.c_str());
    if (mps_plan.fail) return kExitInternal;
    if (opts.report_bindings && !mps_plan.info.empty())
      std::fprintf(stderr, "mpigpurun: %s\n", mps_plan.info.c_str());
    if (mps_plan.start) {
      st = MakeMpsFolder(&mps_dir);
      if (!st.ok()) {
        std::fprintf(stderr, "mpigpurun: MPS not started: %s%s\n", st.message().c_str(),
                     opts.mps == MpsMode::kOn ? " (--mps on)" : "; ranks sharing a GPU run without it");
        if (opts.mps == MpsMode::kOn) return kExitInternal;
        mps_dir.clear();
      }
    }
  }

  // Before the link, the ranks and the boot server's thread: it must hold none of them.
  Janitor janitor;
  janitor.Start(jobid, shm_prefix, mps_dir);
  bool mps_running = false;
  if (!mps_dir.empty()) {
    st = StartMpsDaemon(mps_dir, base_env, kMpsStartSeconds);
    if (st.ok()) {
      mps_running = true;
    } else {
      (void)StopMpsDaemon(mps_dir, base_env, 1.0);  // anything it left, and the folder
      std::fprintf(stderr, "mpigpurun: MPS not started: %s%s\n", st.message().c_str(),
                   opts.mps == MpsMode::kOn
                       ? " (--mps on)"
                       : "; ranks sharing a GPU run without it (time-sliced)");
      if (opts.mps == MpsMode::kOn) {
        janitor.Done();
        return kExitInternal;
      }
    }
  }
  // Every way out from here: the MPS daemon stops (its clients are gone), then the janitor
  // leaves.
  auto end_services = [&]() {
    if (mps_running) {
      const std::string said = StopMpsDaemon(mps_dir, base_env, kMpsQuitGraceSeconds);
      if (!said.empty()) std::fprintf(stderr, "mpigpurun: %s\n", said.c_str());
      mps_running = false;
    }
    janitor.Done();
  };

  // A job with ranks on other hosts: its secret and the link server for their links (even when
  // they all share one host: the launcher supervises them through it); on several nodes also the
  // boot server (their addresses). Alive until the job has ended.
  std::unique_ptr<boot::BootServer> boot_server;
  LinkServer link_server;
  std::string secret_hex, node_map;
  if (any_remote) {
    std::string secret;
    st = transport::NewJobSecret(&secret);
    secret_hex = transport::JobSecretHex(secret);
    if (st.ok()) st = link_server.Start(boot_ip, opts.nranks, secret);
    if (st.ok() && place.nodes() > 1)
      st = boot::BootServer::Start(
          boot_ip, opts.nranks, secret,
          [](const std::string& line) { std::fprintf(stderr, "mpigpurun: %s\n", line.c_str()); },
          &boot_server);
    if (!st.ok()) {
      std::fprintf(stderr, "mpigpurun: %s\n", st.message().c_str());
      end_services();
      return kExitInternal;
    }
    if (place.nodes() > 1) node_map = transport::JobInfo::FormatNodeMap(place.node_of);
  }

  const int signal_fd = signalfd(-1, &wait_set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd < 0) {
    std::fprintf(stderr, "mpigpurun: signalfd: %s\n", std::strerror(errno));
    end_services();
    return kExitInternal;
  }
  // The link: [0] stays here, [1] goes to every rank (close on exec until the child clears it).
  int link[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, link) != 0) {
    std::fprintf(stderr, "mpigpurun: warning: no link to the ranks (socketpair: %s)\n",
                 std::strerror(errno));
    link[0] = link[1] = -1;
  }

  const std::vector<std::string> agent_env = AgentEnv(base_env);
  char cwd_buf[4096];
  const std::string cwd = getcwd(cwd_buf, sizeof cwd_buf) != nullptr ? cwd_buf : "";

  std::vector<Rank> ranks(static_cast<size_t>(opts.nranks));
  TaggedOutput tagged;
  Supervisor supervisor(&ranks, opts.timeout_s, signal_fd, link[0], &janitor,
                        any_remote ? &link_server : nullptr, opts.tag_output ? &tagged : nullptr);
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
    StdFds std_fds;
    if (opts.tag_output && !tagged.Add(r, &std_fds.out, &std_fds.err)) {
      std::fprintf(stderr, "mpigpurun: cannot make rank %d's output pipes: %s\n", r,
                   std::strerror(errno));
      supervisor.End(kExitInternal, SIGTERM);
      break;
    }
    pid_t pid;
    if (local) {
      info.creator_pid = local_rank == 0 ? 0 : creator;  // local rank 0 creates the job segment
      info.launcher_fd = link[1];
      info.job_cpus = job_cpus;
      if (boot_server) info.job_secret = secret_hex;
      std::vector<std::string> env = BuildRankEnv(base_env, opts.exports, info, jobid);
      if (mps_running)
        for (const auto& [name, value] : MpsClientVariables(mps_dir)) SetEnvVar(&env, name, value);
      pid = StartProcess(opts.program, std::move(env),
                         binding.bound ? &binding.cpus : nullptr, std_fds, setup, &exec_errno,
                         &fork_errno);
      if (local_rank == 0) creator = pid;
    } else {
      info.launcher_addr = link_server.address();
      ranks[static_cast<size_t>(r)].remote = true;
      ranks[static_cast<size_t>(r)].host = place.node_host[static_cast<size_t>(node)];
      const std::string command =
          RemoteCommand(RemoteRankVariables(base_env, opts.exports, info, jobid), opts.program,
                        cwd, !secret_hex.empty());
      pid = StartAgent(AgentArgv(opts.launch_agent, place.node_host[static_cast<size_t>(node)],
                                 command),
                       agent_env, secret_hex, std_fds, agent_setup, &exec_errno, &fork_errno);
    }
    if (opts.tag_output) tagged.Started(std_fds.out, std_fds.err);
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
  if (opts.tag_output) tagged.Drain(kOutputDrainSeconds);  // what the ranks wrote last
  boot_server.reset();      // the job has ended: remote ranks see its connections close
  SweepJobShm(shm_prefix);  // the transport unlinks its names; this is the safety net
  end_services();           // the MPS daemon (its clients have all ended), then the janitor
  if (link[0] >= 0) close(link[0]);
  close(signal_fd);
  return code;
}

}  // namespace
}  // namespace launcher
}  // namespace mpigpu

int main(int argc, char** argv) { return mpigpu::launcher::Main(argc, argv); }

// mpigpurun: starts N ranks of a program on this node (or on the --host hosts), supervises them,
// cleans up after them.
//
//   parse -> placement (hosts.h) -> job id -> binding plan -> MPS plan (mps_plan.h) -> janitor
//   (janitor.h) -> job-private MPS daemon when ranks share a GPU (mps_host.h) -> link server
//   when a rank is remote, boot server when the job spans hosts -> start ranks (spawn.h; other
//   hosts: through the launch agent, remote_start.h), supervising them already -> supervise ->
//   sweep /dev/shm -> stop the MPS daemon -> janitor "done"
//
// The supervision of the ranks (tools/supervisor.h) reads SIGCHLD, SIGINT, SIGTERM and SIGHUP
// from a signalfd. The mask is set first thing in Main, before anything starts a thread (the
// CUDA runtime that PlanBindings or the MPS check may load, the boot server, NCCL's probes): a
// thread made earlier would inherit an open mask and take SIGCHLD, whose default action drops it,
// and the signalfd would never hear that a rank ended (on an H100 host on 2026-11-24 the launcher
// waited on with both ranks zombies; the pre-seam build too). Ranks get the original mask back
// before exec.
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
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "internode/boot/boot_server.h"
#include "transport/core/job_secret.h"
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
#include "tools/supervisor.h"
#include "tools/tag_output.h"
#include "transport/local_job.h"

extern char** environ;

namespace mpigpu {
namespace launcher {
namespace {

// --tag-output: once every rank has ended, their pipes get this long to close (a rank's own child
// may hold one open for ever).
constexpr double kOutputDrainSeconds = 2.0;

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

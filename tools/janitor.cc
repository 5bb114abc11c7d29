#include "tools/janitor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "memcopy/clock.h"
#include "memcopy/process.h"
#include "tools/launcher.h"
#include "tools/mps_host.h"

extern char** environ;

namespace mpigpu {
namespace launcher {
namespace {

void SleepSeconds(double s) {
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(s);
  ts.tv_nsec = static_cast<long>((s - std::floor(s)) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
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
                              const std::string& prefix, const std::string& mps_dir) {
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
  // The ranks are gone: the job's MPS daemon has no client left to wait for.
  std::string mps_said;
  if (!mps_dir.empty()) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) env.emplace_back(*e);
    mps_said = StopMpsDaemon(mps_dir, env, kMpsQuitGraceSeconds);
  }
  std::fprintf(stderr,
               "mpigpurun: the launcher (pid %d) of job %s died; its janitor killed %d more "
               "rank(s) and removed %d shared-memory name(s)%s\n",
               static_cast<int>(launcher), jobid.c_str(), killed, removed,
               mps_dir.empty() ? "" : " and stopped the job's MPS daemon");
  if (!mps_said.empty()) std::fprintf(stderr, "mpigpurun: %s\n", mps_said.c_str());
  for (const std::string& f : failed)
    std::fprintf(stderr, "mpigpurun: cannot remove %s/%s\n", kShmDir, f.c_str());
  if (!foreign.empty())
    std::fprintf(stderr, "mpigpurun: %s\n", DescribeForeignEntries(kShmDir, foreign).c_str());
  std::fflush(stderr);
  _exit(0);
}

}  // namespace

void SweepJobShm(const std::string& prefix) {
  std::vector<std::string> failed;
  std::vector<ForeignEntry> foreign;
  SweepShm(kShmDir, prefix, &failed, &foreign);
  for (const std::string& f : failed)
    std::fprintf(stderr, "mpigpurun: cannot remove %s/%s\n", kShmDir, f.c_str());
  if (!foreign.empty())
    std::fprintf(stderr, "mpigpurun: %s\n", DescribeForeignEntries(kShmDir, foreign).c_str());
}

void Janitor::Start(const std::string& jobid, const std::string& prefix,
                    const std::string& mps_dir) {
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
    sigset_t supervised;  // blocked by the launcher for its signalfd: the janitor takes them as usual
    sigemptyset(&supervised);
    for (int s : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) sigaddset(&supervised, s);
    sigprocmask(SIG_UNBLOCK, &supervised, nullptr);
    int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null_fd >= 0) {
      dup2(null_fd, STDIN_FILENO);
      dup2(null_fd, STDOUT_FILENO);  // keeps no reader of the job's stdout waiting
    }
    prctl(PR_SET_NAME, "mpigpu-janitor", 0, 0, 0);
    JanitorMain(fds[0], launcher, jobid, prefix, mps_dir);
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

void Janitor::Done() {
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

void Janitor::Send(char kind, pid_t pid) {
  if (fd_ < 0) return;
  JanitorRecord rec{kind, {0, 0, 0}, static_cast<int32_t>(pid)};
  ssize_t w;
  do {
    w = write(fd_, &rec, sizeof rec);  // SIGPIPE is ignored: a dead janitor is EPIPE
  } while (w < 0 && errno == EINTR);
}

}  // namespace launcher
}  // namespace mpigpu

// RunJob: runs a function as the ranks of one job, each in its own forked process with the
// launcher's environment (MPIGPU_RANK/SIZE/JOBID), and reports how they ended. A rank that
// hangs is killed at the deadline, so a test fails instead of hanging.
//
// MULTIPROC_NODES=k (k > 1; not an MPIGPU_ name, so the library does not warn of it) makes every job span k nodes of this machine: ranks in blocks
// (rank r on node r * k / n), joined by a boot server in the parent as mpigpurun --host would
// (MPIGPU_NODE_MAP, MPIGPU_BOOT_ADDR, MPIGPU_JOB_SECRET): suites run over the netmod between
// nodes and shared memory within them, unchanged. With MULTIPROC_NETNS=ns0,ns1,... node k's
// ranks also run in network namespace k (/var/run/netns/<name>: hosts of their own), and the
// boot server listens on MULTIPROC_BOOT_IP (default 127.0.0.1), an address of the parent's
// namespace that every node reaches.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "internode/boot/boot_server.h"
#include "transport/core/job_secret.h"
#include "transport/local_job.h"

namespace mpigpu::testing {

// In a rank: print the failed condition and leave with status 1.
#define RANK_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      std::fprintf(stderr, "%s:%d: rank check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::fflush(stderr);                                                            \
      _exit(1);                                                                       \
    }                                                                                 \
  } while (0)

inline std::string RandomHexJobId() {
  unsigned long long v = (static_cast<unsigned long long>(getpid()) << 32) ^
                         static_cast<unsigned long long>(
                             std::chrono::steady_clock::now().time_since_epoch().count());
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", v);
  return buf;
}

// A rank returns this when the test cannot run here (no GPU); RunJob then reports kSkipped.
// Ranks decide, not the parent: the parent must not initialise CUDA before it forks.
constexpr int kRankSkip = 77;
inline const char kSkipped[] = "skipped";

// Runs body(rank) in n processes; "" when every rank returned 0, kSkipped when every rank
// returned kRankSkip, else what went wrong.
// expect_exit[r] (optional) lets a rank end otherwise on purpose (e.g. a rank that dies).
inline std::string RunJob(int n, const std::function<int(int)>& body, int timeout_s = 60,
                          const std::vector<int>& allowed_to_die = {}) {
  const std::string jobid = RandomHexJobId();
  const char* nodes_text = std::getenv("MULTIPROC_NODES");
  const int nodes = nodes_text ? std::atoi(nodes_text) : 1;
  std::unique_ptr<boot::BootServer> server;
  std::string node_map, secret_hex;
  if (nodes > 1 && n > 1) {
    std::vector<int> node_of;
    for (int r = 0; r < n; ++r) node_of.push_back(r * nodes / n);
    node_map = transport::JobInfo::FormatNodeMap(node_of);
    std::string secret;
    if (!transport::NewJobSecret(&secret).ok() ||
        !boot::BootServer::Start(std::getenv("MULTIPROC_BOOT_IP") ? std::getenv("MULTIPROC_BOOT_IP")
                                                                     : "127.0.0.1",
                                 n, secret,
                                 [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); },
                                 &server)
             .ok())
      return "cannot start the boot server";
    secret_hex = transport::JobSecretHex(secret);
  }
  std::vector<std::string> netns;
  if (const char* list = std::getenv("MULTIPROC_NETNS"); list != nullptr && server) {
    std::string all = list;
    for (size_t at = 0; at <= all.size();) {
      const size_t comma = std::min(all.find(',', at), all.size());
      netns.push_back(all.substr(at, comma - at));
      at = comma + 1;
    }
  }
  std::vector<pid_t> pids(n, -1);
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      const size_t node = static_cast<size_t>(r * nodes / n);
      if (node < netns.size()) {
        const int fd = open(("/var/run/netns/" + netns[node]).c_str(), O_RDONLY | O_CLOEXEC);
        RANK_CHECK(fd >= 0 && setns(fd, CLONE_NEWNET) == 0);
        close(fd);
      }
      if (server) {
        setenv("MPIGPU_NODE_MAP", node_map.c_str(), 1);
        setenv("MPIGPU_BOOT_ADDR", server->address().c_str(), 1);
        setenv("MPIGPU_JOB_SECRET", secret_hex.c_str(), 1);
      }
      setenv("MPIGPU_RANK", std::to_string(r).c_str(), 1);
      setenv("MPIGPU_SIZE", std::to_string(n).c_str(), 1);
      setenv("MPIGPU_LOCAL_RANK", std::to_string(r).c_str(), 1);
      setenv("MPIGPU_LOCAL_SIZE", std::to_string(n).c_str(), 1);
      setenv("MPIGPU_JOBID", jobid.c_str(), 1);
      alarm(static_cast<unsigned>(timeout_s + 5));  // never outlive the test
      int rc = body(r);
      std::fflush(stdout);
      std::fflush(stderr);
      _exit(rc);
    }
    pids[r] = pid;
  }
  std::string result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  int left = n, skipped = 0;
  while (left > 0) {
    int status = 0;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid > 0) {
      int r = 0;
      while (r < n && pids[r] != pid) ++r;
      if (r == n) continue;
      --left;
      pids[r] = -1;
      if (WIFEXITED(status) && WEXITSTATUS(status) == kRankSkip) {  // may-die ranks too
        ++skipped;
        continue;
      }
      bool may_die = false;
      for (int d : allowed_to_die) may_die |= d == r;
      if (may_die) continue;
      if (WIFSIGNALED(status))
        result += "rank " + std::to_string(r) + " killed by signal " +
                  std::to_string(WTERMSIG(status)) + "; ";
      else if (WEXITSTATUS(status) != 0)
        result += "rank " + std::to_string(r) + " exited " + std::to_string(WEXITSTATUS(status)) +
                  "; ";
      continue;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      for (int r = 0; r < n; ++r)
        if (pids[r] > 0) {
          kill(pids[r], SIGKILL);
          waitpid(pids[r], nullptr, 0);
          result += "rank " + std::to_string(r) + " hung (killed at the deadline); ";
        }
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // A killed job leaves its shared memory behind: remove it, as the launcher would.
  std::string cmd = "rm -f /dev/shm/mpigpu-" + std::to_string(getuid()) + "-" + jobid + "*";
  if (std::system(cmd.c_str()) != 0) result += "shm cleanup failed; ";
  if (result.empty() && skipped == n) return kSkipped;
  if (skipped > 0 && skipped < n) result += "only some ranks skipped; ";
  return result;
}

}  // namespace mpigpu::testing

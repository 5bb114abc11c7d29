// Ranks on other hosts (mpigpurun --host): which hosts are the launcher's own, the command line
// of the launch agent (as Open MPI's plm_rsh_agent: `agent... host command`) and the command it
// runs there, the launcher's address as the other hosts reach it (for the boot server), and the
// agent's start with the job's secret on its stdin. The secret never goes on a command line:
// `ps` shows those to every user of either host.
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "memcopy/status.h"
#include "tools/launcher.h"
#include "tools/spawn.h"

namespace mpigpu {
namespace launcher {

// What names this machine: its host name and the IPv4 addresses of its interfaces.
struct LocalIdentity {
  std::string hostname;
  std::vector<std::string> addresses;  // "a.b.c.d"
};
LocalIdentity ThisHost();  // gethostname + getifaddrs

// "localhost", the host name, or one of the addresses, exactly (127.0.0.2 is not 127.0.0.1).
bool IsLocalHost(const std::string& name, const LocalIdentity& me);

// `word` in single quotes for a POSIX shell ('\'' for a quote inside).
std::string ShellQuote(const std::string& word);

// A remote rank's variables: the launcher's own MPIGPU_* settings in `base` (the remote host
// does not have the launcher's environment, and every rank needs the same settings), the -x
// exports, then the rank's variables (RankVariables; info.job_secret must be empty).
std::vector<std::pair<std::string, std::string>> RemoteRankVariables(
    const std::vector<std::string>& base,
    const std::vector<std::pair<std::string, std::string>>& exports, const RankInfo& info,
    const std::string& jobid);

// The command the agent runs on the host, one word for its login shell:
//   sh -c '[IFS= read -r MPIGPU_JOB_SECRET; export MPIGPU_JOB_SECRET;] cd DIR 2>/dev/null;
//          exec env VAR=VALUE... PROG ARGS </dev/null'
// every word quoted; the secret line is read from stdin when `read_secret`. `cwd` "": no cd.
std::string RemoteCommand(const std::vector<std::pair<std::string, std::string>>& vars,
                          const std::vector<std::string>& program, const std::string& cwd,
                          bool read_secret);

// agent... host command.
std::vector<std::string> AgentArgv(const std::vector<std::string>& agent, const std::string& host,
                                   const std::string& command);

// The launcher's IPv4 address on the route to `host` (a UDP socket connect()ed to it, then
// getsockname: no packet is sent).
Status AddressTowards(const std::string& host, std::string* ip);

// `base` without the launcher's variables (an outer job's): the agent's own environment.
std::vector<std::string> AgentEnv(const std::vector<std::string>& base);

// Starts the agent (StartProcess, unbound; stdout/stderr from `std_fds` where given) and writes
// `secret` and a newline to its stdin, then closes it; with no secret its stdin is /dev/null.
// Returns as StartProcess does.
pid_t StartAgent(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const std::string& secret, StdFds std_fds, const ChildSetup& setup,
                 int* exec_errno, int* fork_errno);

}  // namespace launcher
}  // namespace mpigpu

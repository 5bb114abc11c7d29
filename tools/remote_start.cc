#include "tools/remote_start.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mpigpu {
namespace launcher {

LocalIdentity ThisHost() {
  LocalIdentity me;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) me.hostname = name;
  struct ifaddrs* list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (struct ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
      if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
      char text[INET_ADDRSTRLEN];
      const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      if (inet_ntop(AF_INET, &in->sin_addr, text, sizeof text) != nullptr)
        me.addresses.push_back(text);
    }
    freeifaddrs(list);
  }
  return me;
}

bool IsLocalHost(const std::string& name, const LocalIdentity& me) {
  if (name == "localhost" || (!me.hostname.empty() && name == me.hostname)) return true;
  for (const std::string& a : me.addresses)
    if (name == a) return true;
  return false;
}

std::string ShellQuote(const std::string& word) {
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::vector<std::pair<std::string, std::string>> RemoteRankVariables(
    const std::vector<std::string>& base,
    const std::vector<std::pair<std::string, std::string>>& exports, const RankInfo& info,
    const std::string& jobid) {
  std::vector<std::pair<std::string, std::string>> vars;
  for (const std::string& entry : base) {
    const size_t eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    if (eq != std::string::npos && name.compare(0, 7, "MPIGPU_") == 0 && !IsLauncherVariable(name))
      vars.emplace_back(name, entry.substr(eq + 1));
  }
  vars.insert(vars.end(), exports.begin(), exports.end());
  for (auto& v : RankVariables(info, jobid)) vars.push_back(std::move(v));  // env: last one wins
  return vars;
}

std::string RemoteCommand(const std::vector<std::pair<std::string, std::string>>& vars,
                          const std::vector<std::string>& program, const std::string& cwd,
                          bool read_secret) {
  std::string script;
  if (read_secret) {
    const std::string v = kJobSecretVar;
    script += "IFS= read -r " + v + " || exit 1; export " + v + "; ";
  }
  if (!cwd.empty()) script += "cd " + ShellQuote(cwd) + " 2>/dev/null; ";
  script += "exec env";
  for (const auto& [name, value] : vars) script += " " + ShellQuote(name + "=" + value);
  for (const std::string& word : program) script += " " + ShellQuote(word);
  script += " </dev/null";
  return "sh -c " + ShellQuote(script);
}

std::vector<std::string> AgentArgv(const std::vector<std::string>& agent, const std::string& host,
                                   const std::string& command) {
  std::vector<std::string> argv = agent;
  argv.push_back(host);
  argv.push_back(command);
  return argv;
}

Status AddressTowards(const std::string& host, std::string* ip) {
  struct addrinfo hints = {};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  struct addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), "9", &hints, &found);
  if (rc != 0 || found == nullptr)
    return Status(Err::kInvalidArg, "cannot resolve host '" + host + "' (IPv4): " +
                                        gai_strerror(rc));
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  Status st = Status::Ok();
  sockaddr_in mine = {};
  socklen_t len = sizeof mine;
  if (fd < 0) {
    st = SysError("socket");
  } else if (connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
    st = SysError(("no route to host '" + host + "'").c_str());
  } else if (getsockname(fd, reinterpret_cast<sockaddr*>(&mine), &len) != 0) {
    st = SysError("getsockname");
  }
  freeaddrinfo(found);
  if (fd >= 0) close(fd);
  MPIGPU_RETURN_IF_ERROR(st);
  char text[INET_ADDRSTRLEN];
  if (inet_ntop(AF_INET, &mine.sin_addr, text, sizeof text) == nullptr) return SysError("inet_ntop");
  *ip = text;
  return Status::Ok();
}

std::vector<std::string> AgentEnv(const std::vector<std::string>& base) {
  std::vector<std::string> env;
  for (const std::string& entry : base)
    if (!IsLauncherVariable(entry.substr(0, entry.find('=')))) env.push_back(entry);
  return env;
}

pid_t StartAgent(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                 const std::string& secret, StdFds std_fds, const ChildSetup& setup,
                 int* exec_errno, int* fork_errno) {
  int fds[2] = {-1, -1};
  if (secret.empty()) {
    fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
  } else if (pipe2(fds, O_CLOEXEC) != 0) {
    fds[0] = -1;
  }
  if (fds[0] < 0) {
    *fork_errno = errno;
    return -1;
  }
  std_fds.in = fds[0];
  const pid_t pid = StartProcess(argv, env, nullptr, std_fds, setup, exec_errno, fork_errno);
  close(fds[0]);
  if (fds[1] >= 0) {
    // 33 bytes fit in any pipe: no wait. An agent that died is EPIPE (SIGPIPE is ignored).
    const std::string line = secret + "\n";
    ssize_t w;
    do {
      w = write(fds[1], line.data(), line.size());
    } while (w < 0 && errno == EINTR);
    close(fds[1]);
  }
  return pid;
}

}  // namespace launcher
}  // namespace mpigpu

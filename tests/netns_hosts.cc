#include "tests/netns_hosts.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

namespace mpigpu::testing {

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

namespace {

int DialOnce(const sockaddr_in& at) {
  for (;;) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&at), sizeof at) == 0) return fd;
    if (fd >= 0) close(fd);
    usleep(1000);
  }
}

}  // namespace

pid_t HoldSilentConnections(const std::string& address, int count) {
  const size_t colon = address.rfind(':');
  sockaddr_in at{};
  at.sin_family = AF_INET;
  if (colon == std::string::npos || count < 1 || count > 256 ||
      inet_pton(AF_INET, address.substr(0, colon).c_str(), &at.sin_addr) != 1)
    return -1;
  at.sin_port = htons(static_cast<uint16_t>(std::atoi(address.c_str() + colon + 1)));
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives its test, whatever happens to it
    pollfd held[256];
    for (int i = 0; i < count; ++i) held[i] = {DialOnce(at), POLLIN, 0};
    (void)!write(ready[1], "x", 1);
    for (;;) {
      if (poll(held, static_cast<nfds_t>(count), 20) <= 0) continue;
      for (int i = 0; i < count; ++i)
        if (held[i].revents != 0) {  // the server dropped it (we never send): again
          close(held[i].fd);
          held[i] = {DialOnce(at), POLLIN, 0};
        }
    }
  }
  close(ready[1]);
  char c = 0;
  const bool made = child > 0 && read(ready[0], &c, 1) == 1;
  close(ready[0]);
  if (!made && child > 0) StopHolding(child);
  return made ? child : -1;
}

void StopHolding(pid_t holder) {
  if (holder <= 0) return;
  kill(holder, SIGKILL);
  (void)waitpid(holder, nullptr, 0);
}

NetnsHosts::NetnsHosts(const std::string& prefix, const std::string& net) {
  const std::string tag = std::to_string(getpid() % 100000);
  a_ = prefix + "a" + tag;
  b_ = prefix + "b" + tag;
  veth_ = prefix + "v" + tag;
  const std::string base = net + "." + std::to_string(getpid() % 250) + ".";
  ip_a_ = base + "1";
  ip_b_ = base + "2";
  subnet_ = base + "0/24";
  if (geteuid() != 0) {
    skip_ = "not root: network namespaces cannot be made";
    return;
  }
  made_ = Sh("ip netns add " + a_) && Sh("ip netns add " + b_);
  const bool linked = made_ &&
                      Sh("ip link add " + veth_ + "a type veth peer name " + veth_ + "b") &&
                      Sh("ip link set " + veth_ + "a netns " + a_) &&
                      Sh("ip link set " + veth_ + "b netns " + b_) &&
                      Sh("ip -n " + a_ + " addr add " + ip_a_ + "/24 dev " + veth_ + "a") &&
                      Sh("ip -n " + b_ + " addr add " + ip_b_ + "/24 dev " + veth_ + "b") &&
                      Sh("ip -n " + a_ + " link set lo up") && Sh("ip -n " + b_ + " link set lo up") &&
                      Sh("ip -n " + a_ + " link set " + veth_ + "a up") &&
                      Sh("ip -n " + b_ + " link set " + veth_ + "b up");
  if (!linked) skip_ = "cannot make network namespaces and a veth pair here (ip netns/ip link failed)";
}

NetnsHosts::~NetnsHosts() {
  if (geteuid() != 0) return;
  Sh("ip netns del " + a_);  // takes the veth pair with it
  Sh("ip netns del " + b_);
}

bool NetnsHosts::EnterA() {
  if (!skip_.empty()) return false;
  const int fd = open(("/var/run/netns/" + a_).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) skip_ = "cannot enter the first namespace";
  if (fd >= 0) close(fd);
  return skip_.empty();
}

}  // namespace mpigpu::testing

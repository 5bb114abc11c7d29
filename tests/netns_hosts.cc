#include "tests/netns_hosts.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>

namespace mpigpu::testing {

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

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

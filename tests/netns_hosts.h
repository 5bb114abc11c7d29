// Two hosts of a test's own: network namespaces joined by a veth pair, addresses only inside
// them (<net>.1 and <net>.2/24), named from a prefix and this process's pid so that suites running
// at the same time never share one. Made once per suite; removed with the namespaces (the veth
// pair goes with them). Needs root and `ip`; otherwise skip_reason() says why.
#pragma once

#include <sys/types.h>

#include <string>

namespace mpigpu::testing {

class NetnsHosts {
 public:
  // `prefix`: a few letters naming the suite's namespaces and links; `net`: the first two octets
  // of its subnet (e.g. "10.213"), the third is taken from the pid.
  NetnsHosts(const std::string& prefix, const std::string& net);
  ~NetnsHosts();
  NetnsHosts(const NetnsHosts&) = delete;
  NetnsHosts& operator=(const NetnsHosts&) = delete;

  // Empty when the hosts exist; else why they cannot (a test skips with it).
  const std::string& skip_reason() const { return skip_; }
  const std::string& a() const { return a_; }  // the namespaces' names
  const std::string& b() const { return b_; }
  const std::string& ip_a() const { return ip_a_; }
  const std::string& ip_b() const { return ip_b_; }
  std::string subnet() const { return subnet_; }  // "<net>.<n>.0/24"
  // The first host's end of the veth pair (a test takes the link down through it).
  std::string link_a() const { return veth_ + "a"; }
  // Moves this process into the first host (a launcher or boot server it starts listens there);
  // false, with skip_reason() set, when it cannot.
  bool EnterA();

 private:
  std::string a_, b_, veth_, ip_a_, ip_b_, subnet_, skip_;
  bool made_ = false;
};

// Runs `cmd` through the shell, its output dropped; true when it exits 0.
bool Sh(const std::string& cmd);

// A stranger's hold on a listening port ("a.b.c.d:port"), in a child of this process: `count`
// (at most 256) silent connections, never a byte sent, each one the server closes made again at
// once. Returns the child's pid once all are made (-1: they could not be), to be ended with
// StopHolding. Allocates nothing after the fork (the caller may have threads).
pid_t HoldSilentConnections(const std::string& address, int count);
void StopHolding(pid_t holder);

}  // namespace mpigpu::testing

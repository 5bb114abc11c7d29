// What each netmod would find on this host, for mpigpu-info: TCP's IPv4 interfaces and the
// address MPIGPU_NET_IF selects; the RDMA devices libibverbs lists. libibverbs is loaded with
// dlopen, never linked: a host without rdma-core still runs every other path.
#pragma once

#include <string>
#include <vector>

namespace mpigpu {

struct NetIf {
  std::string name;     // "eth0"
  std::string address;  // "10.0.0.2"
  bool up = false;
  bool loopback = false;
};

struct RdmaDevice {
  std::string name;                // "mlx5_0", "rxe0"
  std::vector<std::string> ports;  // "1: ACTIVE InfiniBand" (from sysfs; empty when unreadable)
};

struct NetmodsFound {
  std::vector<NetIf> interfaces;  // IPv4 interfaces (getifaddrs)
  std::string net_if;             // MPIGPU_NET_IF's value
  // The address the TCP netmod listens on, as MPIGPU_NET_IF says ("" when it is unset: then the
  // address this host reaches the job's bootstrap from); `net_if_error` when it names nothing.
  std::string listen, net_if_error;
  bool ibverbs_loaded = false;  // libibverbs.so.1 opened and asked for its devices
  std::string ibverbs_error;    // why not
  std::string ibverbs_note;     // why the list is empty, when libibverbs said
  std::vector<RdmaDevice> rdma;
};

// Looks now (MPIGPU_NET_IF from the environment's settings).
NetmodsFound FindNetmods();

// The "Netmods" section of mpigpu-info: one block per netmod.
std::string FormatNetmods(const NetmodsFound& found);

}  // namespace mpigpu

// The netmods' settings (which peers take a netmod, which one, its interface and its timeout),
// declared here where they are used and registered in the one registry (memcopy/params.h) that
// mpigpu-info prints and MPIGPU_Init checks. Also the names the cross-node launchers set.
#pragma once

#include <cstddef>

#include "memcopy/params.h"

namespace mpigpu {

enum class NetmodMode : int {
  kAuto = 0,     // ibverbs where this node has an RDMA device with an active port, else TCP
  kTcp = 1,
  kIbverbs = 2,  // ibverbs, an error where no RDMA device can be had
};

struct NetConfig {
  bool shm = true;                      // peers on this node take shared memory (0: the netmod)
  NetmodMode netmod = NetmodMode::kAuto;
  char net_if[64] = "";                 // address or interface to listen on; "" = the bootstrap's
  size_t net_timeout_s = 0;             // a peer that does not answer this long is lost
  size_t net_sockbuf = 0;               // SO_SNDBUF / SO_RCVBUF of each connection; 0 = kernel's
};

const NetConfig& GetNetConfig();
const Params<NetConfig>& NetParams();

}  // namespace mpigpu

// The ibverbs netmod's settings, declared here where they are used and registered in the one
// registry (memcopy/params.h) that mpigpu-info prints and MPIGPU_Init checks.
#pragma once

#include <cstddef>

#include "memcopy/params.h"

namespace mpigpu {

struct IbConfig {
  char dev[64] = "";          // RDMA device name; "" = the first with an active port
  size_t port = 1;            // its port
  long gid_index = -1;        // -1 = auto: a RoCE v2 GID with an IPv4 address, else index 0
  size_t eager_size = 64 << 10;  // payload bytes of one pre-posted receive buffer
  size_t credits = 16;        // receive buffers per connection (the sender's credits)
  size_t chunk = 1 << 20;     // bytes of one RDMA READ of a rendezvous message
  size_t port_down_s = 2;     // a port down this long breaks every connection
  bool fin_imm = false;       // rendezvous FIN as a WRITE with immediate (else a message)
};

const IbConfig& GetIbConfig();
const Params<IbConfig>& IbParams();

}  // namespace mpigpu

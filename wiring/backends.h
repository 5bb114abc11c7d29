// The back-ends a process runs and which serve which peer, from the configuration and where the
// peers are (JobInfo's node map):
//   Peers on this node (unless MPIGPU_SHM=0), this rank included:
//     MPIGPU_CHANNEL=shm (default): the shared-memory channel (fastboxes and cells), large
//       messages by MPIGPU_LMT: auto = CUDA IPC, CMA, ring (in that order of preference); cma =
//       CMA, ring; ipc = CUDA IPC (offered to every peer), ring; ring = ring; chan = frames on
//       the channel.
//     MPIGPU_CHANNEL=socket: a Unix stream socket, large messages as frames on it (the loopback
//       test back-end: it proves the seam carries a whole job with no shared memory on the
//       message path, as the network back-ends do).
//   Peers on other nodes, and every peer with MPIGPU_SHM=0: the netmod (MPIGPU_NETMOD: tcp),
//     large messages as frames on it.
// Every process builds every LMT back-end whatever its settings (each attaches to its part of
// the job segment, SegmentNeeds), and only the channels some peer uses.
#pragma once

#include <string>
#include <vector>

#include "memcopy/status.h"
#include "transport/core/assembly.h"
#include "transport/local_job.h"
#include "transport/transport_config.h"

namespace mpigpu::wiring {

Status MakeBackends(const TransportConfig& c, const transport::JobInfo& job,
                    transport::BackendSet* out);

// Every back-end this build has and its capabilities, one line each (mpigpu-info).
std::vector<std::string> DescribeBackends();

}  // namespace mpigpu::wiring

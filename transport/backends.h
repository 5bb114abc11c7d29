// The back-ends a process runs and which serve which peer, from the configuration and where the
// peers are (JobInfo's node map):
//   Peers on this node (unless MPIGPU_SHM=0), this rank included:
//     MPIGPU_CHANNEL=shm (default): the shared-memory channel (fastboxes and cells), large
//       messages by MPIGPU_LMT: auto = CUDA IPC, CMA, ring (in that order of preference); cma =
//       CMA, ring; ipc = CUDA IPC (offered to every peer), ring; ring = ring; chan = frames on
//       the channel.
//     MPIGPU_CHANNEL=socket: a Unix stream socket, large messages as frames on it (the loopback
//       test back-end: it proves the seam carries a whole job with no shared memory on the
//       message path, as a network back-end will).
//   Peers on other nodes, and every peer with MPIGPU_SHM=0: the netmod (MPIGPU_NETMOD: tcp),
//     large messages as frames on it.
// Every process builds every LMT back-end whatever its settings (each attaches to its part of
// the job segment, SegmentNeeds), and only the channels some peer uses.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "memcopy/status.h"
#include "transport/core/backend.h"
#include "transport/local_job.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {

struct BackendSet {
  std::vector<std::unique_ptr<Channel>> channels;  // the ones some peer uses
  std::vector<std::unique_ptr<LmtBackend>> lmts;

  Channel* ChannelFor(int peer) const { return route_[peer]->channel; }
  const std::vector<LmtBackend*>& PathFor(int peer) const { return route_[peer]->path; }
  const std::vector<LmtBackend*>& OfferersFor(int peer, bool device) const {
    return device ? route_[peer]->offer_device : route_[peer]->offer_host;
  }

 private:
  friend Status MakeBackends(const TransportConfig&, const JobInfo&, BackendSet*);
  // A way to reach peers: its channel and its large-message back-ends in order of preference.
  struct Route {
    Channel* channel = nullptr;
    std::vector<LmtBackend*> path;
    std::vector<LmtBackend*> offer_host;    // those of `path` that make offers for host buffers
    std::vector<LmtBackend*> offer_device;  // ... for device buffers
  };
  Route node_, net_;
  std::vector<const Route*> route_;  // per rank
};

Status MakeBackends(const TransportConfig& c, const JobInfo& job, BackendSet* out);

// Every back-end this build has and its capabilities, one line each (mpigpu-info).
std::vector<std::string> DescribeBackends();

}  // namespace mpigpu::transport

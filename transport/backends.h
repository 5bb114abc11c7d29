// The back-ends a process runs and which serve which peer, from the configuration:
//   MPIGPU_CHANNEL=shm (default): every peer through the shared-memory channel (fastboxes and
//     cells), large messages by MPIGPU_LMT: auto = CUDA IPC, CMA, ring (in that order of
//     preference); cma = CMA, ring; ipc = CUDA IPC (offered to every peer), ring; ring = ring;
//     chan = frames on the channel.
//   MPIGPU_CHANNEL=socket: every peer through a Unix stream socket, large messages as frames on
//     it (the loopback test back-end: it proves the seam carries a whole job with no shared
//     memory on the message path, as a network back-end will).
// Every process builds every LMT back-end whatever its settings (each attaches to its part of
// the job segment, SegmentNeeds), and only the channel it uses.
#pragma once

#include <memory>
#include <vector>

#include "memcopy/status.h"
#include "transport/core/backend.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {

struct BackendSet {
  std::vector<std::unique_ptr<Channel>> channels;  // the ones some peer uses
  std::vector<std::unique_ptr<LmtBackend>> lmts;
  Channel* channel = nullptr;       // every peer's
  std::vector<LmtBackend*> path;    // every peer's, in order of preference
  std::vector<LmtBackend*> offer_host;    // those of `path` that make offers for host buffers
  std::vector<LmtBackend*> offer_device;  // ... for device buffers

  Channel* ChannelFor(int /*peer*/) const { return channel; }
  const std::vector<LmtBackend*>& PathFor(int /*peer*/) const { return path; }
  const std::vector<LmtBackend*>& OfferersFor(int /*peer*/, bool device) const {
    return device ? offer_device : offer_host;
  }
};

Status MakeBackends(const TransportConfig& c, BackendSet* out);

}  // namespace mpigpu::transport

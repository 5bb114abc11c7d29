// What the engine is given to run, by the layer above both the transport and the internode
// packages (wiring/): the back-ends this process runs and which serve which peer, and the
// bootstrap of a job that reaches beyond this node. The engine knows them through this interface
// only: it never names a concrete back-end or launcher.
#pragma once

#include <memory>
#include <vector>

#include "memcopy/status.h"
#include "transport/core/backend.h"
#include "transport/core/bootstrap.h"

namespace mpigpu::transport {

struct JobInfo;  // transport/local_job.h

// Every channel and LMT back-end a process runs, and the route to each peer.
struct BackendSet {
  // A way to reach peers: its channel and its large-message back-ends in order of preference.
  struct Route {
    Channel* channel = nullptr;
    std::vector<LmtBackend*> path;
    std::vector<LmtBackend*> offer_host;    // those of `path` that make offers for host buffers
    std::vector<LmtBackend*> offer_device;  // ... for device buffers
  };

  std::vector<std::unique_ptr<Channel>> channels;  // the ones some peer uses
  std::vector<std::unique_ptr<LmtBackend>> lmts;
  Route node, net;                   // to the ranks on this node; to the others
  std::vector<const Route*> routes;  // per rank: &node or &net

  Channel* ChannelFor(int peer) const { return routes[peer]->channel; }
  const std::vector<LmtBackend*>& PathFor(int peer) const { return routes[peer]->path; }
  const std::vector<LmtBackend*>& OfferersFor(int peer, bool device) const {
    return device ? routes[peer]->offer_device : routes[peer]->offer_host;
  }
};

class Assembly {
 public:
  // The back-ends for `job` as the settings `c` choose them, and each peer's route.
  virtual Status MakeBackends(const TransportConfig& c, const JobInfo& job,
                              BackendSet* out) const = 0;
  // The job's exchange beyond this node (cards, the secret, finalize's word with other nodes):
  // the launcher's own (PMIx) or mpigpurun's boot server; null where the node's segment serves
  // (a job on one node).
  virtual Status MakeBootstrap(const JobInfo& job, std::shared_ptr<Bootstrap>* out) const = 0;

 protected:
  ~Assembly() = default;
};

}  // namespace mpigpu::transport

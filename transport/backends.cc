#include "transport/backends.h"

#include <string>

#include "internode/net_config.h"
#include "internode/tcp/tcp_channel.h"
#include "transport/lmt/chan_lmt.h"
#include "transport/lmt/cma_lmt.h"
#include "transport/lmt/ipc_lmt.h"
#include "transport/lmt/ring_lmt.h"
#include "transport/shm/shm_channel.h"
#include "transport/sock/sock_channel.h"

namespace mpigpu::transport {

Status MakeBackends(const TransportConfig& c, const JobInfo& job, BackendSet* out) {
  const NetConfig& net = GetNetConfig();
  std::unique_ptr<Channel> node_channel;
  if (c.channel == ChannelMode::kSocket) node_channel = std::make_unique<SockChannel>();
  else node_channel = std::make_unique<ShmChannel>();
  auto tcp = std::make_unique<TcpChannel>();  // MPIGPU_NETMOD=auto|tcp: the only netmod yet
  auto ipc = std::make_unique<IpcLmt>();
  auto cma = std::make_unique<CmaLmt>();
  auto ring = std::make_unique<RingLmt>();
  auto chan = std::make_unique<ChanLmt>();

  BackendSet::Route& node = out->node_;
  node.channel = node_channel.get();
  if (c.channel == ChannelMode::kSocket) {
    node.path = {chan.get()};
  } else {
    switch (c.lmt) {
      case LmtMode::kAuto: node.path = {ipc.get(), cma.get(), ring.get()}; break;
      case LmtMode::kCma: node.path = {cma.get(), ring.get()}; break;
      case LmtMode::kIpc: node.path = {ipc.get(), ring.get()}; break;
      case LmtMode::kRing: node.path = {ring.get()}; break;
      case LmtMode::kChan: node.path = {chan.get()}; break;
    }
  }
  out->net_.channel = tcp.get();
  out->net_.path = {chan.get()};
  for (BackendSet::Route* route : {&out->node_, &out->net_}) {
    if (route->path.empty() || !route->path.back()->caps().universal)
      return Status(Err::kInternal, "the large-message back-ends end without a universal one");
    for (LmtBackend* b : route->path) {
      if (b->caps().offers_host) route->offer_host.push_back(b);
      if (b->caps().offers_device) route->offer_device.push_back(b);
    }
  }
  out->route_.resize(job.size);
  bool node_used = false, net_used = false;
  for (int r = 0; r < job.size; ++r) {
    const bool by_node = r == job.rank || (job.SameNode(r) && net.shm);
    out->route_[r] = by_node ? &out->node_ : &out->net_;
    (by_node ? node_used : net_used) = true;
  }
  // Only the channels in use are kept: an unused socket channel would listen for nothing.
  if (node_used) out->channels.push_back(std::move(node_channel));
  if (net_used) out->channels.push_back(std::move(tcp));
  out->lmts.push_back(std::move(ipc));
  out->lmts.push_back(std::move(cma));
  out->lmts.push_back(std::move(ring));
  out->lmts.push_back(std::move(chan));
  return Status::Ok();
}

}  // namespace mpigpu::transport

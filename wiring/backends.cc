#include "wiring/backends.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "internode/ib/ib_channel.h"
#include "internode/ib/ib_device.h"
#include "internode/ib/ib_config.h"
#include "internode/ib/ib_lmt.h"
#include "internode/net_config.h"
#include "internode/tcp/tcp_channel.h"
#include "memcopy/log.h"
#include "transport/lmt/chan_lmt.h"
#include "transport/lmt/cma_lmt.h"
#include "transport/lmt/ipc_lmt.h"
#include "transport/lmt/ring_lmt.h"
#include "transport/shm/shm_channel.h"
#include "transport/sock/sock_channel.h"

namespace mpigpu::wiring {

using namespace transport;

namespace {

// A route's back-ends must fit where it leads, as their capabilities say: one to other nodes
// holds nothing that needs the peer on this node; the list ends with a universal back-end, which
// carries every buffer location and layout.
Status CheckRoute(const Channel& channel, const std::vector<LmtBackend*>& path, bool other_nodes) {
  if (path.empty() || !path.back()->caps().universal || !path.back()->caps().device_buffers ||
      !path.back()->caps().strided)
    return Status(Err::kInternal, std::string("the large-message back-ends of channel ") +
                                      channel.caps().name + " end without a universal one");
  if (!other_nodes) return Status::Ok();
  if (channel.caps().same_node)
    return Status(Err::kInternal, std::string("channel ") + channel.caps().name +
                                      " reaches this node only but serves other nodes");
  for (const LmtBackend* b : path)
    if (b->caps().same_node)
      return Status(Err::kInternal, std::string("large-message back-end ") + b->caps().name +
                                        " needs the peer on this node but serves other nodes");
  return Status::Ok();
}

// The ibverbs netmod's device where MPIGPU_NETMOD asks for it and this node has one; null (TCP)
// otherwise. MPIGPU_NETMOD=ibverbs without a usable device is an error.
Status OpenRdma(const NetConfig& net, int nranks, std::unique_ptr<internode::IbDevice>* dev) {
  if (net.netmod == NetmodMode::kTcp) return Status::Ok();
  std::string none;
  // Completions in flight per peer: its receive buffers, our send slots, READs, credit writes.
  const size_t per_peer = 2 * GetIbConfig().credits + 64;
  const size_t cqe = std::min<size_t>(std::max<size_t>(1024, per_peer * nranks), 1 << 20);
  Status st = internode::IbDevice::Open(cqe, dev, &none);
  if (net.netmod == NetmodMode::kIbverbs) {
    if (!st.ok()) return st;
    if (*dev == nullptr) return Status(Err::kInvalidArg, "MPIGPU_NETMOD=ibverbs: " + none);
    return Status::Ok();
  }
  if (!st.ok()) {
    MPIGPU_WARN("netmod: the RDMA device cannot be used (%s): TCP carries the job",
                st.ToString().c_str());
    dev->reset();
  } else if (*dev == nullptr) {
    MPIGPU_INFO("netmod: ibverbs skipped (%s): TCP carries the job", none.c_str());
  }
  return Status::Ok();
}

}  // namespace

Status MakeBackends(const TransportConfig& c, const JobInfo& job, BackendSet* out) {
  const NetConfig& net = GetNetConfig();
  std::unique_ptr<Channel> node_channel;
  if (c.channel == ChannelMode::kSocket) node_channel = std::make_unique<SockChannel>();
  else node_channel = std::make_unique<ShmChannel>();
  auto ipc = std::make_unique<IpcLmt>();
  auto cma = std::make_unique<CmaLmt>();
  auto ring = std::make_unique<RingLmt>();
  auto chan = std::make_unique<ChanLmt>();

  BackendSet::Route& node = out->node;
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
  bool net_used = false;
  for (int r = 0; r < job.size; ++r) net_used |= !(r == job.rank || (job.SameNode(r) && net.shm));
  // The netmod: ibverbs (its channel, READ rendezvous, then frames on it for the rest) or TCP.
  std::unique_ptr<internode::IbDevice> rdma;
  if (net_used) MPIGPU_RETURN_IF_ERROR(OpenRdma(net, job.size, &rdma));
  std::unique_ptr<Channel> netmod;
  std::unique_ptr<internode::IbLmt> ib_lmt;
  if (rdma != nullptr) {
    auto ib = std::make_unique<internode::IbChannel>(std::move(rdma));
    ib_lmt = std::make_unique<internode::IbLmt>(ib.get());
    out->net.path = {ib_lmt.get(), chan.get()};
    netmod = std::move(ib);
  } else {
    netmod = std::make_unique<TcpChannel>();
    out->net.path = {chan.get()};
  }
  out->net.channel = netmod.get();
  for (BackendSet::Route* route : {&out->node, &out->net}) {
    MPIGPU_RETURN_IF_ERROR(CheckRoute(*route->channel, route->path, route == &out->net));
    for (LmtBackend* b : route->path) {
      if (b->caps().offers_host) route->offer_host.push_back(b);
      if (b->caps().offers_device) route->offer_device.push_back(b);
    }
  }
  out->routes.resize(job.size);
  bool node_used = false;
  for (int r = 0; r < job.size; ++r) {
    const bool by_node = r == job.rank || (job.SameNode(r) && net.shm);
    out->routes[r] = by_node ? &out->node : &out->net;
    node_used |= by_node;
  }
  // Only the channels in use are kept: an unused socket channel would listen for nothing.
  if (node_used) out->channels.push_back(std::move(node_channel));
  if (net_used) out->channels.push_back(std::move(netmod));
  out->lmts.push_back(std::move(ipc));
  out->lmts.push_back(std::move(cma));
  out->lmts.push_back(std::move(ring));
  out->lmts.push_back(std::move(chan));
  if (ib_lmt != nullptr) out->lmts.push_back(std::move(ib_lmt));
  return Status::Ok();
}

std::vector<std::string> DescribeBackends() {
  std::vector<std::string> lines;
  auto line = [&](const char* kind, const char* name, std::string what) {
    char head[64];
    std::snprintf(head, sizeof head, "%-8s %-9s ", kind, name);
    lines.push_back(head + what);
  };
  const std::unique_ptr<Channel> channels[] = {std::make_unique<ShmChannel>(),
                                               std::make_unique<SockChannel>(),
                                               std::make_unique<TcpChannel>()};
  for (const auto& c : channels) {
    const ChannelCaps& k = c->caps();
    line("channel", k.name,
         std::string(k.same_node ? "this node" : "any node") + ", payload <= " +
             (k.max_payload ? std::to_string(k.max_payload) + " B" : "its cell (MPIGPU_CELL_SIZE)") +
             (k.fast_paths ? ", blocking fast paths" : ""));
  }
  const std::unique_ptr<LmtBackend> lmts[] = {std::make_unique<IpcLmt>(),
                                              std::make_unique<CmaLmt>(),
                                              std::make_unique<RingLmt>(),
                                              std::make_unique<ChanLmt>()};
  std::vector<const LmtCaps*> caps;
  for (const auto& b : lmts) caps.push_back(&b->caps());
  caps.push_back(&internode::IbLmt::kCaps);  // made only with an RDMA device
  for (const LmtCaps* c : caps) {
    const LmtCaps& k = *c;
    std::string w = k.same_node ? "this node" : "any node";
    w += k.single_copy ? ", single copy" : ", staged";
    if (k.needs_cts) w += ", waits for a CTS";
    w += k.device_buffers ? ", host+device" : ", host only";
    w += k.strided ? ", any layout" : ", contiguous only";
    if (k.max_inflight > 0) w += ", " + std::to_string(k.max_inflight) + " in flight per pair";
    if (k.offers_host || k.offers_device)
      w += std::string(", offers for ") +
           (k.offers_host && k.offers_device ? "all" : k.offers_host ? "host" : "device") + " sends";
    if (k.universal) w += ", universal";
    line("large", k.name, w);
  }
  return lines;
}

}  // namespace mpigpu::wiring

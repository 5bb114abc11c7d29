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
  constexpr uint32_t kCarriesAll = LmtCaps::kUniversal | LmtCaps::kDeviceBuffers | LmtCaps::kStrided;
  if (path.empty() || (path.back()->caps().flags & kCarriesAll) != kCarriesAll)
    return Status(Err::kInternal, std::string("the large-message back-ends of channel ") +
                                      channel.caps().name + " end without a universal one");
  if (!other_nodes) return Status::Ok();
  if (channel.caps().has(ChannelCaps::kSameNode))
    return Status(Err::kInternal, std::string("channel ") + channel.caps().name +
                                      " reaches this node only but serves other nodes");
  for (const LmtBackend* b : path)
    if (b->caps().has(LmtCaps::kSameNode))
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

// The table of back-ends, written once: every channel and LMT back-end this build makes by
// itself (the ibverbs pair needs an RDMA device: OpenRdma and MakeBackends make it), in the
// order mpigpu-info lists them. A new back-end is a new row here, and a place in the paths below.
template <typename T, typename Base>
std::unique_ptr<Base> Make() {
  return std::make_unique<T>();
}
struct ChannelRow {
  int mode;  // the MPIGPU_CHANNEL value that selects it for the node's peers; -1: the netmod
  std::unique_ptr<Channel> (*make)();
};
const ChannelRow kChannels[] = {
    {static_cast<int>(ChannelMode::kShm), Make<ShmChannel, Channel>},
    {static_cast<int>(ChannelMode::kSocket), Make<SockChannel, Channel>},
    {-1, Make<TcpChannel, Channel>},
};
enum Lmt { kIpc, kCma, kRing, kChan, kLmtRows };  // rows of kLmts
std::unique_ptr<LmtBackend> (*const kLmts[kLmtRows])() = {
    Make<IpcLmt, LmtBackend>, Make<CmaLmt, LmtBackend>, Make<RingLmt, LmtBackend>,
    Make<ChanLmt, LmtBackend>};

// The large-message back-ends of the node's peers, in order of preference (MPIGPU_LMT).
std::vector<Lmt> NodePath(const TransportConfig& c) {
  if (c.channel == ChannelMode::kSocket) return {kChan};
  switch (c.lmt) {
    case LmtMode::kAuto: return {kIpc, kCma, kRing};
    case LmtMode::kCma: return {kCma, kRing};
    case LmtMode::kIpc: return {kIpc, kRing};
    case LmtMode::kRing: return {kRing};
    case LmtMode::kChan: return {kChan};
  }
  return {kRing};
}

}  // namespace

Status MakeBackends(const TransportConfig& c, const JobInfo& job, BackendSet* out) {
  const NetConfig& net = GetNetConfig();
  std::unique_ptr<Channel> node_channel;
  for (const ChannelRow& row : kChannels)
    if (row.mode == static_cast<int>(c.channel)) node_channel = row.make();
  if (node_channel == nullptr) return Status(Err::kInternal, "no channel for MPIGPU_CHANNEL");
  // Every LMT back-end, whatever the settings: each attaches to its part of the job segment.
  std::unique_ptr<LmtBackend> lmts[kLmtRows];
  for (int i = 0; i < kLmtRows; ++i) lmts[i] = kLmts[i]();
  LmtBackend* chan = lmts[kChan].get();

  out->node.channel = node_channel.get();
  for (Lmt l : NodePath(c)) out->node.path.push_back(lmts[l].get());
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
    out->net.path = {ib_lmt.get(), chan};
    netmod = std::move(ib);
  } else {
    for (const ChannelRow& row : kChannels)
      if (row.mode < 0) netmod = row.make();
    out->net.path = {chan};
  }
  out->net.channel = netmod.get();
  for (BackendSet::Route* route : {&out->node, &out->net}) {
    MPIGPU_RETURN_IF_ERROR(CheckRoute(*route->channel, route->path, route == &out->net));
    for (LmtBackend* b : route->path) {
      if (b->caps().has(LmtCaps::kOffersHost)) route->offer_host.push_back(b);
      if (b->caps().has(LmtCaps::kOffersDevice)) route->offer_device.push_back(b);
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
  for (auto& b : lmts) out->lmts.push_back(std::move(b));
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
  for (const ChannelRow& row : kChannels) {
    const ChannelCaps k = row.make()->caps();
    line("channel", k.name,
         std::string(k.has(ChannelCaps::kSameNode) ? "this node" : "any node") + ", payload <= " +
             (k.max_payload ? std::to_string(k.max_payload) + " B" : "its cell (MPIGPU_CELL_SIZE)") +
             (k.has(ChannelCaps::kFastPaths) ? ", blocking fast paths" : ""));
  }
  std::vector<LmtCaps> caps;
  for (auto make : kLmts) caps.push_back(make()->caps());
  caps.push_back(internode::IbLmt::kCaps);  // made only with an RDMA device
  for (const LmtCaps& k : caps) {
    const bool host = k.has(LmtCaps::kOffersHost), device = k.has(LmtCaps::kOffersDevice);
    std::string w = k.has(LmtCaps::kSameNode) ? "this node" : "any node";
    w += k.has(LmtCaps::kSingleCopy) ? ", single copy" : ", staged";
    if (k.has(LmtCaps::kNeedsCts)) w += ", waits for a CTS";
    w += k.has(LmtCaps::kDeviceBuffers) ? ", host+device" : ", host only";
    w += k.has(LmtCaps::kStrided) ? ", any layout" : ", contiguous only";
    if (k.max_inflight > 0) w += ", " + std::to_string(k.max_inflight) + " in flight per pair";
    if (host || device)
      w += std::string(", offers for ") + (host && device ? "all" : host ? "host" : "device") +
           " sends";
    if (k.has(LmtCaps::kUniversal)) w += ", universal";
    line("large", k.name, w);
  }
  return lines;
}

}  // namespace mpigpu::wiring

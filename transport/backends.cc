#include "transport/backends.h"

#include <string>

#include "transport/lmt/chan_lmt.h"
#include "transport/lmt/cma_lmt.h"
#include "transport/lmt/ipc_lmt.h"
#include "transport/lmt/ring_lmt.h"
#include "transport/shm/shm_channel.h"
#include "transport/sock/sock_channel.h"

namespace mpigpu::transport {

Status MakeBackends(const TransportConfig& c, BackendSet* out) {
  auto shm = std::make_unique<ShmChannel>();
  auto sock = std::make_unique<SockChannel>();
  auto ipc = std::make_unique<IpcLmt>();
  auto cma = std::make_unique<CmaLmt>();
  auto ring = std::make_unique<RingLmt>();
  auto chan = std::make_unique<ChanLmt>();
  if (c.channel == ChannelMode::kSocket) {
    out->channel = sock.get();
    out->path = {chan.get()};
  } else {
    out->channel = shm.get();
    switch (c.lmt) {
      case LmtMode::kAuto: out->path = {ipc.get(), cma.get(), ring.get()}; break;
      case LmtMode::kCma: out->path = {cma.get(), ring.get()}; break;
      case LmtMode::kIpc: out->path = {ipc.get(), ring.get()}; break;
      case LmtMode::kRing: out->path = {ring.get()}; break;
      case LmtMode::kChan: out->path = {chan.get()}; break;
    }
  }
  if (out->path.empty() || !out->path.back()->caps().universal)
    return Status(Err::kInternal, "the large-message back-ends end without a universal one");
  for (LmtBackend* b : out->path) {
    if (b->caps().offers_host) out->offer_host.push_back(b);
    if (b->caps().offers_device) out->offer_device.push_back(b);
  }
  // Only the channel in use is kept: an unused socket channel would listen for nothing.
  if (out->channel == shm.get()) out->channels.push_back(std::move(shm));
  else out->channels.push_back(std::move(sock));
  out->lmts.push_back(std::move(ipc));
  out->lmts.push_back(std::move(cma));
  out->lmts.push_back(std::move(ring));
  out->lmts.push_back(std::move(chan));
  return Status::Ok();
}

}  // namespace mpigpu::transport

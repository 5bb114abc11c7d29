#include "internode/net_config.h"

#include <cctype>
#include <cstring>

namespace mpigpu {
namespace {

// An IPv4 address or an interface name: letters, digits and ".-_:", as ip(8) prints them.
bool ParseNetIf(const char* text, NetConfig* c) {
  const size_t n = std::strlen(text);
  if (n >= sizeof c->net_if) return false;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char ch = static_cast<unsigned char>(text[i]);
    if (!std::isalnum(ch) && std::strchr(".-_:", ch) == nullptr) return false;
  }
  std::memcpy(c->net_if, text, n + 1);
  return true;
}

constexpr ParamVar<NetConfig> kVars[] = {
    ChoiceParam<NetConfig>("MPIGPU_SHM", "1",
           "peers on this node use shared memory; 0 = the netmod carries them too (tests, "
           "measurement; as NCCL_SHM_DISABLE=1)",
           kBoolChoices, MPIGPU_PARAM_BOOL(NetConfig, shm)),
    ChoiceParam<NetConfig>("MPIGPU_NETMOD", "auto",
           "the netmod for peers on other nodes: auto (ibverbs where an RDMA device with an "
           "active port exists, else tcp; every rank must end up with the same) | tcp | ibverbs",
           "auto | tcp | ibverbs",
           MPIGPU_PARAM_ENUM(NetConfig, netmod, NetmodMode, "auto", "tcp", "ibverbs")),
    ChoiceParam<NetConfig>("MPIGPU_NET_IF", "",
           "the IPv4 address or interface the netmod listens on; empty = the address this "
           "host reached the job's bootstrap from (loopback for a job on one node)",
           "an IPv4 address or an interface name", ParseNetIf),
    CountParam<NetConfig>("MPIGPU_NET_TIMEOUT", "10",
          "seconds a peer on another node may leave sent data unacknowledged, or leave a "
          "connection unanswered, before it counts as failed",
          &NetConfig::net_timeout_s, 1, 3600, "s"),
    BytesParam<NetConfig>("MPIGPU_NET_SOCKBUF", "0",
          "SO_SNDBUF and SO_RCVBUF of each netmod connection; 0 = the kernel's autotuning "
          "(best). Small values make the socket take frames in pieces (tests)",
          &NetConfig::net_sockbuf, 4096, size_t{64} << 20, /*zero_allowed=*/true),
};

// Set by cross-node launchers (mpigpurun --host) for the bootstrap: not settings.
std::vector<const char*> LauncherVars() {
  return {"MPIGPU_NODE_MAP", "MPIGPU_BOOT_ADDR", "MPIGPU_JOB_SECRET"};
}

}  // namespace

const Params<NetConfig>& NetParams() {
  static const auto* params = new Params<NetConfig>(
      "netmod", 25, kVars, sizeof kVars / sizeof kVars[0], nullptr, nullptr, nullptr,
      LauncherVars());
  return *params;
}
const NetConfig& GetNetConfig() { return NetParams().Get(); }

namespace {
[[maybe_unused]] const bool kRegistered = (NetParams(), true);
}  // namespace

}  // namespace mpigpu

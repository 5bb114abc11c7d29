#include "internode/ib/ib_config.h"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace mpigpu {
namespace {

bool ParseDev(const char* text, IbConfig* c) {
  const size_t n = std::strlen(text);
  if (n >= sizeof c->dev) return false;
  for (size_t i = 0; i < n; ++i)
    if (!std::isalnum(static_cast<unsigned char>(text[i])) && std::strchr("._-", text[i]) == nullptr)
      return false;
  std::memcpy(c->dev, text, n + 1);
  return true;
}

bool ParseGidIndex(const char* text, IbConfig* c) {
  if (std::strcmp(text, "auto") == 0) {
    c->gid_index = -1;
    return true;
  }
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < 0 || v > 1023) return false;
  c->gid_index = v;
  return true;
}

constexpr size_t kK = 1024, kM = kK * kK;

constexpr ParamVar<IbConfig> kVars[] = {
    ChoiceParam<IbConfig>("MPIGPU_IB_DEV", "",
           "the RDMA device of the ibverbs netmod; empty = the first with an active port",
           "a device name (ibv_devices)", ParseDev),
    CountParam<IbConfig>("MPIGPU_IB_PORT", "1", "the device's port", &IbConfig::port, 1, 255),
    ChoiceParam<IbConfig>("MPIGPU_IB_GID_INDEX", "auto",
           "the port's GID (RoCE): auto = a RoCE v2 GID with an IPv4 address (its address is "
           "the rank's rdma_cm address), else index 0", "auto | 0..1023", ParseGidIndex),
    BytesParam<IbConfig>("MPIGPU_IB_EAGER_SIZE", "64K",
           "payload bytes of one pre-posted receive buffer (each has 64 more for the header): "
           "messages up to this (and MPIGPU_EAGER_LIMIT) go eager; the same in every rank",
           &IbConfig::eager_size, kK, 16 * kM),
    CountParam<IbConfig>("MPIGPU_IB_CREDITS", "16",
           "receive buffers per connection: messages a sender may have in flight to one peer",
           &IbConfig::credits, 4, 1024),
    BytesParam<IbConfig>("MPIGPU_IB_CHUNK", "1M",
           "bytes of one RDMA READ of a rendezvous message", &IbConfig::chunk, 4 * kK, kM * kK),
    ChoiceParam<IbConfig>("MPIGPU_IB_FIN_IMM", "0",
           "1: the receiver of a rendezvous message tells the sender it is done with a zero-byte "
           "RDMA WRITE with immediate posted behind its READs (fenced); 0: with a FIN message "
           "on the channel once the READs completed (a failed READ is always told that way). "
           "Off by default: on Soft-RoCE it measured slower (benchmarks/results/2026-11-24-ib-softroce-vm)",
           kBoolChoices, MPIGPU_PARAM_BOOL(IbConfig, fin_imm)),
    CountParam<IbConfig>("MPIGPU_IB_PORT_DOWN_S", "2",
           "seconds the port may stay down (the device's PORT_ERR event, e.g. its link went "
           "down) before every connection counts as broken and its peer as failed; idle "
           "connections would otherwise never notice. 0 = at once",
           &IbConfig::port_down_s, 0, 3600, "s"),
};

}  // namespace

const Params<IbConfig>& IbParams() {
  static const auto* params =
      new Params<IbConfig>("ibverbs", 26, kVars, sizeof kVars / sizeof kVars[0], nullptr);
  return *params;
}
const IbConfig& GetIbConfig() { return IbParams().Get(); }

namespace {
[[maybe_unused]] const bool kRegistered = (IbParams(), true);
}  // namespace

}  // namespace mpigpu

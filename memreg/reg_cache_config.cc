#include "memreg/reg_cache_config.h"

namespace mpigpu::memreg {
namespace {

constexpr ParamVar<RegCacheConfig> kVars[] = {
    ChoiceParam<RegCacheConfig>(
        "MPIGPU_IB_REG_CACHE", "1",
        "1 (default; the memory hooks start at load where an RDMA device is, or when this is set): "
        "keep the ibverbs rendezvous buffers' memory regions (ibv_reg_mr) between uses, over "
        "whole mappings one allocation owns (a large malloc'd block, an mmap), dropped when their "
        "memory goes (libc and malloc hooks; no malloc settings); other buffers (heap, stack) are "
        "registered per message. 0 = register every buffer per message",
        kBoolChoices, MPIGPU_PARAM_BOOL(RegCacheConfig, enabled)),
    CountParam<RegCacheConfig>(
        "MPIGPU_IB_REG_CACHE_MB", "2048",
        "MiB of registered memory the cache keeps; least recently used unreferenced regions go "
        "first",
        &RegCacheConfig::max_mb, 1, 1u << 20, "MiB"),
    CountParam<RegCacheConfig>(
        "MPIGPU_IB_REG_CACHE_ENTRIES", "4096",
        "registrations the cache keeps (each is a memory region of the device)",
        &RegCacheConfig::max_entries, 1, 1u << 22),
};

}  // namespace

const Params<RegCacheConfig>& RegCacheParams() {
  static const auto* params = new Params<RegCacheConfig>(
      "ib-reg-cache", 26, kVars, sizeof kVars / sizeof kVars[0], nullptr);
  return *params;
}
const RegCacheConfig& GetRegCacheConfig() { return RegCacheParams().Get(); }

namespace {
[[maybe_unused]] const bool kRegistered = (RegCacheParams(), true);
}  // namespace

}  // namespace mpigpu::memreg

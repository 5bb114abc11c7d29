#include "memreg/reg_cache_config.h"

namespace mpigpu::memreg {
namespace {

constexpr ParamVar<RegCacheConfig> kVars[] = {
    ChoiceParam<RegCacheConfig>(
        "MPIGPU_IB_REG_CACHE", "0",
        "1: keep the ibverbs rendezvous buffers' memory regions (ibv_reg_mr) between uses, "
        "dropped when their memory is unmapped (libc hooks; glibc's free() then keeps its pages: "
        "mallopt, for the whole process). 0 (default: on Soft-RoCE in the VM the cache gained "
        "nothing measurable at 1 MiB, 0.93x by medians, and 1.36x at 4 MiB; not yet measured on "
        "hardware) = register for each message",
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

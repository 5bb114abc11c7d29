#include "memreg/pin_cache_config.h"

namespace mpigpu::memreg {
namespace {

constexpr ParamVar<PinCacheConfig> kVars[] = {
    ChoiceParam<PinCacheConfig>(
        "MPIGPU_PIN_CACHE", "1",
        "1 (default where a GPU is): pin (cudaHostRegister) the whole mapping of a pageable "
        "host buffer the second time it is copied to or from a GPU, if one allocation owns that "
        "mapping (a large malloc'd block, or the program's own anonymous mmap; heap, stack and "
        "static buffers never), and keep it until its memory goes (libc and malloc hooks) or the "
        "limits evict it; the first use copies unpinned. 0 = never pin, no tracking",
        kBoolChoices, MPIGPU_PARAM_BOOL(PinCacheConfig, enabled)),
    CountParam<PinCacheConfig>(
        "MPIGPU_PIN_CACHE_MB", "2048",
        "MiB of host memory the pin cache keeps pinned; least recently used mappings go first; a "
        "larger mapping is never pinned",
        &PinCacheConfig::max_mb, 1, 1u << 20, "MiB"),
    CountParam<PinCacheConfig>("MPIGPU_PIN_CACHE_ENTRIES", "1024",
                               "pinned ranges the pin cache keeps",
                               &PinCacheConfig::max_entries, 1, 8192),
    BytesParam<PinCacheConfig>(
        "MPIGPU_PIN_CACHE_MIN", "256K",
        "host<->device copies smaller than this never pin (pinning costs several copies' time)",
        &PinCacheConfig::min_bytes, 4096, size_t{1} << 40),
};

}  // namespace

const Params<PinCacheConfig>& PinCacheParams() {
  static const auto* params = new Params<PinCacheConfig>(
      "pin-cache", 27, kVars, sizeof kVars / sizeof kVars[0], nullptr);
  return *params;
}
const PinCacheConfig& GetPinCacheConfig() { return PinCacheParams().Get(); }

namespace {
[[maybe_unused]] const bool kRegistered = (PinCacheParams(), true);
}  // namespace

}  // namespace mpigpu::memreg

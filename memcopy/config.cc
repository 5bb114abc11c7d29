#include "memcopy/config.h"

namespace mpigpu {
namespace {

constexpr size_t kK = size_t{1} << 10;
constexpr size_t kT = size_t{1} << 40;

constexpr ParamVar<MemcopyConfig> kVars[] = {
    ChoiceParam<MemcopyConfig>("MPIGPU_DEBUG", "warn", "log level: warn | info | trace", "warn | info | trace",
           MPIGPU_PARAM_ENUM(MemcopyConfig, debug, LogLevel, "warn", "info", "trace")),
    ChoiceParam<MemcopyConfig>("MPIGPU_MEMCPY_STRATEGY", "parameterized",
           "how copies learn where memory lives: parameterized | uva | query (the paper's three)",
           "parameterized | uva | query",
           MPIGPU_PARAM_ENUM(MemcopyConfig, memcpy_strategy, CopyStrategy, "parameterized", "uva", "query")),
    BytesParam<MemcopyConfig>("MPIGPU_MEMCPY_NT_THRESHOLD", "4M",
          "host-to-host copies of at least this many bytes use non-temporal stores; 0 = never",
          &MemcopyConfig::memcpy_nt_threshold, 4 * kK, kT, /*zero_allowed=*/true),
};

}  // namespace

// Made on first use and never destroyed, so it is there for any caller, a global constructor's
// or destructor's too; kRegistered makes that first use happen at start-up.
const Params<MemcopyConfig>& MemcopyParams() {
  static const auto* params = new Params<MemcopyConfig>(
      "memcopy", 0, kVars, sizeof kVars / sizeof kVars[0], /*check=*/nullptr,
      /*node_check=*/nullptr, [](const MemcopyConfig& c) { SetLogLevel(c.debug); });
  return *params;
}
const MemcopyConfig& GetMemcopyConfig() { return MemcopyParams().Get(); }

namespace {
[[maybe_unused]] const bool kRegistered = (MemcopyParams(), true);
}  // namespace

}  // namespace mpigpu

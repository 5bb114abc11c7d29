#include "mpigpu_api/api_config.h"

namespace mpigpu {
namespace {

#ifdef NDEBUG
constexpr char kCheckBuffersDefault[] = "0";
constexpr char kCollCheckDefault[] = "0";
#else
constexpr char kCheckBuffersDefault[] = "1";
constexpr char kCollCheckDefault[] = "1";
#endif

constexpr ParamVar<ApiConfig> kVars[] = {
    WithDocDefault(
        ChoiceParam<ApiConfig>("MPIGPU_CHECK_BUFFERS", kCheckBuffersDefault,
               "check every buffer's tag against where the driver says it lives (a query per call; "
               "default on in debug builds, off in -c opt builds)",
               kBoolChoices, MPIGPU_PARAM_BOOL(ApiConfig, check_buffers)),
        "1 (debug), 0 (-c opt)"),
    WithDocDefault(
        ChoiceParam<ApiConfig>("MPIGPU_COLL_CHECK", kCollCheckDefault,
               "before each collective its ranks check that their arguments agree (root, counts "
               "and types: who sends how much to whom), so every rank fails where they do not "
               "(two extra rounds per collective; default on in debug builds, off in -c opt "
               "builds)",
               kBoolChoices, MPIGPU_PARAM_BOOL(ApiConfig, coll_check)),
        "1 (debug), 0 (-c opt)"),
    ChoiceParam<ApiConfig>("MPIGPU_YIELD", "auto",
           "waiting ranks yield the CPU (sched_yield) when idle: auto = from the 64th polling round "
           "when the node is oversubscribed (more local ranks than CPUs available to the job), "
           "else from the 2048th",
           "auto | on | off", MPIGPU_PARAM_ENUM(ApiConfig, yield, YieldMode, "auto", "on", "off")),
    ChoiceParam<ApiConfig>("MPIGPU_ASYNC_PROGRESS", "0",
           "a progress thread per process while windows exist, polling every 50 us: one-sided "
           "operations aimed at the process are applied while it computes outside mpigpu (0: only "
           "when it calls mpigpu; docs/rma.md)",
           kBoolChoices, MPIGPU_PARAM_BOOL(ApiConfig, async_progress)),
};

}  // namespace

// Made on first use and never destroyed (see memcopy/config.cc).
const Params<ApiConfig>& ApiParams() {
  static const auto* params =
      new Params<ApiConfig>("api", 40, kVars, sizeof kVars / sizeof kVars[0], nullptr);
  return *params;
}
const ApiConfig& GetApiConfig() { return ApiParams().Get(); }

namespace {
[[maybe_unused]] const bool kRegistered = (ApiParams(), true);
}  // namespace

}  // namespace mpigpu

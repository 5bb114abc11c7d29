#include "memcopy/config.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

extern char** environ;

namespace mpigpu {
namespace {

// One row per variable. `parse` stores a valid value into the Config and returns false on a
// malformed one.
struct Var {
  const char* name;
  const char* default_value;
  const char* help;
  bool (*parse)(const char* text, Config* c);
};

bool ParseEnum(const char* text, const char* const* names, int n, int* out) {
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(text, names[i]) == 0) {
      *out = i;
      return true;
    }
  }
  return false;
}

bool ParseBool(const char* text, bool* out) {
  if (!std::strcmp(text, "1") || !std::strcmp(text, "yes") || !std::strcmp(text, "on")) {
    *out = true;
    return true;
  }
  if (!std::strcmp(text, "0") || !std::strcmp(text, "no") || !std::strcmp(text, "off")) {
    *out = false;
    return true;
  }
  return false;
}

#ifdef NDEBUG
constexpr char kCheckBuffersDefault[] = "0";
#else
constexpr char kCheckBuffersDefault[] = "1";
#endif

#define SIZE_VAR(field) [](const char* t, Config* c) { return ParseSize(t, &c->field); }
#define POSITIVE_SIZE_VAR(field) \
  [](const char* t, Config* c) { return ParseSize(t, &c->field) && c->field > 0; }
#define BOOL_VAR(field) [](const char* t, Config* c) { return ParseBool(t, &c->field); }

const Var kVars[] = {
    {"MPIGPU_DEBUG", "warn", "log level: warn | info | trace",
     [](const char* t, Config* c) {
       static const char* const names[] = {"warn", "info", "trace"};
       int v;
       if (!ParseEnum(t, names, 3, &v)) return false;
       c->debug = static_cast<LogLevel>(v);
       return true;
     }},
    {"MPIGPU_MEMCPY_STRATEGY", "parameterized",
     "how copies learn where memory lives: parameterized | uva | query (the paper's three)",
     [](const char* t, Config* c) {
       static const char* const names[] = {"parameterized", "uva", "query"};
       int v;
       if (!ParseEnum(t, names, 3, &v)) return false;
       c->memcpy_strategy = static_cast<CopyStrategy>(v);
       return true;
     }},
    {"MPIGPU_MEMCPY_NT_THRESHOLD", "4M",
     "host-to-host copies of at least this many bytes use non-temporal stores",
     SIZE_VAR(memcpy_nt_threshold)},
    {"MPIGPU_EAGER_LIMIT", "64K", "largest message sent eagerly through cells; larger ones rendezvous",
     SIZE_VAR(eager_limit)},
    {"MPIGPU_CELL_SIZE", "64K", "payload bytes of one shared-memory cell", POSITIVE_SIZE_VAR(cell_size)},
    {"MPIGPU_CELLS_PER_RANK", "64", "free cells each process owns in the job segment",
     POSITIVE_SIZE_VAR(cells_per_rank)},
    {"MPIGPU_FASTBOX_SIZE", "4K",
     "payload bytes of each slot of the mailbox ring of each pair, for the smallest messages; 0 = off",
     SIZE_VAR(fastbox_size)},
    {"MPIGPU_LMT_UNIT_HOST", "64K", "LMT ring unit size when both buffers are in host memory",
     POSITIVE_SIZE_VAR(lmt_unit_host)},
    {"MPIGPU_LMT_UNIT_GPU", "4M",
     "largest LMT ring unit when either buffer is in GPU memory (a transfer uses about half of "
     "its size, between _MIN and this)",
     POSITIVE_SIZE_VAR(lmt_unit_gpu)},
    {"MPIGPU_LMT_UNIT_GPU_MIN", "512K", "smallest LMT ring unit when either buffer is in GPU memory",
     POSITIVE_SIZE_VAR(lmt_unit_gpu_min)},
    {"MPIGPU_LMT_UNITS", "8", "ring capacity in units of the largest unit", POSITIVE_SIZE_VAR(lmt_units)},
    {"MPIGPU_LMT_MAX_PENDING", "4", "copies in flight per side of an LMT pipeline",
     POSITIVE_SIZE_VAR(lmt_max_pending)},
    {"MPIGPU_NUMA_PLACE", "1", "bind shared rings to the NUMA node nearest the receiver's GPU",
     BOOL_VAR(numa_place)},
    {"MPIGPU_PIN_SHM", "1", "pin shared rings, and the eager cells and fastboxes, with cudaHostRegister when a GPU buffer uses them",
     BOOL_VAR(pin_shm)},
    {"MPIGPU_LMT", "auto", "large-message back-end: auto | ring | cma | ipc (forced, for measurement)",
     [](const char* t, Config* c) {
       static const char* const names[] = {"auto", "ring", "cma", "ipc"};
       int v;
       if (!ParseEnum(t, names, 4, &v)) return false;
       c->lmt = static_cast<LmtMode>(v);
       return true;
     }},
    {"MPIGPU_CMA_CHUNK", "1M",
     "host-to-host single copies of at least two chunks are shared by both processes in chunks "
     "of this size; 0 = the receiver copies alone",
     SIZE_VAR(cma_chunk)},
    {"MPIGPU_IPC_CACHE_SIZE", "64",
     "peer GPU buffers kept mapped through CUDA IPC per process (least recently used go first)",
     POSITIVE_SIZE_VAR(ipc_cache_size)},
    {"MPIGPU_CHECK_BUFFERS", kCheckBuffersDefault,
     "check every buffer's tag against where the driver says it lives (a query per call; default "
     "on in debug builds, off in -c opt builds)",
     BOOL_VAR(check_buffers)},
    {"MPIGPU_GPU_COPIER_MAX", "32K",
     "contiguous single-copy GPU transfers up to this size run on a resident copy kernel (one SM) "
     "instead of the copy engine; 0 = never",
     SIZE_VAR(gpu_copier_max)},
    {"MPIGPU_GPU_COPIER_STRIDED_MAX", "1M",
     "strided single-copy GPU transfers (vector datatypes, e.g. halo columns) up to this size run "
     "on the resident copy kernel; the copy engine moves narrow rows slowly; 0 = never",
     SIZE_VAR(gpu_copier_strided_max)},
    {"MPIGPU_GPU_COPIER_IDLE_US", "500",
     "microseconds the resident copy kernel waits for work before it leaves (the application's "
     "cudaDeviceSynchronize waits at most this long for it)",
     POSITIVE_SIZE_VAR(gpu_copier_idle_us)},
    {"MPIGPU_GPU_COPIER_SHARED", "0",
     "keep the resident copy kernel when several ranks share a GPU: only with MPS, whose clients' "
     "kernels run side by side; without it each rank's kernel stalls the others' for a time slice",
     BOOL_VAR(gpu_copier_shared)},
    {"MPIGPU_SHARED_GPU_IPC_MIN", "4M",
     "device sends to a rank on the same GPU (without MPIGPU_GPU_COPIER_SHARED) take the CUDA IPC "
     "single copy only from this size; smaller ones go through host memory on the copy engines, "
     "since a device copy between two processes' contexts costs a context switch (~140 us)",
     SIZE_VAR(shared_gpu_ipc_min)},
    {"MPIGPU_BOOTSTRAP_TIMEOUT", "60", "seconds ranks wait for each other at start and in finalize",
     POSITIVE_SIZE_VAR(bootstrap_timeout_s)},
};

// Set by the launcher, read by the bootstrap; listed so they do not warn as unknown.
const char* const kLauncherVars[] = {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_LOCAL_RANK",
                                     "MPIGPU_LOCAL_SIZE", "MPIGPU_JOBID", "MPIGPU_LAUNCHER_FD",
                                     "MPIGPU_CREATOR_PID"};

}  // namespace

bool ParseSize(const char* text, size_t* out) {
  if (text == nullptr || *text == '\0' || *text == '-') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text) return false;
  unsigned shift = 0;
  switch (*end) {
    case '\0': break;
    case 'k': case 'K': shift = 10; ++end; break;
    case 'm': case 'M': shift = 20; ++end; break;
    case 'g': case 'G': shift = 30; ++end; break;
    default: return false;
  }
  if (*end == 'i' || *end == 'B') ++end;  // accept "64KiB"-ish spellings: "64Ki", "64KB"
  if (*end == 'B') ++end;
  if (*end != '\0') return false;
  if (shift && v > (~0ULL >> shift)) return false;
  *out = static_cast<size_t>(v << shift);
  return true;
}

Status ParseConfig(const std::function<const char*(const char*)>& lookup, Config* out,
                   std::vector<ConfigEntry>* entries) {
  Status first;
  for (const Var& var : kVars) {
    bool ok = var.parse(var.default_value, out);
    (void)ok;  // defaults are valid by construction (tested)
    const char* text = lookup(var.name);
    bool from_env = text != nullptr;
    if (from_env && !var.parse(text, out)) {
      var.parse(var.default_value, out);
      first.KeepFirst(Status(Err::kInvalidArg, std::string(var.name) + "='" + text +
                                                   "' is not valid (" + var.help +
                                                   "); using the default " + var.default_value));
      from_env = false;
    }
    if (entries) {
      entries->push_back({var.name, from_env ? text : var.default_value, var.default_value,
                          var.help, from_env});
    }
  }
  return first;
}

const Config& GetConfig() {
  static Config config;
  static std::once_flag once;
  std::call_once(once, [] {
    Status st = ParseConfig([](const char* n) { return std::getenv(n); }, &config);
    SetLogLevel(config.debug);
    if (!st.ok()) MPIGPU_WARN("%s", st.message().c_str());
    for (const std::string& name : UnknownConfigNames(environ))
      MPIGPU_WARN("unknown variable %s is ignored (mpigpu-info lists the known ones)", name.c_str());
  });
  return config;
}

std::vector<ConfigEntry> DescribeConfig() {
  Config c;
  std::vector<ConfigEntry> entries;
  (void)ParseConfig([](const char* n) { return std::getenv(n); }, &c, &entries);
  return entries;
}

std::vector<std::string> UnknownConfigNames(char** envp) {
  std::vector<std::string> unknown;
  for (char** e = envp; e && *e; ++e) {
    if (std::strncmp(*e, "MPIGPU_", 7) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    std::string name(*e, eq ? static_cast<size_t>(eq - *e) : std::strlen(*e));
    bool known = false;
    for (const Var& var : kVars) known = known || name == var.name;
    for (const char* v : kLauncherVars) known = known || name == v;
    if (!known) unknown.push_back(name);
  }
  return unknown;
}

}  // namespace mpigpu

#include "memcopy/config.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

extern char** environ;

namespace mpigpu {
namespace {

constexpr size_t kK = size_t{1} << 10;
constexpr size_t kM = size_t{1} << 20;
constexpr size_t kG = size_t{1} << 30;
constexpr size_t kT = size_t{1} << 40;

enum class Kind {
  kChoice,  // a word from a list (enums, booleans): `parse` stores it
  kBytes,   // a size: digits with an optional K/M/G suffix, within [min, max] (or 0)
  kCount,   // a count or a time: plain digits, within [min, max] (or 0)
};

// One row per variable.
struct Var {
  const char* name;
  const char* default_value;
  const char* help;
  Kind kind;
  // kChoice: stores a valid word into the Config, false on any other text; `choices` is its
  // range as printed.
  bool (*parse)(const char* text, Config* c);
  const char* choices;
  // kBytes, kCount: the field and its range; 0 is allowed too when zero_allowed (0 = off).
  size_t Config::*field;
  size_t min;
  size_t max;
  bool zero_allowed;
  const char* unit;  // after a count's range ("s", "us"); "" for none
};

constexpr Var Choice(const char* name, const char* def, const char* help, const char* choices,
                     bool (*parse)(const char*, Config*)) {
  return Var{name, def, help, Kind::kChoice, parse, choices, nullptr, 0, 0, false, ""};
}

constexpr Var Bytes(const char* name, const char* def, const char* help, size_t Config::*field,
                    size_t min, size_t max, bool zero_allowed = false) {
  return Var{name, def, help, Kind::kBytes, nullptr, "", field, min, max, zero_allowed, ""};
}

constexpr Var Count(const char* name, const char* def, const char* help, size_t Config::*field,
                    size_t min, size_t max, const char* unit = "") {
  return Var{name, def, help, Kind::kCount, nullptr, "", field, min, max, false, unit};
}

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

constexpr char kBoolChoices[] = "0 | 1 (also no | yes, off | on)";

#define BOOL_VAR(field) [](const char* t, Config* c) { return ParseBool(t, &c->field); }
#define ENUM_VAR(field, type, ...)                                          \
  [](const char* t, Config* c) {                                            \
    static const char* const names[] = {__VA_ARGS__};                       \
    int v;                                                                  \
    if (!ParseEnum(t, names, sizeof names / sizeof names[0], &v)) return false; \
    c->field = static_cast<type>(v);                                        \
    return true;                                                            \
  }

// Ranges: what keeps the code's arithmetic safe and the setting meaningful (README lists why).
constexpr Var kVars[] = {
    Choice("MPIGPU_DEBUG", "warn", "log level: warn | info | trace", "warn | info | trace",
           ENUM_VAR(debug, LogLevel, "warn", "info", "trace")),
    Choice("MPIGPU_MEMCPY_STRATEGY", "parameterized",
           "how copies learn where memory lives: parameterized | uva | query (the paper's three)",
           "parameterized | uva | query",
           ENUM_VAR(memcpy_strategy, CopyStrategy, "parameterized", "uva", "query")),
    Bytes("MPIGPU_MEMCPY_NT_THRESHOLD", "4M",
          "host-to-host copies of at least this many bytes use non-temporal stores; 0 = never",
          &Config::memcpy_nt_threshold, 4 * kK, kT, /*zero_allowed=*/true),
    Bytes("MPIGPU_EAGER_LIMIT", "64K",
          "largest message sent eagerly through cells (capped by MPIGPU_CELL_SIZE); larger ones "
          "rendezvous (at least 1K: programs that send before the receive is posted rely on it)",
          &Config::eager_limit, kK, 64 * kM),
    Bytes("MPIGPU_CELL_SIZE", "64K", "payload bytes of one shared-memory cell", &Config::cell_size,
          kK, 64 * kM),
    Count("MPIGPU_CELLS_PER_RANK", "64", "free cells each process owns in the job segment",
          &Config::cells_per_rank, 1, 65536),
    Bytes("MPIGPU_FASTBOX_SIZE", "4K",
          "payload bytes of each slot of the mailbox ring of each pair, for the smallest messages; "
          "0 = off",
          &Config::fastbox_size, 0, 64 * kK),
    Bytes("MPIGPU_LMT_UNIT_HOST", "64K", "LMT ring unit size when both buffers are in host memory",
          &Config::lmt_unit_host, 4 * kK, kG),
    Bytes("MPIGPU_LMT_UNIT_GPU", "4M",
          "largest LMT ring unit when either buffer is in GPU memory (a transfer uses about half "
          "of its size, between _MIN and this)",
          &Config::lmt_unit_gpu, 4 * kK, kG),
    Bytes("MPIGPU_LMT_UNIT_GPU_MIN", "512K",
          "smallest LMT ring unit when either buffer is in GPU memory (at most MPIGPU_LMT_UNIT_GPU)",
          &Config::lmt_unit_gpu_min, 4 * kK, kG),
    Count("MPIGPU_LMT_UNITS", "8",
          "ring capacity in units of the largest unit (one ring per pair, made at its first large "
          "message: at most 64G, and it must fit in /dev/shm)",
          &Config::lmt_units, 2, 4096),
    Count("MPIGPU_LMT_MAX_PENDING", "4", "copies in flight per side of an LMT pipeline",
          &Config::lmt_max_pending, 1, 1024),
    Choice("MPIGPU_NUMA_PLACE", "1", "bind shared rings to the NUMA node nearest the receiver's GPU",
           kBoolChoices, BOOL_VAR(numa_place)),
    Choice("MPIGPU_PIN_SHM", "1",
           "pin shared rings, and the eager cells and fastboxes, with cudaHostRegister when a GPU "
           "buffer uses them",
           kBoolChoices, BOOL_VAR(pin_shm)),
    Choice("MPIGPU_LMT", "auto",
           "large-message back-end: auto | ring | cma | ipc (forced, for measurement)",
           "auto | ring | cma | ipc", ENUM_VAR(lmt, LmtMode, "auto", "ring", "cma", "ipc")),
    Bytes("MPIGPU_CMA_CHUNK", "1M",
          "host-to-host single copies of at least two chunks are shared by both processes in "
          "chunks of this size; 0 = the receiver copies alone",
          &Config::cma_chunk, 64 * kK, kG, /*zero_allowed=*/true),
    Count("MPIGPU_IPC_CACHE_SIZE", "64",
          "peer GPU buffers kept mapped through CUDA IPC per process (least recently used go "
          "first)",
          &Config::ipc_cache_size, 1, 4096),
    Choice("MPIGPU_CHECK_BUFFERS", kCheckBuffersDefault,
           "check every buffer's tag against where the driver says it lives (a query per call; "
           "default on in debug builds, off in -c opt builds)",
           kBoolChoices, BOOL_VAR(check_buffers)),
    Bytes("MPIGPU_GPU_COPIER_MAX", "32K",
          "contiguous single-copy GPU transfers up to this size run on a resident copy kernel "
          "(one SM) instead of the copy engine; 0 = never",
          &Config::gpu_copier_max, 0, kG),
    Bytes("MPIGPU_GPU_COPIER_STRIDED_MAX", "1M",
          "strided single-copy GPU transfers (vector datatypes, e.g. halo columns) up to this size "
          "run on the resident copy kernel; the copy engine moves narrow rows slowly; 0 = never",
          &Config::gpu_copier_strided_max, 0, kG),
    Count("MPIGPU_GPU_COPIER_IDLE_US", "500",
          "microseconds the resident copy kernel waits for work before it leaves (the "
          "application's cudaDeviceSynchronize waits at most this long for it)",
          &Config::gpu_copier_idle_us, 1, 1000000, "us"),
    Choice("MPIGPU_GPU_COPIER_SHARED", "0",
           "keep the resident copy kernel when several ranks share a GPU: only with MPS, whose "
           "clients' kernels run side by side; without it each rank's kernel stalls the others' "
           "for a time slice",
           kBoolChoices, BOOL_VAR(gpu_copier_shared)),
    Bytes("MPIGPU_SHARED_GPU_IPC_MIN", "4M",
          "device sends to a rank on the same GPU (without MPIGPU_GPU_COPIER_SHARED) take the CUDA "
          "IPC single copy only from this size; smaller ones go through host memory on the copy "
          "engines, since a device copy between two processes' contexts costs a context switch "
          "(~140 us)",
          &Config::shared_gpu_ipc_min, 0, kT),
    Count("MPIGPU_BOOTSTRAP_TIMEOUT", "60", "seconds ranks wait for each other at start and in finalize",
          &Config::bootstrap_timeout_s, 1, kMaxBootstrapTimeoutS, "s"),
    Choice("MPIGPU_DEFAULT_STREAM_ORDER", "1",
           "a device send first waits for the work issued on the legacy default stream (a "
           "cudaMemcpy from pageable memory, a <<<>>> kernel); 0 = the program synchronises "
           "itself (saves 0.25-0.5 us per device send, 1.4-2 while the resident copier runs)",
           kBoolChoices, BOOL_VAR(default_stream_order)),
    Choice("MPIGPU_YIELD", "auto",
           "waiting ranks yield the CPU (sched_yield) when idle: auto = from the 64th polling round "
           "when the node is oversubscribed (more local ranks than CPUs available to the job), "
           "else from the 2048th",
           "auto | on | off", ENUM_VAR(yield, YieldMode, "auto", "on", "off")),
};

// Set by the launcher, read by the bootstrap; listed so they do not warn as unknown.
const char* const kLauncherVars[] = {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_LOCAL_RANK",
                                     "MPIGPU_LOCAL_SIZE", "MPIGPU_JOBID", "MPIGPU_LAUNCHER_FD",
                                     "MPIGPU_CREATOR_PID", "MPIGPU_JOB_CPUS"};

enum class NumberError { kOk, kMalformed, kTooLarge };

// Strict: digits only, then (sizes) one of K M G in either case, optionally followed by "i"
// and/or "B". No spaces, signs, "0x" or decimal points; overflow is reported as kTooLarge.
NumberError ParseNumber(const char* text, bool suffix_allowed, size_t* out) {
  if (text == nullptr || *text < '0' || *text > '9') return NumberError::kMalformed;
  const char* p = text;
  while (*p >= '0' && *p <= '9') ++p;
  unsigned shift = 0;
  if (suffix_allowed) {
    switch (*p) {
      case 'k': case 'K': shift = 10; ++p; break;
      case 'm': case 'M': shift = 20; ++p; break;
      case 'g': case 'G': shift = 30; ++p; break;
      default: break;
    }
    if (shift != 0 && *p == 'i') ++p;  // "64Ki", "64KiB"
    if (shift != 0 && *p == 'B') ++p;  // "64KB"
  }
  if (*p != '\0') return NumberError::kMalformed;
  // Only digits (and a checked suffix) are left: strtoull's sign and space handling never apply.
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno == ERANGE) return NumberError::kTooLarge;
  if (errno != 0 || end == text) return NumberError::kMalformed;
  if (v > (static_cast<unsigned long long>(SIZE_MAX) >> shift)) return NumberError::kTooLarge;
  *out = static_cast<size_t>(v << shift);
  return NumberError::kOk;
}

// 65536 -> "64K", 1073741824 -> "1G", 1000 -> "1000".
std::string SizeText(uint64_t v) {
  if (v != 0 && v % kG == 0) return std::to_string(v / kG) + "G";
  if (v != 0 && v % kM == 0) return std::to_string(v / kM) + "M";
  if (v != 0 && v % kK == 0) return std::to_string(v / kK) + "K";
  return std::to_string(v);
}

std::string RangeText(const Var& var) {
  if (var.kind == Kind::kChoice) return var.choices;
  auto num = [&](size_t v) {
    return var.kind == Kind::kBytes ? SizeText(v) : std::to_string(v);
  };
  std::string r = num(var.min) + ".." + num(var.max);
  if (var.zero_allowed && var.min > 0) r = "0 (off) or " + r;
  if (var.unit[0] != '\0') r += std::string(" ") + var.unit;
  return r;
}

// Parses `text` for `var` into `c`; "" when it is valid, else why not (name, value and range).
std::string ParseVar(const Var& var, const char* text, Config* c) {
  const std::string what = std::string(var.name) + "='" + text + "'";
  const std::string range = RangeText(var);
  if (var.kind == Kind::kChoice)
    return var.parse(text, c) ? "" : what + " is not valid (allowed " + range + ")";
  size_t v = 0;
  switch (ParseNumber(text, var.kind == Kind::kBytes, &v)) {
    case NumberError::kOk:
      break;
    case NumberError::kTooLarge:
      return what + " is too large (allowed " + range + ")";
    case NumberError::kMalformed:
      return what +
             (var.kind == Kind::kBytes
                  ? " is not a size: decimal digits with an optional K, M or G suffix, no spaces "
                    "or signs (allowed "
                  : " is not a number: decimal digits only, no spaces or signs (allowed ") +
             range + ")";
  }
  if ((v < var.min && !(v == 0 && var.zero_allowed)) || v > var.max)
    return what + " is out of range (allowed " + range + ")";
  c->*var.field = v;
  return "";
}

// Adds `msg` to the kInvalidArg status that lists every problem ("; " between them).
void AddProblem(Status* all, const std::string& msg) {
  if (msg.empty()) return;
  *all = Status(Err::kInvalidArg, all->ok() ? msg : all->message() + "; " + msg);
}

uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t RoundPage(uint64_t v) { return v > UINT64_MAX - 4095 ? UINT64_MAX : (v + 4095) / 4096 * 4096; }

uint64_t SatAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

// Flag lines of a ring on a node with a GPU (the engine sizes rings by MPIGPU_LMT_UNIT_GPU there):
// one per smallest unit that fits, at least one per unit.
uint64_t GpuRingFlags(const Config& c) {
  const uint64_t smallest = c.lmt_unit_gpu_min < c.lmt_unit_gpu ? c.lmt_unit_gpu_min : c.lmt_unit_gpu;
  if (smallest == 0) return 0;
  const uint64_t flags = SatMul(c.lmt_units, c.lmt_unit_gpu) / smallest;
  return flags > c.lmt_units ? flags : c.lmt_units;
}

// A ring's /dev/shm file: the segment's header page (ShmSegment::kHeaderBytes), then what
// LmtRing::BytesFor counts: a 64-byte header and a 64-byte line per flag, page-rounded, and the
// page-rounded data area.
uint64_t RingBytes(uint64_t capacity, uint64_t flags) {
  return SatAdd(4096, SatAdd(RoundPage(SatAdd(64, SatMul(64, flags))), RoundPage(capacity)));
}

struct Loaded {
  Config config;
  Status status;
};

const Loaded& Load() {
  static Loaded loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    loaded.status = ParseConfig([](const char* n) { return std::getenv(n); }, &loaded.config);
    Status node = CheckConfigForNode(loaded.config, ShmTotalBytes());
    if (!node.ok()) AddProblem(&loaded.status, node.message());
    SetLogLevel(loaded.config.debug);
    if (!loaded.status.ok())
      MPIGPU_WARN("%s: MPIGPU_Init refuses this configuration (mpigpu-info shows every variable "
                  "with its allowed values)",
                  loaded.status.message().c_str());
    for (const std::string& name : UnknownConfigNames(environ))
      MPIGPU_WARN("unknown variable %s is ignored (mpigpu-info lists the known ones)", name.c_str());
  });
  return loaded;
}

}  // namespace

bool ParseSize(const char* text, size_t* out) {
  size_t v = 0;
  if (ParseNumber(text, /*suffix_allowed=*/true, &v) != NumberError::kOk) return false;
  *out = v;
  return true;
}

uint64_t LmtRingBytes(const Config& c) {
  if (c.lmt_units == 0 || c.lmt_unit_host == 0 || c.lmt_unit_gpu == 0 || c.lmt_unit_gpu_min == 0)
    return 0;
  const uint64_t host = RingBytes(SatMul(c.lmt_units, c.lmt_unit_host), c.lmt_units);
  const uint64_t gpu = RingBytes(SatMul(c.lmt_units, c.lmt_unit_gpu), GpuRingFlags(c));
  const uint64_t bytes = host > gpu ? host : gpu;
  return bytes == UINT64_MAX ? 0 : bytes;
}

Status CheckConfig(const Config& c) {
  Status all;
  if (c.lmt_unit_gpu_min > c.lmt_unit_gpu)
    AddProblem(&all, "MPIGPU_LMT_UNIT_GPU_MIN (" + SizeText(c.lmt_unit_gpu_min) +
                         ") is above MPIGPU_LMT_UNIT_GPU (" + SizeText(c.lmt_unit_gpu) +
                         "): allowed MPIGPU_LMT_UNIT_GPU_MIN <= MPIGPU_LMT_UNIT_GPU");
  const size_t largest = c.lmt_unit_host > c.lmt_unit_gpu ? c.lmt_unit_host : c.lmt_unit_gpu;
  const uint64_t capacity = SatMul(c.lmt_units, largest);
  if (capacity > kMaxLmtRingCapacity)
    AddProblem(&all, "one LMT ring, MPIGPU_LMT_UNITS (" + std::to_string(c.lmt_units) +
                         ") x the largest of MPIGPU_LMT_UNIT_HOST and MPIGPU_LMT_UNIT_GPU (" +
                         SizeText(largest) + "), is " + SizeText(capacity) + ": allowed up to " +
                         SizeText(kMaxLmtRingCapacity));
  const uint64_t flags = GpuRingFlags(c);
  if (flags > kMaxLmtRingFlags)
    AddProblem(&all, "MPIGPU_LMT_UNITS x MPIGPU_LMT_UNIT_GPU / MPIGPU_LMT_UNIT_GPU_MIN = " +
                         std::to_string(c.lmt_units) + " x " + SizeText(c.lmt_unit_gpu) + " / " +
                         SizeText(c.lmt_unit_gpu_min) + " = " + std::to_string(flags) +
                         " smallest units per ring: allowed up to " +
                         std::to_string(kMaxLmtRingFlags));
  const uint64_t cells = SatMul(c.cells_per_rank, c.cell_size);
  if (cells > kMaxCellPoolBytes)
    AddProblem(&all, "MPIGPU_CELLS_PER_RANK x MPIGPU_CELL_SIZE = " +
                         std::to_string(c.cells_per_rank) + " x " + SizeText(c.cell_size) + " = " +
                         SizeText(cells) + " of cells per rank: allowed up to " +
                         SizeText(kMaxCellPoolBytes));
  return all;
}

Status CheckConfigForNode(const Config& c, uint64_t shm_total_bytes) {
  const uint64_t ring = LmtRingBytes(c);
  if (shm_total_bytes == 0 || ring <= shm_total_bytes) return Status::Ok();
  return Status(Err::kInvalidArg,
                "one LMT ring (MPIGPU_LMT_UNITS " + std::to_string(c.lmt_units) +
                    " x the largest unit " +
                    SizeText(c.lmt_unit_host > c.lmt_unit_gpu ? c.lmt_unit_host : c.lmt_unit_gpu) +
                    ", " + std::to_string(ring) + " bytes with its flags) does not fit in /dev/shm (" +
                    std::to_string(shm_total_bytes) +
                    " bytes in all): lower MPIGPU_LMT_UNITS or the unit sizes");
}

uint64_t ShmTotalBytes() {
  struct statvfs vfs {};
  if (statvfs("/dev/shm", &vfs) != 0) return 0;
  return SatMul(vfs.f_blocks, vfs.f_frsize);
}

Status ParseConfig(const std::function<const char*(const char*)>& lookup, Config* out,
                   std::vector<ConfigEntry>* entries) {
  Status all;
  for (const Var& var : kVars) {
    std::string error = ParseVar(var, var.default_value, out);
    (void)error;  // defaults are valid by construction (tested)
    const char* text = lookup(var.name);
    bool from_env = text != nullptr;
    if (from_env) {
      error = ParseVar(var, text, out);
      if (!error.empty()) {
        (void)ParseVar(var, var.default_value, out);
        AddProblem(&all, error);
        from_env = false;
      }
    }
    if (entries) {
      entries->push_back({var.name, from_env ? text : var.default_value, var.default_value,
                          var.help, RangeText(var), from_env, error});
    }
  }
  Status combos = CheckConfig(*out);
  if (!combos.ok()) AddProblem(&all, combos.message());
  return all;
}

const Config& GetConfig() { return Load().config; }

const Status& ConfigStatus() { return Load().status; }

std::vector<ConfigLimits> NumericConfigLimits() {
  std::vector<ConfigLimits> limits;
  for (const Var& var : kVars)
    if (var.kind != Kind::kChoice)
      limits.push_back({var.name, var.min, var.max, var.zero_allowed, var.kind == Kind::kBytes});
  return limits;
}

std::vector<ConfigEntry> DescribeConfig(Status* verdict) {
  Config c;
  std::vector<ConfigEntry> entries;
  Status st = ParseConfig([](const char* n) { return std::getenv(n); }, &c, &entries);
  Status node = CheckConfigForNode(c, ShmTotalBytes());
  if (!node.ok()) AddProblem(&st, node.message());
  if (verdict) *verdict = std::move(st);
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

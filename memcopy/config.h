// Config: every MPIGPU_* environment variable, read in this one place.
//
// The table in config.cc names each variable with its default, meaning and allowed values;
// `mpigpu-info` prints it. Values are read once (first GetConfig()). Numbers are plain decimal
// digits: no spaces, no sign, no hex; sizes in bytes may end in K, M or G (powers of 1024; "KiB"
// and "KB" spellings too). Every numeric variable has a range, and a few combinations are
// checked (see CheckConfig); a value outside them, or one that does not parse, is an error that
// MPIGPU_Init returns (ConfigStatus). Unknown MPIGPU_* variables are reported once as a warning
// (a typo must not pass silently).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memcopy/log.h"
#include "memcopy/status.h"

namespace mpigpu {

enum class CopyStrategy : int {
  kParameterized = 0,  // the location travels with the pointer; no driver query (default)
  kUvaDefault = 1,     // cudaMemcpyDefault for every copy; the driver works out the kind
  kQuery = 2,          // cudaPointerGetAttributes on both pointers, then the explicit kind
};

enum class LmtMode : int {
  kAuto = 0,  // pick by size, buffer locations and what the pair supports
  kRing = 1,  // the shared-memory ring pipeline (the paper)
  kCma = 2,   // process_vm_readv single copy (host buffers), falling back to the ring
  kIpc = 3,   // CUDA IPC single copy (device buffers), falling back to the ring
};

// MPIGPU_YIELD: whether ranks waiting for a message yield the CPU (sched_yield) when idle.
enum class YieldMode : int {
  kAuto = 0,  // when the node is oversubscribed: more local ranks than CPUs available to the job
  kOn = 1,
  kOff = 2,
};

struct Config {
  LogLevel debug = LogLevel::kWarn;
  CopyStrategy memcpy_strategy = CopyStrategy::kParameterized;
  size_t memcpy_nt_threshold = 0;  // host copies of at least this many bytes use streaming stores
  size_t eager_limit = 0;          // largest message sent through cells
  size_t cell_size = 0;            // payload bytes of one cell
  size_t cells_per_rank = 0;       // free cells each process owns
  size_t fastbox_size = 0;         // payload bytes of each pair's fastbox; 0 = no fastboxes
  size_t lmt_unit_host = 0;        // ring unit size when both buffers are in host memory
  size_t lmt_unit_gpu = 0;         // largest ring unit when a GPU buffer is on either side
  size_t lmt_unit_gpu_min = 0;     // smallest one (mid-size transfers: see LmtGpuUnit)
  size_t lmt_units = 0;            // units per ring (ring depth)
  size_t lmt_max_pending = 0;      // cap on copies in flight per pipeline side
  bool numa_place = true;          // place shared structures on the NUMA node near the GPU
  bool pin_shm = true;             // cudaHostRegister shared rings and cells when a GPU is used
  LmtMode lmt = LmtMode::kAuto;    // large-message back-end
  size_t cma_chunk = 0;
  size_t ipc_cache_size = 0;       // peer device buffers kept mapped (LRU)
  bool check_buffers = false;      // verify each buffer's tag with cudaPointerGetAttributes
  size_t gpu_copier_max = 0;       // contiguous device copies up to this size use the resident kernel
  size_t gpu_copier_strided_max = 0;  // strided ones (narrow rows) up to this size; 0 = never
  size_t gpu_copier_idle_us = 0;   // the resident kernel leaves after this long without work
  bool gpu_copier_shared = false;  // keep the resident kernel when ranks share a GPU (MPS)
  bool default_stream_order = true;  // device sends wait for the legacy default stream first
  size_t shared_gpu_ipc_min = 0;   // smallest IPC single copy to a rank on the same GPU
  size_t bootstrap_timeout_s = 0;  // how long ranks wait for each other at start and finalize
                                   // (at most kMaxBootstrapTimeoutS: see BootstrapTimeoutMs)
  YieldMode yield = YieldMode::kAuto;  // waiting ranks yield the CPU when idle
};

// Limits the configuration enforces (besides each variable's own range, in config.cc's table).
constexpr size_t kMaxBootstrapTimeoutS = 86400;            // one day: * 1000 fits an int
constexpr uint64_t kMaxLmtRingCapacity = uint64_t{64} << 30;  // one pair's ring: 64 GiB
constexpr uint64_t kMaxLmtRingFlags = uint64_t{1} << 16;     // LmtRing::kMaxUnits
constexpr uint64_t kMaxCellPoolBytes = uint64_t{64} << 30;    // one rank's eager cells: 64 GiB

// MPIGPU_BOOTSTRAP_TIMEOUT in milliseconds, as the int that timed waits take. The range check
// keeps the seconds at most kMaxBootstrapTimeoutS; a Config filled by hand is clamped to it.
inline int BootstrapTimeoutMs(const Config& c) {
  const size_t s = c.bootstrap_timeout_s < kMaxBootstrapTimeoutS ? c.bootstrap_timeout_s
                                                                  : kMaxBootstrapTimeoutS;
  return static_cast<int>(s * 1000);
}

// Bytes of one pair's LMT ring in /dev/shm (data area, flag lines, headers, page-rounded) as the
// engine sizes it, counted with the largest unit whether or not the node has a GPU:
// MPIGPU_LMT_UNITS x max(MPIGPU_LMT_UNIT_HOST, MPIGPU_LMT_UNIT_GPU), one flag line per smallest
// GPU unit that fits. 0 when a factor is 0 or the product overflows.
uint64_t LmtRingBytes(const Config& c);

struct ConfigEntry {
  std::string name;
  std::string value;          // in effect (the environment's, or the default if that is refused)
  std::string default_value;
  std::string help;
  std::string range;          // what it accepts: "2..4096", "0 (off) or 64K..1G", "auto | on | off"
  bool from_env = false;      // the environment's value is in effect
  std::string error;          // why the environment's value was refused; "" if it was not
};

// A numeric variable's allowed values: min..max, and 0 as well when zero_allowed (0 then turns
// the feature off). `bytes`: a size, which takes K/M/G suffixes.
struct ConfigLimits {
  std::string name;
  size_t min = 0;
  size_t max = 0;
  bool zero_allowed = false;
  bool bytes = false;
};

// The process's configuration: parsed from the environment once. A refused value (malformed or
// out of range) keeps its default here, so tools can still run and print, but ConfigStatus()
// reports it and MPIGPU_Init (and Engine::Create) returns that error.
const Config& GetConfig();

// GetConfig's verdict: ok, or kInvalidArg naming each refused variable with its value and its
// allowed range, each broken combination (CheckConfig) and a ring larger than /dev/shm
// (CheckConfigForNode). Also logged once as a warning.
const Status& ConfigStatus();

// Parses from `lookup` (name -> value or nullptr), for tests and GetConfig, and runs CheckConfig
// on the result. Returns kInvalidArg naming every refused value (name='value', what is wrong,
// the allowed range; "; " between them); `out` still holds a default for each refused entry.
Status ParseConfig(const std::function<const char*(const char*)>& lookup, Config* out,
                   std::vector<ConfigEntry>* entries = nullptr);

// Combinations the engine's arithmetic needs: MPIGPU_LMT_UNIT_GPU_MIN <= MPIGPU_LMT_UNIT_GPU, one
// LMT ring's capacity <= kMaxLmtRingCapacity and its flags <= kMaxLmtRingFlags, one rank's cells
// <= kMaxCellPoolBytes. ParseConfig runs it.
Status CheckConfig(const Config& c);

// What needs the node: one LMT ring (LmtRingBytes; created per pair at its first large message)
// must fit in /dev/shm, whose total size is `shm_total_bytes` (0 = unknown: not checked).
Status CheckConfigForNode(const Config& c, uint64_t shm_total_bytes);

// Total size of /dev/shm (statvfs), 0 when it cannot be read.
uint64_t ShmTotalBytes();

// Every numeric variable's range (the table's; for tests and documentation).
std::vector<ConfigLimits> NumericConfigLimits();

// Every variable with its value in effect, its default, help and range, and the reason for each
// refused value (what mpigpu-info prints). `verdict`, if given, gets what ConfigStatus() would
// say for the environment now: MPIGPU_Init's answer.
std::vector<ConfigEntry> DescribeConfig(Status* verdict = nullptr);

// MPIGPU_* names set in `environ` that no part of mpigpu reads.
std::vector<std::string> UnknownConfigNames(char** envp);

// "64K" / "1M" / "123" -> bytes. False on garbage (spaces, signs, "0x", "1.5M"), or a value
// over SIZE_MAX; `out` is untouched then.
bool ParseSize(const char* text, size_t* out);

}  // namespace mpigpu

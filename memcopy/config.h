// Config: every MPIGPU_* environment variable, read in this one place.
//
// The table in config.cc names each variable with its default and meaning; `mpigpu-info` prints
// it. Values are read once (first GetConfig()); sizes take K, M, G suffixes (powers of 1024).
// Unknown MPIGPU_* variables are reported once as a warning (a typo must not pass silently).
#pragma once

#include <cstddef>
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
  size_t shared_gpu_ipc_min = 0;   // smallest IPC single copy to a rank on the same GPU
  size_t bootstrap_timeout_s = 0;  // how long ranks wait for each other at start and finalize
};

struct ConfigEntry {
  std::string name;
  std::string value;          // in effect (the environment's, or the default)
  std::string default_value;
  std::string help;
  bool from_env = false;
};

// The process's configuration: parsed from the environment once. A malformed value is reported
// (warning) and its default kept, so a bad setting never stops a job.
const Config& GetConfig();

// Parses from `lookup` (name -> value or nullptr), for tests and GetConfig. Returns the first
// malformed value as kInvalidArg but still fills `out` with defaults for bad entries.
Status ParseConfig(const std::function<const char*(const char*)>& lookup, Config* out,
                   std::vector<ConfigEntry>* entries = nullptr);

// Every variable with its value in effect, its default and help (what mpigpu-info prints).
std::vector<ConfigEntry> DescribeConfig();

// MPIGPU_* names set in `environ` that no part of mpigpu reads.
std::vector<std::string> UnknownConfigNames(char** envp);

// "64K" / "1M" / "123" -> bytes. False on garbage, negative values or overflow.
bool ParseSize(const char* text, size_t* out);

}  // namespace mpigpu

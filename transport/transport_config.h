// The transport's settings (eager, LMT ring, CMA, CUDA IPC, the resident copier, bootstrap),
// declared here where they are used and registered with every other component's in the one
// registry (memcopy/params.h), which mpigpu-info prints and MPIGPU_Init checks. Also the limits
// the transport's arithmetic needs, checked as combinations when the settings are read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "memcopy/params.h"

namespace mpigpu {

enum class LmtMode : int {
  kAuto = 0,  // pick by size, buffer locations and what the pair supports
  kRing = 1,  // the shared-memory ring pipeline (the paper)
  kCma = 2,   // process_vm_readv single copy (host buffers), falling back to the ring
  kIpc = 3,   // CUDA IPC single copy (device buffers), falling back to the ring
  kChan = 4,  // frames on the pair's channel (transport/lmt/chan_lmt.h)
};

enum class ChannelMode : int {
  kShm = 0,     // shared-memory fastboxes and cells (transport/shm)
  kSocket = 1,  // Unix stream sockets: the loopback test back-end (transport/sock)
};

// MPIGPU_GPU_COPIER_SHARED: the shared-GPU fast path (the resident copy kernel and the CUDA IPC
// single copy at every size, to a rank on the same GPU).
enum class SharedGpuMode : int {
  kAuto = 0,  // when MPS serves the GPU (memcopy/mps.h)
  kOff = 1,   // never: copier off, IPC only from MPIGPU_SHARED_GPU_IPC_MIN
  kOn = 2,    // always (the user says MPS runs)
};

// Whether ranks sharing a GPU take the fast path, given the setting and whether MPS serves it.
inline bool KeepSharedGpuPath(SharedGpuMode mode, bool mps_active) {
  return mode == SharedGpuMode::kOn || (mode == SharedGpuMode::kAuto && mps_active);
}

struct TransportConfig {
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
  LmtMode lmt = LmtMode::kAuto;    // large-message back-ends (wiring/backends.h)
  ChannelMode channel = ChannelMode::kShm;  // the channel of every peer
  size_t cma_chunk = 0;
  size_t ipc_cache_size = 0;       // peer device buffers kept mapped (LRU)
  size_t gpu_copier_max = 0;       // contiguous device copies up to this size use the resident kernel
  size_t gpu_copier_strided_max = 0;  // strided ones (narrow rows) up to this size; 0 = never
  size_t gpu_copier_idle_us = 0;   // the resident kernel leaves after this long without work
  SharedGpuMode gpu_copier_shared = SharedGpuMode::kAuto;  // the shared-GPU fast path (MPS)
  bool default_stream_order = true;  // device sends wait for the legacy default stream first
  size_t shared_gpu_ipc_min = 0;   // smallest IPC single copy to a rank on the same GPU
  size_t bootstrap_timeout_s = 0;  // how long ranks wait for each other at start and finalize
                                   // (at most kMaxBootstrapTimeoutS: see BootstrapTimeoutMs)
};

// Limits the configuration enforces (besides each variable's own range, in config.cc's table).
constexpr size_t kMaxBootstrapTimeoutS = 86400;            // one day: * 1000 fits an int
constexpr uint64_t kMaxLmtRingCapacity = uint64_t{64} << 30;  // one pair's ring: 64 GiB
constexpr uint64_t kMaxLmtRingFlags = uint64_t{1} << 16;     // LmtRing::kMaxUnits
constexpr uint64_t kMaxCellPoolBytes = uint64_t{64} << 30;    // one rank's eager cells: 64 GiB

// MPIGPU_BOOTSTRAP_TIMEOUT in milliseconds, as the int that timed waits take. The range check
// keeps the seconds at most kMaxBootstrapTimeoutS; a Config filled by hand is clamped to it.
inline int BootstrapTimeoutMs(const TransportConfig& c) {
  const size_t s = c.bootstrap_timeout_s < kMaxBootstrapTimeoutS ? c.bootstrap_timeout_s
                                                                  : kMaxBootstrapTimeoutS;
  return static_cast<int>(s * 1000);
}

// Bytes of one pair's LMT ring in /dev/shm (data area, flag lines, headers, page-rounded) as the
// engine sizes it, counted with the largest unit whether or not the node has a GPU:
// MPIGPU_LMT_UNITS x max(MPIGPU_LMT_UNIT_HOST, MPIGPU_LMT_UNIT_GPU), one flag line per smallest
// GPU unit that fits. 0 when a factor is 0 or the product overflows.
uint64_t LmtRingBytes(const TransportConfig& c);

// Combinations the engine's arithmetic needs: MPIGPU_LMT_UNIT_GPU_MIN <= MPIGPU_LMT_UNIT_GPU, one
// LMT ring's capacity <= kMaxLmtRingCapacity and its flags <= kMaxLmtRingFlags, one rank's cells
// <= kMaxCellPoolBytes.
Status CheckTransportConfig(const TransportConfig& c);

// What needs the node: one LMT ring (LmtRingBytes; created per pair at its first large message)
// must fit in /dev/shm, whose total size is `shm_total_bytes` (0 = unknown: not checked).
Status CheckTransportConfigForNode(const TransportConfig& c, uint64_t shm_total_bytes);

// Total size of /dev/shm (statvfs), 0 when it cannot be read.
uint64_t ShmTotalBytes();

// The environment's values, read once (defaults where refused: ConfigStatus says why).
const TransportConfig& GetTransportConfig();
// The table, for tests and tools (Parse with a lookup of their own).
const Params<TransportConfig>& TransportParams();

}  // namespace mpigpu

#include "transport/transport_config.h"

#include <sys/statvfs.h>

#include <string>

namespace mpigpu {
namespace {

using params::AddProblem;
using params::SatAdd;
using params::SatMul;
using params::SizeText;

constexpr size_t kK = size_t{1} << 10;
constexpr size_t kM = size_t{1} << 20;
constexpr size_t kG = size_t{1} << 30;
constexpr size_t kT = size_t{1} << 40;

// Ranges: what keeps the code's arithmetic safe and the setting meaningful (README lists why).
constexpr ParamVar<TransportConfig> kVars[] = {
    BytesParam<TransportConfig>("MPIGPU_EAGER_LIMIT", "64K",
          "largest message sent eagerly through cells (capped by MPIGPU_CELL_SIZE); larger ones "
          "rendezvous (at least 1K: programs that send before the receive is posted rely on it)",
          &TransportConfig::eager_limit, kK, 64 * kM),
    BytesParam<TransportConfig>("MPIGPU_CELL_SIZE", "64K", "payload bytes of one shared-memory cell", &TransportConfig::cell_size,
          kK, 64 * kM),
    CountParam<TransportConfig>("MPIGPU_CELLS_PER_RANK", "64", "free cells each process owns in the job segment",
          &TransportConfig::cells_per_rank, 1, 65536),
    BytesParam<TransportConfig>("MPIGPU_FASTBOX_SIZE", "4K",
          "payload bytes of each slot of the mailbox ring of each pair, for the smallest messages; "
          "0 = off",
          &TransportConfig::fastbox_size, 0, 64 * kK),
    ChoiceParam<TransportConfig>("MPIGPU_LMT", "auto",
           "large-message back-ends: auto (CUDA IPC, CMA, ring, by what each message allows) | "
           "ring | cma | ipc (forced, for measurement) | chan (frames on the channel)",
           "auto | ring | cma | ipc | chan",
           MPIGPU_PARAM_ENUM(TransportConfig, lmt, LmtMode, "auto", "ring", "cma", "ipc", "chan")),
    ChoiceParam<TransportConfig>("MPIGPU_CHANNEL", "shm",
           "the channel of every peer's messages: shm (fastboxes and cells) | socket (Unix stream "
           "sockets, large messages as frames on them: the loopback back-end that tests the "
           "transport seam)",
           "shm | socket",
           MPIGPU_PARAM_ENUM(TransportConfig, channel, ChannelMode, "shm", "socket")),
    BytesParam<TransportConfig>("MPIGPU_LMT_UNIT_HOST", "64K", "LMT ring unit size when both buffers are in host memory",
          &TransportConfig::lmt_unit_host, 4 * kK, kG),
    BytesParam<TransportConfig>("MPIGPU_LMT_UNIT_GPU", "4M",
          "largest LMT ring unit when either buffer is in GPU memory (a transfer uses about half "
          "of its size, between _MIN and this)",
          &TransportConfig::lmt_unit_gpu, 4 * kK, kG),
    BytesParam<TransportConfig>("MPIGPU_LMT_UNIT_GPU_MIN", "512K",
          "smallest LMT ring unit when either buffer is in GPU memory (at most MPIGPU_LMT_UNIT_GPU)",
          &TransportConfig::lmt_unit_gpu_min, 4 * kK, kG),
    CountParam<TransportConfig>("MPIGPU_LMT_UNITS", "8",
          "ring capacity in units of the largest unit (one ring per pair, made at its first large "
          "message: at most 64G, and it must fit in /dev/shm)",
          &TransportConfig::lmt_units, 2, 4096),
    CountParam<TransportConfig>("MPIGPU_LMT_MAX_PENDING", "4", "copies in flight per side of an LMT pipeline",
          &TransportConfig::lmt_max_pending, 1, 1024),
    BytesParam<TransportConfig>("MPIGPU_CMA_CHUNK", "1M",
          "host-to-host single copies of at least two chunks are shared by both processes in "
          "chunks of this size; 0 = the receiver copies alone",
          &TransportConfig::cma_chunk, 64 * kK, kG, /*zero_allowed=*/true),
    CountParam<TransportConfig>("MPIGPU_IPC_CACHE_SIZE", "64",
          "peer GPU buffers kept mapped through CUDA IPC per process (least recently used go "
          "first)",
          &TransportConfig::ipc_cache_size, 1, 4096),
    BytesParam<TransportConfig>("MPIGPU_GPU_COPIER_MAX", "32K",
          "contiguous single-copy GPU transfers up to this size run on a resident copy kernel "
          "(one SM) instead of the copy engine; 0 = never",
          &TransportConfig::gpu_copier_max, 0, kG),
    BytesParam<TransportConfig>("MPIGPU_GPU_COPIER_STRIDED_MAX", "1M",
          "strided single-copy GPU transfers (vector datatypes, e.g. halo columns) up to this size "
          "run on the resident copy kernel; the copy engine moves narrow rows slowly; 0 = never",
          &TransportConfig::gpu_copier_strided_max, 0, kG),
    CountParam<TransportConfig>("MPIGPU_GPU_COPIER_IDLE_US", "500",
          "microseconds the resident copy kernel waits for work before it leaves (the "
          "application's cudaDeviceSynchronize waits at most this long for it)",
          &TransportConfig::gpu_copier_idle_us, 1, 1000000, "us"),
    ChoiceParam<TransportConfig>("MPIGPU_GPU_COPIER_SHARED", "auto",
           "when several ranks share a GPU, keep the resident copy kernel and the CUDA IPC single "
           "copy at every size: only under MPS, whose clients' kernels run side by side (without "
           "it each rank's kernel stalls the others' for a time slice); auto = when MPS is "
           "detected (memcopy/mps.h: the CUDA driver, else the control pipe)",
           "auto | 0 | 1 (also no | yes, off | on)",
           [](const char* t, TransportConfig* c) {
             if (std::string(t) == "auto") {
               c->gpu_copier_shared = SharedGpuMode::kAuto;
               return true;
             }
             bool on = false;
             if (!ParseBool(t, &on)) return false;
             c->gpu_copier_shared = on ? SharedGpuMode::kOn : SharedGpuMode::kOff;
             return true;
           }),
    BytesParam<TransportConfig>("MPIGPU_SHARED_GPU_IPC_MIN", "4M",
          "device sends to a rank on the same GPU (without MPS, or MPIGPU_GPU_COPIER_SHARED=0) take the CUDA "
          "IPC single copy only from this size; smaller ones go through host memory on the copy "
          "engines, since a device copy between two processes' contexts costs a context switch "
          "(~140 us)",
          &TransportConfig::shared_gpu_ipc_min, 0, kT),
    ChoiceParam<TransportConfig>("MPIGPU_DEFAULT_STREAM_ORDER", "1",
           "a device send first waits for the work issued on the legacy default stream (a "
           "cudaMemcpy from pageable memory, a <<<>>> kernel; by CUDA's rules also on every "
           "blocking stream); 0 = the program synchronises "
           "itself (saves 0.25-0.5 us per device send, 1.4-2 while the resident copier runs)",
           kBoolChoices, MPIGPU_PARAM_BOOL(TransportConfig, default_stream_order)),
    ChoiceParam<TransportConfig>("MPIGPU_NUMA_PLACE", "1", "bind shared rings to the NUMA node nearest the receiver's GPU",
           kBoolChoices, MPIGPU_PARAM_BOOL(TransportConfig, numa_place)),
    ChoiceParam<TransportConfig>("MPIGPU_PIN_SHM", "1",
           "pin shared rings, and the eager cells and fastboxes, with cudaHostRegister when a GPU "
           "buffer uses them",
           kBoolChoices, MPIGPU_PARAM_BOOL(TransportConfig, pin_shm)),
    CountParam<TransportConfig>("MPIGPU_BOOTSTRAP_TIMEOUT", "60", "seconds ranks wait for each other at start and in finalize",
          &TransportConfig::bootstrap_timeout_s, 1, kMaxBootstrapTimeoutS, "s"),
};

// Set by the launcher, read by the bootstrap: not settings, but not unknown either.
std::vector<const char*> LauncherVars() {
  return {"MPIGPU_RANK",        "MPIGPU_SIZE",        "MPIGPU_LOCAL_RANK", "MPIGPU_LOCAL_SIZE",
          "MPIGPU_JOBID",       "MPIGPU_LAUNCHER_FD", "MPIGPU_CREATOR_PID", "MPIGPU_JOB_CPUS",
          "MPIGPU_LAUNCHER_ADDR"};
}

uint64_t RoundPage(uint64_t v) { return v > UINT64_MAX - 4095 ? UINT64_MAX : (v + 4095) / 4096 * 4096; }

// Flag lines of a ring on a node with a GPU (the engine sizes rings by MPIGPU_LMT_UNIT_GPU there):
// one per smallest unit that fits, at least one per unit.
uint64_t GpuRingFlags(const TransportConfig& c) {
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

Status NodeCheck(const TransportConfig& c) { return CheckTransportConfigForNode(c, ShmTotalBytes()); }


}  // namespace

uint64_t LmtRingBytes(const TransportConfig& c) {
  if (c.lmt_units == 0 || c.lmt_unit_host == 0 || c.lmt_unit_gpu == 0 || c.lmt_unit_gpu_min == 0)
    return 0;
  const uint64_t host = RingBytes(SatMul(c.lmt_units, c.lmt_unit_host), c.lmt_units);
  const uint64_t gpu = RingBytes(SatMul(c.lmt_units, c.lmt_unit_gpu), GpuRingFlags(c));
  const uint64_t bytes = host > gpu ? host : gpu;
  return bytes == UINT64_MAX ? 0 : bytes;
}

Status CheckTransportConfig(const TransportConfig& c) {
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

Status CheckTransportConfigForNode(const TransportConfig& c, uint64_t shm_total_bytes) {
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

// Made on first use and never destroyed (see memcopy/config.cc).
const Params<TransportConfig>& TransportParams() {
  static const auto* params =
      new Params<TransportConfig>("transport", 20, kVars, sizeof kVars / sizeof kVars[0],
                                  CheckTransportConfig, NodeCheck, nullptr, LauncherVars());
  return *params;
}
const TransportConfig& GetTransportConfig() { return TransportParams().Get(); }

namespace {
[[maybe_unused]] const bool kRegistered = (TransportParams(), true);
}  // namespace

}  // namespace mpigpu

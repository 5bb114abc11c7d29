// Whether MPS (the CUDA Multi-Process Service) serves this process's contexts on a GPU, however
// it was started: a site's batch system, the user, or `mpigpurun --mps`.
//
// Without MPS, two processes on one GPU time-slice: a device copy between their contexts, or a
// resident kernel, costs a context switch (~140 us). Under MPS their kernels run side by side, so
// the transport keeps its resident copy kernel and the CUDA IPC single copy there
// (MPIGPU_GPU_COPIER_SHARED=auto, transport/transport_config.h).
//
// How it is found, best first (no root needed for either):
//   1. the CUDA driver: cudaDevAttrMpsEnabled (CUDA 12.3+ drivers) says whether contexts made on
//      the device will be shared via MPS: the client's own view, after its connection attempt;
//   2. on older drivers, the control daemon's pipe: $CUDA_MPS_PIPE_DIRECTORY (else
//      /tmp/nvidia-mps) holds `control` (a UNIX socket on current drivers, a FIFO on old ones),
//      which a live daemon listens on (reads).
#pragma once

#include <functional>
#include <string>

namespace mpigpu {

// What the control pipe of a directory says.
enum class MpsPipe {
  kNone,   // no `control` there (or not one we may open)
  kStale,  // `control` exists but no daemon reads it (left by a daemon that died)
  kLive,   // a daemon reads it
};

inline constexpr const char* kMpsDefaultPipeDir = "/tmp/nvidia-mps";

// $CUDA_MPS_PIPE_DIRECTORY through `getenv`, else kMpsDefaultPipeDir.
std::string MpsPipeDirectory(const std::function<const char*(const char*)>& getenv);

// Looks at `dir`/control: a FIFO that opens for writing without blocking has a reader (ENXIO:
// none); a socket that accepts a connection (stream, seqpacket or datagram: whichever its type
// is) has a listener (ECONNREFUSED: none). Nothing is written to it.
MpsPipe ProbeMpsPipe(const std::string& dir);

// Where DetectMps looks (the system's, or a test's fakes).
struct MpsSources {
  // cudaDevAttrMpsEnabled of `device`: true with *enabled set when the driver answered.
  std::function<bool(int device, bool* enabled)> driver;
  std::function<const char*(const char*)> getenv;
  std::function<MpsPipe(const std::string& dir)> probe;
};
MpsSources SystemMpsSources();

struct MpsState {
  bool active = false;
  std::string how;  // how it was found (or not), for mpigpu-info and MPIGPU_DEBUG=info
};

// Whether MPS serves contexts on `device` (< 0: none), asked in the order above. The driver's
// answer, when it gives one, is final (a live pipe that this process could not use says nothing).
MpsState DetectMps(int device, const MpsSources& sources);

// DetectMps with the system's sources, once per device in this process.
MpsState MpsOfDevice(int device);

}  // namespace mpigpu

// The floor of a message between kernels on two GPUs: a flag's round trip between one thread of
// a kernel on each (system-scope release store, acquire load), each side polling a flag in its
// own GPU's memory that the other writes over NVLink or PCIe (peer access). Both GPUs may be
// the same one (two kernels on two streams). Plain CUDA types only: nvcc compiles the kernels.
#pragma once

#include <cuda_runtime_api.h>

namespace mpigpu {
namespace sweep {

struct FlagTrips {
  double round_trip_ns = 0;  // the timed trips' mean (the pinging GPU's global timer)
  bool answered = false;     // false: the echo never answered within the timeout (the two
                             // kernels did not run at once)
};

// `warmup` untimed then `trips` timed round trips between a kernel on GPU `a` (which pings) and
// one on GPU `b`; both kernels give up after `timeout_ms`. Peer access between a and b must be
// enabled by the caller. The CUDA error of the first call that failed, else cudaSuccess.
cudaError_t GpuFlagRoundTrip(int a, int b, int warmup, int trips, int timeout_ms, FlagTrips* out);

}  // namespace sweep
}  // namespace mpigpu

// Buffer location at the MPI boundary: one pointer-attribute query per buffer, so the core
// (which takes a buffer-type tag) never asks the driver again.
#include <cuda_runtime_api.h>

#include <atomic>

#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {
namespace {
// Whether the process has a CUDA device. Written once by InitBufTypes (MPI_Init), read by every
// call: relaxed is enough (MPI_Init happens before the calls that read it, in program order or
// through the program's own synchronisation of its threads).
std::atomic<int> g_devices{-1};

int CountDevices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: host memory only
    n = 0;
  }
  return n;
}
}  // namespace

void InitBufTypes() { g_devices.store(CountDevices(), std::memory_order_relaxed); }

MPIGPU_Buftype BufType(const void* buf) {
  if (buf == nullptr || buf == MPI_IN_PLACE) return MPIGPU_BUF_HOST;
  int n = g_devices.load(std::memory_order_relaxed);
  if (n < 0) {  // before MPI_Init (Pack, Type calls): count now
    n = CountDevices();
    g_devices.store(n, std::memory_order_relaxed);
  }
  if (n == 0) return MPIGPU_BUF_HOST;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, buf) != cudaSuccess) {
    (void)cudaGetLastError();  // unknown to CUDA: plain host memory
    return MPIGPU_BUF_HOST;
  }
  // Managed memory is reachable from the host: the host path copies it (pages migrate).
  if (a.type == cudaMemoryTypeDevice && a.device >= 0 && a.device < MPIGPU_BUF_MAX_DEVICES)
    return MPIGPU_BUF_GPU_DEVICE(a.device);
  return MPIGPU_BUF_HOST;
}

}  // namespace mpigpu::mpi

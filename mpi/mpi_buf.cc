// Buffer location at the MPI boundary: one pointer-attribute query per buffer, so the core
// (which takes a buffer-type tag) never asks the driver again. Memory that cannot be device
// memory skips the query: the brk heap (malloc's main arena: small buffers of the main thread)
// and the main thread's stack, whose ranges are known without asking anyone. Nothing is cached
// by address: the driver may map device memory where host memory was unmapped, so a remembered
// answer could go stale.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {
namespace {
// Whether the process has a CUDA device. Written once by InitBufTypes (MPI_Init), read by every
// call: relaxed is enough (MPI_Init happens before the calls that read it, in program order or
// through the program's own synchronisation of its threads).
std::atomic<int> g_devices{-1};
// The brk heap's start and the main thread's stack mapping, read once from /proc/self/maps by
// InitBufTypes (relaxed: as g_devices). 0/0 when unknown: every pointer is then queried.
std::atomic<uintptr_t> g_heap_lo{0}, g_stack_lo{0}, g_stack_hi{0};

void ReadRanges() {
  uintptr_t heap_lo = reinterpret_cast<uintptr_t>(sbrk(0));  // where the heap starts if unused
  uintptr_t stack_lo = 0, stack_hi = 0;
  if (FILE* f = std::fopen("/proc/self/maps", "r")) {
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
      unsigned long lo = 0, hi = 0;
      if (std::sscanf(line, "%lx-%lx", &lo, &hi) != 2) continue;
      if (std::strstr(line, "[heap]")) heap_lo = lo;
      if (std::strstr(line, "[stack]")) {
        stack_lo = lo;
        stack_hi = hi;
      }
    }
    std::fclose(f);
  }
  g_heap_lo.store(heap_lo, std::memory_order_relaxed);
  g_stack_lo.store(stack_lo, std::memory_order_relaxed);
  g_stack_hi.store(stack_hi, std::memory_order_relaxed);
}

// True when p lies in the brk heap (up to the current break) or the main thread's stack.
inline bool SurelyHost(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const uintptr_t heap_lo = g_heap_lo.load(std::memory_order_relaxed);
  if (heap_lo != 0 && a >= heap_lo && a < reinterpret_cast<uintptr_t>(sbrk(0))) return true;
  return a >= g_stack_lo.load(std::memory_order_relaxed) &&
         a < g_stack_hi.load(std::memory_order_relaxed);
}

int CountDevices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: host memory only
    n = 0;
  }
  return n;
}
}  // namespace

void InitBufTypes() {
  ReadRanges();
  g_devices.store(CountDevices(), std::memory_order_relaxed);
}

MPIGPU_Buftype BufType(const void* buf) {
  if (buf == nullptr || buf == MPI_IN_PLACE) return MPIGPU_BUF_HOST;
  int n = g_devices.load(std::memory_order_relaxed);
  if (n < 0) {  // before MPI_Init (Pack, Type calls): count now
    InitBufTypes();
    n = g_devices.load(std::memory_order_relaxed);
  }
  if (n == 0 || SurelyHost(buf)) return MPIGPU_BUF_HOST;
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

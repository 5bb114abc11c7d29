// Buffer location at the MPI boundary: one pointer-attribute query per buffer, so the core
// (which takes a buffer-type tag) never asks the driver again.
//
// What is never asked: memory that cannot be device memory. That is the brk heap up to the
// current break (malloc's main arena: small buffers of the main thread) and the main thread's
// stack, whose ranges are known without asking anyone; and every pointer when the process has
// no CUDA device.
//
// What is asked, and how: the driver's cuPointerGetAttributes with the three attributes the
// answer needs (memory type, managed, device ordinal), called through the entry point the
// runtime hands out. On an H100 it takes half to two thirds of cudaPointerGetAttributes' time
// (which asks for more attributes) for device, pinned and managed memory and for host memory
// before any CUDA context exists; host memory with a context up is slow either way (~200 ns).
// Measured: benchmarks/results/2026-11-24-mpi-h-overhead-h100/README.md. Without the entry point
// (an old driver) the runtime's call is used as before.
//
// Nothing is cached by address. A host answer stays true only while the memory stays mapped:
// once the program frees it (munmap) the driver may map device memory at the same address
// (cudaMalloc, cuMemMap), and nothing this layer sees tells it so. Sound caching would need
// hooks on munmap and on the driver's allocations (as UCX patches them); without them every
// pointer outside the ranges above is asked about, every call.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "memcopy/driver_entry.h"
#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {
// Whether the process has a CUDA device (mpi_internal.h). Written once by InitBufTypes (MPI_Init),
// read by every call: MPI_Init happens before the calls that read it, in program order or
// through the program's own synchronisation of its threads.
std::atomic<int> g_buf_devices{-1};

namespace {
// The brk heap's start and the main thread's stack mapping, read once from /proc/self/maps by
// InitBufTypes (relaxed: as g_buf_devices). 0/0 when unknown: every pointer is then queried.
std::atomic<uintptr_t> g_heap_lo{0}, g_stack_lo{0}, g_stack_hi{0};
// glibc's own record of the current break (__curbrk, what sbrk(0) returns), found once by
// InitBufTypes (relaxed: as g_buf_devices); null: sbrk(0) is called. Read directly because sbrk is
// interposed by the memory hooks (memreg/memhooks.h), which makes sbrk(0) cost ~15 ns a call.
std::atomic<void* const*> g_curbrk{nullptr};
// The driver's cuPointerGetAttributes, or null (then the runtime's call). Written by
// InitBufTypes before g_buf_devices (release there, acquire in BufTypeLookup's first load).
std::atomic<PFN_cuPointerGetAttributes_v7000> g_get_attributes{nullptr};

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

uintptr_t CurrentBreak() {
  void* const* curbrk = g_curbrk.load(std::memory_order_relaxed);
  return reinterpret_cast<uintptr_t>(curbrk != nullptr ? *curbrk : sbrk(0));
}

// True when p lies in the main thread's stack or in the brk heap (up to the current break).
inline bool SurelyHost(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  if (a >= g_stack_lo.load(std::memory_order_relaxed) &&
      a < g_stack_hi.load(std::memory_order_relaxed))
    return true;
  const uintptr_t heap_lo = g_heap_lo.load(std::memory_order_relaxed);
  return heap_lo != 0 && a >= heap_lo && a < CurrentBreak();
}

int CountDevices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // no driver or no device: host memory only
    n = 0;
  }
  return n;
}

PFN_cuPointerGetAttributes_v7000 DriverQuery() {
  PFN_cuPointerGetAttributes_v7000 fn = nullptr;
  (void)FindDriverEntry("cuPointerGetAttributes", 7000, &fn);  // null: the runtime's call
  return fn;
}

// The runtime's answer (no driver entry point): as QueryDriver.
MPIGPU_Buftype QueryRuntime(const void* buf) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, buf) != cudaSuccess) {
    (void)cudaGetLastError();  // unknown to CUDA: plain host memory
    return MPIGPU_BUF_HOST;
  }
  return ClassifyPointer(a.type == cudaMemoryTypeDevice, a.type == cudaMemoryTypeManaged,
                         a.device);
}

MPIGPU_Buftype QueryDriver(PFN_cuPointerGetAttributes_v7000 get, const void* buf) {
  // Unlike cuPointerGetAttribute, the plural call answers success with zeroed values for memory
  // the driver does not know (plain host memory), so that case costs no error path.
  unsigned type = 0;
  unsigned managed = 0;  // a boolean: zeroed first, so a 1-byte or a 4-byte write reads right
  int ordinal = -1;
  CUpointer_attribute attrs[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
  void* values[3] = {&type, &managed, &ordinal};
  if (get(3, attrs, values, reinterpret_cast<CUdeviceptr>(buf)) != CUDA_SUCCESS)
    return QueryRuntime(buf);  // the runtime decides (and reports nothing either)
  return ClassifyPointer(type == CU_MEMORYTYPE_DEVICE, managed != 0, ordinal);
}
}  // namespace

MPIGPU_Buftype ClassifyPointer(bool device, bool managed, int ordinal) {
  // Managed memory is reachable from the host: the host path copies it (pages migrate).
  if (device && !managed && ordinal >= 0 && ordinal < MPIGPU_BUF_MAX_DEVICES)
    return MPIGPU_BUF_GPU_DEVICE(ordinal);
  return MPIGPU_BUF_HOST;
}

void InitBufTypes() {
  // glibc exports its break variable; it moves with every brk/sbrk made through glibc, as
  // sbrk(0) does (a raw brk syscall escapes both alike).
  g_curbrk.store(static_cast<void* const*>(dlsym(RTLD_DEFAULT, "__curbrk")),
                 std::memory_order_relaxed);
  ReadRanges();
  const int n = CountDevices();
  g_get_attributes.store(n > 0 ? DriverQuery() : nullptr, std::memory_order_relaxed);
  g_buf_devices.store(n, std::memory_order_release);
}

MPIGPU_Buftype BufTypeByRuntime(const void* buf) {
  if (buf == nullptr || buf == MPI_IN_PLACE) return MPIGPU_BUF_HOST;
  return QueryRuntime(buf);
}

MPIGPU_Buftype BufTypeLookup(const void* buf) {
  if (buf == nullptr || buf == MPI_IN_PLACE) return MPIGPU_BUF_HOST;
  int n = g_buf_devices.load(std::memory_order_acquire);
  if (n < 0) {  // before MPI_Init (Pack, Type calls): count now
    InitBufTypes();
    n = g_buf_devices.load(std::memory_order_acquire);
  }
  if (n == 0 || SurelyHost(buf)) return MPIGPU_BUF_HOST;
  if (PFN_cuPointerGetAttributes_v7000 get = g_get_attributes.load(std::memory_order_relaxed))
    return QueryDriver(get, buf);
  return QueryRuntime(buf);
}

}  // namespace mpigpu::mpi

// The pin cache: pageable host buffers copied to or from a GPU at the pinned rate when reused.
//
// A host<->device cudaMemcpyAsync from pageable memory goes through the driver's staging
// buffers (8-14 GB/s on an H200 node, 15-25% of pinned); from registered memory it runs at the
// copy engines' rate. Registering costs 3-15x a copy, so a range is pinned only when it is used
// again: the first copy of a range (at least MPIGPU_PIN_CACHE_MIN bytes) only records it (a seen
// entry) and copies as before; the next copy the recorded range covers registers it
// (cudaHostRegister, portable to every device) and copies pinned; later ones hit. The copy itself
// is unchanged: the driver finds the registration by address.
//
// The registrations are a client of the process's one registration cache (SharedRegCache: one
// interval structure and one set of memory hooks with the ibverbs registrations), as an
// address-keyed client: the hooks keep a pinned range's addresses reserved when it is unmapped
// until the cache has unregistered it (reg_cache.h, memhooks.h), so no later allocation (a
// cudaMallocHost, cudaHostAlloc, mmap or malloc) lands on a range the driver still has
// registered, and no pinned entry is used after its memory went. cudaHostUnregister runs on the
// next cache call (never inside a hook). Memory CUDA already knows as pinned (cudaMallocHost,
// MPIGPU_Alloc_mem, a program's own cudaHostRegister) is refused by cudaHostRegister: remembered
// as not registrable and left alone.
//
// A holder keeps its reference until the copies that use the range completed (an unregistration
// under a DMA in flight would be wrong): the copy engines release it when the piece retires.
// Why it is opt-in (MPIGPU_PIN_CACHE=1): CUDA fails (cudaErrorInvalidValue) a copy whose host
// range starts inside a registration and ends past it, or spans two (measured,
// benchmarks/results/2026-11-24-s12/pin-cache-cause.md). A registration kept after free(), or
// reaching into a neighbour's shared page, therefore breaks the program's own cudaMemcpy from a
// later allocation there; safe only where pageable buffers reach the GPU through mpigpu alone.
// Threads: any (the shared cache's mutex). Bounded by MPIGPU_PIN_CACHE_MB / _ENTRIES (LRU);
// MPIGPU_PIN_CACHE=0 turns it off (every copy as before, nothing pinned).
#pragma once

#include <cstddef>

#include "memreg/reg_cache.h"

namespace mpigpu::memreg {

// The process's registration cache (made on first use, never destroyed: registrations must not
// be dropped by static destructors after the CUDA runtime or a device went).
RegCache& SharedRegCache();

// For a copy between host memory [p, p + len) and a device: a reference to hold until the copy
// completed, when the range is pinned now (hit, or pinned by this call), else nullptr (copy as
// before). Never fails: a failed pin is a copy at the pageable rate.
Region* PinForCopy(const void* p, size_t len);
// Releases what PinForCopy gave (nullptr: nothing).
void UnpinAfterCopy(Region* r);

// Unregisters now what lost its memory since the last cache call (otherwise done by the next
// PinForCopy / UnpinAfterCopy); MPIGPU_Finalize and tests.
void PinCacheSync();

// Whether the pin cache can pin at all (enabled, a GPU, the hooks active), and why not.
bool PinCacheActive();
const char* PinCacheWhyNot();
// The pin client's counters (RegCache::Stats for its client); zeros when inactive.
RegCache::Stats PinCacheStats();

}  // namespace mpigpu::memreg

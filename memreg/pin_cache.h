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
// What is registered: the whole mapping that owns the range, never less, and only a mapping one
// allocation owns: a large malloc'd block glibc put in a mapping of its own, or an anonymous
// mapping the program made with mmap (memhooks.h's own-mapping table; alloc_hooks.h). Why: CUDA
// fails (cudaErrorInvalidValue) a copy whose host range starts inside a registration and ends past
// it, or spans two (measured, benchmarks/results/2026-11-24-pin-cache-cause-h100/README.md); a copy
// lies in one allocation, so it lies inside the registration of that allocation's mapping, and the
// program's own cudaMemcpy calls keep working. A buffer on glibc's shared heap (smaller than
// the mmap threshold, or after the threshold rose), on the stack or in static data is never
// pinned: it shares pages with neighbours whose copies could cross a registration's end.
//
// The registrations are an address-keyed client of the process's one registration cache
// (SharedRegCache, with the ibverbs registrations): while a mapping is registered, its
// addresses are protected: munmap/mremap keep them reserved, and free() of its block keeps the
// block (memhooks::DeferFree), until the cache unregistered it at its next call
// (cudaHostUnregister never runs inside a hook), so no allocation (cudaMallocHost, cudaMalloc,
// mmap, malloc) lands on a range the driver still has registered. Memory CUDA already knows as
// pinned (cudaMallocHost, MPIGPU_Alloc_mem, a program's own cudaHostRegister) is refused by
// cudaHostRegister: remembered as not registrable and left alone.
//
// A holder keeps its reference until the copies that use the range completed (an unregistration
// under a DMA in flight would be wrong): the copy engines release it when the piece retires.
// On by default where a GPU is (MPIGPU_PIN_CACHE=0 turns it off: every copy as before, nothing
// pinned, no tracking). Threads: any (the shared cache's mutex). Bounded by MPIGPU_PIN_CACHE_MB
// (a mapping larger than that is not pinned) and _ENTRIES (LRU).
#pragma once

#include <cstddef>

#include "memreg/reg_cache.h"
#include "memreg/shared_reg_cache.h"

namespace mpigpu::memreg {

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

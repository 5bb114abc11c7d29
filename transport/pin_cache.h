// PinCache: a validated, LRU-bounded cache of cudaHostRegister registrations of the user's host
// buffers, for the host side of host<->device single copies (H2D put, D2H pull).
//
// Why: pageable host memory reaches 8-14 GB/s through the driver's staging, registered memory
// the PCIe limit (~55 GB/s on the H200 node); registering costs 54-70 us/MiB, 3-15x a copy, so
// it pays only for reused buffers. A range is registered on its second use (first sightings are
// remembered in a small table), so a buffer seen once pays nothing.
//
// Safety: a registration must never be used after the buffer's pages changed (free or munmap,
// then a new mapping at the same address): it would still point at the old physical pages. At
// registration the cache reads /proc/self/pagemap for every page and keeps the page frame
// numbers (PFNs); the registration pins those pages, so they cannot be freed or reused while
// registered, and a new mapping at the same address necessarily has other PFNs. Every Acquire
// re-reads pagemap for the pages it touches of each overlapping entry (8 bytes a page, one pread)
// and unregisters an entry whose pages differ or are gone.
//
// PFNs are visible only with CAP_SYS_ADMIN; without it pagemap shows PFN 0 and the cache is
// inactive (found on the first Acquire, said once at MPIGPU_DEBUG=info): every copy runs as is.
//
// What it cannot see: the application's own cudaMemcpy from an address it freed and got back
// between two of our Acquires runs through our registration of the old pages until the next
// Acquire over that range drops it. Only mpigpu's copies are validated.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <vector>

#include "memcopy/config.h"
#include "memcopy/status.h"

namespace mpigpu {

// How PinCache registers host memory. The default (nullptr to PinCache) is the CUDA runtime:
// cudaHostRegister(Portable) / cudaHostUnregister, cudaErrorNoDevice without a GPU. Tests
// substitute a fake to exercise the cache's logic anywhere.
class PinRegistrar {
 public:
  virtual ~PinRegistrar() = default;
  // Page-locks [addr, addr + bytes) (whole pages). cudaErrorHostMemoryAlreadyRegistered when
  // any of it already is (the user pinned it).
  virtual cudaError_t Register(void* addr, size_t bytes) = 0;
  virtual cudaError_t Unregister(void* addr) = 0;
};

// How PinCache reads this process's page table. The default (nullptr) reads /proc/self/pagemap.
class PagemapReader {
 public:
  virtual ~PagemapReader() = default;
  // entries[i] = the pagemap entry of the page at addr + i * page size (addr page-aligned).
  virtual Status Read(uintptr_t addr, size_t pages, uint64_t* entries) = 0;
};

struct PinCacheStats {
  uint64_t hits = 0;           // Acquire found a valid registration covering the range
  uint64_t first_sightings = 0;  // ranges seen once: remembered, not registered
  uint64_t registrations = 0;  // cudaHostRegister calls that succeeded
  uint64_t uncached = 0;       // ranges that stayed unregistered (already pinned, failure, no room)
  uint64_t evictions = 0;      // entries unregistered for the size bound or an overlapping range
  uint64_t stale = 0;          // entries unregistered because their pages changed
  size_t entries = 0;          // registrations held now
  size_t bytes = 0;            // bytes they cover
  bool active = false;         // enabled and PFNs visible (known after the first Acquire)
};

// Not thread-safe: one owner (the progress engine) calls it.
class PinCache {
 public:
  using Handle = uintptr_t;  // an entry in use (its start address); 0: none, copy as is

  // Reads MPIGPU_PIN_CACHE, _SIZE and _MIN from `config`. registrar, pagemap: nullptr for the
  // real ones; fakes must outlive the cache.
  explicit PinCache(const Config& config, PinRegistrar* registrar = nullptr,
                    PagemapReader* pagemap = nullptr);
  ~PinCache();  // unregisters what is still registered (errors logged)
  PinCache(const PinCache&) = delete;
  PinCache& operator=(const PinCache&) = delete;

  // Before a copy between the host range [ptr, ptr + extent) and a GPU: drops registrations of
  // it whose pages changed; returns the valid registration that covers it, now in use until
  // Release, or 0 (not registered by the cache: first sighting, too small, disabled, inactive,
  // already pinned by the user, no room or a failure, logged once). Never fails the copy.
  Handle Acquire(const void* ptr, size_t extent);
  // The copy that Acquire returned `h` for completed. kInvalidArg when h is not in use.
  Status Release(Handle h);
  // Unregisters everything, in use or not (Finalize: no copy may be in flight). Keeps the first
  // error; the cache is empty afterwards either way.
  Status Clear();

  PinCacheStats stats() const;

 private:
  struct Entry {
    uintptr_t start;
    size_t bytes;               // whole pages
    std::vector<uint64_t> pfns;  // one per page, read after registering
    int refs;                   // Acquires not yet released
  };
  using Lru = std::list<Entry>;  // front: most recently used
  struct Sighting {
    uintptr_t start;
    size_t bytes;
    bool user_pinned;  // registering it failed as already registered: never try again
  };

  // Whether PFNs are visible (checked once, on a page of our own); logs once when not.
  bool CheckActive();
  // Whether pages [addr, addr + bytes) of `e` still have the PFNs it registered.
  bool Valid(const Entry& e, uintptr_t addr, size_t bytes);
  // Unregisters and forgets one entry; counts it in *counter (nullptr: not counted).
  Status Drop(Lru::iterator it, uint64_t* counter);
  // Drops unused entries, least recently used first, until `bytes` more fit; false if they cannot.
  bool MakeRoom(size_t bytes);
  // Registers [start, start + bytes) and records its PFNs; 0 when it stays unregistered.
  Handle Register(uintptr_t start, size_t bytes, Sighting* seen);
  // The remembered sighting of exactly this range, or nullptr.
  Sighting* FindSighting(uintptr_t start, size_t bytes);
  void LogOnce(const Status& why);

  bool enabled_;
  size_t max_bytes_, min_bytes_;
  size_t page_;
  PinRegistrar* registrar_;
  PagemapReader* pagemap_;
  std::unique_ptr<PagemapReader> own_pagemap_;  // /proc/self/pagemap, when none was given
  enum class Mode { kUnknown, kActive, kInactive } mode_ = Mode::kUnknown;
  bool logged_failure_ = false;
  Lru lru_;
  std::map<uintptr_t, Lru::iterator> index_;  // by start; entries never overlap
  std::deque<Sighting> sightings_;           // newest at the back, bounded
  std::vector<uint64_t> scratch_;            // pagemap entries of one read
  PinCacheStats stats_;
};

}  // namespace mpigpu

// RegCache: a cache of memory registrations (ibv_reg_mr for the ibverbs netmod; cudaHostRegister
// would fit the same callbacks) keyed by address range, reference counted, LRU-bounded by bytes
// and entries, and never stale.
//
// Keys and lookup. Regions cover whole pages. The cached regions never overlap one another: they
// sit in a std::map by start address, so the region that may cover [addr, addr + len) is the
// last one starting at or below addr (O(log n)). A request no cached region covers registers
// anew, merged with the cached regions it shares pages with when the union is at most twice the
// request (two buffers sharing a page then both hit afterwards; a sequence of chunks each
// overlapping the last cannot make registrations grow without bound). Regions the new one
// overlaps leave the map either way (unreferenced ones are deregistered at once; referenced ones
// stay registered for their holders and are deregistered at their last Release). Adjacent regions
// are not merged: they may be different mappings with different rights.
//
// Staleness. The memory hooks (memhooks.h) log every range that lost its pages (munmap, mremap,
// madvise DONTNEED/FREE/REMOVE, shmdt, brk/sbrk shrinking, new mappings over old ones); each
// Acquire first applies what was logged since the last one: overlapping regions leave the map,
// unreferenced ones are deregistered at once, referenced ones are marked invalid and
// deregistered at their last Release. glibc's free() is kept from returning pages behind the
// hooks (mallopt at load). When the hooks cannot be shown to work (HooksActive), or
// MPIGPU_IB_REG_CACHE=0, the cache does not keep anything: each Acquire registers, each last
// Release deregisters.
//
// Limits. max_bytes and max_entries bound every registration the cache holds, referenced or not,
// after each Acquire and Release (during an Acquire, by one registration more): over a limit,
// unreferenced regions are deregistered, least recently released first. Referenced regions are
// never evicted: a request is registered even when the referenced ones alone exceed a limit (the
// caller needs it); the excess goes as soon as it is released. A registration that fails with
// kNoMemory is retried once, for the request alone, after every unreferenced region was
// deregistered.
//
// Threads. Acquire and Release take one mutex; the callbacks run under it (they must not call
// back into the cache; they may allocate, map and unmap: the hooks take no lock). A Region
// pointer stays valid from Acquire until its Release.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

#include "internode/ib/regcache/memhooks.h"
#include "memcopy/status.h"

namespace mpigpu::internode {

struct Region {
  void* addr;    // page-aligned start of what is registered
  size_t len;    // page multiple
  void* handle;  // what RegisterFn gave (an ibv_mr*)
};

class RegCache {
 public:
  using RegisterFn = std::function<Status(void* addr, size_t len, void** handle)>;
  using DeregisterFn = std::function<void(void* handle)>;

  // `max_bytes`, `max_entries`: at least 1 (0 is taken as 1). Caching is on when the hooks are
  // active (and MPIGPU_IB_REG_CACHE was not 0 at load).
  RegCache(RegisterFn reg, DeregisterFn dereg, size_t max_bytes, size_t max_entries);
  // With the limits of MPIGPU_IB_REG_CACHE_MB / _ENTRIES, and off if MPIGPU_IB_REG_CACHE=0.
  RegCache(RegisterFn reg, DeregisterFn dereg);
  // Deregisters every cached region. None may still be referenced (a bug: logged; a referenced
  // region that had left the map is then never deregistered).
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  // A registered region covering [addr, addr + len), referenced once more. kInvalidArg for a null
  // addr, len 0 or a range past the end of the address space; RegisterFn's error otherwise.
  Status Acquire(void* addr, size_t len, Region** out);
  // Drops one reference; the region stays cached when it is still valid and within the limits.
  void Release(Region* r);

  // Whether regions are kept between uses, and why not.
  bool caching() const { return caching_; }
  const char* why_not_caching() const { return why_not_; }

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t registrations = 0;    // RegisterFn calls that succeeded
    uint64_t deregistrations = 0;
    uint64_t evictions = 0;        // deregistered by the limits
    uint64_t invalidations = 0;    // regions that lost their memory
    uint64_t merges = 0;           // registrations that absorbed cached regions
    uint64_t flushes = 0;          // times everything was dropped (log lapped, unknown range)
    size_t bytes = 0;              // registered now (referenced or not)
    size_t entries = 0;
    size_t cached = 0;             // of those, in the lookup map
  };
  Stats stats() const;

 private:
  struct Entry {
    Region region;
    uintptr_t start, end;
    int refs = 0;
    bool in_map = false;  // findable by lookups (valid and not replaced)
    Entry* lru_prev = nullptr;  // in the LRU list iff in_map && refs == 0
    Entry* lru_next = nullptr;
  };

  void ApplyInvalidations();                    // mu_ held
  void Invalidate(uintptr_t start, uintptr_t end);
  void FlushAll();
  void RemoveFromMap(Entry* e);                 // and deregisters it when unreferenced
  void Destroy(Entry* e);                       // deregisters and frees
  void LruPush(Entry* e);
  void LruUnlink(Entry* e);
  void EvictToLimits(size_t extra_bytes, size_t extra_entries);

  RegisterFn reg_;
  DeregisterFn dereg_;
  const size_t max_bytes_;
  const size_t max_entries_;
  bool caching_ = false;
  const char* why_not_ = "";
  uintptr_t page_mask_;

  mutable std::mutex mu_;
  memhooks::Cursor cursor_;
  std::map<uintptr_t, Entry*> map_;  // by start; never overlapping
  Entry* lru_head_ = nullptr;        // least recently released
  Entry* lru_tail_ = nullptr;
  Stats stats_;
};

}  // namespace mpigpu::internode

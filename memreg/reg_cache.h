// RegCache: one cache of memory registrations keyed by address range, shared by every kind of
// registration a process makes of the same memory (clients: the ibverbs netmod's ibv_reg_mr,
// the copy engines' cudaHostRegister pins, pin_cache.h), reference counted, LRU-bounded per
// client by bytes and entries, and never stale.
//
// Entries and clients. An entry is a page range with one handle per client (nullptr: not
// registered for that client; kNotRegistrable: the client refused it, e.g. memory CUDA already
// knows as pinned, remembered so it is not tried again). A client registers over the whole
// entry. An entry with no handle at all is a "seen" entry: AcquireOnReuse's record that the range
// was used once (the pin policy: registering costs more than a copy, so only a reused range
// pays it).
//
// Keys and lookup. Entries sit in a std::map by start address and never nest (no entry lies
// inside another); two entries share at most one page, the last page of the one and the first of
// the other (buffers allocated back to back on the heap share such an edge page: each keeps its
// own entry). So entries' ends grow with their starts, a page lies in at most two entries, and
// the one that may cover [addr, addr + len) is the last one starting at or below addr
// (O(log n)); any entry that covers the request serves it. A request no entry covers registers
// anew. Entries it overlaps by only its first or last page (the neighbours' edge pages) stay as
// they are; those sharing more pages with it (or lying inside it) are absorbed: merged into the
// new one when the union is at most twice the request (chunks each overlapping the last by more
// than a page cannot make registrations grow without bound), otherwise they leave the map.
// Entries leaving the map that are unreferenced are deregistered at once, before the new
// registration; referenced ones stay registered for their holders and are deregistered at their
// last Release. Adjacent entries are not merged: they may be different mappings with different
// rights.
//
// One page in two registrations. ibv_reg_mr allows it (each MR pins the page and holds its own
// keys; the kernel counts the page once per MR, and so do the limits below), so a plain client's
// registrations of two entries sharing an edge page coexist. cudaHostRegister refuses a page
// already registered, and CUDA fails a copy spanning two registrations: the cache never asks a
// client with `exclusive_pages` to register a page that a cached entry holds for it. For it, a
// neighbour holding its registration on a shared edge page is absorbed like an inner overlap
// (merged or replaced), and an entry whose neighbour holds its registration is not registered
// for it on reuse (AcquireOnReuse: used unregistered) or, by Acquire, after that neighbour left
// the map (a referenced one stays registered for its holder, as any absorbed entry: the client
// may then refuse the new one, kNotRegistrable).
//
// Staleness. The memory hooks (memhooks.h) log every range that lost its pages (munmap, mremap,
// madvise DONTNEED/FREE/REMOVE, shmdt, brk/sbrk shrinking, new mappings over old ones, and
// malloc_trim: everything); each Acquire, AcquireOnReuse and Release first applies what was
// logged since the last call: overlapping entries leave the map, unreferenced ones are
// deregistered at once, referenced ones at their last Release. So no stale entry is ever handed
// out, and no registration is made or dropped inside a hook (no CUDA or verbs call can run
// there: the hook may fire inside those libraries, under their locks). For clients whose
// registrations are keyed by address (`pins_addresses`: cudaHostRegister), the entry's range is
// also protected (memhooks::Protect) from registration to deregistration: a munmap/mremap of it
// keeps the addresses reserved until the deregistration ran, so no allocation can land there
// while the driver still has it registered; the reservations are released after deregistering.
// glibc's free() returns pages behind the hooks (its own munmap, trim and madvise): a client whose
// memory may be malloc'd gives a span (the ibverbs and pin clients: own mappings only, whose
// malloc and free() alloc_hooks.h sees; free() of a protected one is deferred). A client without a
// span is never stale over memory whose pages change only through the hooks (mmap'd memory).
// When the hooks cannot be shown to work (HooksActive), or the cache is disabled, nothing is
// kept: each Acquire registers, each last Release deregisters; AcquireOnReuse never registers.
//
// Limits. Each client's max_bytes and max_entries bound its registrations, referenced or not,
// after each call: over a limit, that client's handles on unreferenced entries are deregistered,
// least recently released entry first (an entry left with no registration stays as a seen
// entry: its next use registers again).
// `max_map` bounds the entries of the map, seen entries included. Referenced entries are never
// evicted (a request is registered even when referenced ones alone exceed a limit; the excess
// goes when released). A registration that fails with kNoMemory is retried once, for the request
// alone, after every unreferenced entry was deregistered.
//
// Threads. Every call takes one mutex; the callbacks run under it (they must not call back into
// the cache; they may allocate, map and unmap: the hooks take no lock). A Region pointer stays
// valid from Acquire until its Release. The Region's fields are written under the mutex; a
// holder may read its own client's handle without it (set before the Region was handed out).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "memreg/memhooks.h"
#include "memcopy/status.h"

namespace mpigpu::memreg {

constexpr int kMaxClients = 4;

// What a RegisterFn gives for memory it will not register (the range counts as handled: hits
// return it; never deregistered, never counted as registered bytes).
inline void* const kNotRegistrable = reinterpret_cast<void*>(uintptr_t{1});

struct Region {
  void* addr;                  // page-aligned start of the entry
  size_t len;                  // page multiple
  void* handle[kMaxClients];   // per client: what its RegisterFn gave, or nullptr
};

class RegCache {
 public:
  using RegisterFn = std::function<Status(void* addr, size_t len, void** handle)>;
  using DeregisterFn = std::function<void(void* handle)>;

  struct Client {
    const char* name = "";
    RegisterFn reg;
    DeregisterFn dereg;
    size_t max_bytes = SIZE_MAX;    // at least 1
    size_t max_entries = SIZE_MAX;  // at least 1
    bool pins_addresses = false;    // the registration is keyed by address (cudaHostRegister)
    // A page may lie in one registration of this client only (cudaHostRegister: yes; ibv_reg_mr:
    // no, two memory regions may cover one page).
    bool exclusive_pages = false;
    // When set: the page-aligned range [*start, *end) a registration covering [a, b) must span
    // (the whole mapping that owns it: memhooks::OwnMapping), or false: never keep a
    // registration of [a, b) for this client. Then AcquireOnReuse gives nullptr; Acquire
    // registers the request's pages for that use alone (not looked up, not kept: deregistered at
    // its last Release), or, for a `pins_addresses` client (whose registration of a range no
    // allocation owns whole is what the span prevents), fails with kInvalidArg. Called under
    // the cache's mutex.
    using SpanFn = std::function<bool(uintptr_t a, uintptr_t b, uintptr_t* start, uintptr_t* end)>;
    SpanFn span;
  };

  // The span of the clients that keep registrations over own mappings only (the pin and
  // ibverbs clients): the whole own mapping holding [a, b) (memhooks::OwnMapping), refused when
  // none does or when it is larger than `max_bytes`.
  static Client::SpanFn OwnMappingSpan(size_t max_bytes = SIZE_MAX);

  // An empty cache; `enabled` false (or inactive hooks) keeps nothing between uses. `max_map`:
  // entries the map may hold (seen ones included), at least 1.
  RegCache(bool enabled, size_t max_map);
  // One client (id 0) with these limits; max_map = max_entries (the ibverbs cache's old form).
  RegCache(RegisterFn reg, DeregisterFn dereg, size_t max_bytes, size_t max_entries);
  // With the limits of MPIGPU_IB_REG_CACHE_MB / _ENTRIES, and off if MPIGPU_IB_REG_CACHE=0.
  RegCache(RegisterFn reg, DeregisterFn dereg);
  // Deregisters every entry. None may still be referenced (a bug: logged; a referenced entry
  // that had left the map is then never deregistered).
  ~RegCache();
  RegCache(const RegCache&) = delete;
  RegCache& operator=(const RegCache&) = delete;

  // Adds a client; its id (0, 1, ...), or -1 when kMaxClients are there. Before any Acquire
  // for it; clients are never removed.
  int AddClient(Client c);

  // A region covering [addr, addr + len) registered for `client`, referenced once more (its
  // handle may be kNotRegistrable). kInvalidArg for a null addr, len 0, a range past the end of
  // the address space, or an unknown client; RegisterFn's error otherwise.
  Status Acquire(int client, void* addr, size_t len, Region** out);
  Status Acquire(void* addr, size_t len, Region** out) { return Acquire(0, addr, len, out); }
  // Acquire, but on the first use of a range nothing is registered: a seen entry records it and
  // *out is nullptr (use the memory unregistered). A later request the cache covers (seen or
  // registered for another client) or overlaps registers. Also nullptr, with no error, when the
  // cache keeps nothing, when the registration failed, or when a referenced entry of this
  // client overlaps the range (a second registration of those pages would be refused).
  Status AcquireOnReuse(int client, void* addr, size_t len, Region** out);
  // Drops one reference; the entry stays cached when it is still valid and within the limits.
  void Release(Region* r);
  // Deregisters every registration `client` holds on the cached entries now, referenced or not
  // (its device is going away: a holder must not use the handle after this; its Release is
  // still due). Entries that already left the map keep theirs until their last Release. The
  // client stays, with no registrations: its next Acquire registers anew.
  void DropClient(int client);
  // Applies what the hooks logged now (deregistering entries whose memory went, releasing the
  // addresses kept for them) rather than at the next call.
  void Sync();

  // Whether entries are kept between uses, and why not.
  bool caching() const { return caching_; }
  const char* why_not_caching() const { return why_not_; }

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t registrations = 0;    // RegisterFn calls that succeeded (kNotRegistrable included)
    uint64_t deregistrations = 0;
    uint64_t evictions = 0;        // registrations dropped by the limits
    uint64_t invalidations = 0;    // entries that lost their memory
    uint64_t merges = 0;           // registrations that absorbed cached entries
    uint64_t flushes = 0;          // times everything was dropped (log lapped, unknown range)
    uint64_t first_uses = 0;       // AcquireOnReuse calls that only recorded a seen entry
    uint64_t refused = 0;          // registrations that gave kNotRegistrable
    uint64_t uncached = 0;         // Acquires the span refused: registered for that use alone
    size_t bytes = 0;              // registered now (referenced or not; kNotRegistrable not)
    size_t entries = 0;            // registrations now
    size_t cached = 0;             // entries in the lookup map (seen ones included)
  };
  // All clients together, or one (hits, misses, registrations, deregistrations, evictions,
  // first_uses, refused, uncached, bytes, entries are per client; the rest are the cache's).
  Stats stats() const;
  Stats stats(int client) const;

 private:
  struct Entry {
    Region region;
    uintptr_t start, end;
    int refs = 0;
    bool in_map = false;        // findable by lookups (valid and not replaced)
    int protect_slot = -1;      // memhooks::Protect slot while a pins_addresses client holds it
    Entry* lru_prev = nullptr;  // in the LRU list iff in_map && refs == 0
    Entry* lru_next = nullptr;
  };
  struct ClientState {
    Client spec;
    Stats stats;
  };

  Status AcquireImpl(int client, void* addr, size_t len, bool on_reuse, Region** out);
  Status RegisterInto(Entry* e, int client);     // mu_ held; e not yet holding client
  // The first entry ending after `a` (entries never nest: ends grow with starts).
  std::map<uintptr_t, Entry*>::iterator FirstEndingAfter(uintptr_t a);
  // Entries other than `e` that share a page with e and hold a registration of client c.
  std::vector<Entry*> NeighboursHolding(const Entry* e, int c);
  // Whether an entry overlaps the request's inner pages; if not, records them as seen.
  bool Seen(uintptr_t a, size_t len, uintptr_t start, uintptr_t end);
  void DropHandle(Entry* e, int client);         // deregisters one client's handle
  bool Registered(const Entry* e) const;         // any handle
  void ApplyInvalidations();                     // mu_ held
  void Invalidate(uintptr_t start, uintptr_t end);
  void FlushAll();
  void RemoveFromMap(Entry* e);                  // and destroys it when unreferenced
  void Destroy(Entry* e);                        // deregisters every handle and frees
  void LruPush(Entry* e);
  void LruUnlink(Entry* e);
  void EvictToLimits();
  void AfterChange();                            // limits, then quarantines

  const size_t max_map_;
  bool caching_ = false;
  const char* why_not_ = "";
  uintptr_t page_mask_;

  mutable std::mutex mu_;
  int nclients_ = 0;
  ClientState clients_[kMaxClients];
  memhooks::Cursor cursor_;
  std::map<uintptr_t, Entry*> map_;  // by start; never nesting, sharing at most an edge page
  Entry* lru_head_ = nullptr;        // least recently released
  Entry* lru_tail_ = nullptr;
  Stats stats_;                      // the cache's own counters (invalidations, merges, flushes)
};

}  // namespace mpigpu::memreg

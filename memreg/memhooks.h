// Memory hooks: learning that address ranges lost their pages, so a registration cache is never
// stale (UCX's ucm idea, in its "reloc" form, reduced to what a cache needs).
//
// Mechanism (why this one): this library defines munmap, mremap, madvise, mmap/mmap64, shmat,
// shmdt, brk and sbrk itself. Being earlier in the symbol search order than libc (the executable;
// or libmpigpu.so, loaded before libc), these definitions receive every call made through the
// PLT, from the program and from every shared library (libcuda, libibverbs, jemalloc, ...). Each
// hook calls the next definition (dlsym(RTLD_NEXT), resolved at load; a raw syscall before that)
// and then, once the call succeeded, appends the affected range to a global invalidation log.
// Calls inside glibc do not go through the PLT (free() unmapping a large chunk, trimming the heap,
// a thread arena dropping pages). Both clients cover them the same way: they register only whole
// mappings one allocation owns (the own-mapping table below: the program's anonymous mmaps, and
// the large blocks glibc mapped on their own, whose malloc and free() this library sees itself,
// alloc_hooks.h), never glibc's heap. The ibverbs cache (on where an RDMA device is) registers
// any other range for one message only; the pin cache (on where a GPU is) leaves it unpinned. No
// malloc settings are needed (until 2026-11-25 the ibverbs cache set M_MMAP_MAX 0,
// M_TRIM_THRESHOLD max and M_ARENA_MAX 1 for the whole process to cache heap memory).
// Allocators that call munmap/madvise through the PLT (jemalloc, tcmalloc) are seen by the hooks;
// a sanitizer's allocator (raw syscalls) is covered by its free hook, which drops each freed block.
// Rejected: userfaultfd (UFFD_FEATURE_EVENT_UNMAP/REMOVE) needs each range registered in a fault
// mode, which makes page faults in it wait for a handler, covers only anonymous/shmem memory,
// and is often refused to unprivileged users; on-demand paging (ODP) depends on the device.
//
// Not seen (documented limits): raw syscall(SYS_munmap, ...) calls; mappings glibc itself drops
// (the stack of a thread that exited; dlclose); large blocks malloc'd before this library was
// loaded (mmap'd chunks, freed by glibc's internal munmap); another process truncating a shared
// file. A static-link program must export these symbols (the BUILD's linkopts do that).
//
// Whether the hooks really receive calls is checked, not assumed: HooksActive() calls each
// hooked function through the pointer the dynamic linker gives every library (dlsym
// RTLD_DEFAULT) on a probe mapping and checks the hook saw it. The cache runs uncached (register
// per use) when it does not: e.g. in a library dlopen'd with RTLD_LOCAL (checked by hand: the
// probe reports mmap not interposed), unless it is also LD_PRELOADed.
//
// The invalidation log (shared by every cache in the process):
//   writers: any thread, inside a hook (no allocation, no lock: atomics only; async-signal-safe);
//   readers: each cache, under its own mutex, keeping its own cursor.
// A ring of kLogSlots records. A writer takes a sequence number (head, fetch_add acq_rel),
// claims its slot by CAS on the slot's seq from an earlier lap's value to kBusy (a slot that is
// busy, or already holds a later lap, bumps the flush epoch instead), stores start/end (release:
// after kBusy) and publishes seq = n + 1 (release). A reader applies every complete record from
// its cursor to head (acquire), re-checking seq after reading the fields (acquire loads: a
// seqlock, so a record overwritten meanwhile is not taken torn); it keeps its cursor at the
// first record still being written, so none is skipped (applying a record twice only costs a
// re-registration). When the ring lapped a reader, or a writer could not claim
// its slot, or a range is unknown (shmdt of a segment attached before load), the flush epoch is
// bumped (release) and each cache drops everything: conservative, never stale.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace mpigpu::memreg::memhooks {

constexpr size_t kLogSlots = 4096;  // a power of two

// What a reader gets from the log since its cursor.
struct Invalidation {
  uintptr_t start;
  uintptr_t end;  // exclusive
};

// A reader's position: the next sequence number to apply, and the flush epoch seen. Records
// from `next` up to `done` were applied already, except the few in `pending` (incomplete when
// last read): the next Drain skips the applied ones (re-applying them would drop entries
// registered since, for nothing). More than kPendingMax incomplete: everything from `next` is
// applied again (correct, only slower).
struct Cursor {
  static constexpr int kPendingMax = 8;
  uint64_t next = 0;
  uint64_t done = 0;
  uint64_t flush_epoch = 0;
  int npending = 0;
  uint64_t pending[kPendingMax] = {};
};

// Starts a reader at "now": nothing before this matters to a cache with nothing registered.
// Also counts the reader, so the hooks log only while some cache exists.
Cursor OpenReader();
void CloseReader();

// Calls `fn(start, end)` for every complete record from cursor->next on and advances the cursor.
// Returns false, with the cursor moved to the head, when the reader must drop everything instead
// (lapped, a claim failed, an unknown range); `fn` may then have seen some records already.
// Cheap when nothing happened: one acquire load.
template <class Fn>
bool Drain(Cursor* cursor, Fn&& fn);

// Whether every hook receives calls made through the dynamic linker's symbols (probed once, on
// first call; thread-safe). False also when neither cache was wanted at load (no GPU, no RDMA
// device, neither asked for; or both set to 0).
bool HooksActive();
// Why not, when HooksActive() is false ("" otherwise).
const char* HooksInactiveReason();

// Whether records are wanted now (a cache exists and the hooks were not disabled at load).
bool LogWanted();
// Records [start, start + len) as invalidated (what the hooks call; tests may call it too).
void RecordInvalidation(const void* start, size_t len);
// Makes every reader drop everything.
void RecordFlushAll();

// Counters, for tests and mpigpu-info: hook calls seen, records written, flushes, ranges
// quarantined (munmap/mremap of a protected range) and released, frees deferred and released.
struct Stats {
  uint64_t hook_calls;
  uint64_t records;
  uint64_t flushes;
  uint64_t quarantined;
  uint64_t released;
  uint64_t deferred_frees;     // blocks kept by free() while protected
  uint64_t deferred_released;  // and freed since
  uint64_t leaked;             // kept for good (deferred table full)
};
Stats GetStats();

// ---- address protection (registrations keyed by address: cudaHostRegister) ----
//
// A CUDA host registration names an address range in the driver's table, not pages: while it
// exists, the driver must not see that range mapped again by anyone (the withdrawn pin cache's
// failure: the next cudaMallocHost / cudaHostAlloc / cudaMalloc that the kernel placed at a
// freed, still registered address failed). Unregistering inside a hook is impossible (the hook
// may run inside CUDA, under its locks; and it must not call CUDA at all), so the address is
// kept instead: a range that overlaps a protected one is not unmapped by munmap but replaced by
// an inaccessible reservation (mmap MAP_FIXED PROT_NONE: the pages go, the addresses stay
// taken, atomically); mremap that moves or shrinks a protected range, and brk/sbrk shrinking
// the break over one, reserve what they vacated (MAP_FIXED_NOREPLACE, just after; the break
// cannot grow back over a reservation until it is released). The range is logged as invalidated as usual. The cache,
// outside any hook, then unregisters and unprotects the entries, and ReleaseQuarantines()
// unmaps each reservation that no protected range overlaps any more. A reservation that a
// MAP_FIXED mmap (or mremap MREMAP_FIXED) is about to map over (the program mapping there on
// purpose) is forgotten first, never unmapped after; one being released at that moment is
// waited for (a munmap away), so the program's mapping always comes after the release.
//
// The protection table: written only by Protect/Unprotect (a mutex among them; the caches
// call them under their own), read by the hooks without a lock: a slot's end is stored before
// its start (release), a reader loads start (acquire) then end. A hook racing with Protect of
// the very range it unmaps may miss it: that is the program freeing a buffer it is
// communicating from, outside every guarantee.
// The quarantine table: hooks claim a slot by CAS (free -> claiming), store the range, publish
// kQuarantined (release); ReleaseQuarantines (one caller at a time: a mutex) claims releasable
// slots (kQuarantined -> kReleasing), unmaps their merged ranges once each, frees the slots; a
// MAP_FIXED hook claims overlapping slots (kQuarantined -> free) before mapping, or spins while
// one is kReleasing. Each slot's state moves only by CAS, so a slot is released or forgotten,
// never both.
// Full tables: Protect fails (the caller does not register); a munmap that cannot quarantine
// unmaps (then only the deferred unregistration remains: the old hazard, logged in the stats).
constexpr int kProtectSlots = 16384;
constexpr int kQuarantineSlots = 1024;
// Protects [start, end) (page aligned); the slot, or -1 when the table is full.
int Protect(uintptr_t start, uintptr_t end);
void Unprotect(int slot);
// Whether [start, end) overlaps a protected range (what the hooks ask).
bool Protected(uintptr_t start, uintptr_t end);
// Unmaps the reservations no protected range overlaps any more; how many were released.
size_t ReleaseQuarantines();
// Reservations waiting (cheap: one relaxed load).
int Quarantined();

// ---- own mappings: what an address-keyed registration may cover whole ----
//
// CUDA fails a copy whose host range starts inside a registration and ends past it (pin_cache.h),
// so a cudaHostRegister'ed range must end where no copy of the program can cross it: the end of
// a mapping that one allocation owns. The table holds such mappings: each anonymous, accessible
// mapping made through mmap (the hook), and each block glibc's malloc put in a mapping of its own
// (alloc_hooks.cc: the malloc family is interposed too). A mapping leaves the table when any part
// of it is unmapped, remapped, or mapped over, or its block is freed or reallocated. A copy lies
// in one allocation, so it lies inside the registration of the mapping that holds it.
//
// Writers: the hooks (mmap, munmap, mremap, the malloc family), under a spinlock they only try
// for a bounded time (another thread's holder may be preempted), and not at all when their own
// thread holds it (a signal handler that interrupted the holder): an insert that cannot take it
// is skipped (that mapping is never pinned); a removal that cannot take it poisons the table
// (release), and the next reader empties it (acquire): never a stale entry. Readers:
// OwnMapping, under the same lock (not found when its own thread holds it). The lock is taken
// around fork(), so a child never inherits it held. Sorted by start; entries never overlap.
constexpr int kMappingSlots = 16384;
// Whether the table is kept (either cache was wanted at load; not under a sanitizer's
// allocator). Inline: every malloc and free asks (written once, by the load-time constructor).
namespace detail {
extern std::atomic<bool> g_track_mappings;
}  // namespace detail
inline bool TrackingMappings() {
  return detail::g_track_mappings.load(std::memory_order_relaxed);
}
void TrackMapping(uintptr_t start, uintptr_t end);    // page aligned; replaces overlapping ones
void ForgetMappings(uintptr_t start, uintptr_t end);  // every entry overlapping [start, end)
// ForgetMappings, saying whether [start, end) was an entry exactly (what mremap moves along).
bool TakeMapping(uintptr_t start, uintptr_t end);
// The tracked mapping holding all of [a, b), if any (start, end: its bounds, when not null).
bool OwnMapping(uintptr_t a, uintptr_t b, uintptr_t* start, uintptr_t* end);
size_t TrackedMappings();
// Inserts skipped and removals that poisoned the table (its lock not taken in time): each costs
// pins, never correctness.
struct TableStats {
  uint64_t skipped_inserts;
  uint64_t poisonings;
};
TableStats GetTableStats();
// For tests: hold the table's lock as a hook interrupted by a signal handler (or a thread caught
// by fork) would; copy the table out (at most max entries; the count copied).
void LockMappingsForTest();
void UnlockMappingsForTest();
size_t CopyMappingsForTest(uintptr_t* starts, uintptr_t* ends, size_t max);

// ---- deferred frees: a freed block whose mapping is protected ----
//
// free() of a block whose mapping a registration protects must not give the mapping back (glibc
// would munmap it inside libc, past the hooks): the block is kept, logged as invalidated, and
// really freed by ReleaseDeferredFrees once no protected range overlaps it (the cache calls it
// after unregistering). Slots: a writer (free) claims one by CAS (free -> claiming), stores the
// block and range, publishes kDeferred (release); the releaser (one at a time: a mutex) claims
// releasable ones (kDeferred -> releasing) and frees them through the function SetRealFree gave.
constexpr int kDeferSlots = kProtectSlots;
// The block is kept (false: the table is full and the caller keeps it for good: leaked).
bool DeferFree(void* block, uintptr_t start, uintptr_t end);
void SetRealFree(void (*real_free)(void*));
size_t ReleaseDeferredFrees();
// Whether block is kept (freed while protected, not yet released): freeing it again is a double
// free (alloc_hooks stops the program, as glibc would).
bool Deferred(const void* block);
int DeferredFrees();  // blocks waiting (one relaxed load)
// ReleaseQuarantines and ReleaseDeferredFrees: what a cache calls after unregistering.
size_t ReleaseKept();

// ---- the log itself (Drain is inline: the hot path of every Acquire) ----
namespace detail {
struct Slot {
  std::atomic<uint64_t> seq;        // n + 1 once record n is complete; kBusy while written
  std::atomic<uintptr_t> start;
  std::atomic<uintptr_t> end;
};
constexpr uint64_t kBusy = ~uint64_t{0};
struct Log {
  std::atomic<uint64_t> head;         // next sequence number to hand out
  std::atomic<uint64_t> flush_epoch;  // bumped by RecordFlushAll
  Slot slots[kLogSlots];
};
extern Log g_log;
}  // namespace detail

template <class Fn>
bool Drain(Cursor* cursor, Fn&& fn) {
  using detail::g_log;
  const uint64_t epoch = g_log.flush_epoch.load(std::memory_order_acquire);
  const uint64_t head = g_log.head.load(std::memory_order_acquire);
  if (epoch != cursor->flush_epoch || head - cursor->next > kLogSlots) {
    cursor->flush_epoch = epoch;
    cursor->next = cursor->done = head;
    cursor->npending = 0;
    return false;
  }
  uint64_t first_incomplete = head;
  uint64_t pending[Cursor::kPendingMax];
  int npending = 0;
  bool overflow = false;
  for (uint64_t n = cursor->next; n != head; ++n) {
    if (n < cursor->done) {  // applied already, unless it was incomplete then
      bool was_pending = false;
      for (int i = 0; i < cursor->npending; ++i) was_pending |= cursor->pending[i] == n;
      if (!was_pending) continue;
    }
    detail::Slot& s = g_log.slots[n & (kLogSlots - 1)];
    const uint64_t seq = s.seq.load(std::memory_order_acquire);
    if (seq == n + 1) {
      // Acquire loads keep the re-read of seq after them (a seqlock's read side, without a
      // fence ThreadSanitizer cannot follow).
      const uintptr_t start = s.start.load(std::memory_order_acquire);
      const uintptr_t end = s.end.load(std::memory_order_acquire);
      if (s.seq.load(std::memory_order_relaxed) == n + 1) {
        fn(start, end);
        continue;
      }
    } else if (seq == detail::kBusy || seq < n + 1) {
      // Being written (or not yet claimed) by the writer of n: come back to it.
      if (first_incomplete == head) first_incomplete = n;
      if (npending < Cursor::kPendingMax) pending[npending++] = n;
      else overflow = true;
      continue;
    }
    // Overwritten by a later lap while we read: we lost a record.
    cursor->flush_epoch = g_log.flush_epoch.load(std::memory_order_acquire);
    cursor->next = cursor->done = head;
    cursor->npending = 0;
    return false;
  }
  cursor->next = first_incomplete;
  // Overflow: remember nothing as applied, so every record from `next` is applied again.
  cursor->done = overflow ? first_incomplete : head;
  cursor->npending = overflow ? 0 : npending;
  for (int i = 0; i < cursor->npending; ++i) cursor->pending[i] = pending[i];
  return true;
}

}  // namespace mpigpu::memreg::memhooks

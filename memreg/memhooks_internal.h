// What memhooks.cc (the log, the protection and quarantine tables, the load-time set-up) and
// memhooks_interpose.cc (the interposed libc symbols) share. Internal to //memreg:memhooks.
// Everything here is reachable from a hook: atomics only, no allocation, no lock.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "memreg/memhooks.h"

namespace mpigpu::memreg::memhooks {

// Which hooked call a counter or a next definition belongs to.
enum Fn { kMmap, kMunmap, kMremap, kMadvise, kShmat, kShmdt, kBrk, kSbrk, kMallocTrim, kNumFns };

// The next definitions (dlsym RTLD_NEXT): written by the load-time constructor (or the first
// brk/sbrk), read (acquire) by every hook. Calls each hook received: relaxed counters.
extern std::atomic<void*> g_next[kNumFns];
extern std::atomic<uint64_t> g_calls[kNumFns];
// Caches alive (OpenReader/CloseReader; acquire here pairs with their acq_rel): the hooks log
// only while some cache exists, and never once disabled at load.
extern std::atomic<int> g_readers;
extern std::atomic<bool> g_disabled;
// Set at load when either cache is wanted (detail::g_track_mappings, memhooks.h): the
// own-mapping table is kept (own_mappings.cc).

inline bool Logging() {
  return g_readers.load(std::memory_order_acquire) > 0 &&
         !g_disabled.load(std::memory_order_relaxed);
}
inline void Count(Fn f) { g_calls[f].fetch_add(1, std::memory_order_relaxed); }
template <class T>
T Next(Fn f) {
  return reinterpret_cast<T>(g_next[f].load(std::memory_order_acquire));
}

// The quarantine table (memhooks.h): a reservation remembered (false: the table is full), and
// the reservations a MAP_FIXED mapping of [start, end) is about to own, forgotten first.
bool AddQuarantine(uintptr_t start, uintptr_t end);
void ClaimQuarantinesBefore(uintptr_t start, uintptr_t end);
// shmat'd segments by address, for shmdt (which gets only the address): remembered, and
// forgotten returning the length (0: unknown).
void ShmRemember(const void* addr, size_t len);
size_t ShmForget(const void* addr);
// The deferred frees' counters (own_mappings.cc), for GetStats.
void DeferStats(uint64_t* deferred, uint64_t* released, uint64_t* leaked);

}  // namespace mpigpu::memreg::memhooks

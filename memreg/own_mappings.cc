// The own-mapping table and the deferred frees (memhooks.h says what and why). Reachable from
// hooks: no allocation; the table's lock is a spinlock that hooks only try for a bounded time.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "memreg/memhooks.h"
#include "memreg/memhooks_internal.h"

namespace mpigpu::memreg::memhooks {

namespace detail {
std::atomic<bool> g_track_mappings{false};
}  // namespace detail

namespace {

// ---- the table: sorted by start, never overlapping; g_n entries; all under g_lock ----
uintptr_t g_start[kMappingSlots];
uintptr_t g_end[kMappingSlots];
int g_n = 0;
std::atomic<bool> g_lock{false};
std::atomic<bool> g_poisoned{false};  // a removal could not run: the table may be stale
std::atomic<uint64_t> g_skipped{0};     // inserts skipped (lock not taken in time)
std::atomic<uint64_t> g_poisonings{0};  // removals that poisoned the table instead

// The holder's thread (pthread_self; 0 when free): written by the holder only, right after it
// took the lock and right before it lets it go. A thread that finds itself there was interrupted
// while holding the lock (a hook or lookup in a signal handler; a later pthread_atfork prepare
// handler): waiting could never end, so it gives up at once.
std::atomic<uintptr_t> g_owner{0};

// A hook waits for another thread's holder a bounded time: this many spins, then yields (the
// holder may have been preempted: a memmove of at most 256 KiB, but on an oversubscribed
// machine a time slice away); then it gives up (an insert is skipped, a removal poisons).
constexpr int kHookTries = 1 << 14;
constexpr int kHookYields = 1 << 10;

uintptr_t Self() { return static_cast<uintptr_t>(pthread_self()); }

bool TryLock(int tries) {
  for (int i = 0; i < tries; ++i) {
    if (!g_lock.load(std::memory_order_relaxed) &&
        !g_lock.exchange(true, std::memory_order_acquire)) {
      g_owner.store(Self(), std::memory_order_relaxed);
      return true;
    }
    __builtin_ia32_pause();
  }
  return false;
}
// Whether this thread holds the lock (so it was interrupted holding it: it cannot wait for it).
bool HeldBySelf() { return g_owner.load(std::memory_order_relaxed) == Self(); }
bool HookLock() {
  if (HeldBySelf()) return false;
  if (TryLock(kHookTries)) return true;
  for (int i = 0; i < kHookYields; ++i) {
    sched_yield();
    if (TryLock(64)) return true;
  }
  return false;
}
// Outside hooks: waits as long as another thread holds the lock; false when this one does.
bool Lock() {
  if (HeldBySelf()) return false;
  while (!TryLock(1 << 10)) sched_yield();
  return true;
}
void Unlock() {
  g_owner.store(0, std::memory_order_relaxed);
  g_lock.store(false, std::memory_order_release);
}

// The first entry ending after a (ends grow with starts).
int FirstEndingAfter(uintptr_t a) {
  return static_cast<int>(std::upper_bound(g_end, g_end + g_n, a) - g_end);
}

void RemoveOverlapping(uintptr_t s, uintptr_t e) {
  const int i = FirstEndingAfter(s);
  int j = i;
  while (j < g_n && g_start[j] < e) ++j;
  if (j == i) return;
  std::copy(g_start + j, g_start + g_n, g_start + i);
  std::copy(g_end + j, g_end + g_n, g_end + i);
  g_n -= j - i;
}

// Under the lock: a poisoned table is emptied (acquire pairs with the removal's release).
void ClearIfPoisoned() {
  if (g_poisoned.load(std::memory_order_acquire)) {
    g_n = 0;
    g_poisoned.store(false, std::memory_order_relaxed);
  }
}

// ---- deferred frees ----
enum DState : int { kDFree = 0, kDClaiming, kDeferred, kDReleasing };
struct DeferSlot {
  std::atomic<int> state;
  std::atomic<void*> block;
  std::atomic<uintptr_t> start;
  std::atomic<uintptr_t> end;
};
DeferSlot g_defer[kDeferSlots];
std::atomic<int> g_deferred{0};
std::atomic<int> g_defer_hw{0};  // slots [0, hw) were ever used
std::atomic<uint64_t> g_deferred_total{0};
std::atomic<uint64_t> g_deferred_released{0};
std::atomic<uint64_t> g_leaked{0};
std::atomic<void (*)(void*)> g_real_free{nullptr};
std::mutex g_defer_mu;  // ReleaseDeferredFrees only (never taken in a hook)

}  // namespace

void TrackMapping(uintptr_t s, uintptr_t e) {
  if (e <= s || !TrackingMappings()) return;
  if (!HookLock()) {
    g_skipped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ClearIfPoisoned();
  RemoveOverlapping(s, e);
  if (g_n < kMappingSlots) {
    const int i = FirstEndingAfter(s);
    std::copy_backward(g_start + i, g_start + g_n, g_start + g_n + 1);
    std::copy_backward(g_end + i, g_end + g_n, g_end + g_n + 1);
    g_start[i] = s;
    g_end[i] = e;
    ++g_n;
  }
  Unlock();
}

namespace {
// A removal that cannot take the lock: the next holder empties the table (never a stale entry).
void Poison() {
  g_poisoned.store(true, std::memory_order_release);
  g_poisonings.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

void ForgetMappings(uintptr_t s, uintptr_t e) {
  if (e <= s || !TrackingMappings()) return;
  if (!HookLock()) return Poison();
  RemoveOverlapping(s, e);
  Unlock();
}

bool TakeMapping(uintptr_t s, uintptr_t e) {
  if (e <= s || !TrackingMappings()) return false;
  if (!HookLock()) {
    Poison();
    return false;
  }
  ClearIfPoisoned();
  const int i = FirstEndingAfter(s);
  const bool whole = i < g_n && g_start[i] == s && g_end[i] == e;
  RemoveOverlapping(s, e);
  Unlock();
  return whole;
}

bool OwnMapping(uintptr_t a, uintptr_t b, uintptr_t* start, uintptr_t* end) {
  if (b <= a || !TrackingMappings()) return false;
  if (!Lock()) return false;  // a signal handler interrupting this thread's holder
  ClearIfPoisoned();
  const int i = FirstEndingAfter(a);
  const bool found = i < g_n && g_start[i] <= a && b <= g_end[i];
  if (found && start != nullptr) *start = g_start[i];
  if (found && end != nullptr) *end = g_end[i];
  Unlock();
  return found;
}

size_t TrackedMappings() {
  if (!Lock()) return 0;
  ClearIfPoisoned();
  const size_t n = static_cast<size_t>(g_n);
  Unlock();
  return n;
}

// fork(): the child has one thread; a lock held by another thread of the parent would stay
// held there for good (its large mallocs skipped, its frees poisoning, a lookup waiting forever).
// So the lock is taken around fork (bounded, as a hook: a fork from a signal handler that
// interrupted the holder cannot wait); a child that forked without it starts from an unlocked,
// poisoned table (the holder may have been half-way through a move).
namespace {
bool g_fork_held = false;  // written by the forking thread only, between prepare and parent/child
void ForkPrepare() { g_fork_held = HookLock(); }
void ForkParent() {
  if (g_fork_held) Unlock();
}
void ForkChild() {
  if (!g_fork_held) g_poisoned.store(true, std::memory_order_relaxed);
  Unlock();
}
__attribute__((constructor)) void RegisterForkHandlers() {
  (void)pthread_atfork(ForkPrepare, ForkParent, ForkChild);
}
}  // namespace

TableStats GetTableStats() {
  return {g_skipped.load(std::memory_order_relaxed), g_poisonings.load(std::memory_order_relaxed)};
}

void LockMappingsForTest() { (void)Lock(); }
void UnlockMappingsForTest() { Unlock(); }

size_t CopyMappingsForTest(uintptr_t* starts, uintptr_t* ends, size_t max) {
  if (!Lock()) return 0;
  ClearIfPoisoned();
  const size_t n = std::min(max, static_cast<size_t>(g_n));
  std::copy(g_start, g_start + n, starts);
  std::copy(g_end, g_end + n, ends);
  Unlock();
  return n;
}

void SetRealFree(void (*real_free)(void*)) {
  g_real_free.store(real_free, std::memory_order_release);
}

bool DeferFree(void* block, uintptr_t s, uintptr_t e) {
  for (int i = 0; i < kDeferSlots; ++i) {
    DeferSlot& d = g_defer[i];
    int expected = kDFree;
    if (d.state.load(std::memory_order_relaxed) != kDFree ||
        !d.state.compare_exchange_strong(expected, kDClaiming, std::memory_order_acquire))
      continue;
    d.block.store(block, std::memory_order_relaxed);
    d.start.store(s, std::memory_order_relaxed);
    d.end.store(e, std::memory_order_relaxed);
    d.state.store(kDeferred, std::memory_order_release);
    int hw = g_defer_hw.load(std::memory_order_relaxed);
    while (hw < i + 1 &&
           !g_defer_hw.compare_exchange_weak(hw, i + 1, std::memory_order_release)) {
    }
    g_deferred.fetch_add(1, std::memory_order_relaxed);
    g_deferred_total.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  g_leaked.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool Deferred(const void* block) {
  if (g_deferred.load(std::memory_order_relaxed) == 0) return false;
  const int hw = g_defer_hw.load(std::memory_order_acquire);
  for (int i = 0; i < hw; ++i) {
    // Only a published slot: a claiming one may still hold a block released before, whose
    // address a new allocation may have taken since.
    if (g_defer[i].state.load(std::memory_order_acquire) == kDeferred &&
        g_defer[i].block.load(std::memory_order_relaxed) == block)
      return true;
  }
  return false;
}

size_t ReleaseDeferredFrees() {
  if (g_deferred.load(std::memory_order_relaxed) == 0) return 0;
  auto real_free = g_real_free.load(std::memory_order_acquire);
  if (real_free == nullptr) return 0;
  std::lock_guard<std::mutex> lock(g_defer_mu);
  size_t n = 0;
  const int hw = g_defer_hw.load(std::memory_order_acquire);
  for (int i = 0; i < hw; ++i) {
    DeferSlot& d = g_defer[i];
    int st = kDeferred;
    if (d.state.load(std::memory_order_acquire) != kDeferred) continue;
    if (Protected(d.start.load(std::memory_order_relaxed), d.end.load(std::memory_order_relaxed)))
      continue;
    if (!d.state.compare_exchange_strong(st, kDReleasing, std::memory_order_acq_rel)) continue;
    real_free(d.block.load(std::memory_order_relaxed));
    d.state.store(kDFree, std::memory_order_release);
    ++n;
  }
  g_deferred.fetch_sub(static_cast<int>(n), std::memory_order_relaxed);
  g_deferred_released.fetch_add(n, std::memory_order_relaxed);
  return n;
}

int DeferredFrees() { return g_deferred.load(std::memory_order_relaxed); }

size_t ReleaseKept() { return ReleaseQuarantines() + ReleaseDeferredFrees(); }

void DeferStats(uint64_t* deferred, uint64_t* released, uint64_t* leaked) {
  *deferred = g_deferred_total.load(std::memory_order_relaxed);
  *released = g_deferred_released.load(std::memory_order_relaxed);
  *leaked = g_leaked.load(std::memory_order_relaxed);
}

}  // namespace mpigpu::memreg::memhooks

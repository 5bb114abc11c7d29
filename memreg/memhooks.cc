// The invalidation log, the protection and quarantine tables and the load-time set-up (see
// memhooks.h for the why; the interposed symbols themselves: memhooks_interpose.cc).
//
// Everything reachable from a hook is async-signal-safe and allocation-free: atomics, raw
// syscalls, the next definition's function pointer. dlsym is called only at load (a constructor)
// and, for brk/sbrk, which glibc's malloc does not call through the PLT, on first use.
#include "memreg/memhooks.h"
#include "memreg/memhooks_internal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <mutex>

namespace mpigpu::memreg::memhooks {
namespace detail {
Log g_log{};
}  // namespace detail

// Written by the constructor (or the first brk/sbrk), read by every hook.
std::atomic<void*> g_next[kNumFns];
// Calls each hook received: relaxed counters (statistics and the probe's "did it arrive").
std::atomic<uint64_t> g_calls[kNumFns];
// Caches alive (OpenReader/CloseReader): the hooks log only while some cache exists.
std::atomic<int> g_readers{0};
// Set at load: MPIGPU_IB_REG_CACHE was off, the hooks only forward.
std::atomic<bool> g_disabled{false};

namespace {

using detail::g_log;

const char* const kFnNames[kNumFns] = {"mmap",  "munmap", "mremap", "madvise",    "shmat",
                                       "shmdt", "brk",    "sbrk",   "malloc_trim"};

std::atomic<uint64_t> g_records{0};
std::atomic<uint64_t> g_flushes{0};
// Set at load with g_disabled: neither cache asked for by name, and no RDMA device or GPU.
std::atomic<bool> g_no_device{false};

// The protection table (memhooks.h): hooks read slots [0, g_protect_hw).
struct ProtectSlot {
  std::atomic<uintptr_t> start;  // 0: free
  std::atomic<uintptr_t> end;
};
ProtectSlot g_protect[kProtectSlots];
std::atomic<int> g_protect_hw{0};
std::atomic<int> g_protect_count{0};
std::mutex g_protect_mu;  // Protect/Unprotect only (never taken in a hook)

enum QState : int { kQFree = 0, kQClaiming, kQuarantinedState, kQReleasing };
struct QuarantineSlot {
  std::atomic<int> state;
  std::atomic<uintptr_t> start;
  std::atomic<uintptr_t> end;
};
QuarantineSlot g_quarantine[kQuarantineSlots];
std::atomic<int> g_quarantined{0};
std::atomic<uint64_t> g_quarantines{0};
std::atomic<uint64_t> g_releases{0};
std::mutex g_release_mu;  // ReleaseQuarantines only

// shmat'd segments, for shmdt (which gets only the address): a fixed table, claimed by CAS.
constexpr int kShmSlots = 256;
struct ShmSlot {
  std::atomic<uintptr_t> addr;
  std::atomic<size_t> len;
};
ShmSlot g_shm[kShmSlots];

// The same rule as memcopy/params.cc's ParseBool (that library is not usable this early: the
// registry is built on first use, and the constructor below runs before main).
bool EnvOff(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) return false;
  return std::strcmp(v, "0") == 0 || std::strcmp(v, "no") == 0 || std::strcmp(v, "off") == 0;
}

// Whether a folder has an entry (the kernel lists a device there): no library, no allocation
// beyond opendir's, safe before main.
bool DirHasEntries(const char* path) {
  DIR* d = opendir(path);
  if (d == nullptr) return false;
  bool any = false;
  while (const dirent* e = readdir(d))
    if (e->d_name[0] != '.') any = true;
  closedir(d);
  return any;
}

// Whether an NVIDIA GPU is there (the driver lists one): where the pin cache is on by default.
bool GpuPresent() {
  return DirHasEntries("/proc/driver/nvidia/gpus") || access("/dev/nvidiactl", F_OK) == 0;
}

// Whether the kernel lists an RDMA device: where the ibverbs cache is on by default.
bool RdmaDevicePresent() { return DirHasEntries("/sys/class/infiniband"); }

// A sanitizer's allocator (ASan, TSan) replaces malloc and gives pages back with raw syscalls:
// its free hook drops every freed block instead.
using SanitizerSizeFn = size_t (*)(const volatile void*);
std::atomic<SanitizerSizeFn> g_sanitizer_size{nullptr};
void SanitizerMallocHook(const volatile void*, size_t) {}
void SanitizerFreeHook(const volatile void* p);

// Whether it was installed (a sanitizer's allocator is in use).
bool InstallSanitizerFreeHook() {
  using InstallFn = int (*)(void (*)(const volatile void*, size_t), void (*)(const volatile void*));
  auto install =
      reinterpret_cast<InstallFn>(dlsym(RTLD_DEFAULT, "__sanitizer_install_malloc_and_free_hooks"));
  auto size = reinterpret_cast<SanitizerSizeFn>(
      dlsym(RTLD_DEFAULT, "__sanitizer_get_allocated_size"));
  if (install == nullptr || size == nullptr) return false;  // glibc's malloc: alloc_hooks.cc
  g_sanitizer_size.store(size, std::memory_order_release);
  (void)install(SanitizerMallocHook, SanitizerFreeHook);
  return true;
}

__attribute__((constructor)) void LoadHooks() {
  for (int f = 0; f < kNumFns; ++f)
    g_next[f].store(dlsym(RTLD_NEXT, kFnNames[f]), std::memory_order_release);
  // Two caches use the hooks: the ibverbs registrations (MPIGPU_IB_REG_CACHE, internode/ib/
  // ib_reg.h) and the CUDA pins of pageable host buffers (MPIGPU_PIN_CACHE). Both register only
  // whole mappings that one allocation owns (the own-mapping table) and see free() itself
  // (alloc_hooks.h), so neither needs malloc settings: glibc's heap, whose pages free() may give
  // back behind the hooks, is never cached (the ibverbs client registers it per message).
  // The ibverbs cache is on where an RDMA device is (kIbCachesThroughHooks), the pin cache
  // where a GPU is, or either when asked for by name.
  constexpr bool kIbCachesThroughHooks = true;
  const bool ib_off = EnvOff("MPIGPU_IB_REG_CACHE"), pin_off = EnvOff("MPIGPU_PIN_CACHE");
  const bool ib_wanted = !ib_off && (std::getenv("MPIGPU_IB_REG_CACHE") != nullptr ||
                                     (kIbCachesThroughHooks && RdmaDevicePresent()));
  const bool pin_wanted =
      !pin_off && (std::getenv("MPIGPU_PIN_CACHE") != nullptr || GpuPresent());
  if (!ib_wanted && !pin_wanted) {
    g_disabled.store(true, std::memory_order_relaxed);
    g_no_device.store(!(ib_off && pin_off), std::memory_order_relaxed);
    return;
  }
  // Under a sanitizer's allocator no malloc'd block is an own mapping, and the table's lock is
  // invisible to ThreadSanitizer (uninstrumented): no table, every range registered per use.
  const bool sanitizer = InstallSanitizerFreeHook();
  detail::g_track_mappings.store(!sanitizer, std::memory_order_relaxed);
}

}  // namespace

void ShmRemember(const void* addr, size_t len) {
  for (auto& s : g_shm) {
    uintptr_t expected = 0;
    if (s.addr.load(std::memory_order_relaxed) == 0 &&
        s.addr.compare_exchange_strong(expected, reinterpret_cast<uintptr_t>(addr),
                                       std::memory_order_acq_rel)) {
      s.len.store(len, std::memory_order_release);
      return;
    }
  }
  // Table full: shmdt of this one will flush everything (it is not found).
}

// The length shmat recorded for `addr` (forgetting it), or 0.
size_t ShmForget(const void* addr) {
  const auto a = reinterpret_cast<uintptr_t>(addr);
  for (auto& s : g_shm) {
    if (s.addr.load(std::memory_order_acquire) != a) continue;
    const size_t len = s.len.load(std::memory_order_acquire);
    uintptr_t expected = a;
    if (len != 0 && s.addr.compare_exchange_strong(expected, 0, std::memory_order_acq_rel))
      return len;
  }
  return 0;
}

namespace {

void SanitizerFreeHook(const volatile void* p) {
  auto size = g_sanitizer_size.load(std::memory_order_acquire);
  if (p != nullptr && size != nullptr && Logging())
    RecordInvalidation(const_cast<const void*>(p), size(p));
}

}  // namespace

void RecordFlushAll() {
  g_flushes.fetch_add(1, std::memory_order_relaxed);
  g_log.flush_epoch.fetch_add(1, std::memory_order_acq_rel);
}

void RecordInvalidation(const void* start, size_t len) {
  if (len == 0) return;
  const uintptr_t s = reinterpret_cast<uintptr_t>(start);
  const uintptr_t e = s + len < s ? UINTPTR_MAX : s + len;
  const uint64_t n = g_log.head.fetch_add(1, std::memory_order_acq_rel);
  detail::Slot& slot = g_log.slots[n & (kLogSlots - 1)];
  uint64_t cur = slot.seq.load(std::memory_order_acquire);
  // Claim: the slot must hold an earlier lap (cur < n + 1) and not be in the middle of a write.
  while (cur != detail::kBusy && cur < n + 1) {
    if (slot.seq.compare_exchange_weak(cur, detail::kBusy, std::memory_order_acquire)) {
      // Release: a reader that sees these fields also sees kBusy (seqlock write side).
      slot.start.store(s, std::memory_order_release);
      slot.end.store(e, std::memory_order_release);
      slot.seq.store(n + 1, std::memory_order_release);
      g_records.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  RecordFlushAll();  // busy with, or overtaken by, another lap's writer
}

Cursor OpenReader() {
  g_readers.fetch_add(1, std::memory_order_acq_rel);
  Cursor c;
  c.flush_epoch = g_log.flush_epoch.load(std::memory_order_acquire);
  c.next = c.done = g_log.head.load(std::memory_order_acquire);
  return c;
}

void CloseReader() { g_readers.fetch_sub(1, std::memory_order_acq_rel); }

bool LogWanted() { return Logging(); }

Stats GetStats() {
  uint64_t calls = 0;
  for (auto& c : g_calls) calls += c.load(std::memory_order_relaxed);
  uint64_t deferred = 0, deferred_released = 0, leaked = 0;
  DeferStats(&deferred, &deferred_released, &leaked);
  return {calls,
          g_records.load(std::memory_order_relaxed),
          g_flushes.load(std::memory_order_relaxed),
          g_quarantines.load(std::memory_order_relaxed),
          g_releases.load(std::memory_order_relaxed),
          deferred,
          deferred_released,
          leaked};
}

// ---- protection and quarantine ----

int Protect(uintptr_t start, uintptr_t end) {
  if (start == 0 || end <= start) return -1;
  std::lock_guard<std::mutex> lock(g_protect_mu);
  const int hw = g_protect_hw.load(std::memory_order_relaxed);
  int slot = -1;
  for (int i = 0; i < hw && slot < 0; ++i)
    if (g_protect[i].start.load(std::memory_order_relaxed) == 0) slot = i;
  if (slot < 0) {
    if (hw == kProtectSlots) return -1;
    slot = hw;
  }
  g_protect[slot].end.store(end, std::memory_order_relaxed);
  g_protect[slot].start.store(start, std::memory_order_release);
  if (slot == hw) g_protect_hw.store(hw + 1, std::memory_order_release);
  g_protect_count.fetch_add(1, std::memory_order_acq_rel);
  return slot;
}

void Unprotect(int slot) {
  if (slot < 0 || slot >= kProtectSlots) return;
  std::lock_guard<std::mutex> lock(g_protect_mu);
  if (g_protect[slot].start.load(std::memory_order_relaxed) == 0) return;
  g_protect[slot].start.store(0, std::memory_order_release);
  g_protect_count.fetch_sub(1, std::memory_order_acq_rel);
}

bool Protected(uintptr_t start, uintptr_t end) {
  if (g_protect_count.load(std::memory_order_acquire) == 0) return false;
  const int hw = g_protect_hw.load(std::memory_order_acquire);
  for (int i = 0; i < hw; ++i) {
    const uintptr_t s = g_protect[i].start.load(std::memory_order_acquire);
    if (s == 0) continue;
    const uintptr_t e = g_protect[i].end.load(std::memory_order_relaxed);
    if (s < end && start < e) return true;
  }
  return false;
}

int Quarantined() { return g_quarantined.load(std::memory_order_relaxed); }

// Remembers the reservation [start, end); false when the table is full.
bool AddQuarantine(uintptr_t start, uintptr_t end) {
  for (auto& q : g_quarantine) {
    int expected = kQFree;
    if (q.state.load(std::memory_order_relaxed) == kQFree &&
        q.state.compare_exchange_strong(expected, kQClaiming, std::memory_order_acquire)) {
      q.start.store(start, std::memory_order_relaxed);
      q.end.store(end, std::memory_order_relaxed);
      q.state.store(kQuarantinedState, std::memory_order_release);
      g_quarantined.fetch_add(1, std::memory_order_relaxed);
      g_quarantines.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

// A MAP_FIXED mapping is about to own [start, end): forget the reservations it overlaps first
// (they must never be unmapped by ReleaseQuarantines after the mapping exists; the parts it does
// not cover stay reserved, leaked). One that a release is unmapping right now is waited for, so
// the mapping comes after that munmap, never before it.
void ClaimQuarantinesBefore(uintptr_t start, uintptr_t end) {
  if (g_quarantined.load(std::memory_order_acquire) == 0) return;
  for (auto& q : g_quarantine) {
    for (;;) {
      int st = q.state.load(std::memory_order_acquire);
      if (st == kQFree || st == kQClaiming) break;
      const uintptr_t s = q.start.load(std::memory_order_relaxed);
      const uintptr_t e = q.end.load(std::memory_order_relaxed);
      if (!(s < end && start < e)) break;
      if (st == kQReleasing) {  // the munmap is a syscall away: wait for it
        sched_yield();
        continue;
      }
      if (q.state.compare_exchange_strong(st, kQFree, std::memory_order_acq_rel)) {
        g_quarantined.fetch_sub(1, std::memory_order_relaxed);
        break;
      }
    }
  }
}

size_t ReleaseQuarantines() {
  if (g_quarantined.load(std::memory_order_relaxed) == 0) return 0;
  std::lock_guard<std::mutex> lock(g_release_mu);
  struct Range {
    uintptr_t s, e;
  };
  Range taken[kQuarantineSlots];
  int slots[kQuarantineSlots];
  int n = 0;
  for (int i = 0; i < kQuarantineSlots; ++i) {
    auto& q = g_quarantine[i];
    if (q.state.load(std::memory_order_acquire) != kQuarantinedState) continue;
    const uintptr_t s = q.start.load(std::memory_order_relaxed);
    const uintptr_t e = q.end.load(std::memory_order_relaxed);
    if (Protected(s, e)) continue;
    int expected = kQuarantinedState;
    if (!q.state.compare_exchange_strong(expected, kQReleasing, std::memory_order_acq_rel))
      continue;
    taken[n] = {s, e};
    slots[n++] = i;
  }
  // Overlapping reservations (a range unmapped twice) are unmapped once: after the first
  // munmap the addresses may belong to someone else.
  std::sort(taken, taken + n, [](const Range& a, const Range& b) { return a.s < b.s; });
  auto next_munmap = Next<int (*)(void*, size_t)>(kMunmap);
  for (int i = 0; i < n;) {
    uintptr_t s = taken[i].s, e = taken[i].e;
    for (++i; i < n && taken[i].s <= e; ++i) e = std::max(e, taken[i].e);
    if (next_munmap) (void)next_munmap(reinterpret_cast<void*>(s), e - s);
    else (void)syscall(SYS_munmap, s, e - s);
  }
  for (int i = 0; i < n; ++i) g_quarantine[slots[i]].state.store(kQFree, std::memory_order_release);
  g_quarantined.fetch_sub(n, std::memory_order_relaxed);
  g_releases.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
  return static_cast<size_t>(n);
}

namespace {

const char* g_reason = nullptr;  // written once, under the call_once below

// Each hooked function, called through the symbol every other library binds to, must reach us.
void Probe() {
  if (g_disabled.load(std::memory_order_relaxed)) {
    g_reason = g_no_device.load(std::memory_order_relaxed)
                   ? "no GPU and no RDMA device at load, MPIGPU_PIN_CACHE and "
                     "MPIGPU_IB_REG_CACHE unset (MPIGPU_PIN_CACHE=1 or MPIGPU_IB_REG_CACHE=1 "
                     "forces the hooks)"
                   : "MPIGPU_IB_REG_CACHE=0 and MPIGPU_PIN_CACHE=0 at load";
    return;
  }
  uint64_t before[kNumFns];
  for (int f = 0; f < kNumFns; ++f) before[f] = g_calls[f].load(std::memory_order_relaxed);
  auto sym = [](const char* name) { return dlsym(RTLD_DEFAULT, name); };
  auto p_mmap = reinterpret_cast<void* (*)(void*, size_t, int, int, int, off_t)>(sym("mmap"));
  auto p_munmap = reinterpret_cast<int (*)(void*, size_t)>(sym("munmap"));
  auto p_mremap = reinterpret_cast<void* (*)(void*, size_t, size_t, int, ...)>(sym("mremap"));
  auto p_madvise = reinterpret_cast<int (*)(void*, size_t, int)>(sym("madvise"));
  auto p_shmat = reinterpret_cast<void* (*)(int, const void*, int)>(sym("shmat"));
  auto p_shmdt = reinterpret_cast<int (*)(const void*)>(sym("shmdt"));
  auto p_sbrk = reinterpret_cast<void* (*)(intptr_t)>(sym("sbrk"));
  auto p_brk = reinterpret_cast<int (*)(void*)>(sym("brk"));
  auto p_trim = reinterpret_cast<int (*)(size_t)>(sym("malloc_trim"));
  if (!p_mmap || !p_munmap || !p_mremap || !p_madvise || !p_shmat || !p_shmdt || !p_sbrk ||
      !p_brk || !p_trim) {
    g_reason = "a hooked symbol is not visible to the dynamic linker";
    return;
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = p_mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    g_reason = "the probe mapping failed";
    return;
  }
  (void)p_madvise(p, page, MADV_DONTNEED);
  void* q = p_mremap(p, 2 * page, page, 0);
  (void)p_munmap(q == MAP_FAILED ? p : q, q == MAP_FAILED ? 2 * page : page);
  (void)p_brk(p_sbrk(0));
  (void)p_trim(0);
  bool shm_probed = false;
  const int id = shmget(IPC_PRIVATE, page, IPC_CREAT | 0600);
  if (id >= 0) {
    void* s = p_shmat(id, nullptr, 0);
    if (s != reinterpret_cast<void*>(-1)) {
      (void)p_shmdt(s);
      shm_probed = true;
    }
    (void)shmctl(id, IPC_RMID, nullptr);
  }
  for (int f = 0; f < kNumFns; ++f) {
    if ((f == kShmat || f == kShmdt) && !shm_probed) continue;  // no SysV shm here: nothing to see
    if (g_calls[f].load(std::memory_order_relaxed) == before[f]) {
      static char why[96];
      std::snprintf(why, sizeof why, "calls to %s do not reach the hook (symbol not interposed)",
                    kFnNames[f]);
      g_reason = why;
      return;
    }
  }
}

std::once_flag g_probe_once;

}  // namespace

bool HooksActive() {
  std::call_once(g_probe_once, Probe);
  return g_reason == nullptr;
}

const char* HooksInactiveReason() {
  std::call_once(g_probe_once, Probe);
  return g_reason == nullptr ? "" : g_reason;
}

}  // namespace mpigpu::memreg::memhooks

// The interposed libc symbols (see memhooks.h for the why): each forwards to the next
// definition, then records what the call took away in the invalidation log (memhooks.cc).
//
// Everything reachable from a hook is async-signal-safe and allocation-free: atomics, raw
// syscalls, the next definition's function pointer.
#include <malloc.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <atomic>
#include <cstdint>

#include "memreg/memhooks.h"
#include "memreg/memhooks_internal.h"

// ---- the hooks: forward, then record (after: a range recorded before the call could be
// registered again, still mapped, by a cache draining the record in between) ----
namespace mh = mpigpu::memreg::memhooks;

namespace {

// A function, not a global: hooks run before this file's globals are initialized.
uintptr_t PageMask() {
  static std::atomic<uintptr_t> mask{0};
  uintptr_t m = mask.load(std::memory_order_relaxed);
  if (m == 0) {
    m = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)) - 1;
    mask.store(m, std::memory_order_relaxed);
  }
  return m;
}
uintptr_t RoundUp(uintptr_t a) { return (a + PageMask()) & ~PageMask(); }

void* MmapImpl(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  mh::Count(mh::kMmap);
  if (flags & MAP_FIXED) {
    const auto s = reinterpret_cast<uintptr_t>(addr);
    mh::ClaimQuarantinesBefore(s, s + len);
    mh::ForgetMappings(s, RoundUp(s + len));
  }
  auto next = mh::Next<void* (*)(void*, size_t, int, int, int, off_t)>(mh::kMmap);
  void* r = next ? next(addr, len, prot, flags, fd, off)
                 : reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
  if (r != MAP_FAILED && len != 0 && mh::TrackingMappings()) {
    // An anonymous mapping the caller can use is one allocation's own (memhooks.h); any other
    // replaces what the table held there.
    const auto s = reinterpret_cast<uintptr_t>(r);
    if ((flags & MAP_ANONYMOUS) && prot != PROT_NONE)
      mh::TrackMapping(s, RoundUp(s + len));
    else
      mh::ForgetMappings(s, RoundUp(s + len));
  }
  // A new mapping means whatever was there before is gone (MAP_FIXED replaces; otherwise the
  // range was unmapped, perhaps by a path the hooks do not see): drop it either way.
  if (r != MAP_FAILED && mh::Logging()) {
    const int saved = errno;
    mh::RecordInvalidation(r, len);
    errno = saved;
  }
  return r;
}

// Reserves the vacated [start, end) of a protected range (memhooks.h), unless someone mapped
// there already.
void ReserveVacated(uintptr_t start, uintptr_t end) {
  if (end <= start) return;
  auto next = mh::Next<void* (*)(void*, size_t, int, int, int, off_t)>(mh::kMmap);
  void* want = reinterpret_cast<void*>(start);
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE;
  void* q = next ? next(want, end - start, PROT_NONE, flags, -1, 0)
                 : reinterpret_cast<void*>(
                       syscall(SYS_mmap, want, end - start, PROT_NONE, flags, -1, 0));
  if (q == MAP_FAILED) return;
  auto un = mh::Next<int (*)(void*, size_t)>(mh::kMunmap);
  if (q != want || !mh::AddQuarantine(start, end)) {  // a kernel without NOREPLACE, or full
    if (un) (void)un(q, end - start);
  }
}

}  // namespace

extern "C" {

void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) noexcept {
  return MmapImpl(addr, len, prot, flags, fd, off);
}

void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off64_t off) noexcept {
  return MmapImpl(addr, len, prot, flags, fd, off);
}

int munmap(void* addr, size_t len) noexcept {
  mh::Count(mh::kMunmap);
  const auto s = reinterpret_cast<uintptr_t>(addr);
  const uintptr_t e = (s + len + PageMask()) & ~PageMask();
  if (len != 0 && e > s) mh::ForgetMappings(s, e);  // before: never a listed mapping that went
  if (len != 0 && (s & PageMask()) == 0 && e > s && mh::Logging() && mh::Protected(s, e)) {
    // A registered address range: keep the addresses, drop the pages (memhooks.h).
    const int saved = errno;
    auto next_mmap = mh::Next<void* (*)(void*, size_t, int, int, int, off_t)>(mh::kMmap);
    const int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED;
    void* q = next_mmap ? next_mmap(addr, e - s, PROT_NONE, flags, -1, 0) : MAP_FAILED;
    if (q == addr && mh::AddQuarantine(s, e)) {
      mh::RecordInvalidation(addr, e - s);
      errno = saved;
      return 0;
    }
    errno = saved;  // no reservation (table full): unmap after all
  }
  auto next = mh::Next<int (*)(void*, size_t)>(mh::kMunmap);
  const int r = next ? next(addr, len) : static_cast<int>(syscall(SYS_munmap, addr, len));
  if (r == 0 && mh::Logging()) {
    const int saved = errno;
    mh::RecordInvalidation(addr, len);
    errno = saved;
  }
  return r;
}

void* mremap(void* old_addr, size_t old_size, size_t new_size, int flags, ...) noexcept {
  mh::Count(mh::kMremap);
  void* new_addr = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_addr = va_arg(ap, void*);
    va_end(ap);
  }
  const auto os = reinterpret_cast<uintptr_t>(old_addr);
  const uintptr_t oe = (os + old_size + PageMask()) & ~PageMask();
  const bool prot = mh::Logging() && oe > os && mh::Protected(os, oe);
  // A listed mapping moved, grown or shrunk whole stays its allocation's own at its new place.
  // (TakeMapping, not OwnMapping: a hook must never wait unboundedly for the table's lock.)
  const bool own = oe > os && mh::TakeMapping(os, oe) && !(flags & 4 /* MREMAP_DONTUNMAP */);
  if (flags & MREMAP_FIXED) {  // the target is about to be mapped over, as with MAP_FIXED
    const auto ns = reinterpret_cast<uintptr_t>(new_addr);
    mh::ClaimQuarantinesBefore(ns, ns + new_size);
    mh::ForgetMappings(ns, RoundUp(ns + new_size));
  }
  auto next = mh::Next<void* (*)(void*, size_t, size_t, int, ...)>(mh::kMremap);
  void* r = next ? next(old_addr, old_size, new_size, flags, new_addr)
                 : reinterpret_cast<void*>(
                       syscall(SYS_mremap, old_addr, old_size, new_size, flags, new_addr));
  if (r != MAP_FAILED) {  // moved: it replaced whatever the table held there
    const auto ns = reinterpret_cast<uintptr_t>(r);
    if (r != old_addr) mh::ForgetMappings(ns, RoundUp(ns + new_size));
    if (own) mh::TrackMapping(ns, RoundUp(ns + new_size));
  } else if (own) {
    mh::TrackMapping(os, oe);  // unchanged
  }
  if (r != MAP_FAILED && mh::Logging()) {
    const int saved = errno;
    // A protected range keeps its vacated addresses reserved (MREMAP_DONTUNMAP vacates none).
    if (prot && !(flags & 4 /* MREMAP_DONTUNMAP */)) {
      if (r != old_addr)
        ReserveVacated(os, oe);
      else
        ReserveVacated((os + new_size + PageMask()) & ~PageMask(), oe);
    }
    // The old range lost its pages (moved, shrunk, or kept but emptied with MREMAP_DONTUNMAP);
    // the new one replaced whatever was mapped there.
    mh::RecordInvalidation(old_addr, old_size);
    if (r != old_addr) mh::RecordInvalidation(r, new_size);
    errno = saved;
  }
  return r;
}

int madvise(void* addr, size_t len, int advice) noexcept {
  mh::Count(mh::kMadvise);
  auto next = mh::Next<int (*)(void*, size_t, int)>(mh::kMadvise);
  const int r =
      next ? next(addr, len, advice) : static_cast<int>(syscall(SYS_madvise, addr, len, advice));
  // The advice that drops or replaces pages; MADV_DONTNEED_LOCKED is 24 (Linux 5.18).
  const bool drops = advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE ||
                     advice == 24;
  if (r == 0 && drops && mh::Logging()) {
    const int saved = errno;
    mh::RecordInvalidation(addr, len);
    errno = saved;
  }
  return r;
}

void* shmat(int id, const void* addr, int flg) noexcept {
  mh::Count(mh::kShmat);
  auto next = mh::Next<void* (*)(int, const void*, int)>(mh::kShmat);
  void* r = next ? next(id, addr, flg)
                 : reinterpret_cast<void*>(syscall(SYS_shmat, id, addr, flg));
  if (r != reinterpret_cast<void*>(-1)) {
    const int saved = errno;
    struct shmid_ds ds;
    const size_t len = syscall(SYS_shmctl, id, IPC_STAT, &ds) == 0 ? ds.shm_segsz : 0;
    if (len != 0) mh::ShmRemember(r, len);
    if (len != 0) {  // SHM_REMAP may have replaced a listed mapping
      const auto ss = reinterpret_cast<uintptr_t>(r);
      mh::ForgetMappings(ss, RoundUp(ss + len));
    }
    if (mh::Logging()) {
      if (len != 0)
        mh::RecordInvalidation(r, len);  // SHM_REMAP may have replaced a mapping
      else
        mh::RecordFlushAll();
    }
    errno = saved;
  }
  return r;
}

int shmdt(const void* addr) noexcept {
  mh::Count(mh::kShmdt);
  auto next = mh::Next<int (*)(const void*)>(mh::kShmdt);
  const int r = next ? next(addr) : static_cast<int>(syscall(SYS_shmdt, addr));
  if (r == 0) {
    const int saved = errno;
    const size_t len = mh::ShmForget(addr);
    if (mh::Logging()) {
      if (len != 0)
        mh::RecordInvalidation(addr, len);
      else
        mh::RecordFlushAll();  // attached before load, or the table was full: size unknown
    }
    errno = saved;
  }
  return r;
}

// brk and sbrk: glibc keeps the break in a variable of its own, so these cannot fall back to a
// raw syscall; nothing calls them before the constructor in practice (malloc uses __sbrk).
int brk(void* addr) noexcept {
  mh::Count(mh::kBrk);
  auto next_brk = mh::Next<int (*)(void*)>(mh::kBrk);
  auto next_sbrk = mh::Next<void* (*)(intptr_t)>(mh::kSbrk);
  if (next_brk == nullptr || next_sbrk == nullptr) {
    errno = ENOMEM;
    return -1;
  }
  const uintptr_t old = reinterpret_cast<uintptr_t>(next_sbrk(0));
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  const bool prot = a < old && mh::Logging() && mh::Protected(a, old);
  const int r = next_brk(addr);
  if (r == 0 && a < old && mh::Logging()) {
    const int saved = errno;
    if (prot) ReserveVacated((a + PageMask()) & ~PageMask(), (old + PageMask()) & ~PageMask());
    mh::RecordInvalidation(addr, old - a);
    errno = saved;
  }
  return r;
}

void* sbrk(intptr_t increment) noexcept {
  mh::Count(mh::kSbrk);
  auto next = mh::Next<void* (*)(intptr_t)>(mh::kSbrk);
  if (next == nullptr) {
    errno = ENOMEM;
    return reinterpret_cast<void*>(-1);
  }
  bool prot = false;
  if (increment < 0 && mh::Logging()) {
    const auto top = reinterpret_cast<uintptr_t>(next(0));
    prot = mh::Protected(top + increment, top);
  }
  void* old = next(increment);
  if (old != reinterpret_cast<void*>(-1) && increment < 0 && mh::Logging()) {
    const int saved = errno;
    const auto o = reinterpret_cast<uintptr_t>(old);
    // A registered range keeps its addresses (the break cannot grow back over them until the
    // cache unregistered it; malloc then extends its heap with mmap).
    if (prot) ReserveVacated((o + increment + PageMask()) & ~PageMask(), (o + PageMask()) & ~PageMask());
    mh::RecordInvalidation(static_cast<char*>(old) + increment, static_cast<size_t>(-increment));
    errno = saved;
  }
  return old;
}

// malloc_trim drops the pages of free chunks inside the heap (glibc's own madvise): ranges
// unknown here, so every cache drops everything.
int malloc_trim(size_t pad) noexcept {
  mh::Count(mh::kMallocTrim);
  auto next = mh::Next<int (*)(size_t)>(mh::kMallocTrim);
  const int r = next ? next(pad) : 0;
  if (mh::Logging()) mh::RecordFlushAll();
  return r;
}

}  // extern "C"

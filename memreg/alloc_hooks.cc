// The interposed malloc family (alloc_hooks.h says why). Reachable from any allocation,
// including the hooks' and the dynamic linker's own: no allocation here, atomics and the
// own-mapping table's bounded spinlock only.
#include "memreg/alloc_hooks.h"

#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include "memreg/memhooks.h"

extern "C" {
// glibc's own entry points (exported, GLIBC_2.2.5): what malloc and friends are in libc.
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
void* __libc_valloc(size_t);
void* __libc_pvalloc(size_t);
}

namespace mh = mpigpu::memreg::memhooks;

namespace {

enum Fn { kMalloc, kCalloc, kRealloc, kReallocarray, kFree, kMemalign, kPosixMemalign,
          kAlignedAlloc, kValloc, kPvalloc, kNumFns };
// Calls that reached each definition, counted only while the probe runs (AllocHooksActive): an
// atomic add on every malloc and free would be a shared cache line written by every thread.
std::atomic<uint64_t> g_calls[kNumFns];
std::atomic<bool> g_probing{false};
void Count(Fn f) {
  if (__builtin_expect(g_probing.load(std::memory_order_relaxed), 0))
    g_calls[f].fetch_add(1, std::memory_order_relaxed);
}

struct Mapping {
  uintptr_t start, end;
};

// glibc's chunk header, the two words below the pointer: prev_size and size | flags. A chunk
// glibc mapped on its own has flags exactly IS_MMAPPED (2), and its prev_size holds the chunk's
// offset in its mapping (memalign); the mapping is [chunk - prev_size, chunk + size), page
// aligned (checked). Read only for pointers glibc gave out (valid by free's contract).
bool MappedBlock(const void* p, Mapping* m) {
  const auto* h = static_cast<const size_t*>(p) - 2;
  const size_t size = h[1];
  if ((size & 7) != 2) return false;
  const auto chunk = reinterpret_cast<uintptr_t>(h);
  const size_t off = h[0];
  const uintptr_t page_mask = 4095;  // glibc maps in pages of at least this
  m->start = chunk - off;
  m->end = chunk + (size & ~size_t{7});
  return off <= chunk && ((m->start | m->end) & page_mask) == 0 &&
         m->end > reinterpret_cast<uintptr_t>(p);
}

void LogGone(const Mapping& m) {
  if (mh::LogWanted()) mh::RecordInvalidation(reinterpret_cast<void*>(m.start), m.end - m.start);
}

// The fast path's test (inline: a small block pays one load of its header, already in cache):
// whether p may be a block glibc mapped on its own (MappedBlock says for sure).
inline bool MaybeMapped(const void* p) {
  return p != nullptr && mh::TrackingMappings() && (static_cast<const size_t*>(p)[-1] & 7) == 2;
}

// A new mapping is also logged, as the mmap hook logs every one (glibc's own mmap is not seen):
// whatever a cache kept there is gone. This covers another thread's free() of a block at the
// same address whose record comes after its munmap: without it a page-keyed client (ibv_reg_mr)
// could hit its old region over the new block in between.
__attribute__((noinline)) void TrackMapped(void* p) {
  Mapping m;
  if (!MappedBlock(p, &m)) return;
  mh::TrackMapping(m.start, m.end);
  LogGone(m);
}

inline void* Track(void* p) {
  if (__builtin_expect(MaybeMapped(p), 0)) TrackMapped(p);
  return p;
}

// free() or realloc() of a block already freed but kept (DeferFree): glibc would have stopped
// the program ("double free"); going on would free it twice when released, by then perhaps
// unmapping another allocation's pages. Stop the same way.
void DieIfKept(void* p) {
  if (!mh::Deferred(p)) return;
  static const char msg[] =
      "mpigpu: free(): double free of a block kept while registered (memreg/alloc_hooks.h)\n";
  (void)!write(2, msg, sizeof msg - 1);
  abort();
}

// Out of line: the small-block path (FreeImpl) saves no registers for it.
__attribute__((noinline)) void FreeMapped(void* p) {
  Mapping m;
  if (!MappedBlock(p, &m)) {
    __libc_free(p);
    return;
  }
  DieIfKept(p);
  mh::ForgetMappings(m.start, m.end);
  if (mh::Protected(m.start, m.end)) {
    // Registered: the mapping stays until the cache unregistered it (ReleaseDeferredFrees).
    LogGone(m);
    (void)mh::DeferFree(p, m.start, m.end);
    return;
  }
  __libc_free(p);
  LogGone(m);  // after: a record drained before the munmap could let the range be cached again
}

inline void FreeImpl(void* p) {
  if (__builtin_expect(MaybeMapped(p), 0)) return FreeMapped(p);
  __libc_free(p);
}

void* ReallocImpl(void* p, size_t n) {
  if (p == nullptr) return Track(__libc_malloc(n));
  Mapping m;
  if (!mh::TrackingMappings() || !MappedBlock(p, &m)) return Track(__libc_realloc(p, n));
  DieIfKept(p);
  if (n == 0) {  // glibc frees and returns nullptr
    FreeImpl(p);
    return nullptr;
  }
  if (mh::Protected(m.start, m.end)) {
    // glibc would mremap or unmap the registered mapping: move the bytes ourselves, defer.
    void* q = Track(__libc_malloc(n));
    if (q == nullptr) return nullptr;
    const size_t old = malloc_usable_size(p);
    std::memcpy(q, p, old < n ? old : n);
    FreeImpl(p);
    return q;
  }
  mh::ForgetMappings(m.start, m.end);
  void* q = __libc_realloc(p, n);
  if (q == nullptr) {
    mh::TrackMapping(m.start, m.end);  // unchanged
    return nullptr;
  }
  LogGone(m);
  return Track(q);
}

bool PowerOfTwo(size_t a) { return a != 0 && (a & (a - 1)) == 0; }

}  // namespace

extern "C" {

void* malloc(size_t n) {
  Count(kMalloc);
  return Track(__libc_malloc(n));
}

void* calloc(size_t k, size_t n) {
  Count(kCalloc);
  return Track(__libc_calloc(k, n));
}

void* realloc(void* p, size_t n) {
  Count(kRealloc);
  return ReallocImpl(p, n);
}

void* reallocarray(void* p, size_t k, size_t n) {
  Count(kReallocarray);
  size_t bytes;
  if (__builtin_mul_overflow(k, n, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return ReallocImpl(p, bytes);
}

void free(void* p) {
  Count(kFree);
  FreeImpl(p);
}

void* memalign(size_t align, size_t n) {
  Count(kMemalign);
  return Track(__libc_memalign(align, n));
}

int posix_memalign(void** out, size_t align, size_t n) {
  Count(kPosixMemalign);
  if (!PowerOfTwo(align) || align % sizeof(void*) != 0) return EINVAL;
  const int saved = errno;
  void* p = Track(__libc_memalign(align, n));
  if (p == nullptr) return ENOMEM;
  errno = saved;
  *out = p;
  return 0;
}

void* aligned_alloc(size_t align, size_t n) {
  Count(kAlignedAlloc);
  if (!PowerOfTwo(align)) {
    errno = EINVAL;
    return nullptr;
  }
  return Track(__libc_memalign(align, n));
}

void* valloc(size_t n) {
  Count(kValloc);
  return Track(__libc_valloc(n));
}

void* pvalloc(size_t n) {
  Count(kPvalloc);
  return Track(__libc_pvalloc(n));
}

}  // extern "C"

namespace mpigpu::memreg {
namespace {

const char* g_why = nullptr;  // written once, under the call_once below
std::once_flag g_once;

__attribute__((constructor)) void SetRealFree() { mh::SetRealFree(__libc_free); }

void Probe() {
  if (!mh::TrackingMappings()) {
    g_why = "neither registration cache was wanted at load (no GPU and no RDMA device, or "
            "MPIGPU_PIN_CACHE=0 and MPIGPU_IB_REG_CACHE=0)";
    return;
  }
  // Through the symbols every other library binds to: each call must reach a definition here.
  uint64_t before[kNumFns];
  for (int f = 0; f < kNumFns; ++f) before[f] = g_calls[f].load(std::memory_order_relaxed);
  g_probing.store(true, std::memory_order_relaxed);
  auto sym = [](const char* name) { return dlsym(RTLD_DEFAULT, name); };
  auto p_malloc = reinterpret_cast<void* (*)(size_t)>(sym("malloc"));
  auto p_calloc = reinterpret_cast<void* (*)(size_t, size_t)>(sym("calloc"));
  auto p_realloc = reinterpret_cast<void* (*)(void*, size_t)>(sym("realloc"));
  auto p_reallocarray = reinterpret_cast<void* (*)(void*, size_t, size_t)>(sym("reallocarray"));
  auto p_free = reinterpret_cast<void (*)(void*)>(sym("free"));
  auto p_memalign = reinterpret_cast<void* (*)(size_t, size_t)>(sym("memalign"));
  auto p_posix = reinterpret_cast<int (*)(void**, size_t, size_t)>(sym("posix_memalign"));
  auto p_aligned = reinterpret_cast<void* (*)(size_t, size_t)>(sym("aligned_alloc"));
  auto p_valloc = reinterpret_cast<void* (*)(size_t)>(sym("valloc"));
  auto p_pvalloc = reinterpret_cast<void* (*)(size_t)>(sym("pvalloc"));
  if (!p_malloc || !p_calloc || !p_realloc || !p_reallocarray || !p_free || !p_memalign ||
      !p_posix || !p_aligned || !p_valloc || !p_pvalloc) {
    g_why = "a malloc-family symbol is not visible to the dynamic linker";
    return;
  }
  // Above glibc's largest dynamic mmap threshold (32 MiB): a mapping of its own unless mmap'd
  // blocks are off (M_MMAP_MAX 0: the program's mallopt).
  const size_t big = (33u << 20) + 123;
  void* a = p_malloc(big);
  void* b = p_calloc(1, 64);
  b = p_realloc(b, 128);
  b = p_reallocarray(b, 2, 128);
  void* c = p_memalign(64, 64);
  void* d = nullptr;
  (void)p_posix(&d, 64, 64);
  void* e = p_aligned(64, 64);
  void* f = p_valloc(64);
  void* g = p_pvalloc(64);
  uintptr_t s = 0, t = 0;
  auto ap = reinterpret_cast<uintptr_t>(a);
  size_t a_len = big;
  bool own = a != nullptr && mh::OwnMapping(ap, ap + big, &s, &t);
  // glibc serves a request from a free area of its heap large enough before it maps one (a
  // program that freed a 30 MiB block and then 60 MiB of smaller ones leaves such an area): keep
  // that block, so the next, larger one cannot come from there (address space only: untouched).
  void* heap_served[3] = {};
  for (int i = 0; i < 3 && !own && a != nullptr; ++i) {
    heap_served[i] = a;
    a_len = (big - 123) << (i + 1);
    a = p_malloc(a_len);
    ap = reinterpret_cast<uintptr_t>(a);
    own = a != nullptr && mh::OwnMapping(ap, ap + a_len, &s, &t);
  }
  for (void* q : heap_served) p_free(q);
  for (void* q : {a, b, c, d, e, f, g}) p_free(q);
  g_probing.store(false, std::memory_order_relaxed);
  for (int fn = 0; fn < kNumFns; ++fn) {
    if (g_calls[fn].load(std::memory_order_relaxed) == before[fn]) {
      g_why = "calls to the malloc family do not reach mpigpu's definitions (another allocator "
              "is interposed, e.g. LD_PRELOAD, or the library was loaded with RTLD_LOCAL)";
      return;
    }
  }
  if (!own) {
    g_why = "glibc did not give a 33-264 MiB block a mapping of its own (mmap'd blocks off: "
            "M_MMAP_MAX 0, set by the program)";
    return;
  }
  if (mh::OwnMapping(ap, ap + a_len, &s, &t)) g_why = "a freed block stayed in the table";
}

}  // namespace

bool AllocHooksActive() {
  std::call_once(g_once, Probe);
  return g_why == nullptr;
}

const char* AllocHooksWhyNot() {
  std::call_once(g_once, Probe);
  return g_why == nullptr ? "" : g_why;
}

}  // namespace mpigpu::memreg

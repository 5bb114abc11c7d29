#include "memreg/pin_cache.h"

#include <cuda_runtime_api.h>

#include <atomic>
#include <mutex>

#include "memcopy/log.h"
#include "memreg/alloc_hooks.h"
#include "memreg/pin_cache_config.h"
#include "memreg/reg_cache_config.h"

namespace mpigpu::memreg {

namespace {

Status PinRegister(void* addr, size_t len, void** handle) {
  const cudaError_t e = cudaHostRegister(addr, len, cudaHostRegisterPortable);
  if (e == cudaSuccess) {
    *handle = addr;  // cudaHostUnregister takes the address
    return Status::Ok();
  }
  (void)cudaGetLastError();  // not the program's error
  MPIGPU_TRACE("pin cache: [%p, +%zu) not pinned: %s", addr, len, cudaGetErrorString(e));
  *handle = kNotRegistrable;  // CUDA's own pinned memory, read-only pages, ...: left alone
  return Status::Ok();
}

void PinDeregister(void* handle) {
  const cudaError_t e = cudaHostUnregister(handle);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    MPIGPU_WARN("pin cache: cudaHostUnregister(%p): %s", handle, cudaGetErrorString(e));
  }
}

struct PinState {
  int client = -1;
  const char* why_not = "";
};

const PinState& State() {
  static const PinState* state = [] {
    auto* s = new PinState;
    const PinCacheConfig& c = GetPinCacheConfig();
    int devices = 0;
    if (!c.enabled) {
      s->why_not = "MPIGPU_PIN_CACHE=0";
    } else if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      (void)cudaGetLastError();
      s->why_not = "no GPU";
    } else if (!SharedRegCache().caching()) {
      s->why_not = SharedRegCache().why_not_caching();
    } else if (!AllocHooksActive()) {
      s->why_not = AllocHooksWhyNot();
    } else {
      RegCache::Client cl;
      cl.name = "cuda-pin";
      cl.reg = PinRegister;
      cl.dereg = PinDeregister;
      cl.max_bytes = c.max_mb << 20;
      cl.max_entries = c.max_entries;
      cl.pins_addresses = true;
      cl.exclusive_pages = true;  // cudaHostRegister refuses a page already registered
      // Whole own mappings only (memhooks.h): a copy that starts inside a registration and ends
      // past it fails, so a registration ends where no copy of the program can cross it.
      cl.span = RegCache::OwnMappingSpan(cl.max_bytes);
      s->client = SharedRegCache().AddClient(std::move(cl));
      if (s->client < 0) s->why_not = "no client slot left in the registration cache";
    }
    if (s->client < 0) MPIGPU_INFO("pin cache off: %s", s->why_not);
    return s;
  }();
  return *state;
}

}  // namespace

Region* PinForCopy(const void* p, size_t len) {
  if (len < GetPinCacheConfig().min_bytes) return nullptr;
  const PinState& s = State();
  if (s.client < 0) return nullptr;
  Region* r = nullptr;
  Status st = SharedRegCache().AcquireOnReuse(s.client, const_cast<void*>(p), len, &r);
  if (!st.ok() || r == nullptr) return nullptr;
  if (r->handle[s.client] == kNotRegistrable) {
    SharedRegCache().Release(r);
    return nullptr;
  }
  return r;
}

void UnpinAfterCopy(Region* r) {
  if (r != nullptr) SharedRegCache().Release(r);
}

void PinCacheSync() {
  if (State().client >= 0) SharedRegCache().Sync();
}

bool PinCacheActive() { return State().client >= 0; }
const char* PinCacheWhyNot() { return State().why_not; }

RegCache::Stats PinCacheStats() {
  const PinState& s = State();
  if (s.client < 0) return {};
  return SharedRegCache().stats(s.client);
}

}  // namespace mpigpu::memreg

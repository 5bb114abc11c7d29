#include "internode/ib/ib_reg.h"

#include <atomic>
#include <mutex>

#include "memcopy/log.h"
#include "memreg/reg_cache_config.h"
#include "memreg/shared_reg_cache.h"

namespace mpigpu::internode {
namespace {

// The shared cache's one "ibverbs" client serves one device at a time (clients are never
// removed, and a process has one netmod): `g_dev` is the device whose registrar holds it, `g_gen`
// counts the registrars that held it. Registration callbacks run under the cache's mutex; the
// registrar sets g_dev before its first Acquire and clears it after DropClient, so a callback
// never sees a device that went. A handle remembers its generation: one released after its
// registrar went (the device and its protection domain gone) is freed, never deregistered.
std::atomic<const IbDevice*> g_dev{nullptr};
std::atomic<uint64_t> g_gen{0};
int g_client = -1;           // the cache's client id, once added (under g_client_once)
std::once_flag g_client_once;

struct Handle {
  ibv_mr* mr;
  uint64_t gen;
};

Status CacheRegister(void* addr, size_t len, void** handle) {
  const IbDevice* dev = g_dev.load(std::memory_order_acquire);
  if (dev == nullptr) return Status(Err::kInternal, "ibverbs: registration without a device");
  ibv_mr* mr = nullptr;
  MPIGPU_RETURN_IF_ERROR(dev->Register(addr, len, &mr));
  *handle = new Handle{mr, g_gen.load(std::memory_order_acquire)};
  return Status::Ok();
}

void CacheDeregister(void* handle) {
  auto* h = static_cast<Handle*>(handle);
  const IbDevice* dev = g_dev.load(std::memory_order_acquire);
  if (dev != nullptr && h->gen == g_gen.load(std::memory_order_acquire)) {
    dev->Deregister(h->mr);
  } else {
    MPIGPU_TRACE("ibverbs: a region released after its device went: not deregistered");
  }
  delete h;
}

}  // namespace

IbRegistrar::IbRegistrar(const IbDevice* dev) : dev_(dev) {
  memreg::RegCache& cache = memreg::SharedRegCache();
  if (!memreg::GetRegCacheConfig().enabled) {
    why_not_ = "MPIGPU_IB_REG_CACHE=0";
  } else if (!cache.caching()) {
    why_not_ = cache.why_not_caching();
  } else {
    std::call_once(g_client_once, [&] {
      memreg::RegCache::Client c;
      c.name = "ibverbs";
      c.reg = CacheRegister;
      c.dereg = CacheDeregister;
      c.max_bytes = memreg::GetRegCacheConfig().max_mb << 20;
      c.max_entries = memreg::GetRegCacheConfig().max_entries;
      // Whole own mappings only (ib_reg.h): any other range is registered per message.
      c.span = memreg::RegCache::OwnMappingSpan(c.max_bytes);
      g_client = cache.AddClient(std::move(c));
    });
    const IbDevice* none = nullptr;
    if (g_client < 0) {
      why_not_ = "no client slot left in the registration cache";
    } else if (!g_dev.compare_exchange_strong(none, dev, std::memory_order_acq_rel)) {
      why_not_ = "another ibverbs device of this process holds the cache";
    } else {
      g_gen.fetch_add(1, std::memory_order_acq_rel);
      client_ = g_client;
    }
  }
  if (client_ < 0) MPIGPU_INFO("ibverbs: registration cache off (%s): one region per message", why_not_);
  else MPIGPU_INFO("ibverbs: rendezvous buffers registered through the registration cache");
}

IbRegistrar::~IbRegistrar() {
  if (client_ < 0) return;
  const memreg::RegCache::Stats s = stats();
  MPIGPU_INFO("ibverbs: registration cache: %llu hits, %llu misses, %llu registrations "
              "(%llu per message: not an own mapping), %llu invalidations, %llu merges",
              static_cast<unsigned long long>(s.hits),
              static_cast<unsigned long long>(s.misses),
              static_cast<unsigned long long>(s.registrations),
              static_cast<unsigned long long>(s.uncached),
              static_cast<unsigned long long>(s.invalidations),
              static_cast<unsigned long long>(s.merges));
  memreg::SharedRegCache().DropClient(client_);
  g_dev.store(nullptr, std::memory_order_release);
}

Status IbRegistrar::Acquire(void* addr, size_t len, IbRegion* out) {
  *out = IbRegion{};
  if (client_ >= 0) {
    memreg::Region* r = nullptr;
    MPIGPU_RETURN_IF_ERROR(memreg::SharedRegCache().Acquire(client_, addr, len, &r));
    out->cached = r;
    out->mr = static_cast<Handle*>(r->handle[client_])->mr;
    return Status::Ok();
  }
  MPIGPU_RETURN_IF_ERROR(dev_->Register(addr, len, &out->mr));
  out->own = true;
  return Status::Ok();
}

void IbRegistrar::Release(IbRegion* r) {
  if (r->cached != nullptr) memreg::SharedRegCache().Release(r->cached);
  else if (r->own) dev_->Deregister(r->mr);
  *r = IbRegion{};
}

memreg::RegCache::Stats IbRegistrar::stats() const {
  return client_ >= 0 ? memreg::SharedRegCache().stats(client_) : memreg::RegCache::Stats{};
}

memreg::RegCache::Stats IbRegCacheStats() {
  return g_dev.load(std::memory_order_acquire) != nullptr && g_client >= 0
             ? memreg::SharedRegCache().stats(g_client)
             : memreg::RegCache::Stats{};
}

}  // namespace mpigpu::internode

// Memory registration for the ibverbs rendezvous: the device's memory regions as a client
// ("ibverbs") of the process's one registration cache (memreg/shared_reg_cache.h), so that a
// buffer sent or received again reuses its region instead of an ibv_reg_mr/ibv_dereg_mr pair per
// message on each side.
//
// What is kept: a region over a whole mapping that one allocation owns (memreg/memhooks.h's
// own-mapping table: a large malloc'd block glibc mapped on its own, an anonymous mmap of the
// program), at most MPIGPU_IB_REG_CACHE_MB; a request inside one registers the whole mapping, and
// any later request inside it hits. Any other request (glibc's heap, the stack, static data, a
// file mapping, a mapping over the limit) is registered for that message alone and deregistered
// at its Release: glibc gives heap pages back behind the memory hooks (its own trim and munmap),
// and no process-wide malloc settings are made to prevent it.
// Never stale: an entry whose memory was unmapped, remapped or given back (munmap, mremap,
// madvise, free() of its block, a new mapping at its address: the memory hooks, memhooks.h and
// memreg/alloc_hooks.h) leaves the cache at its next call, deregistered once unreferenced.
// ibv_reg_mr pins pages, not addresses, so nothing is protected: a freed block goes back to glibc
// at once.
// Bounded by MPIGPU_IB_REG_CACHE_MB / _ENTRIES (LRU over unreferenced regions).
//
// Without caching (MPIGPU_IB_REG_CACHE=0, no RDMA device at load and the variable unset, the
// hooks not active, or another IbRegistrar holding the cache's client in this process) every
// Acquire is its own ibv_reg_mr and every Release its ibv_dereg_mr, as before.
//
// Lifetime: one registrar per device, destroyed before its device (IbLmt holds it; BackendSet
// destroys the LMT back-ends before the channels). Its destructor drops every cached region of
// the device (RegCache::DropClient); a region still referenced then (a request outliving its
// engine) is not deregistered later against a device that went (a generation check).
#pragma once

#include <cstddef>
#include <cstdint>

#include "internode/ib/ib_device.h"
#include "memcopy/status.h"
#include "memreg/reg_cache.h"

namespace mpigpu::internode {

// A registration held by one message: a cached region, or a region of its own.
struct IbRegion {
  memreg::Region* cached = nullptr;  // the cache's entry (nullptr: `own`)
  ibv_mr* mr = nullptr;              // what lkey/rkey come from
  bool own = false;                  // registered for this message alone
  bool held() const { return mr != nullptr; }
};

class IbRegistrar {
 public:
  explicit IbRegistrar(const IbDevice* dev);
  ~IbRegistrar();
  IbRegistrar(const IbRegistrar&) = delete;
  IbRegistrar& operator=(const IbRegistrar&) = delete;

  // A registration covering [addr, addr + len) for local writes and remote reads and writes.
  Status Acquire(void* addr, size_t len, IbRegion* out);
  // Gives it back (a cached region stays for the next use); *r is emptied.
  void Release(IbRegion* r);

  bool caching() const { return client_ >= 0; }
  // Why not ("" when caching).
  const char* why_not() const { return why_not_; }
  // The ibverbs client's counters in the shared cache (zeros when not caching).
  memreg::RegCache::Stats stats() const;

 private:
  const IbDevice* dev_;
  int client_ = -1;
  const char* why_not_ = "";
};

// The counters of the registrar now caching in this process (zeros where none is): tests.
memreg::RegCache::Stats IbRegCacheStats();

}  // namespace mpigpu::internode

// Memory registration for the ibverbs rendezvous, shaped as the registration cache that is to
// replace it (RegCache: Acquire a covering, refcounted region; Release it): for now every Acquire
// is its own ibv_reg_mr and every Release its ibv_dereg_mr. Nothing outlives the message, so
// nothing can go stale when the program frees its buffer; the price is a registration per
// rendezvous message on each side.
#pragma once

#include <cstddef>

#include "internode/ib/ib_device.h"
#include "memcopy/status.h"

namespace mpigpu::internode {

struct IbRegion {
  void* addr;
  size_t len;
  void* handle;  // ibv_mr*
  ibv_mr* mr() const { return static_cast<ibv_mr*>(handle); }
};

class IbRegistrar {
 public:
  explicit IbRegistrar(const IbDevice* dev) : dev_(dev) {}
  Status Acquire(void* addr, size_t len, IbRegion** out) {
    ibv_mr* mr = nullptr;
    MPIGPU_RETURN_IF_ERROR(dev_->Register(addr, len, &mr));
    *out = new IbRegion{addr, len, mr};
    return Status::Ok();
  }
  void Release(IbRegion* r) {
    if (r == nullptr) return;
    dev_->Deregister(r->mr());
    delete r;
  }

 private:
  const IbDevice* dev_;
};

}  // namespace mpigpu::internode

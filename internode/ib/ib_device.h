// The RDMA device a rank's ibverbs netmod runs on: which one (MPIGPU_IB_DEV, else the first with
// an active MPIGPU_IB_PORT), its GID (MPIGPU_IB_GID_INDEX; auto prefers a RoCE v2 GID that carries
// an IPv4 address), the IPv4 address peers reach it at through rdma_cm (that GID's address, else
// MPIGPU_NET_IF, else the bootstrap's), its protection domain and its one completion queue
// (polled by the engine's progress: no completion channel, no thread), and memory registration.
//
// The device context is librdmacm's own (rdma_get_devices): rdma_cm binds each connection to the
// context that owns its address, and a QP's PD and CQ must belong to that same context.
//
// Device buffers: at Open, ibv_reg_dmabuf_mr is probed with an invalid fd (EOPNOTSUPP: the
// provider has no dma-buf support, as rxe; EBADF: it has). Where it has, the rendezvous registers
// device buffers through their dma-buf (ib_dmabuf.h, ib_lmt.h); else device data is staged
// through host memory. The finding is logged at MPIGPU_DEBUG=info.
#pragma once

#include <netinet/in.h>

#include <memory>
#include <string>

#include "internode/ib/verbs_api.h"
#include "memcopy/status.h"

namespace mpigpu::internode {

class IbDevice {
 public:
  ~IbDevice();
  // Opens the device MPIGPU_IB_* names. *out stays null, with *none saying why, where this
  // machine has no usable one (no libraries, no device, no active port, an address rdma_cm cannot
  // listen on here, as in a network namespace without it): not an error. An error
  // status: a device exists but the settings are wrong or it cannot be set up.
  static Status Open(size_t cq_entries,
                     std::unique_ptr<IbDevice>* out, std::string* none);

  const VerbsApi& api() const { return *api_; }
  ibv_context* ctx() const { return ctx_; }
  ibv_pd* pd() const { return pd_; }
  ibv_cq* cq() const { return cq_; }
  const std::string& name() const { return name_; }
  // The address rdma_cm reaches it at: its GID's IPv4 address, or MPIGPU_NET_IF's; where neither
  // exists (InfiniBand without MPIGPU_NET_IF) the channel takes the bootstrap's (IPoIB).
  bool has_addr() const { return has_addr_; }
  const in_addr& addr() const { return addr_; }
  int rd_atom() const { return rd_atom_; }  // RDMA READs in flight per QP (both directions)
  bool dmabuf() const { return dmabuf_; }   // the provider takes dma-buf registrations

  // Registers [addr, addr + len) for local writes and remote reads and writes.
  Status Register(void* addr, size_t len, ibv_mr** mr) const;
  void Deregister(ibv_mr* mr) const;

 private:
  IbDevice() = default;
  // Why rdma_cm cannot listen on addr_ with this device ("" when it can).
  std::string CanListen() const;
  const VerbsApi* api_ = nullptr;
  ibv_context** list_ = nullptr;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  std::string name_;
  in_addr addr_{};
  bool has_addr_ = false;
  int rd_atom_ = 1;
  bool dmabuf_ = false;
};

}  // namespace mpigpu::internode

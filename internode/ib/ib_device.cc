#include "internode/ib/ib_device.h"

#include <arpa/inet.h>
#include <errno.h>

#include <algorithm>
#include <cstring>

#include "internode/ib/ib_config.h"
#include "internode/net_config.h"
#include "internode/tcp/tcp_channel.h"
#include "memcopy/log.h"

namespace mpigpu::internode {
namespace {

// ::ffff:a.b.c.d (an IPv4-mapped GID, as RoCE v2 builds from an interface's address).
bool GidIpv4(const ibv_gid& g, in_addr* out) {
  static const unsigned char prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::memcmp(g.raw, prefix, sizeof prefix) != 0) return false;
  std::memcpy(&out->s_addr, g.raw + 12, 4);
  return true;
}

}  // namespace

IbDevice::~IbDevice() {
  if (cq_ != nullptr) api_->ibv_destroy_cq(cq_);
  if (pd_ != nullptr) api_->ibv_dealloc_pd(pd_);
  if (list_ != nullptr) api_->rdma_free_devices(list_);
}

Status IbDevice::Open(size_t cq_entries,
                      std::unique_ptr<IbDevice>* out, std::string* none) {
  out->reset();
  const IbConfig& c = GetIbConfig();
  const VerbsApi* api = Verbs();
  if (api == nullptr) {
    *none = VerbsLoadError();
    return Status::Ok();
  }
  std::unique_ptr<IbDevice> d(new IbDevice());
  d->api_ = api;
  int n = 0;
  d->list_ = api->rdma_get_devices(&n);
  if (d->list_ == nullptr || n == 0) {
    *none = "no RDMA device";
    return Status::Ok();
  }
  const uint8_t port = static_cast<uint8_t>(c.port);
  ibv_port_attr pa{};
  for (int i = 0; i < n && d->ctx_ == nullptr; ++i) {
    const char* name = api->ibv_get_device_name(d->list_[i]->device);
    if (c.dev[0] != '\0' && std::strcmp(c.dev, name) != 0) continue;
    if (api->QueryPort(d->list_[i], port, &pa) != 0 || pa.state != IBV_PORT_ACTIVE) {
      if (c.dev[0] != '\0')
        return Status(Err::kInvalidArg, std::string("ibverbs: MPIGPU_IB_DEV=") + c.dev +
                                            " has no active port " + std::to_string(c.port));
      continue;
    }
    d->ctx_ = d->list_[i];
    d->name_ = name;
  }
  if (d->ctx_ == nullptr) {
    if (c.dev[0] != '\0')
      return Status(Err::kInvalidArg, std::string("ibverbs: no RDMA device named ") + c.dev);
    *none = "no RDMA device with an active port " + std::to_string(c.port);
    return Status::Ok();
  }
  // The GID, and the address it carries.
  bool have_addr = false;
  long gid_index = c.gid_index;
  if (gid_index < 0 && api->_ibv_query_gid_ex != nullptr) {
    for (int i = 0; i < pa.gid_tbl_len && !have_addr; ++i) {
      ibv_gid_entry e{};
      if (api->_ibv_query_gid_ex(d->ctx_, port, i, &e, 0, sizeof e) != 0) continue;
      if (e.gid_type == IBV_GID_TYPE_ROCE_V2 && GidIpv4(e.gid, &d->addr_)) {
        have_addr = true;
        gid_index = i;
      }
    }
  }
  if (gid_index < 0) gid_index = 0;
  if (!have_addr) {
    ibv_gid g{};
    if (gid_index >= pa.gid_tbl_len || api->ibv_query_gid(d->ctx_, port, static_cast<int>(gid_index), &g) != 0)
      return Status(Err::kInvalidArg, "ibverbs: " + d->name_ + " port " + std::to_string(c.port) +
                                          " has no GID " + std::to_string(gid_index));
    have_addr = GidIpv4(g, &d->addr_);
  }
  // MPIGPU_NET_IF, when set, names the address (IPoIB on InfiniBand, or another RoCE address).
  const char* net_if = GetNetConfig().net_if;
  if (*net_if != '\0') {
    MPIGPU_RETURN_IF_ERROR(transport::TcpChannel::ListenAddress(net_if, "", &d->addr_));
    have_addr = true;
  }
  d->has_addr_ = have_addr;
  // rdma_cm must be able to listen there, on this device: not so in a network namespace or a
  // container that lacks the address (the RDMA device itself is visible to every namespace).
  if (have_addr) {
    std::string refused = d->CanListen();
    if (!refused.empty()) {
      *none = refused;
      return Status::Ok();
    }
  }
  ibv_device_attr da{};
  if (api->ibv_query_device(d->ctx_, &da) != 0) return SysError("ibverbs: ibv_query_device");
  d->rd_atom_ = std::max(1, std::min({da.max_qp_rd_atom, da.max_qp_init_rd_atom, 16}));
  d->pd_ = api->ibv_alloc_pd(d->ctx_);
  if (d->pd_ == nullptr) return SysError(("ibverbs: ibv_alloc_pd on " + d->name_).c_str());
  const int cqe = static_cast<int>(std::min<size_t>(cq_entries, static_cast<size_t>(da.max_cqe)));
  d->cq_ = api->ibv_create_cq(d->ctx_, cqe, nullptr, nullptr, 0);
  if (d->cq_ == nullptr) return SysError(("ibverbs: ibv_create_cq on " + d->name_).c_str());
  // dma-buf: an invalid fd tells a provider without support (EOPNOTSUPP) from one with (EBADF).
  const char* gpu_path = "device buffers staged through host memory";
  const char* gdr_path = "device buffers by GPUDirect RDMA where the GPU exports dma-bufs";
  if (api->ibv_reg_dmabuf_mr == nullptr) {
    MPIGPU_INFO("ibverbs: %s: libibverbs has no ibv_reg_dmabuf_mr: %s", d->name_.c_str(), gpu_path);
  } else {
    errno = 0;
    ibv_mr* mr = api->ibv_reg_dmabuf_mr(d->pd_, 0, 4096, 0, -1, IBV_ACCESS_LOCAL_WRITE);
    const int err = errno;
    if (mr != nullptr) api->ibv_dereg_mr(mr);
    d->dmabuf_ = mr == nullptr && err != EOPNOTSUPP && err != ENOSYS;
    MPIGPU_INFO("ibverbs: %s: ibv_reg_dmabuf_mr answers %s: %s", d->name_.c_str(),
                std::strerror(err), d->dmabuf_ ? gdr_path : gpu_path);
  }
  char text[INET_ADDRSTRLEN] = "the bootstrap's";
  if (have_addr) ::inet_ntop(AF_INET, &d->addr_, text, sizeof text);
  MPIGPU_INFO("ibverbs: device %s port %zu (%s), GID index %ld, rdma_cm address %s",
              d->name_.c_str(), c.port, pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
              gid_index, text);
  *out = std::move(d);
  return Status::Ok();
}

std::string IbDevice::CanListen() const {
  char text[INET_ADDRSTRLEN] = "?";
  ::inet_ntop(AF_INET, &addr_, text, sizeof text);
  rdma_event_channel* ec = api_->rdma_create_event_channel();
  if (ec == nullptr) return std::string("rdma_create_event_channel: ") + std::strerror(errno);
  rdma_cm_id* id = nullptr;
  std::string why;
  if (api_->rdma_create_id(ec, &id, nullptr, RDMA_PS_TCP) != 0) {
    why = std::string("rdma_create_id: ") + std::strerror(errno);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr = addr_;
    if (api_->rdma_bind_addr(id, reinterpret_cast<sockaddr*>(&a)) != 0)
      why = std::string("rdma_cm cannot bind ") + text + " (" + std::strerror(errno) + ")";
    else if (id->verbs != ctx_)
      why = std::string(text) + " is not an address of " + name_;
    api_->rdma_destroy_id(id);
  }
  api_->rdma_destroy_event_channel(ec);
  return why;
}

Status IbDevice::Register(void* addr, size_t len, ibv_mr** mr) const {
  *mr = api_->reg_mr(pd_, addr, len,
                     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
  if (*mr == nullptr) return SysError(("ibverbs: ibv_reg_mr of " + std::to_string(len) + " bytes").c_str());
  return Status::Ok();
}

void IbDevice::Deregister(ibv_mr* mr) const {
  if (mr != nullptr) api_->ibv_dereg_mr(mr);
}

}  // namespace mpigpu::internode

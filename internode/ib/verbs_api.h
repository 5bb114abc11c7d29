// libibverbs and librdmacm, loaded at run time (dlopen), not at link time: every binary of the
// project links the ibverbs netmod, and must still start on machines that lack the libraries
// (a GPU machine without rdma-core) as on those that have them but no RDMA device. The headers
// come from libibverbs-dev / librdmacm-dev; the data path (ibv_post_send, ibv_post_recv,
// ibv_poll_cq) is inline in verbs.h and needs no symbol. Verbs() loads once; it is null, with
// VerbsLoadError() saying why, where the libraries cannot be had.
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <string>

namespace mpigpu::internode {

struct VerbsApi {
#define MPIGPU_VERBS_FN(name) decltype(&::name) name
  MPIGPU_VERBS_FN(ibv_alloc_pd);
  MPIGPU_VERBS_FN(ibv_dealloc_pd);
  MPIGPU_VERBS_FN(ibv_create_cq);
  MPIGPU_VERBS_FN(ibv_destroy_cq);
  MPIGPU_VERBS_FN(ibv_dereg_mr);
  MPIGPU_VERBS_FN(ibv_query_device);
  MPIGPU_VERBS_FN(ibv_query_gid);
  MPIGPU_VERBS_FN(_ibv_query_gid_ex);
  MPIGPU_VERBS_FN(ibv_reg_dmabuf_mr);
  MPIGPU_VERBS_FN(ibv_get_device_name);
  MPIGPU_VERBS_FN(ibv_wc_status_str);
  MPIGPU_VERBS_FN(ibv_get_async_event);
  MPIGPU_VERBS_FN(ibv_ack_async_event);
  MPIGPU_VERBS_FN(ibv_event_type_str);
  MPIGPU_VERBS_FN(rdma_get_devices);
  MPIGPU_VERBS_FN(rdma_free_devices);
  MPIGPU_VERBS_FN(rdma_create_event_channel);
  MPIGPU_VERBS_FN(rdma_destroy_event_channel);
  MPIGPU_VERBS_FN(rdma_create_id);
  MPIGPU_VERBS_FN(rdma_destroy_id);
  MPIGPU_VERBS_FN(rdma_bind_addr);
  MPIGPU_VERBS_FN(rdma_listen);
  MPIGPU_VERBS_FN(rdma_resolve_addr);
  MPIGPU_VERBS_FN(rdma_resolve_route);
  MPIGPU_VERBS_FN(rdma_create_qp);
  MPIGPU_VERBS_FN(rdma_destroy_qp);
  MPIGPU_VERBS_FN(rdma_connect);
  MPIGPU_VERBS_FN(rdma_accept);
  MPIGPU_VERBS_FN(rdma_reject);
  MPIGPU_VERBS_FN(rdma_disconnect);
  MPIGPU_VERBS_FN(rdma_get_cm_event);
  MPIGPU_VERBS_FN(rdma_ack_cm_event);
  MPIGPU_VERBS_FN(rdma_event_str);
  MPIGPU_VERBS_FN(rdma_get_src_port);
#undef MPIGPU_VERBS_FN
  // Exported, but hidden behind macros in verbs.h (which pick inline variants).
  ibv_mr* (*reg_mr)(ibv_pd* pd, void* addr, size_t length, int access);
  int (*ibv_query_port_compat)(ibv_context* ctx, uint8_t port, void* attr);

  // ibv_query_port as verbs.h's inline does it, without its link-time symbol.
  int QueryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) const;
};

// The loaded libraries (null where they cannot be had: VerbsLoadError says why).
const VerbsApi* Verbs();
const std::string& VerbsLoadError();

}  // namespace mpigpu::internode

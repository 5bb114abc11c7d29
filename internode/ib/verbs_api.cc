#include "internode/ib/verbs_api.h"

#include <dlfcn.h>

#include <cstring>

namespace mpigpu::internode {
namespace {

struct Loaded {
  VerbsApi api{};
  bool ok = false;
  std::string error;
};

template <typename F>
bool Sym(void* lib, const char* name, F* out, std::string* error) {
  *out = reinterpret_cast<F>(::dlsym(lib, name));
  if (*out == nullptr && error->empty()) *error = std::string("symbol ") + name + " missing";
  return *out != nullptr;
}

const Loaded& Load() {
  static const Loaded* loaded = [] {
    auto* l = new Loaded();
    void* verbs = ::dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);
    void* cm = verbs != nullptr ? ::dlopen("librdmacm.so.1", RTLD_NOW | RTLD_GLOBAL) : nullptr;
    if (verbs == nullptr || cm == nullptr) {
      const char* e = ::dlerror();
      l->error = std::string("cannot load ") + (verbs == nullptr ? "libibverbs.so.1" : "librdmacm.so.1") +
                 " (" + (e != nullptr ? e : "?") + "; packages libibverbs1, librdmacm1)";
      return l;
    }
    VerbsApi& a = l->api;
    std::string& err = l->error;
#define V(name) Sym(verbs, #name, &a.name, &err)
#define C(name) Sym(cm, #name, &a.name, &err)
    V(ibv_alloc_pd); V(ibv_dealloc_pd); V(ibv_create_cq); V(ibv_destroy_cq); V(ibv_dereg_mr);
    V(ibv_query_device); V(ibv_query_gid); V(ibv_get_device_name); V(ibv_wc_status_str);
    V(ibv_get_async_event); V(ibv_ack_async_event); V(ibv_event_type_str);
    Sym(verbs, "ibv_reg_mr", &a.reg_mr, &err);
    C(rdma_get_devices); C(rdma_free_devices); C(rdma_create_event_channel);
    C(rdma_destroy_event_channel); C(rdma_create_id); C(rdma_destroy_id); C(rdma_bind_addr);
    C(rdma_listen); C(rdma_resolve_addr); C(rdma_resolve_route); C(rdma_create_qp);
    C(rdma_destroy_qp); C(rdma_connect); C(rdma_accept); C(rdma_reject); C(rdma_disconnect);
    C(rdma_get_cm_event); C(rdma_ack_cm_event); C(rdma_event_str); C(rdma_get_src_port);
#undef V
#undef C
    // Optional (older rdma-core lacks them): null means "not there".
    a._ibv_query_gid_ex = reinterpret_cast<decltype(a._ibv_query_gid_ex)>(::dlsym(verbs, "_ibv_query_gid_ex"));
    a.ibv_reg_dmabuf_mr = reinterpret_cast<decltype(a.ibv_reg_dmabuf_mr)>(::dlsym(verbs, "ibv_reg_dmabuf_mr"));
    a.ibv_query_port_compat = reinterpret_cast<decltype(a.ibv_query_port_compat)>(::dlsym(verbs, "ibv_query_port"));
    l->ok = err.empty() && a.ibv_query_port_compat != nullptr;
    if (!l->ok && err.empty()) err = "symbol ibv_query_port missing";
    return l;
  }();
  return *loaded;
}

}  // namespace

int VerbsApi::QueryPort(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) const {
  std::memset(attr, 0, sizeof *attr);
  if (verbs_context* v = verbs_get_ctx_op(ctx, query_port))
    return v->query_port(ctx, port, attr, sizeof *attr);
  return ibv_query_port_compat(ctx, port, attr);
}

const VerbsApi* Verbs() { return Load().ok ? &Load().api : nullptr; }
const std::string& VerbsLoadError() { return Load().error; }

}  // namespace mpigpu::internode

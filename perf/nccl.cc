#include "perf/nccl.h"

#include <dlfcn.h>
#include <stdlib.h>

namespace mpigpu::perf {
namespace {

template <typename Fn>
Status Resolve(void* lib, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(lib, name));
  if (*fn == nullptr)
    return Status(Err::kInvalidArg,
                  std::string("libnccl.so.2 lacks ") + name + " (NCCL older than 2.7?)");
  return Status::Ok();
}

}  // namespace

Status Nccl::Load(std::unique_ptr<Nccl>* out) {
  setenv("NCCL_NVLS_ENABLE", "0", /*overwrite=*/0);
  void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return Status(Err::kInvalidArg, std::string("cannot load libnccl.so.2: ") +
                                        (why ? why : "unknown error"));
  }
  auto n = std::make_unique<Nccl>();
  MPIGPU_RETURN_IF_ERROR(Resolve(lib, "ncclGetUniqueId", &n->get_unique_id_));
  MPIGPU_RETURN_IF_ERROR(Resolve(lib, "ncclCommInitRank", &n->comm_init_rank_));
  MPIGPU_RETURN_IF_ERROR(Resolve(lib, "ncclCommDestroy", &n->comm_destroy_));
  MPIGPU_RETURN_IF_ERROR(Resolve(lib, "ncclGroupStart", &n->group_start_));
  MPIGPU_RETURN_IF_ERROR(Resolve(lib, "ncclGroupEnd", &n->group_end_));
  MPIGPU_RETURN_IF_ERROR(Resolve(lib, "ncclSend", &n->send_));
  MPIGPU_RETURN_IF_ERROR(Resolve(lib, "ncclRecv", &n->recv_));
  MPIGPU_RETURN_IF_ERROR(Resolve(lib, "ncclGetErrorString", &n->error_string_));
  *out = std::move(n);
  return Status::Ok();
}

Status Nccl::Check(Result r, const char* what) const {
  if (r == 0) return Status::Ok();
  return Status(Err::kCuda, std::string(what) + ": " + error_string_(r));
}

Status Nccl::GetUniqueId(NcclUniqueId* id) const {
  return Check(get_unique_id_(id), "ncclGetUniqueId");
}
Status Nccl::CommInitRank(NcclComm* comm, int nranks, const NcclUniqueId& id, int rank) const {
  return Check(comm_init_rank_(comm, nranks, id, rank), "ncclCommInitRank");
}
Status Nccl::CommDestroy(NcclComm comm) const {
  return Check(comm_destroy_(comm), "ncclCommDestroy");
}
Status Nccl::GroupStart() const { return Check(group_start_(), "ncclGroupStart"); }
Status Nccl::GroupEnd() const { return Check(group_end_(), "ncclGroupEnd"); }
Status Nccl::Send(const void* buf, size_t count, NcclDataType type, int peer, NcclComm comm,
                  cudaStream_t stream) const {
  return Check(send_(buf, count, type, peer, comm, stream), "ncclSend");
}
Status Nccl::Recv(void* buf, size_t count, NcclDataType type, int peer, NcclComm comm,
                  cudaStream_t stream) const {
  return Check(recv_(buf, count, type, peer, comm, stream), "ncclRecv");
}

}  // namespace mpigpu::perf

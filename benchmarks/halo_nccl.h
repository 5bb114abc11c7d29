// NCCL, loaded at run time (dlopen libnccl.so.2) for the halo application's nccl mode, so the
// binary builds and runs where NCCL is absent. Only the calls the halo exchange needs; the types
// mirror nccl.h's ABI (ncclUniqueId is 128 bytes, ncclComm_t a pointer, enums and results int).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "memcopy/status.h"

namespace mpigpu::halo {

struct NcclUniqueId {
  char internal[128];  // NCCL_UNIQUE_ID_BYTES
};
using NcclComm = struct NcclCommOpaque*;
enum NcclDataType : int { kNcclFloat32 = 7, kNcclFloat64 = 8 };  // ncclFloat32, ncclFloat64

class Nccl {
 public:
  // Loads libnccl.so.2 and its symbols. A missing library or symbol is kInvalidArg with
  // dlerror's text (the caller reports NCCL as unavailable).
  static Status Load(std::unique_ptr<Nccl>* out);

  Status GetUniqueId(NcclUniqueId* id) const;
  // Collective over nranks processes; the current CUDA device is the rank's GPU.
  Status CommInitRank(NcclComm* comm, int nranks, const NcclUniqueId& id, int rank) const;
  Status CommDestroy(NcclComm comm) const;
  Status GroupStart() const;
  Status GroupEnd() const;
  Status Send(const void* buf, size_t count, NcclDataType type, int peer, NcclComm comm,
              cudaStream_t stream) const;
  Status Recv(void* buf, size_t count, NcclDataType type, int peer, NcclComm comm,
              cudaStream_t stream) const;

 private:
  using Result = int;  // ncclResult_t; 0 is ncclSuccess
  Status Check(Result r, const char* what) const;

  Result (*get_unique_id_)(NcclUniqueId*) = nullptr;
  Result (*comm_init_rank_)(NcclComm*, int, NcclUniqueId, int) = nullptr;
  Result (*comm_destroy_)(NcclComm) = nullptr;
  Result (*group_start_)() = nullptr;
  Result (*group_end_)() = nullptr;
  Result (*send_)(const void*, size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  Result (*recv_)(void*, size_t, int, int, NcclComm, cudaStream_t) = nullptr;
  const char* (*error_string_)(Result) = nullptr;
};

}  // namespace mpigpu::halo

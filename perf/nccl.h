// NCCL, loaded at run time (dlopen libnccl.so.2), for the measuring programs' NCCL peers: the
// sweep's nccl column and the halo application's nccl mode. They build and run where NCCL is
// absent. Only the calls they use; the types mirror nccl.h's ABI (ncclUniqueId is 128 bytes,
// ncclComm_t a pointer, enums and results int).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

#include "memcopy/status.h"

namespace mpigpu::perf {

struct NcclUniqueId {
  char internal[128];  // NCCL_UNIQUE_ID_BYTES
};
using NcclComm = struct NcclCommOpaque*;
// ncclInt8, ncclFloat32, ncclFloat64
enum NcclDataType : int { kNcclInt8 = 0, kNcclFloat32 = 7, kNcclFloat64 = 8 };

class Nccl {
 public:
  // Loads libnccl.so.2 and its symbols (never unloaded: NCCL keeps proxy threads and CUDA state
  // until the process ends). First sets NCCL_NVLS_ENABLE=0 unless the user set it: NVLink SHARP
  // (multicast) stays off. A missing library or symbol is kInvalidArg with the reason (the
  // caller reports NCCL as unavailable).
  static Status Load(std::unique_ptr<Nccl>* out);

  // Every call below returns kCuda "ncclCall: NCCL's error string" when NCCL fails.
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

}  // namespace mpigpu::perf

// The halo application's exchange: the run's context (rank, device, stream, NCCL), memory of one
// kind, and the exchangers, one per mode behind one interface, chosen from a table:
//   mpigpu  device buffers straight into MPIGPU_Isend/Irecv (MPIGPU_BUF_GPU); rows are contiguous,
//           columns an MPIGPU_Type_vector that mpigpu packs itself.
//   staged  the paper's baseline: each face copied (cudaMemcpy2DAsync for columns) to a pinned
//           host buffer, host MPIGPU_Isend/Irecv, copied back.
//   nccl    ncclSend/ncclRecv (libnccl.so.2 loaded at run time, id sent with MPIGPU_Bcast);
//           columns packed to contiguous device buffers with cudaMemcpy2DAsync.
// With --cpu the grids live in host memory and mpigpu/staged move host buffers (MPIGPU_BUF_HOST).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

#include "benchmarks/halo_grid.h"
#include "memcopy/memloc.h"
#include "memcopy/status.h"
#include "mpigpu_api/mpigpu.h"
#include "perf/nccl.h"

namespace mpigpu::halo {

struct Context {
  int rank = 0, size = 1;
  bool cpu = false;
  int device = -1;                           // the rank's CUDA device (GPU runs)
  int device_count = 0;                      // visible CUDA devices
  MemLoc loc = MemLoc::Host();               // where the grids live
  MPIGPU_Buftype buftype = MPIGPU_BUF_HOST;  // the same, as the API's tag
  cudaStream_t stream = nullptr;             // the stencil's and the copies' stream (GPU runs)
  std::unique_ptr<perf::Nccl> nccl;          // null when NCCL is not used
  perf::NcclComm nccl_comm = nullptr;
};

// Waits for the GPU work enqueued on the context's stream (nothing to wait for on the CPU).
Status Sync(const Context& c);

// Starts NCCL on every rank (collective): rank 0's id reaches the others through MPIGPU_Bcast.
Status StartNccl(Context* ctx);

// The API's datatype for float and double.
template <typename T>
MPIGPU_Datatype ApiType();
template <>
inline MPIGPU_Datatype ApiType<float>() { return MPIGPU_FLOAT; }
template <>
inline MPIGPU_Datatype ApiType<double>() { return MPIGPU_DOUBLE; }

// Memory of one kind, freed with the matching call.
class Buffer {
 public:
  enum class Kind { kHost, kPinned, kDevice };
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();
  Status Allocate(Kind kind, size_t bytes);
  template <typename T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  Kind kind_ = Kind::kHost;
  void* p_ = nullptr;
};

// Fills the halo of `grid` (rows, then columns) and returns when it is complete in memory.
template <typename T>
class Exchanger {
 public:
  virtual ~Exchanger() = default;
  virtual Status Exchange(T* grid) = 0;
};

// The exchanger of `mode` for block `b` with halo width `halo`, set up (datatypes, buffers).
// T is float or double.
template <typename T>
Status MakeExchanger(Mode mode, const Context& ctx, const Block& b, int halo,
                     std::unique_ptr<Exchanger<T>>* out);

}  // namespace mpigpu::halo

#include "benchmarks/halo_exchange.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "memcopy/memcopy.h"
#include "perf/api_check.h"

namespace mpigpu::halo {

static_assert(kNoNeighbor == MPIGPU_PROC_NULL, "a missing neighbour is MPI's null process");

Status Sync(const Context& c) {
  if (!c.cpu) MPIGPU_CUDA_CHECK(cudaStreamSynchronize(c.stream));
  return Status::Ok();
}

Status StartNccl(Context* ctx) {
  perf::NcclUniqueId id{};
  if (ctx->rank == 0) MPIGPU_RETURN_IF_ERROR(ctx->nccl->GetUniqueId(&id));
  PERF_API(MPIGPU_Bcast(&id, MPIGPU_BUF_HOST, sizeof id, MPIGPU_BYTE, 0, MPIGPU_COMM_WORLD));
  return ctx->nccl->CommInitRank(&ctx->nccl_comm, ctx->size, id, ctx->rank);
}

Buffer::~Buffer() {
  if (p_ == nullptr) return;
  if (kind_ == Kind::kDevice) cudaFree(p_);
  if (kind_ == Kind::kPinned) cudaFreeHost(p_);
  if (kind_ == Kind::kHost) std::free(p_);
}

Status Buffer::Allocate(Kind kind, size_t bytes) {
  kind_ = kind;
  bytes = std::max<size_t>(bytes, 1);
  if (kind == Kind::kDevice) MPIGPU_CUDA_CHECK(cudaMalloc(&p_, bytes));
  if (kind == Kind::kPinned) MPIGPU_CUDA_CHECK(cudaMallocHost(&p_, bytes));
  if (kind == Kind::kHost && (p_ = std::malloc(bytes)) == nullptr)
    return Status(Err::kNoMemory, "malloc of " + std::to_string(bytes) + " bytes failed");
  return Status::Ok();
}

namespace {

template <typename T>
perf::NcclDataType NcclType() { return sizeof(T) == 4 ? perf::kNcclFloat32 : perf::kNcclFloat64; }

// A face between the grid and a contiguous buffer: one copy for rows, one strided copy
// (cudaMemcpy2DAsync on a device) for columns. The grid's rows are s.pitch elements apart, the
// buffer's s.width.
template <typename T>
Status CopyFace(T* dst, MemLoc dst_loc, int64_t dst_pitch, const T* src, MemLoc src_loc,
                int64_t src_pitch, const FaceShape& s, cudaStream_t stream) {
  if (s.contiguous()) return Copy(dst, dst_loc, src, src_loc, s.elems() * sizeof(T), stream);
  return Copy2D(dst, dst_loc, dst_pitch * sizeof(T), src, src_loc, src_pitch * sizeof(T),
                s.width * sizeof(T), s.height, stream);
}
template <typename T>
Status PackFace(T* dst, MemLoc dst_loc, const T* grid, MemLoc grid_loc, const FaceShape& s,
                cudaStream_t stream) {
  return CopyFace(dst, dst_loc, s.width, grid, grid_loc, s.pitch, s, stream);
}
template <typename T>
Status UnpackFace(T* grid, MemLoc grid_loc, const T* src, MemLoc src_loc, const FaceShape& s,
                  cudaStream_t stream) {
  return CopyFace(grid, grid_loc, s.pitch, src, src_loc, s.width, s, stream);
}

// What every exchanger starts from: the context and the block's two phases (rows, columns).
template <typename T>
class PhaseExchanger : public Exchanger<T> {
 public:
  PhaseExchanger(const Context& ctx, const Block& b, int halo) : ctx_(ctx) {
    for (int k = 0; k < kPhases; ++k) phases_[k] = ExchangePhase(b, halo, k);
  }

 protected:
  const Context& ctx_;
  Phase phases_[kPhases];
};

// mpigpu: the grid itself goes to the API, tagged with where it lives; columns are vector types.
template <typename T>
class MpigpuExchanger : public PhaseExchanger<T> {
 public:
  using PhaseExchanger<T>::PhaseExchanger;
  ~MpigpuExchanger() override {
    if (column_type_ != MPIGPU_DATATYPE_NULL) MPIGPU_Type_free(&column_type_);
  }
  Status Init() {
    const FaceShape& c = this->phases_[1].shape;
    PERF_API(MPIGPU_Type_vector(static_cast<int>(c.height), static_cast<int>(c.width),
                                static_cast<int>(c.pitch), ApiType<T>(), &column_type_));
    PERF_API(MPIGPU_Type_commit(&column_type_));
    return Status::Ok();
  }
  Status Exchange(T* grid) override {
    for (const Phase& ph : this->phases_) {
      // Rows: w*pitch contiguous elements; columns: one vector.
      const bool rows = ph.shape.contiguous();
      const int count = rows ? static_cast<int>(ph.shape.elems()) : 1;
      const MPIGPU_Datatype type = rows ? ApiType<T>() : column_type_;
      MPIGPU_Request req[4];
      int n = 0;
      // Missing neighbours are skipped, as in the staged mode (MPIGPU_PROC_NULL would work too).
      for (const Face& f : ph.faces)
        if (f.peer != kNoNeighbor)
          PERF_API(MPIGPU_Irecv(grid + f.recv_offset, this->ctx_.buftype, count, type, f.peer,
                                f.recv_tag, MPIGPU_COMM_WORLD, &req[n++]));
      for (const Face& f : ph.faces)
        if (f.peer != kNoNeighbor)
          PERF_API(MPIGPU_Isend(grid + f.send_offset, this->ctx_.buftype, count, type, f.peer,
                                f.send_tag, MPIGPU_COMM_WORLD, &req[n++]));
      if (n > 0) PERF_API(MPIGPU_Waitall(n, req, MPIGPU_STATUSES_IGNORE));
    }
    return Status::Ok();
  }

 private:
  MPIGPU_Datatype column_type_ = MPIGPU_DATATYPE_NULL;
};

// staged: every face through a contiguous host buffer (pinned on GPU runs) and host messages.
template <typename T>
class StagedExchanger : public PhaseExchanger<T> {
 public:
  using PhaseExchanger<T>::PhaseExchanger;
  Status Init() {
    const Buffer::Kind kind = this->ctx_.cpu ? Buffer::Kind::kHost : Buffer::Kind::kPinned;
    for (int k = 0; k < kPhases; ++k)
      for (int f = 0; f < 2; ++f) {
        const size_t bytes = this->phases_[k].shape.elems() * sizeof(T);
        MPIGPU_RETURN_IF_ERROR(send_[k][f].Allocate(kind, bytes));
        MPIGPU_RETURN_IF_ERROR(recv_[k][f].Allocate(kind, bytes));
      }
    return Status::Ok();
  }
  Status Exchange(T* grid) override {
    const Context& ctx = this->ctx_;
    const MemLoc host = MemLoc::Host();
    for (int k = 0; k < kPhases; ++k) {
      const Phase& ph = this->phases_[k];
      const int count = static_cast<int>(ph.shape.elems());
      MPIGPU_Request req[4];
      int n = 0;
      for (int f = 0; f < 2; ++f)
        if (ph.faces[f].peer != kNoNeighbor)
          PERF_API(MPIGPU_Irecv(recv_[k][f].template as<T>(), MPIGPU_BUF_HOST, count, ApiType<T>(),
                                ph.faces[f].peer, ph.faces[f].recv_tag, MPIGPU_COMM_WORLD,
                                &req[n++]));
      for (int f = 0; f < 2; ++f)
        if (ph.faces[f].peer != kNoNeighbor)
          MPIGPU_RETURN_IF_ERROR(PackFace(send_[k][f].template as<T>(), host,
                                          grid + ph.faces[f].send_offset, ctx.loc, ph.shape,
                                          ctx.stream));
      MPIGPU_RETURN_IF_ERROR(Sync(ctx));
      for (int f = 0; f < 2; ++f)
        if (ph.faces[f].peer != kNoNeighbor)
          PERF_API(MPIGPU_Isend(send_[k][f].template as<T>(), MPIGPU_BUF_HOST, count, ApiType<T>(),
                                ph.faces[f].peer, ph.faces[f].send_tag, MPIGPU_COMM_WORLD,
                                &req[n++]));
      PERF_API(MPIGPU_Waitall(n, req, MPIGPU_STATUSES_IGNORE));
      for (int f = 0; f < 2; ++f)
        if (ph.faces[f].peer != kNoNeighbor)
          MPIGPU_RETURN_IF_ERROR(UnpackFace(grid + ph.faces[f].recv_offset, ctx.loc,
                                            recv_[k][f].template as<const T>(), host, ph.shape,
                                            ctx.stream));
      MPIGPU_RETURN_IF_ERROR(Sync(ctx));  // the columns phase sends the corners just received
    }
    return Status::Ok();
  }

 private:
  Buffer send_[kPhases][2], recv_[kPhases][2];  // [phase][face]
};

// nccl: grouped ncclSend/ncclRecv on the stencil's stream; rows straight from the grid, columns
// through contiguous device buffers (NCCL has no datatypes).
template <typename T>
class NcclExchanger : public PhaseExchanger<T> {
 public:
  using PhaseExchanger<T>::PhaseExchanger;
  Status Init() {
    const size_t bytes = this->phases_[1].shape.elems() * sizeof(T);
    for (int f = 0; f < 2; ++f) {
      MPIGPU_RETURN_IF_ERROR(send_[f].Allocate(Buffer::Kind::kDevice, bytes));
      MPIGPU_RETURN_IF_ERROR(recv_[f].Allocate(Buffer::Kind::kDevice, bytes));
    }
    return Status::Ok();
  }
  Status Exchange(T* grid) override {
    const Context& ctx = this->ctx_;
    const perf::Nccl& nccl = *ctx.nccl;
    for (const Phase& ph : this->phases_) {
      const bool rows = ph.shape.contiguous();
      const T* sendp[2];
      T* recvp[2];
      for (int f = 0; f < 2; ++f) {
        sendp[f] = rows ? grid + ph.faces[f].send_offset : send_[f].template as<T>();
        recvp[f] = rows ? grid + ph.faces[f].recv_offset : recv_[f].template as<T>();
        if (!rows && ph.faces[f].peer != kNoNeighbor)
          MPIGPU_RETURN_IF_ERROR(PackFace(send_[f].template as<T>(), ctx.loc,
                                          grid + ph.faces[f].send_offset, ctx.loc, ph.shape,
                                          ctx.stream));
      }
      MPIGPU_RETURN_IF_ERROR(nccl.GroupStart());
      for (int f = 0; f < 2; ++f) {
        const int peer = ph.faces[f].peer;
        if (peer == kNoNeighbor) continue;
        MPIGPU_RETURN_IF_ERROR(nccl.Recv(recvp[f], ph.shape.elems(), NcclType<T>(), peer,
                                         ctx.nccl_comm, ctx.stream));
        MPIGPU_RETURN_IF_ERROR(nccl.Send(sendp[f], ph.shape.elems(), NcclType<T>(), peer,
                                         ctx.nccl_comm, ctx.stream));
      }
      MPIGPU_RETURN_IF_ERROR(nccl.GroupEnd());
      for (int f = 0; f < 2; ++f)
        if (!rows && ph.faces[f].peer != kNoNeighbor)
          MPIGPU_RETURN_IF_ERROR(UnpackFace(grid + ph.faces[f].recv_offset, ctx.loc,
                                            recv_[f].template as<const T>(), ctx.loc, ph.shape,
                                            ctx.stream));
    }
    // Stream order already puts the columns after the rows; wait so the time is the exchange's.
    return Sync(ctx);
  }

 private:
  Buffer send_[2], recv_[2];  // column faces [west, east], packed
};

// An exchanger of type E, set up.
template <typename T, typename E>
Status Make(const Context& ctx, const Block& b, int halo, std::unique_ptr<Exchanger<T>>* out) {
  auto e = std::make_unique<E>(ctx, b, halo);
  MPIGPU_RETURN_IF_ERROR(e->Init());
  *out = std::move(e);
  return Status::Ok();
}

// Every mode's exchanger.
template <typename T>
struct ExchangerEntry {
  Mode mode;
  Status (*make)(const Context& ctx, const Block& b, int halo, std::unique_ptr<Exchanger<T>>* out);
};
template <typename T>
const ExchangerEntry<T> kExchangers[] = {
    {Mode::kMpigpu, Make<T, MpigpuExchanger<T>>},
    {Mode::kStaged, Make<T, StagedExchanger<T>>},
    {Mode::kNccl, Make<T, NcclExchanger<T>>},
};

}  // namespace

template <typename T>
Status MakeExchanger(Mode mode, const Context& ctx, const Block& b, int halo,
                     std::unique_ptr<Exchanger<T>>* out) {
  for (const ExchangerEntry<T>& e : kExchangers<T>)
    if (e.mode == mode) return e.make(ctx, b, halo, out);
  return Status(Err::kInternal, "unknown mode");
}

template Status MakeExchanger<float>(Mode, const Context&, const Block&, int,
                                     std::unique_ptr<Exchanger<float>>*);
template Status MakeExchanger<double>(Mode, const Context&, const Block&, int,
                                      std::unique_ptr<Exchanger<double>>*);

}  // namespace mpigpu::halo

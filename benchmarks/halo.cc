// halo: a 9-point 2D stencil over GPUs with a halo exchange every w iterations, the application
// benchmark of the paper. halo_grid.h describes the problem, the decomposition and the exchange;
// Usage() the command line. Exchange modes:
//   mpigpu  device buffers straight into MPIGPU_Isend/Irecv (MPIGPU_BUF_GPU); rows are contiguous,
//           columns an MPIGPU_Type_vector that mpigpu packs itself.
//   staged  the paper's baseline: each face copied (cudaMemcpy2DAsync for columns) to a pinned
//           host buffer, host MPIGPU_Isend/Irecv, copied back.
//   nccl    ncclSend/ncclRecv (libnccl.so.2 loaded at run time, id sent with MPIGPU_Bcast);
//           columns packed to contiguous device buffers with cudaMemcpy2DAsync.
// With --cpu the grids live in host memory, the stencil runs on the CPU with the same arithmetic,
// and mpigpu/staged move host buffers (MPIGPU_BUF_HOST): the whole program runs without a GPU.
//
// Times are the slowest rank's: total = the timed iterations' wall time (exchanges included),
// comm = the time inside the exchanges (after the preceding step finished on the GPU);
// xchg_us = the median exchange; net_us = the median from the moment the last rank entered the
// same exchange, i.e. without waiting for a later rank (one node: the ranks share one clock).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "benchmarks/halo_grid.h"
#include "benchmarks/halo_kernel.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/mpigpu.h"
#include "perf/api_check.h"
#include "perf/launch_env.h"
#include "perf/nccl.h"

namespace mpigpu::halo {
namespace {

static_assert(kNoNeighbor == MPIGPU_PROC_NULL, "a missing neighbour is MPI's null process");

using perf::kNcclFloat32;
using perf::kNcclFloat64;
using perf::Nccl;
using perf::NcclComm;
using perf::NcclDataType;
using perf::NcclUniqueId;

constexpr int kExitFail = 1, kExitBadInput = 2;
constexpr int kGatherTag = 100;  // above the exchange's tags 0..3

template <typename T>
MPIGPU_Datatype ApiType();
template <>
MPIGPU_Datatype ApiType<float>() { return MPIGPU_FLOAT; }
template <>
MPIGPU_Datatype ApiType<double>() { return MPIGPU_DOUBLE; }
template <typename T>
NcclDataType NcclType() { return sizeof(T) == 4 ? kNcclFloat32 : kNcclFloat64; }

struct Context {
  int rank = 0, size = 1;
  bool cpu = false;
  int device = -1;                           // the rank's CUDA device (GPU runs)
  int device_count = 0;                      // visible CUDA devices
  MemLoc loc = MemLoc::Host();               // where the grids live
  MPIGPU_Buftype buftype = MPIGPU_BUF_HOST;  // the same, as the API's tag
  cudaStream_t stream = nullptr;             // the stencil's and the copies' stream (GPU runs)
  std::unique_ptr<Nccl> nccl;                // null when NCCL is not used
  NcclComm nccl_comm = nullptr;
};

// Waits for the GPU work enqueued on the context's stream (nothing to wait for on the CPU).
Status Sync(const Context& c) {
  if (!c.cpu) MPIGPU_CUDA_CHECK(cudaStreamSynchronize(c.stream));
  return Status::Ok();
}

// Memory of one kind, freed with the matching call.
class Buffer {
 public:
  enum class Kind { kHost, kPinned, kDevice };
  Buffer() = default;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() {
    if (p_ == nullptr) return;
    if (kind_ == Kind::kDevice) cudaFree(p_);
    if (kind_ == Kind::kPinned) cudaFreeHost(p_);
    if (kind_ == Kind::kHost) std::free(p_);
  }
  Status Allocate(Kind kind, size_t bytes) {
    kind_ = kind;
    bytes = std::max<size_t>(bytes, 1);
    if (kind == Kind::kDevice) MPIGPU_CUDA_CHECK(cudaMalloc(&p_, bytes));
    if (kind == Kind::kPinned) MPIGPU_CUDA_CHECK(cudaMallocHost(&p_, bytes));
    if (kind == Kind::kHost && (p_ = std::malloc(bytes)) == nullptr)
      return Status(Err::kNoMemory, "malloc of " + std::to_string(bytes) + " bytes failed");
    return Status::Ok();
  }
  template <typename T>
  T* as() const { return static_cast<T*>(p_); }

 private:
  Kind kind_ = Kind::kHost;
  void* p_ = nullptr;
};

// A face between the grid and a contiguous buffer: one copy for rows, one strided copy
// (cudaMemcpy2DAsync on a device) for columns.
template <typename T>
Status PackFace(T* dst, MemLoc dst_loc, const T* grid, MemLoc grid_loc, const FaceShape& s,
                cudaStream_t stream) {
  if (s.contiguous()) return Copy(dst, dst_loc, grid, grid_loc, s.elems() * sizeof(T), stream);
  return Copy2D(dst, dst_loc, s.width * sizeof(T), grid, grid_loc, s.pitch * sizeof(T),
                s.width * sizeof(T), s.height, stream);
}
template <typename T>
Status UnpackFace(T* grid, MemLoc grid_loc, const T* src, MemLoc src_loc, const FaceShape& s,
                  cudaStream_t stream) {
  if (s.contiguous()) return Copy(grid, grid_loc, src, src_loc, s.elems() * sizeof(T), stream);
  return Copy2D(grid, grid_loc, s.pitch * sizeof(T), src, src_loc, s.width * sizeof(T),
                s.width * sizeof(T), s.height, stream);
}

// Fills the halo of `grid` (rows, then columns) and returns when it is complete in memory.
template <typename T>
class Exchanger {
 public:
  virtual ~Exchanger() = default;
  virtual Status Exchange(T* grid) = 0;
};

// mpigpu: the grid itself goes to the API, tagged with where it lives; columns are vector types.
template <typename T>
class MpigpuExchanger : public Exchanger<T> {
 public:
  MpigpuExchanger(const Context& ctx, const Block& b, int halo) : ctx_(ctx) {
    for (int k = 0; k < kPhases; ++k) phases_[k] = ExchangePhase(b, halo, k);
  }
  ~MpigpuExchanger() override {
    if (column_type_ != MPIGPU_DATATYPE_NULL) MPIGPU_Type_free(&column_type_);
  }
  Status Init() {
    const FaceShape& c = phases_[1].shape;
    PERF_API(MPIGPU_Type_vector(static_cast<int>(c.height), static_cast<int>(c.width),
                                static_cast<int>(c.pitch), ApiType<T>(), &column_type_));
    PERF_API(MPIGPU_Type_commit(&column_type_));
    return Status::Ok();
  }
  Status Exchange(T* grid) override {
    for (const Phase& ph : phases_) {
      // Rows: w*pitch contiguous elements; columns: one vector.
      const bool rows = ph.shape.contiguous();
      const int count = rows ? static_cast<int>(ph.shape.elems()) : 1;
      const MPIGPU_Datatype type = rows ? ApiType<T>() : column_type_;
      MPIGPU_Request req[4];
      int n = 0;
      // Missing neighbours are skipped, as in the staged mode (MPIGPU_PROC_NULL would work too).
      for (const Face& f : ph.faces)
        if (f.peer != kNoNeighbor)
          PERF_API(MPIGPU_Irecv(grid + f.recv_offset, ctx_.buftype, count, type, f.peer,
                                f.recv_tag, MPIGPU_COMM_WORLD, &req[n++]));
      for (const Face& f : ph.faces)
        if (f.peer != kNoNeighbor)
          PERF_API(MPIGPU_Isend(grid + f.send_offset, ctx_.buftype, count, type, f.peer,
                                f.send_tag, MPIGPU_COMM_WORLD, &req[n++]));
      if (n > 0) PERF_API(MPIGPU_Waitall(n, req, MPIGPU_STATUSES_IGNORE));
    }
    return Status::Ok();
  }

 private:
  const Context& ctx_;
  Phase phases_[kPhases];
  MPIGPU_Datatype column_type_ = MPIGPU_DATATYPE_NULL;
};

// staged: every face through a contiguous host buffer (pinned on GPU runs) and host messages.
template <typename T>
class StagedExchanger : public Exchanger<T> {
 public:
  StagedExchanger(const Context& ctx, const Block& b, int halo) : ctx_(ctx) {
    for (int k = 0; k < kPhases; ++k) phases_[k] = ExchangePhase(b, halo, k);
  }
  Status Init() {
    const Buffer::Kind kind = ctx_.cpu ? Buffer::Kind::kHost : Buffer::Kind::kPinned;
    for (int k = 0; k < kPhases; ++k)
      for (int f = 0; f < 2; ++f) {
        const size_t bytes = phases_[k].shape.elems() * sizeof(T);
        MPIGPU_RETURN_IF_ERROR(send_[k][f].Allocate(kind, bytes));
        MPIGPU_RETURN_IF_ERROR(recv_[k][f].Allocate(kind, bytes));
      }
    return Status::Ok();
  }
  Status Exchange(T* grid) override {
    const MemLoc host = MemLoc::Host();
    for (int k = 0; k < kPhases; ++k) {
      const Phase& ph = phases_[k];
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
                                          grid + ph.faces[f].send_offset, ctx_.loc, ph.shape,
                                          ctx_.stream));
      MPIGPU_RETURN_IF_ERROR(Sync(ctx_));
      for (int f = 0; f < 2; ++f)
        if (ph.faces[f].peer != kNoNeighbor)
          PERF_API(MPIGPU_Isend(send_[k][f].template as<T>(), MPIGPU_BUF_HOST, count, ApiType<T>(),
                                ph.faces[f].peer, ph.faces[f].send_tag, MPIGPU_COMM_WORLD,
                                &req[n++]));
      PERF_API(MPIGPU_Waitall(n, req, MPIGPU_STATUSES_IGNORE));
      for (int f = 0; f < 2; ++f)
        if (ph.faces[f].peer != kNoNeighbor)
          MPIGPU_RETURN_IF_ERROR(UnpackFace(grid + ph.faces[f].recv_offset, ctx_.loc,
                                            recv_[k][f].template as<const T>(), host, ph.shape,
                                            ctx_.stream));
      MPIGPU_RETURN_IF_ERROR(Sync(ctx_));  // the columns phase sends the corners just received
    }
    return Status::Ok();
  }

 private:
  const Context& ctx_;
  Phase phases_[kPhases];
  Buffer send_[kPhases][2], recv_[kPhases][2];  // [phase][face]
};

// nccl: grouped ncclSend/ncclRecv on the stencil's stream; rows straight from the grid, columns
// through contiguous device buffers (NCCL has no datatypes).
template <typename T>
class NcclExchanger : public Exchanger<T> {
 public:
  NcclExchanger(const Context& ctx, const Block& b, int halo) : ctx_(ctx) {
    for (int k = 0; k < kPhases; ++k) phases_[k] = ExchangePhase(b, halo, k);
  }
  Status Init() {
    const size_t bytes = phases_[1].shape.elems() * sizeof(T);
    for (int f = 0; f < 2; ++f) {
      MPIGPU_RETURN_IF_ERROR(send_[f].Allocate(Buffer::Kind::kDevice, bytes));
      MPIGPU_RETURN_IF_ERROR(recv_[f].Allocate(Buffer::Kind::kDevice, bytes));
    }
    return Status::Ok();
  }
  Status Exchange(T* grid) override {
    const Nccl& nccl = *ctx_.nccl;
    for (const Phase& ph : phases_) {
      const bool rows = ph.shape.contiguous();
      const T* sendp[2];
      T* recvp[2];
      for (int f = 0; f < 2; ++f) {
        sendp[f] = rows ? grid + ph.faces[f].send_offset : send_[f].template as<T>();
        recvp[f] = rows ? grid + ph.faces[f].recv_offset : recv_[f].template as<T>();
        if (!rows && ph.faces[f].peer != kNoNeighbor)
          MPIGPU_RETURN_IF_ERROR(PackFace(send_[f].template as<T>(), ctx_.loc,
                                          grid + ph.faces[f].send_offset, ctx_.loc, ph.shape,
                                          ctx_.stream));
      }
      MPIGPU_RETURN_IF_ERROR(nccl.GroupStart());
      for (int f = 0; f < 2; ++f) {
        const int peer = ph.faces[f].peer;
        if (peer == kNoNeighbor) continue;
        MPIGPU_RETURN_IF_ERROR(nccl.Recv(recvp[f], ph.shape.elems(), NcclType<T>(), peer,
                                         ctx_.nccl_comm, ctx_.stream));
        MPIGPU_RETURN_IF_ERROR(nccl.Send(sendp[f], ph.shape.elems(), NcclType<T>(), peer,
                                         ctx_.nccl_comm, ctx_.stream));
      }
      MPIGPU_RETURN_IF_ERROR(nccl.GroupEnd());
      for (int f = 0; f < 2; ++f)
        if (!rows && ph.faces[f].peer != kNoNeighbor)
          MPIGPU_RETURN_IF_ERROR(UnpackFace(grid + ph.faces[f].recv_offset, ctx_.loc,
                                            recv_[f].template as<const T>(), ctx_.loc, ph.shape,
                                            ctx_.stream));
    }
    // Stream order already puts the columns after the rows; wait so the time is the exchange's.
    return Sync(ctx_);
  }

 private:
  const Context& ctx_;
  Phase phases_[kPhases];
  Buffer send_[2], recv_[2];  // column faces [west, east], packed
};

template <typename T>
Status MakeExchanger(Mode mode, const Context& ctx, const Block& b, int halo,
                     std::unique_ptr<Exchanger<T>>* out) {
  switch (mode) {
    case Mode::kMpigpu: {
      auto e = std::make_unique<MpigpuExchanger<T>>(ctx, b, halo);
      MPIGPU_RETURN_IF_ERROR(e->Init());
      *out = std::move(e);
      return Status::Ok();
    }
    case Mode::kStaged: {
      auto e = std::make_unique<StagedExchanger<T>>(ctx, b, halo);
      MPIGPU_RETURN_IF_ERROR(e->Init());
      *out = std::move(e);
      return Status::Ok();
    }
    case Mode::kNccl: {
      auto e = std::make_unique<NcclExchanger<T>>(ctx, b, halo);
      MPIGPU_RETURN_IF_ERROR(e->Init());
      *out = std::move(e);
      return Status::Ok();
    }
  }
  return Status(Err::kInternal, "unknown mode");
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// When each exchange of a run started and ended on this rank (MPIGPU_Wtime, seconds).
struct ExchangeTimes {
  std::vector<double> start, end;
  double Sum() const {  // the time spent in exchanges
    double s = 0;
    for (size_t k = 0; k < start.size(); ++k) s += end[k] - start[k];
    return s;
  }
};

// `iters` steps from the state in a (b: the second array, same fixed boundary). *result: the
// array holding the final state; *times: each exchange's start and end.
template <typename T>
Status Iterate(const Context& ctx, const Problem& p, const Block& blk, Exchanger<T>& ex, T* a,
               T* b, int iters, double* total_s, ExchangeTimes* times, T** result) {
  const int64_t pitch = LocalLayout(blk, p.halo).pitch();
  T* cur = a;
  T* next = b;
  *times = ExchangeTimes{};
  times->start.reserve(iters / p.halo + 1);
  times->end.reserve(iters / p.halo + 1);
  const double t0 = MPIGPU_Wtime();
  for (int it = 0; it < iters; ++it) {
    const int step = it % p.halo + 1;
    if (step == 1) {
      MPIGPU_RETURN_IF_ERROR(Sync(ctx));  // the previous step has written cur
      times->start.push_back(MPIGPU_Wtime());
      MPIGPU_RETURN_IF_ERROR(ex.Exchange(cur));
      times->end.push_back(MPIGPU_Wtime());
    }
    const Region r = StepRegion(p, blk, step);
    if (ctx.cpu)
      SweepCpu(cur, next, pitch, r, Weights<T>());
    else
      MPIGPU_CUDA_CHECK(LaunchStencil(cur, next, pitch, r, Weights<T>(), ctx.stream));
    std::swap(cur, next);
  }
  MPIGPU_RETURN_IF_ERROR(Sync(ctx));
  *total_s = MPIGPU_Wtime() - t0;
  *result = cur;
  return Status::Ok();
}

// This rank's median exchange time, and its median time from the moment the last rank entered
// the same exchange (collective). The second leaves out waiting for a later rank, i.e. the
// ranks' imbalance; it needs one clock for all ranks (MPIGPU_Wtime is CLOCK_MONOTONIC: one node).
Status ExchangeMedians(const ExchangeTimes& t, double* median_s, double* net_median_s) {
  const size_t n = t.start.size();
  std::vector<double> each(n), last_start(n), net(n);
  for (size_t k = 0; k < n; ++k) each[k] = t.end[k] - t.start[k];
  PERF_API(MPIGPU_Allreduce(t.start.data(), MPIGPU_BUF_HOST, last_start.data(), MPIGPU_BUF_HOST,
                            static_cast<int>(n), MPIGPU_DOUBLE, MPIGPU_MAX, MPIGPU_COMM_WORLD));
  for (size_t k = 0; k < n; ++k) net[k] = std::max(0.0, t.end[k] - last_start[k]);
  *median_s = Median(each);
  *net_median_s = Median(net);
  return Status::Ok();
}

// Sends every rank's owned block to rank 0, which compares it with the reference bit for bit.
// On rank 0 *failure describes the first difference (empty: all equal); every rank learns the
// verdict (*failed).
template <typename T>
Status GatherAndCheck(const Context& ctx, const Problem& p, const Block& blk, const T* grid,
                      const std::vector<T>& reference, std::string* failure, bool* failed) {
  const int w = p.halo;
  const int64_t pitch = LocalLayout(blk, w).pitch();
  std::vector<T> own(int64_t{blk.nrows} * blk.ncols);
  MPIGPU_RETURN_IF_ERROR(Copy2D(own.data(), MemLoc::Host(), blk.ncols * sizeof(T),
                                grid + w * pitch + w, ctx.loc, pitch * sizeof(T),
                                blk.ncols * sizeof(T), blk.nrows, ctx.stream));
  MPIGPU_RETURN_IF_ERROR(Sync(ctx));
  int verdict = 0;
  if (ctx.rank != 0) {
    PERF_API(MPIGPU_Send(own.data(), MPIGPU_BUF_HOST, static_cast<int>(own.size()), ApiType<T>(),
                         0, kGatherTag, MPIGPU_COMM_WORLD));
  } else {
    int64_t differing = 0;
    std::vector<T> got;
    for (int r = 0; r < ctx.size; ++r) {
      const Block br = Decompose(p, r);
      if (r == 0) {
        got = own;
      } else {
        got.resize(int64_t{br.nrows} * br.ncols);
        PERF_API(MPIGPU_Recv(got.data(), MPIGPU_BUF_HOST, static_cast<int>(got.size()),
                             ApiType<T>(), r, kGatherTag, MPIGPU_COMM_WORLD,
                             MPIGPU_STATUS_IGNORE));
      }
      for (int i = 0; i < br.nrows; ++i) {
        const T* row = &got[int64_t{i} * br.ncols];
        const T* want = &reference[(int64_t{br.row0} + i) * p.global_cols + br.col0];
        for (int64_t j = FirstDifference(row, want, br.ncols); j >= 0 && j < br.ncols; ++j) {
          if (std::memcmp(&row[j], &want[j], sizeof(T)) == 0) continue;
          if (differing++ == 0) {
            char text[256];
            std::snprintf(text, sizeof text,
                          "first difference at global cell (row %d, col %" PRId64
                          ") on rank %d: got %.17g, expected %.17g",
                          br.row0 + i, br.col0 + j, r, static_cast<double>(row[j]),
                          static_cast<double>(want[j]));
            *failure = text;
          }
        }
      }
    }
    if (differing > 0)
      *failure = std::to_string(differing) + " of " +
                 std::to_string(int64_t{p.global_rows} * p.global_cols) + " cells differ; " +
                 *failure;
    verdict = differing > 0;
  }
  PERF_API(MPIGPU_Bcast(&verdict, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, MPIGPU_COMM_WORLD));
  *failed = verdict != 0;
  return Status::Ok();
}

struct RunResult {
  Mode mode = Mode::kMpigpu;
  double total_s = 0, comm_s = 0;  // slowest rank's (rank 0 only)
  double exchange_median_s = 0;     // the largest of the ranks' median exchange times
  double exchange_net_median_s = 0;  // the same, counted from the last rank's entry
  bool checked = false;
};

// One mode on one problem: fresh grids, warm-up, reset, the timed run, the check.
template <typename T>
Status RunMode(const Context& ctx, const Options& opt, const Problem& p, Mode mode,
               const std::vector<T>& reference, RunResult* res, std::string* check_failure) {
  const Block blk = Decompose(p, ctx.rank);
  const Layout lay = LocalLayout(blk, p.halo);
  const size_t bytes = lay.cells() * sizeof(T);
  std::vector<T> init(lay.cells());
  FillLocal(blk, p.halo, init.data());
  const Buffer::Kind kind = ctx.cpu ? Buffer::Kind::kHost : Buffer::Kind::kDevice;
  Buffer a, b;
  MPIGPU_RETURN_IF_ERROR(a.Allocate(kind, bytes));
  MPIGPU_RETURN_IF_ERROR(b.Allocate(kind, bytes));
  // Both arrays get the initial state: the boundary cells in them are never written again.
  auto reset = [&]() -> Status {
    MPIGPU_RETURN_IF_ERROR(Copy(a.as<T>(), ctx.loc, init.data(), MemLoc::Host(), bytes, ctx.stream));
    MPIGPU_RETURN_IF_ERROR(Copy(b.as<T>(), ctx.loc, init.data(), MemLoc::Host(), bytes, ctx.stream));
    return Sync(ctx);
  };
  std::unique_ptr<Exchanger<T>> ex;
  MPIGPU_RETURN_IF_ERROR(MakeExchanger<T>(mode, ctx, blk, p.halo, &ex));
  double total = 0, median = 0, net_median = 0;
  ExchangeTimes times;
  T* final_grid = nullptr;
  if (opt.warmup > 0) {
    MPIGPU_RETURN_IF_ERROR(reset());
    MPIGPU_RETURN_IF_ERROR(Iterate(ctx, p, blk, *ex, a.as<T>(), b.as<T>(), opt.warmup, &total,
                                   &times, &final_grid));
  }
  MPIGPU_RETURN_IF_ERROR(reset());
  PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
  MPIGPU_RETURN_IF_ERROR(Iterate(ctx, p, blk, *ex, a.as<T>(), b.as<T>(), opt.iters, &total,
                                 &times, &final_grid));
  MPIGPU_RETURN_IF_ERROR(ExchangeMedians(times, &median, &net_median));
  double mine[4] = {total, times.Sum(), median, net_median}, slowest[4] = {0, 0, 0, 0};
  PERF_API(MPIGPU_Reduce(mine, MPIGPU_BUF_HOST, slowest, MPIGPU_BUF_HOST, 4, MPIGPU_DOUBLE,
                         MPIGPU_MAX, 0, MPIGPU_COMM_WORLD));
  res->mode = mode;
  res->total_s = slowest[0];
  res->comm_s = slowest[1];
  res->exchange_median_s = slowest[2];
  res->exchange_net_median_s = slowest[3];
  if (opt.check) {
    bool failed = false;
    MPIGPU_RETURN_IF_ERROR(GatherAndCheck(ctx, p, blk, final_grid, reference, check_failure,
                                          &failed));
    if (failed && check_failure->empty()) *check_failure = "see rank 0's message";
    res->checked = true;
  }
  return Status::Ok();
}

std::string Dims(int64_t r, int64_t c) { return std::to_string(r) + "x" + std::to_string(c); }

// Rank 0's output: the table on stdout, the CSV file.
class Report {
 public:
  Report(const Context& ctx, const Options& opt, ProcGrid grid) : ctx_(ctx), opt_(opt), grid_(grid) {}
  ~Report() {
    if (csv_) std::fclose(csv_);
  }
  Status OpenCsv() {
    if (opt_.csv.empty()) return Status::Ok();
    csv_ = std::fopen(opt_.csv.c_str(), "w");
    if (csv_ == nullptr) return SysError(("--csv: cannot write '" + opt_.csv + "'").c_str());
    std::fprintf(csv_,
                 "mode,type,ranks,grid,global_rows,global_cols,local_rows,local_cols,halo,iters,"
                 "total_s,comm_s,comm_share,gflops,check,speedup_total_vs_staged,"
                 "speedup_comm_vs_staged,speedup_total_vs_nccl,speedup_comm_vs_nccl,"
                 "exchange_median_us,exchange_net_median_us\n");
    return Status::Ok();
  }
  void Header(const std::string& device, const std::string& skipped) const {
    std::printf("# halo: 9-point stencil, %s, %d ranks (grid %s), halo %d, %d iterations (+%d "
                "warm-up), %s\n",
                ElemTypeName(opt_.type), ctx_.size, Dims(grid_.rows, grid_.cols).c_str(),
                opt_.halo, opt_.iters, opt_.warmup, device.c_str());
    std::printf("# %d flops/point/iteration (SHOC's count) over the global domain; fixed "
                "boundary; times: slowest rank\n",
                kFlopsPerPoint);
    if (!skipped.empty()) std::printf("# %s\n", skipped.c_str());
    std::printf("# %-7s %-12s %-11s %11s %11s %6s %9s %9s %9s  %s\n", "mode", "global", "local",
                "total_ms", "comm_ms", "comm%", "GFLOP/s", "xchg_us", "net_us", "check");
    std::fflush(stdout);
  }
  // One problem's results (every mode), then mpigpu's speedups when all modes ran.
  void PrintProblem(const Problem& p, const std::vector<RunResult>& results) const {
    const std::string global = Dims(p.global_rows, p.global_cols);
    const std::string local = Dims((p.global_rows + grid_.rows - 1) / grid_.rows,
                                   (p.global_cols + grid_.cols - 1) / grid_.cols);
    const double points = double(p.global_rows) * p.global_cols;
    const RunResult* mine = Find(results, Mode::kMpigpu);
    for (const RunResult& r : results) {
      const double gflops =
          r.total_s > 0 ? kFlopsPerPoint * points * opt_.iters / r.total_s / 1e9 : 0;
      const double share = r.total_s > 0 ? r.comm_s / r.total_s : 0;
      std::printf("  %-7s %-12s %-11s %11.3f %11.3f %6.1f %9.2f %9.2f %9.2f  %s\n",
                  ModeName(r.mode), global.c_str(), local.c_str(), r.total_s * 1e3,
                  r.comm_s * 1e3, share * 100, gflops, r.exchange_median_s * 1e6,
                  r.exchange_net_median_s * 1e6, r.checked ? "ok" : "-");
      if (csv_) {
        std::string speedups = ",,,";
        if (opt_.all_modes && r.mode == Mode::kMpigpu) speedups = SpeedupCsv(results, *mine);
        std::fprintf(csv_, "%s,%s,%d,%s,%d,%d,%s,%d,%d,%.9g,%.9g,%.6f,%.4f,%s,%s,%.3f,%.3f\n",
                     ModeName(r.mode), ElemTypeName(opt_.type), ctx_.size,
                     Dims(grid_.rows, grid_.cols).c_str(), p.global_rows, p.global_cols,
                     SplitDims(local).c_str(), p.halo, opt_.iters,
                     r.total_s, r.comm_s, share, gflops, r.checked ? "ok" : "",
                     speedups.c_str(), r.exchange_median_s * 1e6,
                     r.exchange_net_median_s * 1e6);
        std::fflush(csv_);
      }
    }
    if (opt_.all_modes && mine != nullptr) {
      for (Mode other : {Mode::kStaged, Mode::kNccl}) {
        const RunResult* o = Find(results, other);
        if (o == nullptr) continue;
        std::printf("# speedup of mpigpu over %s at %s: total %.2fx, communication %.2fx\n",
                    ModeName(other), global.c_str(), o->total_s / mine->total_s,
                    o->comm_s / mine->comm_s);
      }
    }
    std::fflush(stdout);
  }

 private:
  static const RunResult* Find(const std::vector<RunResult>& results, Mode m) {
    for (const RunResult& r : results)
      if (r.mode == m) return &r;
    return nullptr;
  }
  // "RxC" -> "R,C" for the CSV's two columns.
  static std::string SplitDims(std::string d) {
    std::replace(d.begin(), d.end(), 'x', ',');
    return d;
  }
  static std::string SpeedupCsv(const std::vector<RunResult>& results, const RunResult& mine) {
    std::string s;
    for (Mode other : {Mode::kStaged, Mode::kNccl}) {
      const RunResult* o = Find(results, other);
      char text[64] = ",,";
      if (o != nullptr)
        std::snprintf(text, sizeof text, ",%.4f,%.4f", o->total_s / mine.total_s,
                      o->comm_s / mine.comm_s);
      s += text;
    }
    return s.substr(1);  // the row's format already has the separating comma
  }

  const Context& ctx_;
  const Options& opt_;
  ProcGrid grid_;
  std::FILE* csv_ = nullptr;
};

// Every problem, every mode, element type T. A failed check ends the run with *check_failure
// set (on rank 0 the first difference, elsewhere a pointer to rank 0's message).
template <typename T>
Status RunAll(const Context& ctx, const Options& opt, const std::vector<Problem>& problems,
              const std::vector<Mode>& modes, const Report& report, std::string* check_failure) {
  for (const Problem& p : problems) {
    // The reference is computed once per problem on rank 0 (the others wait at the barrier).
    std::vector<T> reference;
    if (opt.check && ctx.rank == 0)
      reference = ReferenceGrid<T>(p.global_rows, p.global_cols, opt.iters,
                                   static_cast<int>(std::thread::hardware_concurrency()));
    std::vector<RunResult> results;
    for (Mode m : modes) {
      RunResult r;
      MPIGPU_RETURN_IF_ERROR(RunMode<T>(ctx, opt, p, m, reference, &r, check_failure));
      if (!check_failure->empty()) {
        *check_failure = std::string("mode ") + ModeName(m) + ", " + ElemTypeName(opt.type) +
                         ", global " + Dims(p.global_rows, p.global_cols) + ", halo " +
                         std::to_string(p.halo) + ", " + std::to_string(ctx.size) + " ranks: " +
                         *check_failure;
        return Status::Ok();
      }
      results.push_back(r);
    }
    if (ctx.rank == 0) report.PrintProblem(p, results);
  }
  return Status::Ok();
}

// Starts NCCL on every rank (collective): rank 0's id reaches the others through MPIGPU_Bcast.
Status StartNccl(Context* ctx) {
  NcclUniqueId id{};
  if (ctx->rank == 0) MPIGPU_RETURN_IF_ERROR(ctx->nccl->GetUniqueId(&id));
  PERF_API(MPIGPU_Bcast(&id, MPIGPU_BUF_HOST, sizeof id, MPIGPU_BYTE, 0, MPIGPU_COMM_WORLD));
  return ctx->nccl->CommInitRank(&ctx->nccl_comm, ctx->size, id, ctx->rank);
}

// Ends the job after a failure that may have left peers waiting.
[[noreturn]] void Die(const Context& ctx, const Status& st) {
  std::fprintf(stderr, "halo: rank %d: %s\n", ctx.rank, st.ToString().c_str());
  MPIGPU_Abort(MPIGPU_COMM_WORLD, kExitFail);
  std::exit(kExitFail);
}

int Main(int argc, char** argv) {
  // Before MPIGPU_Init: the launcher's rank numbers. Only one rank reports bad input.
  const perf::LaunchEnv env = perf::ReadLaunchEnv();
  const bool leader = env.rank == 0;
  Options opt;
  Status st = ParseOptions(std::vector<std::string>(argv + 1, argv + argc), &opt);
  if (!st.ok()) {
    if (leader) std::fprintf(stderr, "halo: %s\n", st.message().c_str());
    return kExitBadInput;
  }
  if (opt.help) {
    if (leader) std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  Context ctx;
  ctx.cpu = opt.cpu;
  std::string device = "CPU (--cpu)";
  if (!opt.cpu) {
    const int n = CudaDeviceCount();
    if (n == 0) {
      if (leader) std::fprintf(stderr, "halo: no CUDA device: run with --cpu to use the host\n");
      return kExitBadInput;
    }
    // The GPU must be chosen before MPIGPU_Init.
    ctx.device_count = n;
    ctx.device = env.local_rank % n;
    cudaError_t e = cudaSetDevice(ctx.device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
      std::fprintf(stderr, "halo: device %d: %s\n", ctx.device, cudaGetErrorString(e));
      return kExitFail;
    }
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, ctx.device);
    device = std::string("GPU ") + prop.name + " (local rank mod " + std::to_string(n) + ")";
    ctx.loc = MemLoc::Device(ctx.device);
    ctx.buftype = MPIGPU_BUF_GPU;
  }

  int rc = MPIGPU_Init(&argc, &argv);
  if (rc != MPIGPU_SUCCESS) {
    std::fprintf(stderr, "halo: %s\n", perf::ApiFailure(rc, "MPIGPU_Init").message().c_str());
    return kExitFail;
  }
  MPIGPU_Comm_set_errhandler(MPIGPU_COMM_WORLD, MPIGPU_ERRORS_RETURN);
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &ctx.rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &ctx.size);

  // Bad input found by every rank alike (same arguments, same job), so all leave with exit 2.
  auto bad_input = [&](const std::string& msg) {
    if (ctx.rank == 0) std::fprintf(stderr, "halo: %s\n", msg.c_str());
    MPIGPU_Finalize();
    return kExitBadInput;
  };
  const ProcGrid grid =
      opt.grid_rows > 0 ? ProcGrid{opt.grid_rows, opt.grid_cols} : SquarestGrid(ctx.size);
  std::vector<Problem> problems;
  if (opt.global_rows > 0) {
    problems.push_back(MakeProblem(opt, grid, 0));
  } else {
    for (int n : opt.sizes) problems.push_back(MakeProblem(opt, grid, n));
  }
  for (const Problem& p : problems) {
    st = ValidateProblem(p, ctx.size);
    if (!st.ok()) return bad_input(st.message());
  }

  // The modes that can run here; an explicit one that cannot is bad input.
  std::vector<Mode> modes;
  std::string skipped;
  for (Mode m : opt.modes) {
    if (m == Mode::kNccl) {
      if (opt.cpu) {
        skipped = "nccl skipped: it needs a GPU (--cpu)";
        continue;
      }
      // NCCL refuses two ranks of one communicator on the same GPU.
      const int sharing = env.local_size;
      if (sharing > ctx.device_count)
        st = Status(Err::kInvalidArg, std::to_string(sharing) + " ranks share " +
                                          std::to_string(ctx.device_count) +
                                          " GPUs; NCCL needs a GPU per rank");
      else
        st = Nccl::Load(&ctx.nccl);
      if (!st.ok()) {
        if (!opt.all_modes) return bad_input("--mode nccl: " + st.message());
        skipped = "nccl skipped: " + st.message();
        continue;
      }
    }
    modes.push_back(m);
  }

  Report report(ctx, opt, grid);
  int csv_ok = 1;
  if (ctx.rank == 0) {
    st = report.OpenCsv();
    csv_ok = st.ok();
  }
  MPIGPU_Bcast(&csv_ok, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, MPIGPU_COMM_WORLD);
  if (!csv_ok) return bad_input(ctx.rank == 0 ? st.message() : "");

  if (ctx.nccl) {
    st = StartNccl(&ctx);
    if (!st.ok()) Die(ctx, st);
  }
  if (ctx.rank == 0) report.Header(device, skipped);

  std::string check_failure;
  st = opt.type == ElemType::kFloat
           ? RunAll<float>(ctx, opt, problems, modes, report, &check_failure)
           : RunAll<double>(ctx, opt, problems, modes, report, &check_failure);
  if (!st.ok()) Die(ctx, st);
  if (ctx.nccl_comm != nullptr) {
    st = ctx.nccl->CommDestroy(ctx.nccl_comm);
    if (!st.ok()) Die(ctx, st);
  }
  const bool failed = !check_failure.empty();
  if (failed && ctx.rank == 0)
    std::fprintf(stderr, "halo: CHECK FAILED (%s)\n", check_failure.c_str());
  if (ctx.stream != nullptr) cudaStreamDestroy(ctx.stream);
  rc = MPIGPU_Finalize();
  if (rc != MPIGPU_SUCCESS) {
    std::fprintf(stderr, "halo: %s\n", perf::ApiFailure(rc, "MPIGPU_Finalize").message().c_str());
    return kExitFail;
  }
  return failed ? kExitFail : 0;
}

}  // namespace
}  // namespace mpigpu::halo

int main(int argc, char** argv) { return mpigpu::halo::Main(argc, argv); }

#include "benchmarks/halo_run.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "benchmarks/halo_kernel.h"
#include "memcopy/memcopy.h"
#include "perf/api_check.h"

namespace mpigpu::halo {
namespace {

constexpr int kGatherTag = 100;  // above the exchange's tags 0..3

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

}  // namespace

Status RunProblems(const Context& ctx, const Options& opt, const std::vector<Problem>& problems,
                   const std::vector<Mode>& modes, const Report& report,
                   std::string* check_failure) {
  return opt.type == ElemType::kFloat
             ? RunAll<float>(ctx, opt, problems, modes, report, check_failure)
             : RunAll<double>(ctx, opt, problems, modes, report, check_failure);
}

}  // namespace mpigpu::halo

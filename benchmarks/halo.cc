// halo: a 9-point 2D stencil over GPUs with a halo exchange every w iterations, the application
// benchmark of the paper. halo_grid.h describes the problem, the decomposition and the exchange;
// Usage() the command line; halo_exchange.h the exchange modes (mpigpu, staged, nccl);
// halo_run.h a run; halo_report.h the output and what its times mean. With --cpu the grids live
// in host memory, the stencil runs on the CPU with the same arithmetic, and mpigpu/staged move
// host buffers (MPIGPU_BUF_HOST): the whole program runs without a GPU.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "benchmarks/halo_exchange.h"
#include "benchmarks/halo_grid.h"
#include "benchmarks/halo_report.h"
#include "benchmarks/halo_run.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/mpigpu.h"
#include "perf/api_check.h"
#include "perf/launch_env.h"
#include "perf/nccl.h"

namespace mpigpu::halo {
namespace {

constexpr int kExitFail = 1, kExitBadInput = 2;

// Ends the job after a failure that may have left peers waiting.
[[noreturn]] void Die(const Context& ctx, const Status& st) {
  std::fprintf(stderr, "halo: rank %d: %s\n", ctx.rank, st.ToString().c_str());
  MPIGPU_Abort(MPIGPU_COMM_WORLD, kExitFail);
  std::exit(kExitFail);
}

// Before MPIGPU_Init: the rank's GPU (local rank mod the visible ones) and its stream, or the
// host with --cpu; *device describes it for the header. Returns an exit status, 0 to go on.
int SetUpDevice(const Options& opt, const perf::LaunchEnv& env, Context* ctx,
                std::string* device) {
  ctx->cpu = opt.cpu;
  *device = "CPU (--cpu)";
  if (opt.cpu) return 0;
  const int n = CudaDeviceCount();
  if (n == 0) {
    if (env.rank == 0)
      std::fprintf(stderr, "halo: no CUDA device: run with --cpu to use the host\n");
    return kExitBadInput;
  }
  ctx->device_count = n;
  ctx->device = env.local_rank % n;
  cudaError_t e = cudaSetDevice(ctx->device);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "halo: device %d: %s\n", ctx->device, cudaGetErrorString(e));
    return kExitFail;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, ctx->device);
  *device = std::string("GPU ") + prop.name + " (local rank mod " + std::to_string(n) + ")";
  ctx->loc = MemLoc::Device(ctx->device);
  ctx->buftype = MPIGPU_BUF_GPU;
  return 0;
}

// The problems of the run (--global, or one per --size), each checked against the rank count.
Status MakeProblems(const Options& opt, ProcGrid grid, int nranks, std::vector<Problem>* out) {
  if (opt.global_rows > 0) {
    out->push_back(MakeProblem(opt, grid, 0));
  } else {
    for (int n : opt.sizes) out->push_back(MakeProblem(opt, grid, n));
  }
  for (const Problem& p : *out) MPIGPU_RETURN_IF_ERROR(ValidateProblem(p, nranks));
  return Status::Ok();
}

// The modes that can run here, NCCL loaded where it is asked for. An explicit mode that cannot
// run is bad input (the error); under --mode all it is left out and *skipped says why.
Status AvailableModes(const Options& opt, const perf::LaunchEnv& env, Context* ctx,
                      std::vector<Mode>* modes, std::string* skipped) {
  for (Mode m : opt.modes) {
    if (m == Mode::kNccl) {
      if (opt.cpu) {
        *skipped = "nccl skipped: it needs a GPU (--cpu)";
        continue;
      }
      // NCCL refuses two ranks of one communicator on the same GPU.
      Status st;
      if (env.local_size > ctx->device_count)
        st = Status(Err::kInvalidArg, std::to_string(env.local_size) + " ranks share " +
                                          std::to_string(ctx->device_count) +
                                          " GPUs; NCCL needs a GPU per rank");
      else
        st = perf::Nccl::Load(&ctx->nccl);
      if (!st.ok()) {
        if (!opt.all_modes) return Status(Err::kInvalidArg, "--mode nccl: " + st.message());
        *skipped = "nccl skipped: " + st.message();
        continue;
      }
    }
    modes->push_back(m);
  }
  return Status::Ok();
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
  std::string device;
  if (int code = SetUpDevice(opt, env, &ctx, &device); code != 0) return code;

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
  std::vector<Mode> modes;
  std::string skipped;
  st = MakeProblems(opt, grid, ctx.size, &problems);
  if (st.ok()) st = AvailableModes(opt, env, &ctx, &modes, &skipped);
  if (!st.ok()) return bad_input(st.message());

  Report report(ctx.size, opt, grid);
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
  st = RunProblems(ctx, opt, problems, modes, report, &check_failure);
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

// halo_mpi: the halo benchmark's 9-point stencil written against plain mpi.h, so one source builds
// with mpigpu's wrapper (mpicxx) and with any other MPI's (Open MPI's) and both run side by side.
// The arithmetic is halo_stencil.h's (bit-identical on CPU and GPU), so --check compares every
// rank's cells with a serial run of the whole grid, exactly.
//
// The exchange is the classic two-phase one: rows to the north/south neighbours first (interior
// columns), then columns to east/west including the halo rows just received, so the corner cells
// travel through the edge neighbour and no diagonal message is needed. Columns are an
// MPI_Type_vector. Modes:
//   direct  the grids' own memory goes to MPI_Isend/Irecv: device pointers on a GPU (a GPU-aware
//           MPI finds them; this is what mpigpu's mpi.h does at its boundary), host with --cpu.
//   staged  (GPU only) each face copied to pinned host memory, host MPI, copied back: the
//           baseline that works with any MPI.
//
//   halo_mpi [--n N] [--iters I] [--warmup W] [--mode direct|staged|all] [--cpu] [--check]
//            [--double]
// N: local grid side per rank (weak scaling; default 1024). Output (rank 0): one line per mode
// with the slowest rank's total and communication times.
#include <cuda_runtime_api.h>
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmarks/halo_kernel.h"
#include "benchmarks/halo_stencil.h"

namespace {

using mpigpu::halo::Region;
using mpigpu::halo::StencilPoint;
using mpigpu::halo::Weights;

struct Options {
  int n = 1024, iters = 100, warmup = 10;
  bool cpu = false, check = false, dbl = false;
  std::string mode = "all";
};

[[noreturn]] void Fail(const char* what, int code) {
  std::fprintf(stderr, "halo_mpi: %s\n", what);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

void Mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  std::fprintf(stderr, "halo_mpi: %s: %s\n", call, text);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

void Cuda(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "halo_mpi: %s: %s\n", call, cudaGetErrorString(e));
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

bool ParseInt(const char* s, int lo, int* out) {
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < lo || v > (1 << 20)) return false;
  *out = static_cast<int>(v);
  return true;
}

bool Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--n" && has) {
      if (!ParseInt(argv[++i], 1, &o->n)) return false;
    } else if (a == "--iters" && has) {
      if (!ParseInt(argv[++i], 1, &o->iters)) return false;
    } else if (a == "--warmup" && has) {
      if (!ParseInt(argv[++i], 0, &o->warmup)) return false;
    } else if (a == "--mode" && has) {
      o->mode = argv[++i];
      if (o->mode != "direct" && o->mode != "staged" && o->mode != "all") return false;
    } else if (a == "--cpu") {
      o->cpu = true;
    } else if (a == "--check") {
      o->check = true;
    } else if (a == "--double") {
      o->dbl = true;
    } else {
      return false;
    }
  }
  return true;
}

// The value of global cell (gi, gj) before the first step; cells outside the grid stay 0.
template <typename T>
T Initial(int64_t gi, int64_t gj) {
  return T((gi * 7919 + gj * 104729) % 1000) / T(1000);
}

// The rank's place: a 2D Cartesian grid of ranks, each with an n x n block of cells.
struct Place {
  MPI_Comm cart = MPI_COMM_NULL;
  int rank = 0, size = 1, dims[2] = {0, 0}, coords[2] = {0, 0};
  int north = MPI_PROC_NULL, south = MPI_PROC_NULL, west = MPI_PROC_NULL, east = MPI_PROC_NULL;
};

Place MakePlace() {
  Place p;
  MPI_Comm_size(MPI_COMM_WORLD, &p.size);
  Mpi(MPI_Dims_create(p.size, 2, p.dims), "MPI_Dims_create");
  const int periods[2] = {0, 0};
  Mpi(MPI_Cart_create(MPI_COMM_WORLD, 2, p.dims, periods, 0, &p.cart), "MPI_Cart_create");
  MPI_Comm_rank(p.cart, &p.rank);
  Mpi(MPI_Cart_coords(p.cart, p.rank, 2, p.coords), "MPI_Cart_coords");
  Mpi(MPI_Cart_shift(p.cart, 0, 1, &p.north, &p.south), "MPI_Cart_shift");
  Mpi(MPI_Cart_shift(p.cart, 1, 1, &p.west, &p.east), "MPI_Cart_shift");
  return p;
}

// One rank's grids: (n + 2) x (n + 2) cells, row-major, a halo of one cell on each side.
template <typename T>
class Grids {
 public:
  Grids(const Place& p, const Options& o) : p_(p), o_(o), n_(o.n), pitch_(o.n + 2) {
    const size_t cells = static_cast<size_t>(pitch_) * pitch_;
    std::vector<T> init(cells, T(0));
    for (int i = 1; i <= n_; ++i)
      for (int j = 1; j <= n_; ++j)
        init[static_cast<size_t>(i) * pitch_ + j] =
            Initial<T>(int64_t{p.coords[0]} * n_ + i - 1, int64_t{p.coords[1]} * n_ + j - 1);
    for (T*& g : grid_) {
      if (o.cpu) {
        g = static_cast<T*>(std::malloc(cells * sizeof(T)));
        if (g == nullptr) Fail("out of memory", 1);
        std::memcpy(g, init.data(), cells * sizeof(T));
      } else {
        Cuda(cudaMalloc(reinterpret_cast<void**>(&g), cells * sizeof(T)), "cudaMalloc");
        Cuda(cudaMemcpy(g, init.data(), cells * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
      }
    }
    if (!o.cpu) {
      Cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
      // Staging: 4 faces to send, 4 to receive, each at most n + 2 cells.
      Cuda(cudaMallocHost(reinterpret_cast<void**>(&stage_), 8 * static_cast<size_t>(pitch_) * sizeof(T)),
           "cudaMallocHost");
    }
    const MPI_Datatype elem = sizeof(T) == 4 ? MPI_FLOAT : MPI_DOUBLE;
    elem_ = elem;
    Mpi(MPI_Type_vector(n_ + 2, 1, pitch_, elem, &column_), "MPI_Type_vector");
    Mpi(MPI_Type_commit(&column_), "MPI_Type_commit");
  }
  ~Grids() {
    MPI_Type_free(&column_);
    for (T* g : grid_) {
      if (o_.cpu)
        std::free(g);
      else
        cudaFree(g);
    }
    if (!o_.cpu) {
      cudaFreeHost(stage_);
      cudaStreamDestroy(stream_);
    }
  }

  T* At(int i, int j) { return grid_[cur_] + static_cast<size_t>(i) * pitch_ + j; }

  // The halo of the current grid from the neighbours' edges.
  void ExchangeDirect() {
    MPI_Request r[4];
    // Rows: interior columns 1..n.
    Mpi(MPI_Irecv(At(0, 1), n_, elem_, p_.north, 0, p_.cart, &r[0]), "MPI_Irecv");
    Mpi(MPI_Irecv(At(n_ + 1, 1), n_, elem_, p_.south, 1, p_.cart, &r[1]), "MPI_Irecv");
    Mpi(MPI_Isend(At(n_, 1), n_, elem_, p_.south, 0, p_.cart, &r[2]), "MPI_Isend");
    Mpi(MPI_Isend(At(1, 1), n_, elem_, p_.north, 1, p_.cart, &r[3]), "MPI_Isend");
    Mpi(MPI_Waitall(4, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
    // Columns: every row, 0..n+1, so the corners come along.
    Mpi(MPI_Irecv(At(0, 0), 1, column_, p_.west, 2, p_.cart, &r[0]), "MPI_Irecv");
    Mpi(MPI_Irecv(At(0, n_ + 1), 1, column_, p_.east, 3, p_.cart, &r[1]), "MPI_Irecv");
    Mpi(MPI_Isend(At(0, n_), 1, column_, p_.east, 2, p_.cart, &r[2]), "MPI_Isend");
    Mpi(MPI_Isend(At(0, 1), 1, column_, p_.west, 3, p_.cart, &r[3]), "MPI_Isend");
    Mpi(MPI_Waitall(4, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

  // The same through pinned host buffers (GPU only).
  void ExchangeStaged() {
    const size_t row = static_cast<size_t>(n_) * sizeof(T);
    const size_t col_n = static_cast<size_t>(n_) + 2;
    T* send_n = stage_;
    T* send_s = stage_ + pitch_;
    T* recv_n = stage_ + 2 * pitch_;
    T* recv_s = stage_ + 3 * pitch_;
    Cuda(cudaMemcpyAsync(send_n, At(1, 1), row, cudaMemcpyDeviceToHost, stream_), "cudaMemcpy");
    Cuda(cudaMemcpyAsync(send_s, At(n_, 1), row, cudaMemcpyDeviceToHost, stream_), "cudaMemcpy");
    Cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    MPI_Request r[4];
    Mpi(MPI_Irecv(recv_n, n_, elem_, p_.north, 0, p_.cart, &r[0]), "MPI_Irecv");
    Mpi(MPI_Irecv(recv_s, n_, elem_, p_.south, 1, p_.cart, &r[1]), "MPI_Irecv");
    Mpi(MPI_Isend(send_s, n_, elem_, p_.south, 0, p_.cart, &r[2]), "MPI_Isend");
    Mpi(MPI_Isend(send_n, n_, elem_, p_.north, 1, p_.cart, &r[3]), "MPI_Isend");
    Mpi(MPI_Waitall(4, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (p_.north != MPI_PROC_NULL)
      Cuda(cudaMemcpyAsync(At(0, 1), recv_n, row, cudaMemcpyHostToDevice, stream_), "cudaMemcpy");
    if (p_.south != MPI_PROC_NULL)
      Cuda(cudaMemcpyAsync(At(n_ + 1, 1), recv_s, row, cudaMemcpyHostToDevice, stream_),
           "cudaMemcpy");
    T* send_w = stage_ + 4 * pitch_;
    T* send_e = stage_ + 5 * pitch_;
    T* recv_w = stage_ + 6 * pitch_;
    T* recv_e = stage_ + 7 * pitch_;
    const size_t pitch_bytes = static_cast<size_t>(pitch_) * sizeof(T);
    Cuda(cudaMemcpy2DAsync(send_w, sizeof(T), At(0, 1), pitch_bytes, sizeof(T), col_n,
                           cudaMemcpyDeviceToHost, stream_),
         "cudaMemcpy2D");
    Cuda(cudaMemcpy2DAsync(send_e, sizeof(T), At(0, n_), pitch_bytes, sizeof(T), col_n,
                           cudaMemcpyDeviceToHost, stream_),
         "cudaMemcpy2D");
    Cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    const int cn = n_ + 2;
    Mpi(MPI_Irecv(recv_w, cn, elem_, p_.west, 2, p_.cart, &r[0]), "MPI_Irecv");
    Mpi(MPI_Irecv(recv_e, cn, elem_, p_.east, 3, p_.cart, &r[1]), "MPI_Irecv");
    Mpi(MPI_Isend(send_e, cn, elem_, p_.east, 2, p_.cart, &r[2]), "MPI_Isend");
    Mpi(MPI_Isend(send_w, cn, elem_, p_.west, 3, p_.cart, &r[3]), "MPI_Isend");
    Mpi(MPI_Waitall(4, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (p_.west != MPI_PROC_NULL)
      Cuda(cudaMemcpy2DAsync(At(0, 0), pitch_bytes, recv_w, sizeof(T), sizeof(T), col_n,
                             cudaMemcpyHostToDevice, stream_),
           "cudaMemcpy2D");
    if (p_.east != MPI_PROC_NULL)
      Cuda(cudaMemcpy2DAsync(At(0, n_ + 1), pitch_bytes, recv_e, sizeof(T), sizeof(T), col_n,
                             cudaMemcpyHostToDevice, stream_),
           "cudaMemcpy2D");
  }

  // One stencil step from the current grid into the other, then they swap.
  void Step() {
    const T* in = grid_[cur_];
    T* out = grid_[1 - cur_];
    const Region r{1, n_ + 1, 1, n_ + 1};
    if (o_.cpu) {
      for (int i = r.i0; i < r.i1; ++i)
        for (int j = r.j0; j < r.j1; ++j) {
          const int64_t idx = int64_t{i} * pitch_ + j;
          out[idx] = StencilPoint(in, idx, pitch_, Weights<T>());
        }
    } else {
      Cuda(mpigpu::halo::LaunchStencil(in, out, pitch_, r, Weights<T>(), stream_), "stencil");
    }
    cur_ = 1 - cur_;
  }

  void Sync() {
    if (!o_.cpu) Cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

  // The interior cells of the current grid, row by row.
  std::vector<T> Interior() {
    Sync();
    std::vector<T> all(static_cast<size_t>(pitch_) * pitch_);
    if (o_.cpu)
      std::memcpy(all.data(), grid_[cur_], all.size() * sizeof(T));
    else
      Cuda(cudaMemcpy(all.data(), grid_[cur_], all.size() * sizeof(T), cudaMemcpyDeviceToHost),
           "cudaMemcpy");
    std::vector<T> in;
    for (int i = 1; i <= n_; ++i)
      for (int j = 1; j <= n_; ++j) in.push_back(all[static_cast<size_t>(i) * pitch_ + j]);
    return in;
  }

 private:
  const Place& p_;
  const Options& o_;
  const int n_, pitch_;
  T* grid_[2] = {nullptr, nullptr};
  int cur_ = 0;
  T* stage_ = nullptr;
  cudaStream_t stream_ = nullptr;
  MPI_Datatype column_ = MPI_DATATYPE_NULL, elem_ = MPI_DATATYPE_NULL;
};

// The whole grid run serially for `steps` steps; the block of rank `coords`, row by row.
template <typename T>
std::vector<T> Reference(const Place& p, int n, int steps) {
  const int64_t gy = int64_t{p.dims[0]} * n, gx = int64_t{p.dims[1]} * n, pitch = gx + 2;
  std::vector<T> a(static_cast<size_t>((gy + 2) * pitch), T(0)), b = a;
  for (int64_t i = 1; i <= gy; ++i)
    for (int64_t j = 1; j <= gx; ++j) a[i * pitch + j] = Initial<T>(i - 1, j - 1);
  for (int s = 0; s < steps; ++s) {
    for (int64_t i = 1; i <= gy; ++i)
      for (int64_t j = 1; j <= gx; ++j) b[i * pitch + j] = StencilPoint(a.data(), i * pitch + j,
                                                                        pitch, Weights<T>());
    a.swap(b);
  }
  std::vector<T> mine;
  for (int i = 1; i <= n; ++i)
    for (int j = 1; j <= n; ++j)
      mine.push_back(a[(int64_t{p.coords[0]} * n + i) * pitch + int64_t{p.coords[1]} * n + j]);
  return mine;
}

// Runs one mode; rank 0 prints its line. Returns false when --check found a difference.
template <typename T>
bool RunMode(const Place& p, const Options& o, bool staged) {
  Grids<T> g(p, o);
  double comm = 0, t0 = 0;
  const int steps = o.warmup + o.iters;
  for (int s = 0; s < steps; ++s) {
    if (s == o.warmup) {
      g.Sync();
      MPI_Barrier(p.cart);
      t0 = MPI_Wtime();
      comm = 0;
    }
    g.Sync();  // the previous step's cells are the ones sent
    const double c0 = MPI_Wtime();
    if (staged)
      g.ExchangeStaged();
    else
      g.ExchangeDirect();
    comm += MPI_Wtime() - c0;
    g.Step();
  }
  g.Sync();
  const double mine[2] = {MPI_Wtime() - t0, comm};
  double worst[2] = {0, 0};
  Mpi(MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, p.cart), "MPI_Reduce");
  int bad = 0;
  if (o.check) {
    const std::vector<T> got = g.Interior(), want = Reference<T>(p, o.n, steps);
    for (size_t k = 0; k < got.size(); ++k) bad += std::memcmp(&got[k], &want[k], sizeof(T)) != 0;
  }
  int bad_all = 0;
  Mpi(MPI_Allreduce(&bad, &bad_all, 1, MPI_INT, MPI_SUM, p.cart), "MPI_Allreduce");
  if (p.rank == 0) {
    const double cells = double(o.n) * o.n * p.size * o.iters;
    std::printf("%-7s %5d %4dx%-4d %6d %8s %6d %10.4f %10.4f %8.2f %s\n",
                staged ? "staged" : "direct", p.size, p.dims[0], p.dims[1], o.n,
                sizeof(T) == 4 ? "float" : "double", o.iters, worst[0], worst[1],
                cells * mpigpu::halo::kFlopsPerPoint / worst[0] / 1e9,
                o.check ? (bad_all == 0 ? "ok" : "MISMATCH") : "-");
    std::fflush(stdout);
  }
  return bad_all == 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!Parse(argc, argv, &o)) {
    if (rank == 0)
      std::fprintf(stderr,
                   "usage: halo_mpi [--n N] [--iters I] [--warmup W] "
                   "[--mode direct|staged|all] [--cpu] [--check] [--double]\n");
    MPI_Finalize();
    return 2;
  }
  if (!o.cpu) {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
      if (rank == 0) std::fprintf(stderr, "halo_mpi: no CUDA device: run with --cpu\n");
      MPI_Finalize();
      return 2;
    }
    // The launcher's local rank picks the GPU (mpigpurun, Open MPI and Slurm name it).
    const char* names[] = {"MPIGPU_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"};
    int local = 0;
    for (const char* name : names)
      if (const char* v = std::getenv(name)) {
        local = std::atoi(v);
        break;
      }
    Cuda(cudaSetDevice(local % devices), "cudaSetDevice");
  }
  Place p = MakePlace();
  if (p.rank == 0) {
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    const char* nl = std::strchr(lib, '\n');
    std::printf("# halo_mpi: %s; %s; warm-up %d steps; times: the slowest rank's (s)\n",
                std::string(lib, nl ? static_cast<size_t>(nl - lib) : std::strlen(lib)).c_str(),
                o.cpu ? "CPU grids" : "GPU grids", o.warmup);
    std::printf("%-7s %5s %9s %6s %8s %6s %10s %10s %8s %s\n", "mode", "ranks", "grid", "n",
                "type", "iters", "total_s", "comm_s", "GFlop/s", "check");
  }
  bool ok = true;
  const bool direct = o.mode != "staged", staged = o.mode != "direct" && !o.cpu;
  if (direct) ok &= o.dbl ? RunMode<double>(p, o, false) : RunMode<float>(p, o, false);
  if (staged) ok &= o.dbl ? RunMode<double>(p, o, true) : RunMode<float>(p, o, true);
  MPI_Comm_free(&p.cart);
  MPI_Finalize();
  return ok ? 0 : 1;
}

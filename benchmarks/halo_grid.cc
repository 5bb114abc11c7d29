#include "benchmarks/halo_grid.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace mpigpu::halo {
namespace {

Status Bad(const std::string& msg) { return Status(Err::kInvalidArg, msg); }

// A whole decimal number in [lo, hi].
Status ParseInt(const std::string& opt, const std::string& text, int lo, int hi, int* out) {
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
    return Bad(opt + ": '" + text + "' is not a whole number in " + std::to_string(lo) + ".." +
               std::to_string(hi));
  *out = static_cast<int>(v);
  return Status::Ok();
}

// "RxC" (x or X).
Status ParseDims(const std::string& opt, const std::string& text, int* rows, int* cols) {
  size_t x = text.find_first_of("xX");
  if (x == std::string::npos)
    return Bad(opt + ": '" + text + "' is not of the form RxC (for example 2x4)");
  MPIGPU_RETURN_IF_ERROR(ParseInt(opt, text.substr(0, x), 1, INT_MAX, rows));
  return ParseInt(opt, text.substr(x + 1), 1, INT_MAX, cols);
}

// Message tags by direction of travel: a message sent north is received from the south.
constexpr int kTagToNorth = 0, kTagToSouth = 1, kTagToWest = 2, kTagToEast = 3;

}  // namespace

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kMpigpu: return "mpigpu";
    case Mode::kStaged: return "staged";
    case Mode::kNccl: return "nccl";
  }
  return "?";
}

const char* ElemTypeName(ElemType t) { return t == ElemType::kFloat ? "float" : "double"; }

std::string Usage() {
  return "usage: mpigpurun -n N halo [options]\n"
         "  9-point 2D stencil over N ranks with a halo exchange every w iterations.\n"
         "  --mode mpigpu|staged|nccl|all  exchange path (default mpigpu); all: every available\n"
         "                                 mode on the same problem, then mpigpu's speedups\n"
         "  --type float|double            element type (default double)\n"
         "  --grid RxC                     process grid (default: most square factorization of N)\n"
         "  --halo w                       halo width, exchanged every w iterations (default 1)\n"
         "  --size N[,N...]                per-rank N x N block, weak scaling (default 1024)\n"
         "  --weak                         the SHOC sizes per rank: 512,1024,2048,4096\n"
         "  --global RxC                   strong scaling: this global domain split over N ranks\n"
         "  --iters K                      timed iterations (default 1000)\n"
         "  --warmup K                     untimed iterations first, state reset after (default 10)\n"
         "  --check                        compare with a serial CPU reference on rank 0 (exact)\n"
         "  --cpu                          run on the CPU with host buffers (no GPU needed)\n"
         "  --csv FILE                     also write the results as CSV (rank 0)\n"
         "  17 flops per point per iteration are counted (SHOC's count). Exit: 0 ok, 1 check or\n"
         "  run failure, 2 bad input.\n";
}

Status ParseOptions(const std::vector<std::string>& args, Options* out) {
  Options o;
  bool sizes_given = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string opt = args[i], value;
    bool has_inline = false;
    size_t eq = opt.find('=');
    if (opt.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
      has_inline = true;
    }
    // The option's value: inline (--opt=v) or the next argument.
    auto take = [&](std::string* v) -> Status {
      if (has_inline) {
        *v = value;
        return Status::Ok();
      }
      if (i + 1 >= args.size()) return Bad(opt + " needs a value");
      *v = args[++i];
      return Status::Ok();
    };
    auto flag = [&]() -> Status {
      return has_inline ? Bad(opt + " takes no value") : Status::Ok();
    };
    std::string v;
    if (opt == "--mode") {
      MPIGPU_RETURN_IF_ERROR(take(&v));
      o.all_modes = false;
      if (v == "mpigpu") {
        o.modes = {Mode::kMpigpu};
      } else if (v == "staged") {
        o.modes = {Mode::kStaged};
      } else if (v == "nccl") {
        o.modes = {Mode::kNccl};
      } else if (v == "all") {
        o.modes = {Mode::kMpigpu, Mode::kStaged, Mode::kNccl};
        o.all_modes = true;
      } else {
        return Bad("--mode: unknown mode '" + v + "' (mpigpu, staged, nccl or all)");
      }
    } else if (opt == "--type") {
      MPIGPU_RETURN_IF_ERROR(take(&v));
      if (v == "float") {
        o.type = ElemType::kFloat;
      } else if (v == "double") {
        o.type = ElemType::kDouble;
      } else {
        return Bad("--type: unknown type '" + v + "' (float or double)");
      }
    } else if (opt == "--grid") {
      MPIGPU_RETURN_IF_ERROR(take(&v));
      MPIGPU_RETURN_IF_ERROR(ParseDims(opt, v, &o.grid_rows, &o.grid_cols));
    } else if (opt == "--halo") {
      MPIGPU_RETURN_IF_ERROR(take(&v));
      MPIGPU_RETURN_IF_ERROR(ParseInt(opt, v, 1, 1 << 20, &o.halo));
    } else if (opt == "--size") {
      MPIGPU_RETURN_IF_ERROR(take(&v));
      o.sizes.clear();
      size_t start = 0;
      while (true) {
        size_t comma = v.find(',', start);
        int n = 0;
        MPIGPU_RETURN_IF_ERROR(ParseInt(opt, v.substr(start, comma - start), 1, 1 << 20, &n));
        o.sizes.push_back(n);
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      sizes_given = true;
    } else if (opt == "--weak") {
      MPIGPU_RETURN_IF_ERROR(flag());
      o.sizes = WeakSizes();
      sizes_given = true;
    } else if (opt == "--global") {
      MPIGPU_RETURN_IF_ERROR(take(&v));
      MPIGPU_RETURN_IF_ERROR(ParseDims(opt, v, &o.global_rows, &o.global_cols));
    } else if (opt == "--iters") {
      MPIGPU_RETURN_IF_ERROR(take(&v));
      MPIGPU_RETURN_IF_ERROR(ParseInt(opt, v, 1, INT_MAX, &o.iters));
    } else if (opt == "--warmup") {
      MPIGPU_RETURN_IF_ERROR(take(&v));
      MPIGPU_RETURN_IF_ERROR(ParseInt(opt, v, 0, INT_MAX, &o.warmup));
    } else if (opt == "--check") {
      MPIGPU_RETURN_IF_ERROR(flag());
      o.check = true;
    } else if (opt == "--cpu") {
      MPIGPU_RETURN_IF_ERROR(flag());
      o.cpu = true;
    } else if (opt == "--csv") {
      MPIGPU_RETURN_IF_ERROR(take(&o.csv));
      if (o.csv.empty()) return Bad("--csv needs a file name");
    } else if (opt == "--help" || opt == "-h") {
      o.help = true;
    } else {
      return Bad("unknown option '" + args[i] + "' (see --help)");
    }
  }
  if (sizes_given && o.global_rows > 0)
    return Bad("--global (strong scaling) and --size/--weak (weak scaling) exclude each other");
  if (o.cpu && !o.all_modes && o.modes[0] == Mode::kNccl)
    return Bad("--mode nccl needs a GPU: it cannot run with --cpu");
  *out = o;
  return Status::Ok();
}

ProcGrid SquarestGrid(int n) {
  int rows = 1;
  for (int r = 1; int64_t{r} * r <= n; ++r)
    if (n % r == 0) rows = r;
  return ProcGrid{rows, n / rows};
}

Problem MakeProblem(const Options& opt, ProcGrid grid, int size) {
  Problem p;
  p.grid = grid;
  p.halo = opt.halo;
  if (size > 0) {
    p.global_rows = static_cast<int>(std::min<int64_t>(int64_t{size} * grid.rows, INT_MAX));
    p.global_cols = static_cast<int>(std::min<int64_t>(int64_t{size} * grid.cols, INT_MAX));
  } else {
    p.global_rows = opt.global_rows;
    p.global_cols = opt.global_cols;
  }
  return p;
}

Status ValidateProblem(const Problem& p, int nranks) {
  const std::string grid =
      "grid " + std::to_string(p.grid.rows) + "x" + std::to_string(p.grid.cols);
  const std::string global =
      "global domain " + std::to_string(p.global_rows) + "x" + std::to_string(p.global_cols);
  if (p.grid.rows < 1 || p.grid.cols < 1 || int64_t{p.grid.rows} * p.grid.cols != nranks)
    return Bad(grid + " does not fit the job: it needs " +
               std::to_string(int64_t{p.grid.rows} * p.grid.cols) + " ranks, the job has " +
               std::to_string(nranks));
  if (p.halo < 1) return Bad("halo width " + std::to_string(p.halo) + " must be at least 1");
  if (p.global_rows < p.grid.rows || p.global_cols < p.grid.cols)
    return Bad(global + " is smaller than the " + grid);
  // The smallest block has the floor of the even split.
  const int min_rows = p.global_rows / p.grid.rows, min_cols = p.global_cols / p.grid.cols;
  if (p.halo > std::min(min_rows, min_cols))
    return Bad("halo width " + std::to_string(p.halo) + " is larger than the smallest local block (" +
               std::to_string(min_rows) + "x" + std::to_string(min_cols) + " cells of the " +
               global + " over the " + grid + ")");
  // Element counts and offsets handed to the API are ints.
  const int64_t max_rows = min_rows + (p.global_rows % p.grid.rows != 0) + 2 * int64_t{p.halo};
  const int64_t max_cols = min_cols + (p.global_cols % p.grid.cols != 0) + 2 * int64_t{p.halo};
  if (max_rows * max_cols > INT_MAX)
    return Bad("local array of " + std::to_string(max_rows) + "x" + std::to_string(max_cols) +
               " cells (" + global + " over the " + grid + ") exceeds 2^31-1 elements");
  return Status::Ok();
}

Span SplitEven(int n, int parts, int index) {
  const int base = n / parts, rem = n % parts;
  return Span{index * base + std::min(index, rem), base + (index < rem ? 1 : 0)};
}

Block Decompose(const Problem& p, int rank) {
  Block b;
  b.rank = rank;
  b.pr = rank / p.grid.cols;
  b.pc = rank % p.grid.cols;
  const Span r = SplitEven(p.global_rows, p.grid.rows, b.pr);
  const Span c = SplitEven(p.global_cols, p.grid.cols, b.pc);
  b.row0 = r.start;
  b.nrows = r.count;
  b.col0 = c.start;
  b.ncols = c.count;
  if (b.pr > 0) b.north = rank - p.grid.cols;
  if (b.pr + 1 < p.grid.rows) b.south = rank + p.grid.cols;
  if (b.pc > 0) b.west = rank - 1;
  if (b.pc + 1 < p.grid.cols) b.east = rank + 1;
  return b;
}

Layout LocalLayout(const Block& b, int halo) {
  Layout l;
  l.halo = halo;
  l.rows = b.nrows + 2 * halo;
  l.cols = b.ncols + 2 * halo;
  return l;
}

Region StepRegion(const Problem& p, const Block& b, int step) {
  const int w = p.halo;
  const Layout l = LocalLayout(b, w);
  Region r;
  // Distance >= step from the array's edge, and inside the domain (local i is global
  // row0 - w + i, which must lie in [0, global_rows)).
  r.i0 = std::max(step, w - b.row0);
  r.i1 = std::min(l.rows - step, p.global_rows - b.row0 + w);
  r.j0 = std::max(step, w - b.col0);
  r.j1 = std::min(l.cols - step, p.global_cols - b.col0 + w);
  return r;
}

Phase ExchangePhase(const Block& b, int halo, int phase) {
  const int64_t w = halo, pitch = LocalLayout(b, halo).pitch();
  Phase ph;
  if (phase == 0) {
    // Rows: w full-width rows (halo columns too), one contiguous run.
    ph.shape = FaceShape{w * pitch, 1, pitch};
    ph.faces[0] = Face{b.north, w * pitch, 0, kTagToNorth, kTagToSouth};
    ph.faces[1] = Face{b.south, b.nrows * pitch, (b.nrows + w) * pitch, kTagToSouth, kTagToNorth};
  } else {
    // Columns: w cells of every row, halo rows included (they carry the corners).
    ph.shape = FaceShape{w, b.nrows + 2 * w, pitch};
    ph.faces[0] = Face{b.west, w, 0, kTagToWest, kTagToEast};
    ph.faces[1] = Face{b.east, b.ncols, b.ncols + w, kTagToEast, kTagToWest};
  }
  return ph;
}

double InitValue(int64_t r, int64_t c) {
  uint64_t x = static_cast<uint64_t>(r) * 0x9E3779B97F4A7C15ull ^
               static_cast<uint64_t>(c) * 0xC2B2AE3D27D4EB4Full;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 32;
  return static_cast<double>(x & 1023) / 1024.0;
}

template <typename T>
void FillLocal(const Block& b, int halo, T* a) {
  const Layout l = LocalLayout(b, halo);
  for (int i = 0; i < l.rows; ++i)
    for (int j = 0; j < l.cols; ++j)
      a[i * l.pitch() + j] = static_cast<T>(InitValue(int64_t{b.row0} - halo + i,
                                                      int64_t{b.col0} - halo + j));
}

template <typename T>
void SweepCpu(const T* in, T* out, int64_t pitch, Region r, Weights<T> wt) {
  for (int i = r.i0; i < r.i1; ++i)
    for (int j = r.j0; j < r.j1; ++j) {
      const int64_t idx = i * pitch + j;
      out[idx] = StencilPoint(in, idx, pitch, wt);
    }
}

template <typename T>
std::vector<T> ReferenceGrid(int global_rows, int global_cols, int iters, int threads) {
  Block whole;
  whole.nrows = global_rows;
  whole.ncols = global_cols;
  const Layout l = LocalLayout(whole, 1);
  std::vector<T> a(l.cells()), b(l.cells());
  FillLocal(whole, 1, a.data());
  b = a;  // both hold the fixed boundary ring
  threads = std::max(1, std::min(threads, global_rows / 64 + 1));
  T* cur = a.data();
  T* next = b.data();
  for (int it = 0; it < iters; ++it) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      const Span rows = SplitEven(global_rows, threads, t);
      const Region r{1 + rows.start, 1 + rows.start + rows.count, 1, 1 + global_cols};
      pool.emplace_back([=] { SweepCpu(cur, next, l.pitch(), r, Weights<T>()); });
    }
    for (std::thread& th : pool) th.join();
    std::swap(cur, next);
  }
  std::vector<T> out(int64_t{global_rows} * global_cols);
  for (int i = 0; i < global_rows; ++i)
    std::memcpy(&out[int64_t{i} * global_cols], cur + (i + 1) * l.pitch() + 1,
                sizeof(T) * global_cols);
  return out;
}

template <typename T>
int64_t FirstDifference(const T* got, const T* want, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    if (std::memcmp(&got[k], &want[k], sizeof(T)) != 0) return k;
  return -1;
}

template void FillLocal<float>(const Block&, int, float*);
template void FillLocal<double>(const Block&, int, double*);
template void SweepCpu<float>(const float*, float*, int64_t, Region, Weights<float>);
template void SweepCpu<double>(const double*, double*, int64_t, Region, Weights<double>);
template std::vector<float> ReferenceGrid<float>(int, int, int, int);
template std::vector<double> ReferenceGrid<double>(int, int, int, int);
template int64_t FirstDifference<float>(const float*, const float*, int64_t);
template int64_t FirstDifference<double>(const double*, const double*, int64_t);

}  // namespace mpigpu::halo

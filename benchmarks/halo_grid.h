// The halo application's pure parts (no communication, no GPU): command-line options, the 2D
// Cartesian decomposition, the local array's geometry (halo faces, the region each step updates),
// initial values, the CPU sweep and the serial reference.
//
// Problem. The global domain is global_rows x global_cols cells. Around it lies a ring of
// boundary cells with fixed values (Dirichlet: InitValue of their global coordinates, never
// updated). Ranks form a grid_rows x grid_cols Cartesian grid, row-major (rank = pr*cols + pc);
// each owns a block, sizes differing by at most one cell per dimension.
//
// Local array. Each rank stores its block plus a halo of width w on every side:
// (nrows + 2w) x (ncols + 2w), row-major, pitch ncols + 2w; local (i, j) is global
// (row0 - w + i, col0 - w + j). Halo cells outside the domain hold the fixed boundary values.
//
// Time stepping. After a halo exchange every cell of the array is current. Step k (1..w) after the
// exchange updates the cells at distance >= k from the array's edge (StepRegion), clipped to the
// domain, so step w updates exactly the owned block; then the halo is exchanged again. A wide halo
// trades exchanges (one every w steps) for redundant updates of halo cells.
//
// Exchange (corners included, needed by the 9-point stencil): first rows with the north/south
// neighbours (w rows, full width including the halo columns), then columns with the west/east
// neighbours (w columns over all nrows + 2w rows, so the corner cells just received travel on).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "benchmarks/halo_stencil.h"
#include "memcopy/status.h"

namespace mpigpu::halo {

// ---- options ----

enum class Mode { kMpigpu, kStaged, kNccl };
const char* ModeName(Mode m);

enum class ElemType { kFloat, kDouble };
const char* ElemTypeName(ElemType t);

// SHOC Stencil2D's sizes, per rank, for --weak.
inline const std::vector<int>& WeakSizes() {
  static const std::vector<int> sizes = {512, 1024, 2048, 4096};
  return sizes;
}

struct Options {
  std::vector<Mode> modes = {Mode::kMpigpu};  // run in this order
  bool all_modes = false;                     // --mode all: every available mode, then speedups
  ElemType type = ElemType::kDouble;
  int grid_rows = 0, grid_cols = 0;  // 0: the most square factorization of the rank count
  int halo = 1;
  std::vector<int> sizes = {1024};   // per-rank N x N (weak scaling); unused with --global
  int global_rows = 0, global_cols = 0;  // > 0: strong scaling over this global domain
  int iters = 1000;
  int warmup = 10;  // iterations run (and discarded) before the timed run
  bool check = false;
  bool cpu = false;
  std::string csv;
  bool help = false;
};

// Parses argv[1..] (without the program name). Errors (kInvalidArg) name the bad option/value.
Status ParseOptions(const std::vector<std::string>& args, Options* out);
std::string Usage();

// ---- decomposition ----

struct ProcGrid {
  int rows = 1, cols = 1;
};

// The most square rows x cols == n with rows <= cols (2 -> 1x2, 4 -> 2x2, 6 -> 2x3, 7 -> 1x7).
ProcGrid SquarestGrid(int n);

struct Problem {
  int global_rows = 0, global_cols = 0;
  ProcGrid grid;
  int halo = 1;
};

// The global domain of `opt` for one weak-scaling size (size > 0) or for --global (size 0).
Problem MakeProblem(const Options& opt, ProcGrid grid, int size);

// Checks that `p` can run on `nranks` ranks: grid product equals nranks, every block has at least
// `halo` rows and columns, the local array fits int counts. kInvalidArg names the bad value.
Status ValidateProblem(const Problem& p, int nranks);

// First index and length of part `index` of n cells split into `parts` (the first n % parts
// parts get one cell more).
struct Span {
  int start = 0, count = 0;
};
Span SplitEven(int n, int parts, int index);

// No neighbour on that side (same value as MPIGPU_PROC_NULL, so it goes straight to the API).
constexpr int kNoNeighbor = -3;

struct Block {
  int rank = 0;
  int pr = 0, pc = 0;  // position in the process grid
  int row0 = 0, nrows = 0, col0 = 0, ncols = 0;  // owned cells, global coordinates
  int north = kNoNeighbor, south = kNoNeighbor, west = kNoNeighbor, east = kNoNeighbor;
};

// Rank `rank`'s block of a problem that ValidateProblem accepted.
Block Decompose(const Problem& p, int rank);

// ---- local array geometry ----

struct Layout {
  int halo = 1;
  int rows = 0, cols = 0;  // with the halo: nrows + 2w, ncols + 2w
  int64_t pitch() const { return cols; }
  int64_t cells() const { return int64_t{rows} * cols; }
};
Layout LocalLayout(const Block& b, int halo);

// Cells updated by step `step` (1..halo) after an exchange; step == halo gives the owned block.
Region StepRegion(const Problem& p, const Block& b, int step);

// One side's halo traffic, in elements from the array's start. A face is `height` runs of
// `width` elements, `pitch` apart (rows: one contiguous run, height 1).
struct Face {
  int peer = kNoNeighbor;
  int64_t send_offset = 0;  // the owned cells the neighbour needs
  int64_t recv_offset = 0;  // the halo cells it fills
  int send_tag = 0, recv_tag = 0;
};
struct FaceShape {
  int64_t width = 0, height = 0, pitch = 0;
  bool contiguous() const { return height == 1; }
  int64_t elems() const { return width * height; }
};
// An exchange phase: two opposite faces of one shape. Phase 0: rows (north, south); phase 1:
// columns (west, east). Run in that order.
struct Phase {
  Face faces[2];
  FaceShape shape;
};
constexpr int kPhases = 2;
Phase ExchangePhase(const Block& b, int halo, int phase);

// ---- data ----

// The initial value of global cell (r, c), also the fixed boundary value outside the domain:
// a hash of the coordinates, k/1024 for k in 0..1023 (exact in float and double).
double InitValue(int64_t r, int64_t c);

// Fills a local array (LocalLayout(b, halo)) with the initial/boundary values.
template <typename T>
void FillLocal(const Block& b, int halo, T* a);

// One CPU step: out[cell] = StencilPoint(in, cell) for every cell of `r`.
template <typename T>
void SweepCpu(const T* in, T* out, int64_t pitch, Region r, Weights<T> wt);

// Serial reference over the whole domain (halo 1, no decomposition): the global_rows x
// global_cols values after `iters` steps, row-major. Rows are split over `threads` threads (the
// result does not depend on it).
template <typename T>
std::vector<T> ReferenceGrid(int global_rows, int global_cols, int iters, int threads);

// Index of the first element whose bits differ, or -1 when all n are identical.
template <typename T>
int64_t FirstDifference(const T* got, const T* want, int64_t n);

}  // namespace mpigpu::halo

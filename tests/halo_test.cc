// Unit tests of the halo application's pure parts (//benchmarks:halo_lib): options, the 2D
// decomposition, the halo geometry, the CPU stencil against a naive reference, and a simulated
// distributed run (ranks as arrays in one process, the exchange as copies) against the serial
// reference, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "benchmarks/halo_grid.h"

namespace mpigpu::halo {
namespace {

// ---- options ----

Status Parse(const std::vector<std::string>& args, Options* o) { return ParseOptions(args, o); }

TEST(HaloOptions, Defaults) {
  Options o;
  ASSERT_TRUE(Parse({}, &o).ok());
  EXPECT_EQ(o.modes, std::vector<Mode>{Mode::kMpigpu});
  EXPECT_FALSE(o.all_modes);
  EXPECT_EQ(o.type, ElemType::kDouble);
  EXPECT_EQ(o.grid_rows, 0);
  EXPECT_EQ(o.halo, 1);
  EXPECT_EQ(o.sizes, std::vector<int>{1024});
  EXPECT_EQ(o.global_rows, 0);
  EXPECT_EQ(o.iters, 1000);
  EXPECT_FALSE(o.check);
  EXPECT_FALSE(o.cpu);
}

TEST(HaloOptions, EveryOption) {
  Options o;
  ASSERT_TRUE(Parse({"--mode", "all", "--type=float", "--grid", "2x3", "--halo", "3", "--size",
                     "16,32", "--iters", "7", "--warmup=0", "--check", "--cpu", "--csv", "x.csv"},
                    &o)
                  .ok());
  EXPECT_EQ(o.modes, (std::vector<Mode>{Mode::kMpigpu, Mode::kStaged, Mode::kNccl}));
  EXPECT_TRUE(o.all_modes);
  EXPECT_EQ(o.type, ElemType::kFloat);
  EXPECT_EQ(o.grid_rows, 2);
  EXPECT_EQ(o.grid_cols, 3);
  EXPECT_EQ(o.halo, 3);
  EXPECT_EQ(o.sizes, (std::vector<int>{16, 32}));
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_TRUE(o.check);
  EXPECT_TRUE(o.cpu);
  EXPECT_EQ(o.csv, "x.csv");

  ASSERT_TRUE(Parse({"--weak", "--mode", "staged"}, &o).ok());
  EXPECT_EQ(o.sizes, WeakSizes());
  EXPECT_EQ(o.modes, std::vector<Mode>{Mode::kStaged});
  ASSERT_TRUE(Parse({"--global", "37X29"}, &o).ok());
  EXPECT_EQ(o.global_rows, 37);
  EXPECT_EQ(o.global_cols, 29);
}

TEST(HaloOptions, BadInputNamesTheValue) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--mode", "mpi"}, "unknown mode 'mpi'"},
      {{"--type", "half"}, "unknown type 'half'"},
      {{"--grid", "2by2"}, "'2by2' is not of the form RxC"},
      {{"--grid", "0x2"}, "'0' is not a whole number"},
      {{"--halo", "0"}, "--halo: '0'"},
      {{"--halo"}, "--halo needs a value"},
      {{"--size", "16,x"}, "--size: 'x'"},
      {{"--iters", "-1"}, "--iters: '-1'"},
      {{"--frobnicate"}, "unknown option '--frobnicate'"},
      {{"--check=1"}, "--check takes no value"},
      {{"--global", "8x8", "--size", "4"}, "exclude each other"},
      {{"--cpu", "--mode", "nccl"}, "--mode nccl needs a GPU"},
  };
  for (const auto& [args, want] : cases) {
    Options o;
    Status st = Parse(args, &o);
    EXPECT_EQ(st.code(), Err::kInvalidArg) << args[0];
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
  }
}

// ---- decomposition ----

TEST(HaloDecomposition, SquarestGrid) {
  EXPECT_EQ(SquarestGrid(1).rows, 1);
  EXPECT_EQ(SquarestGrid(2).cols, 2);
  EXPECT_EQ(SquarestGrid(4).rows, 2);
  EXPECT_EQ(SquarestGrid(6).rows, 2);
  EXPECT_EQ(SquarestGrid(7).rows, 1);
  EXPECT_EQ(SquarestGrid(12).rows, 3);
  for (int n = 1; n <= 100; ++n) {
    const ProcGrid g = SquarestGrid(n);
    EXPECT_EQ(g.rows * g.cols, n);
    EXPECT_LE(g.rows, g.cols);
    for (int r = g.rows + 1; r * r <= n; ++r) EXPECT_NE(n % r, 0) << n << " has a squarer " << r;
  }
}

TEST(HaloDecomposition, SplitEvenCoversInOrder) {
  for (int n = 1; n <= 40; ++n)
    for (int parts = 1; parts <= n; ++parts) {
      int next = 0, lo = n, hi = 0;
      for (int k = 0; k < parts; ++k) {
        const Span s = SplitEven(n, parts, k);
        EXPECT_EQ(s.start, next);
        next += s.count;
        lo = std::min(lo, s.count);
        hi = std::max(hi, s.count);
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(hi - lo, 1);
    }
}

TEST(HaloDecomposition, BlocksTileTheDomainAndNeighboursAgree) {
  for (const Problem& p : {Problem{37, 29, {2, 2}, 1}, Problem{10, 31, {1, 3}, 2},
                           Problem{25, 9, {4, 1}, 2}, Problem{7, 7, {1, 1}, 3}}) {
    ASSERT_TRUE(ValidateProblem(p, p.grid.rows * p.grid.cols).ok());
    std::vector<int> owner(p.global_rows * p.global_cols, -1);
    const int n = p.grid.rows * p.grid.cols;
    for (int r = 0; r < n; ++r) {
      const Block b = Decompose(p, r);
      EXPECT_EQ(b.rank, r);
      for (int i = 0; i < b.nrows; ++i)
        for (int j = 0; j < b.ncols; ++j) {
          int& o = owner[(b.row0 + i) * p.global_cols + b.col0 + j];
          EXPECT_EQ(o, -1) << "cell owned twice";
          o = r;
        }
      // A neighbour's opposite neighbour is this rank, and it shares the edge's extent.
      if (b.north != kNoNeighbor) {
        const Block n2 = Decompose(p, b.north);
        EXPECT_EQ(n2.south, r);
        EXPECT_EQ(n2.col0, b.col0);
        EXPECT_EQ(n2.ncols, b.ncols);
        EXPECT_EQ(n2.row0 + n2.nrows, b.row0);
      } else {
        EXPECT_EQ(b.row0, 0);
      }
      if (b.west != kNoNeighbor) {
        const Block w2 = Decompose(p, b.west);
        EXPECT_EQ(w2.east, r);
        EXPECT_EQ(w2.row0, b.row0);
        EXPECT_EQ(w2.nrows, b.nrows);
        EXPECT_EQ(w2.col0 + w2.ncols, b.col0);
      } else {
        EXPECT_EQ(b.col0, 0);
      }
      if (b.south == kNoNeighbor) {
        EXPECT_EQ(b.row0 + b.nrows, p.global_rows);
      }
      if (b.east == kNoNeighbor) {
        EXPECT_EQ(b.col0 + b.ncols, p.global_cols);
      }
    }
    for (int o : owner) EXPECT_GE(o, 0) << "cell owned by nobody";
  }
}

TEST(HaloDecomposition, ValidateRejectsWithTheValue) {
  struct Case {
    Problem p;
    int nranks;
    std::string want;
  };
  const std::vector<Case> cases = {
      {Problem{64, 64, {3, 3}, 1}, 4, "grid 3x3 does not fit the job: it needs 9 ranks, the job has 4"},
      {Problem{16, 16, {2, 2}, 9}, 4, "halo width 9 is larger than the smallest local block (8x8"},
      {Problem{17, 40, {2, 2}, 9}, 4, "(8x20 cells"},
      {Problem{3, 64, {4, 1}, 1}, 4, "global domain 3x64 is smaller than the grid 4x1"},
      {Problem{100000, 100000, {1, 1}, 1}, 1, "exceeds 2^31-1 elements"},
  };
  for (const Case& c : cases) {
    Status st = ValidateProblem(c.p, c.nranks);
    EXPECT_EQ(st.code(), Err::kInvalidArg);
    EXPECT_NE(st.message().find(c.want), std::string::npos) << st.message();
  }
  EXPECT_TRUE(ValidateProblem(Problem{16, 16, {2, 2}, 8}, 4).ok());
}

TEST(HaloDecomposition, MakeProblemWeakAndStrong) {
  Options o;
  o.halo = 2;
  const Problem weak = MakeProblem(o, ProcGrid{1, 2}, 512);
  EXPECT_EQ(weak.global_rows, 512);
  EXPECT_EQ(weak.global_cols, 1024);
  EXPECT_EQ(weak.halo, 2);
  o.global_rows = 37;
  o.global_cols = 29;
  const Problem strong = MakeProblem(o, ProcGrid{2, 2}, 0);
  EXPECT_EQ(strong.global_rows, 37);
  EXPECT_EQ(strong.global_cols, 29);
}

// ---- geometry ----

TEST(HaloGeometry, StepRegionShrinksToTheOwnedBlockAndStaysInTheDomain) {
  const Problem p{30, 30, {3, 3}, 3};
  const Block mid = Decompose(p, 4);  // interior rank: no clipping
  for (int step = 1; step <= 3; ++step) {
    const Region r = StepRegion(p, mid, step);
    EXPECT_EQ(r.i0, step);
    EXPECT_EQ(r.i1, mid.nrows + 2 * 3 - step);
    EXPECT_EQ(r.j0, step);
    EXPECT_EQ(r.j1, mid.ncols + 2 * 3 - step);
  }
  const Block corner = Decompose(p, 0);  // north-west: the halo there is boundary
  const Region r1 = StepRegion(p, corner, 1);
  EXPECT_EQ(r1.i0, 3);  // global row 0
  EXPECT_EQ(r1.j0, 3);
  EXPECT_EQ(r1.i1, corner.nrows + 6 - 1);
  const Region r3 = StepRegion(p, corner, 3);
  EXPECT_EQ(r3.i0, 3);
  EXPECT_EQ(r3.i1, 3 + corner.nrows);
  EXPECT_EQ(r3.j1, 3 + corner.ncols);
}

TEST(HaloGeometry, FacesSendOwnedCellsIntoHaloCells) {
  const Problem p{12, 15, {3, 3}, 2};
  const Block b = Decompose(p, 4);
  const Layout l = LocalLayout(b, 2);
  const Phase rows = ExchangePhase(b, 2, 0), cols = ExchangePhase(b, 2, 1);
  EXPECT_TRUE(rows.shape.contiguous());
  EXPECT_EQ(rows.shape.elems(), 2 * l.pitch());
  EXPECT_FALSE(cols.shape.contiguous());
  EXPECT_EQ(cols.shape.width, 2);
  EXPECT_EQ(cols.shape.height, l.rows);
  EXPECT_EQ(cols.shape.pitch, l.pitch());
  EXPECT_EQ(rows.faces[0].peer, b.north);
  EXPECT_EQ(rows.faces[1].peer, b.south);
  EXPECT_EQ(cols.faces[0].peer, b.west);
  EXPECT_EQ(cols.faces[1].peer, b.east);
  // Send to the north: the first two owned rows; receive from the south: the last halo rows.
  EXPECT_EQ(rows.faces[0].send_offset, 2 * l.pitch());
  EXPECT_EQ(rows.faces[1].recv_offset, (b.nrows + 2) * l.pitch());
  EXPECT_EQ(cols.faces[1].send_offset, b.ncols);
  EXPECT_EQ(cols.faces[1].recv_offset, b.ncols + 2);
  // A message's send tag is the receiving side's recv tag.
  EXPECT_EQ(rows.faces[0].send_tag, rows.faces[1].recv_tag);
  EXPECT_EQ(cols.faces[0].send_tag, cols.faces[1].recv_tag);
  std::set<int> tags = {rows.faces[0].send_tag, rows.faces[1].send_tag, cols.faces[0].send_tag,
                        cols.faces[1].send_tag};
  EXPECT_EQ(tags.size(), 4u);
}

// ---- stencil ----

TEST(HaloStencil, WeightsAverage) {
  const Weights<double> w;
  EXPECT_NEAR(w.center + 4 * w.cardinal + 4 * w.diagonal, 1.0, 1e-15);
  EXPECT_EQ(kFlopsPerPoint, 17);
}

// The stencil written out on a 2D vector (ring of fixed cells), the formula in SHOC's order.
template <typename T>
std::vector<std::vector<T>> NaiveSteps(std::vector<std::vector<T>> g, int iters) {
  const T wc = T(0.4), wa = T(0.1), wd = T(0.05);
  for (int it = 0; it < iters; ++it) {
    std::vector<std::vector<T>> n = g;
    for (size_t i = 1; i + 1 < g.size(); ++i)
      for (size_t j = 1; j + 1 < g[i].size(); ++j)
        n[i][j] = wc * g[i][j] + wa * (g[i - 1][j] + g[i + 1][j] + g[i][j + 1] + g[i][j - 1]) +
                  wd * (g[i - 1][j + 1] + g[i - 1][j - 1] + g[i + 1][j + 1] + g[i + 1][j - 1]);
    g = n;
  }
  return g;
}

template <typename T>
void CheckSweepAgainstNaive() {
  const int rows = 13, cols = 17, iters = 6;
  Block whole;
  whole.nrows = rows;
  whole.ncols = cols;
  const Layout l = LocalLayout(whole, 1);
  std::vector<T> a(l.cells()), b(l.cells());
  FillLocal(whole, 1, a.data());
  b = a;
  std::vector<std::vector<T>> g(l.rows, std::vector<T>(l.cols));
  for (int i = 0; i < l.rows; ++i)
    for (int j = 0; j < l.cols; ++j) {
      g[i][j] = a[i * l.pitch() + j];
      EXPECT_EQ(g[i][j], static_cast<T>(InitValue(i - 1, j - 1)));
    }
  T* cur = a.data();
  T* next = b.data();
  for (int it = 0; it < iters; ++it) {
    SweepCpu(cur, next, l.pitch(), Region{1, rows + 1, 1, cols + 1}, Weights<T>());
    std::swap(cur, next);
  }
  const auto want = NaiveSteps(g, iters);
  for (int i = 0; i < l.rows; ++i)
    for (int j = 0; j < l.cols; ++j)
      ASSERT_EQ(std::memcmp(&cur[i * l.pitch() + j], &want[i][j], sizeof(T)), 0)
          << "cell " << i << "," << j << ": " << cur[i * l.pitch() + j] << " vs " << want[i][j];
  // The values moved (the test is not comparing initial states).
  EXPECT_NE(cur[5 * l.pitch() + 5], static_cast<T>(InitValue(4, 4)));

  const std::vector<T> ref = ReferenceGrid<T>(rows, cols, iters, 1);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      ASSERT_EQ(std::memcmp(&ref[i * cols + j], &want[i + 1][j + 1], sizeof(T)), 0);
  EXPECT_EQ(ReferenceGrid<T>(rows, cols, iters, 3), ref);  // threads do not change the result
}

TEST(HaloStencil, CpuSweepMatchesNaiveFloat) { CheckSweepAgainstNaive<float>(); }
TEST(HaloStencil, CpuSweepMatchesNaiveDouble) { CheckSweepAgainstNaive<double>(); }

TEST(HaloStencil, FirstDifferenceComparesBits) {
  std::vector<double> a = {1, 2, 0.0, 4}, b = {1, 2, -0.0, 5};
  EXPECT_EQ(FirstDifference(a.data(), b.data(), 4), 2);
  EXPECT_EQ(FirstDifference(a.data(), a.data(), 4), -1);
}

// ---- a distributed run, simulated ----

// Every rank's array in one process; the exchange copies faces between them in the application's
// order (all rows, then all columns). The result must equal the serial reference bit for bit.
template <typename T>
void SimulatedRun(const Problem& p, int iters) {
  const int n = p.grid.rows * p.grid.cols;
  ASSERT_TRUE(ValidateProblem(p, n).ok());
  std::vector<Block> blocks;
  std::vector<std::vector<T>> cur(n), next(n);
  for (int r = 0; r < n; ++r) {
    blocks.push_back(Decompose(p, r));
    cur[r].resize(LocalLayout(blocks[r], p.halo).cells());
    FillLocal(blocks[r], p.halo, cur[r].data());
    next[r] = cur[r];
  }
  auto exchange = [&]() {
    for (int k = 0; k < kPhases; ++k)
      for (int r = 0; r < n; ++r) {
        const Phase ph = ExchangePhase(blocks[r], p.halo, k);
        for (const Face& f : ph.faces) {
          if (f.peer == kNoNeighbor) continue;
          // The peer's face that receives this message.
          const Phase peer = ExchangePhase(blocks[f.peer], p.halo, k);
          const Face* g = nullptr;
          for (const Face& pf : peer.faces)
            if (pf.peer == r && pf.recv_tag == f.send_tag) g = &pf;
          ASSERT_NE(g, nullptr);
          const FaceShape& s = ph.shape;
          ASSERT_EQ(s.elems(), peer.shape.elems());
          for (int64_t row = 0; row < s.height; ++row)
            std::memcpy(&cur[f.peer][g->recv_offset + row * peer.shape.pitch],
                        &cur[r][f.send_offset + row * s.pitch], s.width * sizeof(T));
        }
      }
  };
  for (int it = 0; it < iters; ++it) {
    const int step = it % p.halo + 1;
    if (step == 1) exchange();
    for (int r = 0; r < n; ++r) {
      SweepCpu(cur[r].data(), next[r].data(), LocalLayout(blocks[r], p.halo).pitch(),
               StepRegion(p, blocks[r], step), Weights<T>());
      std::swap(cur[r], next[r]);
    }
  }
  const std::vector<T> ref = ReferenceGrid<T>(p.global_rows, p.global_cols, iters, 2);
  for (int r = 0; r < n; ++r) {
    const Block& b = blocks[r];
    const int64_t pitch = LocalLayout(b, p.halo).pitch();
    for (int i = 0; i < b.nrows; ++i) {
      const int64_t d =
          FirstDifference(&cur[r][(i + p.halo) * pitch + p.halo],
                          &ref[(int64_t{b.row0} + i) * p.global_cols + b.col0], b.ncols);
      ASSERT_EQ(d, -1) << "rank " << r << " global cell (" << b.row0 + i << ", " << b.col0 + d
                       << ") of " << p.global_rows << "x" << p.global_cols << " grid "
                       << p.grid.rows << "x" << p.grid.cols << " halo " << p.halo;
    }
  }
}

TEST(HaloSimulated, MatchesReferenceForHaloWidthsAndOddGrids) {
  for (int halo = 1; halo <= 3; ++halo) {
    SimulatedRun<double>(Problem{24, 24, {2, 2}, halo}, 7);
    SimulatedRun<float>(Problem{37, 29, {2, 2}, halo}, 8);
    SimulatedRun<double>(Problem{19, 33, {1, 3}, halo}, 5);
    SimulatedRun<float>(Problem{31, 11, {3, 1}, halo}, 9);
    SimulatedRun<double>(Problem{23, 26, {3, 2}, halo}, 10);
    SimulatedRun<double>(Problem{9, 9, {1, 1}, halo}, 4);
  }
}

// The smallest legal blocks: every block exactly the halo width in one dimension.
TEST(HaloSimulated, HaloAsWideAsTheBlock) {
  SimulatedRun<double>(Problem{9, 12, {3, 2}, 3}, 7);
  SimulatedRun<float>(Problem{4, 4, {2, 2}, 2}, 5);
}

}  // namespace
}  // namespace mpigpu::halo

// mpigpu-sweep's pure parts: option parsing, table / CSV / JSON output, the plot, --tune's
// choice, finding the launcher. No ranks, no GPU.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e_util.h"
#include "tools/sweep_json.h"
#include "tools/sweep_launch.h"
#include "tools/sweep_options.h"
#include "tools/sweep_plot.h"
#include "tools/sweep_progress.h"
#include "tools/sweep_report.h"
#include "tools/sweep_rule.h"
#include "tools/sweep_tune.h"

namespace mpigpu::sweep {
namespace {

using STest = ::mpigpu::sweep::Test;  // gtest has its own Test
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Options Parse(const std::vector<std::string>& args) {
  Options o;
  Status st = ParseOptions(args, &o);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return o;
}

std::string ParseError(const std::vector<std::string>& args) {
  Options o;
  Status st = ParseOptions(args, &o);
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  return st.message();
}

// ---- options ----

TEST(SweepOptions, Defaults) {
  Options o = Parse({});
  EXPECT_EQ(o.tests, std::vector<STest>{STest::kLatency});
  EXPECT_EQ(o.min_size, 1u);
  EXPECT_EQ(o.max_size, size_t{4} << 20);
  EXPECT_EQ(o.window, 64);
  ASSERT_EQ(o.pairs.size(), 1u);
  EXPECT_EQ(PairName(o.pairs[0]), "HH");
  EXPECT_TRUE(o.peers);
  EXPECT_TRUE(o.limits);
  EXPECT_FALSE(o.check);
  EXPECT_FALSE(o.pinned_host);
  EXPECT_TRUE(o.lmt.empty());
  EXPECT_EQ(Iterations(o, STest::kLatency, 8192), 10000);
  EXPECT_EQ(Iterations(o, STest::kLatency, 8193), 1000);
  EXPECT_EQ(Iterations(o, STest::kBw, 1), 100);
  EXPECT_EQ(Iterations(o, STest::kBibw, 1 << 20), 20);
  EXPECT_EQ(Warmup(o, STest::kLatency, 1), 100);
  EXPECT_EQ(Warmup(o, STest::kBw, 1 << 20), 2);
}

TEST(SweepOptions, EveryFlag) {
  Options o = Parse({"bw", "bibw", "-m", "4K:2M", "-i", "7", "-x", "3", "-W", "16", "-d", "cuda",
                     "-n", "2", "-c", "--csv", "a.csv", "--json=b.json", "--plot", "c.png",
                     "--lmt", "ring,ipc", "--no-peers", "--no-limits", "--host-mem", "pinned",
                     "D", "H"});
  EXPECT_EQ(o.tests, (std::vector<STest>{STest::kBw, STest::kBibw}));
  EXPECT_EQ(o.min_size, 4096u);
  EXPECT_EQ(o.max_size, size_t{2} << 20);
  EXPECT_EQ(o.iterations, 7);
  EXPECT_EQ(o.warmup, 3);
  EXPECT_EQ(Iterations(o, STest::kLatency, 1), 7);
  EXPECT_EQ(Warmup(o, STest::kBw, 1 << 20), 3);
  EXPECT_EQ(o.window, 16);
  EXPECT_TRUE(o.cuda);
  EXPECT_TRUE(o.check);
  EXPECT_EQ(o.csv, "a.csv");
  EXPECT_EQ(o.json, "b.json");
  EXPECT_EQ(o.plot, "c.png");
  EXPECT_EQ(o.lmt, (std::vector<std::string>{"ring", "ipc"}));
  EXPECT_FALSE(o.peers);
  EXPECT_FALSE(o.limits);
  EXPECT_TRUE(o.pinned_host);
  EXPECT_FALSE(Parse({"--host-mem", "pageable"}).pinned_host);
  ASSERT_EQ(o.pairs.size(), 1u);
  EXPECT_EQ(PairName(o.pairs[0]), "DH");
  EXPECT_TRUE(Parse({"-h"}).help);
  EXPECT_TRUE(Parse({"--help"}).help);
}

TEST(SweepOptions, SizeRanges) {
  Options o = Parse({"-m", "64K"});
  EXPECT_EQ(o.min_size, 1u);
  EXPECT_EQ(o.max_size, 65536u);
  o = Parse({"-m", "0:1G"});
  EXPECT_EQ(o.min_size, 0u);
  EXPECT_EQ(o.max_size, size_t{1} << 30);
  EXPECT_EQ(MessageSizes(0, 4), (std::vector<size_t>{0, 1, 2, 4}));
  EXPECT_EQ(MessageSizes(1, 1), (std::vector<size_t>{1}));
  EXPECT_EQ(MessageSizes(3, 20), (std::vector<size_t>{3, 6, 12}));
  EXPECT_EQ(MessageSizes(1, size_t{4} << 20).size(), 23u);
  EXPECT_EQ(SizeText(65536), "64K");
  EXPECT_EQ(SizeText(size_t{8} << 20), "8M");
  EXPECT_EQ(SizeText(1000), "1000");
}

TEST(SweepOptions, PairsAndTests) {
  Options o = Parse({"--all-pairs", "all"});
  ASSERT_EQ(o.pairs.size(), 4u);
  EXPECT_EQ(PairName(o.pairs[0]), "HH");
  EXPECT_EQ(PairName(o.pairs[1]), "HD");
  EXPECT_EQ(PairName(o.pairs[2]), "DH");
  EXPECT_EQ(PairName(o.pairs[3]), "DD");
  EXPECT_EQ(o.tests.size(), 3u);
  o = Parse({"--pairs", "dd,HH,DD"});
  ASSERT_EQ(o.pairs.size(), 2u);
  EXPECT_EQ(PairName(o.pairs[0]), "DD");
  EXPECT_EQ(Parse({"--lmt", "all"}).lmt, LmtNames());
  EXPECT_EQ(Parse({"osu_latency"}).tests, std::vector<STest>{STest::kLatency});
  EXPECT_TRUE(LmtApplies("cma", Pair{Loc::kHost, Loc::kHost}));
  EXPECT_FALSE(LmtApplies("cma", Pair{Loc::kHost, Loc::kDevice}));
  EXPECT_FALSE(LmtApplies("ipc", Pair{}));
  EXPECT_TRUE(LmtApplies("ring", Pair{Loc::kDevice, Loc::kDevice}));
}

TEST(SweepOptions, TuneDefaultsToLargeSizes) {
  Options o = Parse({"--tune"});
  EXPECT_TRUE(o.tune);
  EXPECT_EQ(o.min_size, size_t{256} << 10);
  EXPECT_EQ(o.max_size, size_t{16} << 20);
  o = Parse({"--tune", "-m", "1M:2M"});
  EXPECT_EQ(o.min_size, size_t{1} << 20);
}

TEST(SweepOptions, BadInputsNameTheProblem) {
  EXPECT_NE(ParseError({"pingpong"}).find("unknown test 'pingpong'"), std::string::npos);
  EXPECT_NE(ParseError({"--frobnicate"}).find("unknown option '--frobnicate'"),
            std::string::npos);
  EXPECT_NE(ParseError({"-m", "4M:1K"}).find("larger than MAX"), std::string::npos);
  EXPECT_NE(ParseError({"-m", "abc"}).find("MAX 'abc'"), std::string::npos);
  EXPECT_NE(ParseError({"-m", "x:4K"}).find("MIN 'x'"), std::string::npos);
  EXPECT_NE(ParseError({"-m", "2G"}).find("largest message size is 1G"), std::string::npos);
  EXPECT_NE(ParseError({"-m", "-4"}).find("-m"), std::string::npos);
  EXPECT_NE(ParseError({"-i", "0"}).find("bad -i '0'"), std::string::npos);
  EXPECT_NE(ParseError({"-i", "many"}).find("bad -i"), std::string::npos);
  EXPECT_NE(ParseError({"-x", "-1"}).find("bad -x"), std::string::npos);
  EXPECT_NE(ParseError({"-W", "0"}).find("bad -W"), std::string::npos);
  EXPECT_NE(ParseError({"-W", "100000"}).find("bad -W"), std::string::npos);
  EXPECT_NE(ParseError({"-d", "rocm"}).find("only 'cuda'"), std::string::npos);
  EXPECT_NE(ParseError({"-n", "3"}).find("exactly 2 ranks"), std::string::npos);
  EXPECT_NE(ParseError({"-n", "1"}).find("exactly 2 ranks"), std::string::npos);
  EXPECT_NE(ParseError({"D"}).find("come in a pair"), std::string::npos);
  EXPECT_NE(ParseError({"H", "D", "H"}).find("come in a pair"), std::string::npos);
  EXPECT_NE(ParseError({"--pairs", "HX"}).find("'HX'"), std::string::npos);
  EXPECT_NE(ParseError({"--all-pairs", "H", "D"}).find("either"), std::string::npos);
  EXPECT_NE(ParseError({"--lmt", "fast"}).find("'fast'"), std::string::npos);
  EXPECT_NE(ParseError({"--tune", "--lmt", "ring"}).find("cannot be combined"),
            std::string::npos);
  EXPECT_NE(ParseError({"-m"}).find("needs a value"), std::string::npos);
  EXPECT_NE(ParseError({"--csv"}).find("needs a value"), std::string::npos);
  EXPECT_NE(ParseError({"--csv="}).find("file name"), std::string::npos);
  EXPECT_NE(ParseError({"--all-pairs=1"}).find("takes no value"), std::string::npos);
  EXPECT_NE(ParseError({"--host-mem", "huge"}).find("bad --host-mem 'huge'"), std::string::npos);
}

TEST(SweepOptions, ReplotTakesOnlyOutputOptions) {
  Options o = Parse({"--replot", "old.json", "--csv", "x.csv", "--plot", "x.png", "--json",
                     "y.json"});
  EXPECT_EQ(o.replot, "old.json");
  EXPECT_EQ(o.csv, "x.csv");
  EXPECT_EQ(o.plot, "x.png");
  EXPECT_EQ(o.json, "y.json");
  EXPECT_EQ(Parse({"--replot=a.json"}).replot, "a.json");
  EXPECT_TRUE(Parse({"--replot", "a.json", "-h"}).help);
  EXPECT_TRUE(Parse({}).replot.empty());

  EXPECT_NE(ParseError({"--replot"}).find("needs a value"), std::string::npos);
  EXPECT_NE(ParseError({"--replot="}).find("--replot needs a file name"), std::string::npos);
  // Whatever only applies to measuring is refused, named, before or after --replot.
  const std::vector<std::vector<std::string>> measuring = {
      {"-m", "1:4K"}, {"-i", "5"}, {"-x", "1"},    {"-W", "8"},         {"--lmt", "ring"},
      {"--tune"},     {"bw"},      {"all"},        {"H", "D"},          {"--all-pairs"},
      {"-c"},         {"-n", "2"}, {"--no-peers"}, {"--pairs", "HH"},   {"--no-limits"},
      {"--message-size=1:2"}};
  for (const auto& extra : measuring) {
    std::vector<std::string> after = {"--replot", "old.json"};
    after.insert(after.end(), extra.begin(), extra.end());
    std::vector<std::string> before = extra;
    before.insert(before.end(), {"--replot", "old.json"});
    for (const auto& args : {after, before}) {
      std::string err = ParseError(args);
      std::string first = extra[0].substr(0, extra[0].find('='));
      EXPECT_NE(err.find("--replot draws a report measured earlier: '" + first + "'"),
                std::string::npos)
          << extra[0] << ": " << err;
    }
  }
}

TEST(SweepOptions, RankArgsRoundTrip) {
  Options o = Parse({"bw", "latency", "-m", "2:8K", "-i", "5", "-x", "1", "-W", "8", "-c",
                     "--no-peers", "--all-pairs", "--csv", "x.csv", "--lmt", "all",
                     "--host-mem", "pinned"});
  Options back = Parse(RankArgs(o));
  EXPECT_EQ(back.tests, o.tests);
  EXPECT_EQ(back.min_size, 2u);
  EXPECT_EQ(back.max_size, 8192u);
  EXPECT_EQ(back.iterations, 5);
  EXPECT_EQ(back.warmup, 1);
  EXPECT_EQ(back.window, 8);
  EXPECT_TRUE(back.check);
  EXPECT_FALSE(back.peers);
  EXPECT_TRUE(back.limits);
  EXPECT_TRUE(back.pinned_host);
  EXPECT_EQ(back.pairs.size(), 4u);
  EXPECT_TRUE(back.csv.empty());  // outputs belong to the parent
  EXPECT_TRUE(back.lmt.empty());
}

TEST(SweepOptions, UsageDocumentsEveryFlag) {
  const std::string u = UsageText();
  for (const char* flag : {"-m", "-i", "-x", "-W", "-d cuda", "--all-pairs", "--pairs", "-c",
                           "--csv", "--json", "--plot", "--replot", "--lmt", "--tune", "--peers",
                           "--host-mem",
                           "-h",
                           "latency", "bw", "bibw", "H|D H|D"})
    EXPECT_NE(u.find(flag), std::string::npos) << flag;
}

TEST(SweepOptions, TimePerSizeAndProgress) {
  Options o = Parse({});
  EXPECT_EQ(o.time_per_size, kDefaultTimePerSize);
  EXPECT_FALSE(o.progress);
  o = Parse({"--time-per-size", "1.5", "--progress"});
  EXPECT_EQ(o.time_per_size, 1.5);
  EXPECT_TRUE(o.progress);
  EXPECT_EQ(Parse({"--time-per-size=0"}).time_per_size, 0.0);
  Options back = Parse(RankArgs(o));
  EXPECT_EQ(back.time_per_size, 1.5);
  EXPECT_TRUE(back.progress);
  EXPECT_EQ(Parse(RankArgs(Parse({}))).time_per_size, kDefaultTimePerSize);
  for (const char* bad : {"-1", "x", "", "4000", "nan"})
    EXPECT_NE(ParseError({"--time-per-size", bad}).find("bad --time-per-size"), std::string::npos)
        << bad;
  EXPECT_NE(ParseError({"--progress=yes"}).find("takes no value"), std::string::npos);
  // --progress is about output: --replot takes it.
  EXPECT_TRUE(Parse({"--replot", "a.json", "--progress"}).progress);
  const std::string u = UsageText();
  EXPECT_NE(u.find("--time-per-size"), std::string::npos);
  EXPECT_NE(u.find("--progress"), std::string::npos);
}

// ---- the iteration rule ----

TEST(SweepRule, FewerRunsForSlowSizes) {
  // Fast: OSU's count.
  EXPECT_EQ(BudgetIterations(10000, 10, 1e-6, 0.2), 10000);
  // 150 us a ping-pong: what fits in 0.2 s.
  EXPECT_EQ(BudgetIterations(10000, 10, 150e-6, 0.2), 1333);
  // Very slow: never fewer than the minimum...
  EXPECT_EQ(BudgetIterations(20, 2, 5.0, 0.2), 2);
  // ...nor more than the default, whatever the minimum.
  EXPECT_EQ(BudgetIterations(3, 10, 5.0, 0.2), 3);
  // No budget, or no time measured: the default.
  EXPECT_EQ(BudgetIterations(1000, 10, 1.0, 0), 1000);
  EXPECT_EQ(BudgetIterations(1000, 10, 0, 0.2), 1000);
  EXPECT_EQ(BudgetIterations(1000, 10, std::nan(""), 0.2), 1000);
  EXPECT_EQ(MinIterations(STest::kLatency), 10);
  EXPECT_EQ(MinIterations(STest::kBw), 2);
  EXPECT_EQ(MinIterations(STest::kBibw), 2);
}

TEST(SweepRule, WarmupInProportion) {
  EXPECT_EQ(ScaledWarmup(100, 10000, 10000), 100);  // not cut: OSU's warmup
  EXPECT_EQ(ScaledWarmup(100, 10000, 1333), 14);    // 1% of the runs, rounded up
  EXPECT_EQ(ScaledWarmup(100, 10000, 10), 1);       // at least one
  EXPECT_EQ(ScaledWarmup(2, 20, 2), 1);
  EXPECT_EQ(ScaledWarmup(0, 20, 2), 0);             // -x 0 stays 0
}

TEST(SweepRule, AppliesWithoutIAndSaysSo) {
  Options o = Parse({});
  EXPECT_TRUE(RuleApplies(o));
  const std::string lat = IterationRuleText(o, STest::kLatency);
  EXPECT_NE(lat.find("10000 runs up to 8K, 1000 above"), std::string::npos) << lat;
  EXPECT_NE(lat.find("warmup 100/10"), std::string::npos) << lat;
  EXPECT_NE(lat.find("0.2 s"), std::string::npos) << lat;
  EXPECT_NE(lat.find("at least 10"), std::string::npos) << lat;
  EXPECT_NE(IterationRuleText(o, STest::kBw).find("at least 2"), std::string::npos);
  o = Parse({"-i", "5", "-x", "1"});
  EXPECT_FALSE(RuleApplies(o));
  EXPECT_EQ(IterationRuleText(o, STest::kBw), "5 runs a size, warmup 1 (-i)");
  EXPECT_NE(IterationRuleText(Parse({"-x", "0"}), STest::kBw).find("warmup 0 (1: the run timed"),
            std::string::npos);
  EXPECT_FALSE(RuleApplies(Parse({"--time-per-size", "0"})));
  EXPECT_NE(IterationRuleText(Parse({"--time-per-size", "0"}), STest::kLatency)
                .find("(--time-per-size 0)"),
            std::string::npos);
}

// ---- the progress line ----

TEST(SweepProgress, LineWithTimeLeftThenCleared) {
  EXPECT_EQ(DurationText(45), "45s");
  EXPECT_EQ(DurationText(185), "3m05s");
  EXPECT_EQ(DurationText(3720), "1h02m");
  char* text = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&text, &len);
  ASSERT_NE(f, nullptr);
  double now = 100;
  {
    Progress p(true, 4, f, [&now] { return now; });
    p.Row("latency DD 1 B");
    now += 10;  // one row in 10 s: 3 rows left
    p.Row("latency DD 2 B");
    p.Detail("limit");
    p.Clear();
  }
  std::fclose(f);
  const std::string out(text, len);
  std::free(text);
  auto line = [](const std::string& s) {
    return "\r" + s + std::string(Progress::kWidth - s.size(), ' ');
  };
  const std::string want = line("mpigpu-sweep: latency DD 1 B (1/4), estimating the time left") +
                           line("mpigpu-sweep: latency DD 2 B (2/4), 30s left") +
                           line("mpigpu-sweep: latency DD 2 B limit (2/4), 30s left") + "\r" +
                           std::string(Progress::kWidth, ' ') + "\r";
  EXPECT_EQ(out, want);
}

TEST(SweepProgress, OffDrawsNothing) {
  char* text = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&text, &len);
  {
    Progress p(false, 2, f);
    p.Row("x");
    p.Clear();
  }
  std::fclose(f);
  EXPECT_EQ(len, 0u);
  std::free(text);
}

// ---- arithmetic ----

TEST(SweepStats, Units) {
  EXPECT_DOUBLE_EQ(PingPongLatencyUs(1.0, 10), 50000.0);  // 10 round trips in 1 s
  EXPECT_DOUBLE_EQ(PerOpUs(0.001, 10), 100.0);
  EXPECT_DOUBLE_EQ(BandwidthGBs(2e9, 0.5), 4.0);
  EXPECT_TRUE(std::isnan(BandwidthGBs(1, 0)));
  EXPECT_DOUBLE_EQ(Ratio(3, 4), 0.75);
  EXPECT_TRUE(std::isnan(Ratio(kNaN, 1)));
  EXPECT_TRUE(std::isnan(Ratio(1, 0)));
  EXPECT_NEAR(GeoMean({1, 4, kNaN, 16}), 4.0, 1e-12);
  EXPECT_TRUE(std::isnan(GeoMean({kNaN})));
}

// ---- output ----

Report Sample() {
  Report r;
  Table t;
  t.test = STest::kBw;
  t.pair = Pair{Loc::kHost, Loc::kDevice};
  t.dst_name = "NVIDIA H200, GPU 1";
  t.sizes = {1, 1024, 1 << 20};
  t.series.push_back({"mpigpu", kKindMpigpu, {0.01, 5.5, 40.0}, "MPIGPU_LMT=auto"});
  t.series.push_back({"limit", kKindLimit, {0.02, 11.0, 50.0}, "pinned H2D cudaMemcpyAsync"});
  t.series.push_back({"staged", kKindPeer, {kNaN, 2.75, 20.0}, "manual, \"quoted\""});
  r.tables.push_back(t);
  Table l;
  l.test = STest::kLatency;
  l.pair = Pair{};
  l.sizes = {0, 8};
  l.series.push_back({"mpigpu", kKindMpigpu, {0.25, 0.5}, ""});
  r.tables.push_back(l);
  r.AddNote("a note");
  r.AddNote("a note");
  return r;
}

// The cells of a table's row for `size` (empty when the table has no such row).
std::vector<std::string> RowCells(const std::string& table, const std::string& size) {
  const size_t row = table.find("\n" + size + " ");
  std::vector<std::string> cells;
  if (row == std::string::npos) return cells;
  std::istringstream line(table.substr(row + 1, table.find('\n', row + 1) - row - 1));
  for (std::string cell; line >> cell;) cells.push_back(cell);
  return cells;
}

// A latency table's floors: each named in a legend line under the title, a column of its own
// and the ratio mpigpu/floor; kind "floor" in the CSV and the JSON.
TEST(SweepOutput, LatencyFloorsAreNamedWithTheirRatios) {
  Report r;
  Table t;
  t.test = STest::kLatency;
  t.pair = Pair{Loc::kDevice, Loc::kDevice};
  t.sizes = {1, 1024};
  t.series.push_back({"mpigpu", kKindMpigpu, {3.6, 4.8}, ""});
  t.series.push_back({kFloorGpuFlag, kKindFloor, {1.2, 1.2}, "half a flag's round trip ..."});
  t.series.push_back({kFloorCopy, kKindFloor, {7.2, 8.0}, "cudaMemcpyPeerAsync ..."});
  r.tables.push_back(t);
  const std::string s = FormatTable(t);
  const size_t flag = s.find("# floor gpuflag: half a flag's round trip between kernels on the "
                             "two GPUs (one way)\n");
  const size_t copy = s.find("# floor copy: one host-driven copy issued and waited for");
  const size_t head = s.find("# Size");
  ASSERT_NE(flag, std::string::npos) << s;
  ASSERT_NE(copy, std::string::npos) << s;
  EXPECT_LT(copy, head);  // the legend comes before the columns
  EXPECT_NE(s.find("mpigpu/gpuflag"), std::string::npos) << s;
  EXPECT_NE(s.find("mpigpu/copy"), std::string::npos) << s;
  EXPECT_EQ(RowCells(s, "1"), (std::vector<std::string>{"1", "3.60", "1.20", "7.20", "3", "0.5"}));
  EXPECT_NE(ToCsv(r).find("latency,DD,host,host,gpuflag,floor,1,1.2,us\n"), std::string::npos)
      << ToCsv(r);
  Report back;
  ASSERT_TRUE(FromJson(ToJson(r), &back).ok());
  ASSERT_NE(back.tables[0].Find(kFloorCopy), nullptr);
  EXPECT_EQ(back.tables[0].Find(kFloorCopy)->kind, kKindFloor);
  // Every floor the sweep measures has a legend; other names have none.
  for (const char* name : {kFloorCacheLine, kFloorGpuFlag, kFloorCopy})
    EXPECT_FALSE(FloorLegend(name).empty()) << name;
  EXPECT_EQ(FloorLegend("limit"), "");
}

TEST(SweepOutput, TableHasHeaderColumnsAndRatios) {
  const std::string s = FormatTable(Sample().tables[0]);
  EXPECT_NE(s.find("# mpigpu-sweep bw [HD]: rank 0 H (host) -> rank 1 D (NVIDIA H200, GPU 1)"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("Bandwidth (GB/s)"), std::string::npos);
  EXPECT_NE(s.find("# Size"), std::string::npos);
  // The column order: mpigpu first, then the others, then the ratios.
  size_t mp = s.find("mpigpu "), lim = s.find("limit"), st = s.find("staged"),
         r1 = s.find("mpigpu/limit"), r2 = s.find("mpigpu/staged");
  ASSERT_NE(r2, std::string::npos);
  EXPECT_LT(mp, lim);
  EXPECT_LT(lim, st);
  EXPECT_LT(st, r1);
  EXPECT_LT(r1, r2);
  // Row 1024: the values, then the ratios mpigpu/limit and mpigpu/staged.
  EXPECT_EQ(RowCells(s, "1024"),
            (std::vector<std::string>{"1024", "5.50", "11.00", "2.75", "0.5", "2"}));
  // Missing values say n/a, also in the ratio.
  std::string first = s.substr(s.find("\n1 ") + 1);
  first = first.substr(0, first.find('\n'));
  EXPECT_NE(first.find("n/a"), std::string::npos) << first;
  EXPECT_NE(s.find("# limit: pinned H2D cudaMemcpyAsync"), std::string::npos);

  const std::string lat = FormatTable(Sample().tables[1]);
  EXPECT_NE(lat.find("Latency (us)"), std::string::npos);
  EXPECT_NE(lat.find("rank 0 H (host) -> rank 1 H (host)"), std::string::npos);
  const std::string all = FormatReport(Sample());
  EXPECT_EQ(all.find("# note: a note"), all.rfind("# note: a note"));  // once
}

// The live output (head, each row as measured, tail) is FormatTable's text; columns have
// widths from their titles, so a row's text does not depend on rows after it.
TEST(SweepOutput, TableIsHeadRowsTailWithFixedColumns) {
  Table t = Sample().tables[0];
  std::string pieces = FormatTableHead(t);
  for (size_t i = 0; i < t.sizes.size(); ++i) pieces += FormatTableRow(t, i);
  EXPECT_EQ(pieces + FormatTableTail(t), FormatTable(t));
  const std::string row1 = FormatTableRow(t, 1);
  t.series[0].values[2] = 123456789.0;  // a wide value in a later row
  EXPECT_EQ(FormatTableRow(t, 1), row1);
  // A value wider than its column still has a space before it.
  std::istringstream wide(FormatTableRow(t, 2));
  std::vector<std::string> cells;
  for (std::string cell; wide >> cell;) cells.push_back(cell);
  ASSERT_GE(cells.size(), 2u);
  EXPECT_EQ(cells[1], "123456789.0");
  // A row can be formatted before the later rows are measured.
  Table partial = Sample().tables[0];
  for (Series& s : partial.series) s.values.resize(1);
  EXPECT_EQ(FormatTableRow(partial, 0), FormatTableRow(Sample().tables[0], 0));
}

TEST(SweepOutput, ItersColumnAndRuleLine) {
  Table t = Sample().tables[0];
  EXPECT_EQ(FormatTable(t).find("iters"), std::string::npos);  // no rule: no column
  t.rule = "a rule";
  EXPECT_NE(FormatTable(t).find("# iterations: a rule\n"), std::string::npos);
  EXPECT_EQ(FormatTable(t).find(" iters"), std::string::npos);  // -i: fixed, no column
  t.iters_column = true;
  t.series[0].iterations = {100, 100, 20};
  t.series[1].iterations = {100, 100, 20};
  t.series[2].iterations = {0, 100, 7};  // n/a at size 1; merged runs may differ
  EXPECT_EQ(IterationsText(t, 0), "100");
  EXPECT_EQ(IterationsText(t, 2), "7-20");
  Table none = t;
  for (Series& s : none.series) s.iterations.clear();
  EXPECT_EQ(IterationsText(none, 0), "n/a");
  const std::string s = FormatTable(t);
  EXPECT_NE(s.find(" iters\n"), std::string::npos) << s;  // the last column
  std::string last = s.substr(s.find("\n1048576 ") + 1);
  last = last.substr(0, last.find('\n'));
  EXPECT_EQ(last.substr(last.rfind(' ') + 1), "7-20") << last;
  // Through JSON and back: the same table.
  Report r;
  r.tables.push_back(t);
  Json j;
  ASSERT_TRUE(ParseJson(DumpJson(ToJson(r)), &j).ok());
  Report back;
  ASSERT_TRUE(FromJson(j, &back).ok());
  EXPECT_EQ(FormatReport(back), FormatReport(r));
}

TEST(SweepOutput, CsvHasOneRowPerPoint) {
  const std::string csv = ToCsv(Sample());
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < csv.size()) {
    size_t nl = csv.find('\n', start);
    lines.push_back(csv.substr(start, nl - start));
    start = nl + 1;
  }
  ASSERT_EQ(lines.size(), 1u + 9u + 2u);
  EXPECT_EQ(lines[0], "test,pair,src,dst,series,kind,size,value,unit");
  EXPECT_EQ(lines[1], "bw,HD,host,\"NVIDIA H200, GPU 1\",mpigpu,mpigpu,1,0.01,GB/s");
  EXPECT_EQ(lines[7], "bw,HD,host,\"NVIDIA H200, GPU 1\",staged,peer,1,,GB/s");  // n/a: empty
  EXPECT_EQ(lines[11], "latency,HH,host,host,mpigpu,mpigpu,8,0.5,us");
}

TEST(SweepOutput, JsonRoundTrip) {
  const Report in = Sample();
  Json parsed;
  Status st = ParseJson(DumpJson(ToJson(in)), &parsed);
  ASSERT_TRUE(st.ok()) << st.ToString();
  Report out;
  st = FromJson(parsed, &out);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_EQ(out.tables.size(), 2u);
  const Table& t = out.tables[0];
  EXPECT_EQ(t.test, STest::kBw);
  EXPECT_EQ(PairName(t.pair), "HD");
  EXPECT_EQ(t.dst_name, "NVIDIA H200, GPU 1");
  EXPECT_EQ(t.sizes, (std::vector<size_t>{1, 1024, 1 << 20}));
  ASSERT_EQ(t.series.size(), 3u);
  EXPECT_EQ(t.series[2].note, "manual, \"quoted\"");
  EXPECT_TRUE(std::isnan(t.series[2].values[0]));
  EXPECT_DOUBLE_EQ(t.series[0].values[2], 40.0);
  EXPECT_EQ(out.notes, std::vector<std::string>{"a note"});
  EXPECT_EQ(out.tables[1].sizes[0], 0u);
}

// --replot rebuilds the table and CSV from the JSON: every double must read back exactly.
TEST(SweepOutput, JsonNumbersReadBackExactly) {
  for (double d : {0.1, 1.0 / 3, 2.5e-7, 123456.789012345678, 1e300, -0.0, 42.0}) {
    Json j;
    ASSERT_TRUE(ParseJson(DumpJson(Json(d)), &j).ok()) << d;
    EXPECT_EQ(j.get<double>(), d) << DumpJson(Json(d));
  }
  EXPECT_EQ(DumpJson(Json(0.1)), "0.1");  // shortest form, not 0.10000000000000001
  EXPECT_EQ(DumpJson(Json(size_t{4096})), "4096");  // sizes and counts are integers
  EXPECT_EQ(DumpJson(Json(std::nan(""))), "null");  // n/a
}

TEST(SweepOutput, JsonParserRejectsGarbage) {
  Json j;
  for (const char* bad : {"", "{", "[1,]", "{\"a\" 1}", "nul", "[1] x", "\"\\q\"", "01x", "1e400",
                          "[NaN]", "{\"a\": 1} // comment"}) {
    Status st = ParseJson(bad, &j);
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_EQ(st.code(), Err::kInvalidArg) << bad;
    EXPECT_NE(st.message().find("JSON: "), std::string::npos) << st.message();
  }
  // The message says where: "[1] x" is fine up to byte 5.
  EXPECT_NE(ParseJson("[1] x", &j).message().find("column 5"), std::string::npos)
      << ParseJson("[1] x", &j).message();
  // Deep nesting is an error or a value, never a crash.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  static_cast<void>(ParseJson(deep, &j));
  ASSERT_TRUE(ParseJson(" {\"a\": [1, -2.5e3, true, null, \"\\u00e9\\n\"]} ", &j).ok());
  ASSERT_TRUE(j.contains("a"));
  const Json& a = j["a"];
  ASSERT_EQ(a.size(), 5u);
  EXPECT_DOUBLE_EQ(a[1].get<double>(), -2500);
  EXPECT_EQ(a[4].get<std::string>(), "\xc3\xa9\n");
  Report r;
  EXPECT_FALSE(FromJson(j, &r).ok());  // no tables
}

// Wrong types and missing fields in a report are refused with the field's name.
TEST(SweepOutput, FromJsonRefusesWrongTypes) {
  const Json good = ToJson(Sample());
  Report r;
  ASSERT_TRUE(FromJson(good, &r).ok());
  auto refused = [&](const std::string& what, const std::function<void(Json&)>& edit) {
    Json j = good;
    edit(j);
    Status st = FromJson(j, &r);
    EXPECT_FALSE(st.ok()) << what;
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  };
  refused("'tables'", [](Json& j) { j["tables"] = "none"; });
  refused("table 'test'", [](Json& j) { j["tables"][0]["test"] = 3; });
  refused("table 'pair'", [](Json& j) { j["tables"][0]["pair"] = "XY"; });
  refused("a size", [](Json& j) { j["tables"][0]["sizes"][1] = -1; });
  refused("a size", [](Json& j) { j["tables"][0]["sizes"][1] = 1.5; });
  refused("a value of series 'mpigpu'", [](Json& j) { j["tables"][0]["series"][0]["values"][0] = "x"; });
  refused("3 sizes", [](Json& j) { j["tables"][0]["series"][0]["values"].erase(0); });
  refused("'iterations' of series 'mpigpu'",
          [](Json& j) { j["tables"][0]["series"][0]["iterations"] = {1, 2}; });
  refused("table 'rule'", [](Json& j) { j["tables"][0]["rule"] = 7; });
}

TEST(SweepOutput, MergeAppendsSeriesOfTheSameTable) {
  Report a = Sample();
  Report b;
  Table t = a.tables[0];
  t.series = {{"mpigpu[ring]", kKindMpigpu, {1, 2, 3}, ""}};
  b.tables.push_back(t);
  b.AddNote("another");
  ASSERT_TRUE(MergeReports(&a, b).ok());
  ASSERT_EQ(a.tables.size(), 2u);
  EXPECT_EQ(a.tables[0].series.size(), 4u);
  EXPECT_EQ(a.notes.size(), 2u);
  EXPECT_FALSE(MergeReports(&a, b).ok());  // the same series twice
  b.tables[0].sizes.pop_back();
  b.tables[0].series[0].values.pop_back();
  EXPECT_FALSE(MergeReports(&a, b).ok());  // sizes differ
}

// ---- plot ----

std::string TempPath(const std::string& name) {
  return ::mpigpu::testing::TestTmpDir() + "/" + name;
}

TEST(SweepPlot, ScriptIsLogLogWithOneLinePerSeries) {
  const std::string s = GnuplotScript(Sample(), "out.png", "pngcairo");
  EXPECT_NE(s.find("set terminal pngcairo"), std::string::npos);
  EXPECT_NE(s.find("set output \"out.png\""), std::string::npos);
  EXPECT_NE(s.find("set logscale xy"), std::string::npos);
  EXPECT_NE(s.find("layout 1,2"), std::string::npos);  // bw and latency panels
  EXPECT_NE(s.find("title \"HD mpigpu\""), std::string::npos);
  EXPECT_NE(s.find("title \"HD limit\""), std::string::npos);
  EXPECT_NE(s.find("title \"HD staged\""), std::string::npos);
  EXPECT_NE(s.find("title \"HH mpigpu\""), std::string::npos);
  // Size 0 and n/a points are left out of the log plot.
  EXPECT_EQ(s.find("\n0 "), std::string::npos);
}

TEST(SweepPlot, WritesANonEmptyPng) {
  if (FindInPath("gnuplot").empty()) GTEST_SKIP() << "gnuplot is not installed";
  const std::string png = TempPath("sweep_test.png");
  unlink(png.c_str());
  Status st = Plot(Sample(), png);
  ASSERT_TRUE(st.ok()) << st.ToString();
  std::ifstream f(png, std::ios::binary);
  char magic[8] = {};
  f.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  struct stat sb;
  ASSERT_EQ(stat(png.c_str(), &sb), 0);
  EXPECT_GT(sb.st_size, 1000);
}

TEST(SweepPlot, MissingGnuplotIsAClearError) {
  const char* path = std::getenv("PATH");
  const std::string keep = path ? path : "";
  setenv("PATH", "/nonexistent", 1);
  Status st = CheckGnuplot();
  Status plot = Plot(Sample(), TempPath("never.png"));
  setenv("PATH", keep.c_str(), 1);
  EXPECT_EQ(st.message(), "--plot needs gnuplot (apt-get install gnuplot-nox)");
  EXPECT_FALSE(plot.ok());
}

// ---- tune ----

TEST(SweepTune, GridAndExports) {
  std::vector<TuneSetting> grid = TuneGrid();
  ASSERT_EQ(grid.size(), 8u * 4u);
  EXPECT_EQ(grid.front().unit, size_t{64} << 10);
  EXPECT_EQ(grid.front().units, 2u);
  EXPECT_EQ(grid.back().unit, size_t{8} << 20);
  EXPECT_EQ(grid.back().units, 16u);
  std::vector<std::string> ex = TuneExports({size_t{1} << 20, 8});
  EXPECT_EQ(ex, (std::vector<std::string>{"MPIGPU_LMT=ring", "MPIGPU_LMT_UNIT_HOST=1M",
                                          "MPIGPU_LMT_UNIT_GPU=1M", "MPIGPU_LMT_UNIT_GPU_MIN=1M",
                                          "MPIGPU_LMT_UNITS=8"}));
}

TEST(SweepTune, PicksTheBestPerPairClass) {
  // HH is best with 64K units, the device pairs with 4M; depth 8 is best for both.
  std::vector<TuneTrial> trials;
  for (size_t unit : {size_t{64} << 10, size_t{4} << 20}) {
    for (size_t units : {2u, 8u}) {
      TuneTrial t;
      t.unit = unit;
      t.units = units;
      t.pairs = {"HH", "DD", "HD"};
      const bool small = unit == (size_t{64} << 10);
      const double depth = units == 8 ? 1.0 : 0.5;
      t.scores = {(small ? 10.0 : 5.0) * depth, (small ? 20.0 : 50.0) * depth,
                  units == 2 && !small ? kNaN : (small ? 10.0 : 40.0) * depth};
      trials.push_back(t);
    }
  }
  std::vector<std::string> ex = BestExports(trials);
  auto has = [&](const std::string& line) {
    for (const std::string& e : ex)
      if (e == line) return true;
    return false;
  };
  EXPECT_TRUE(has("export MPIGPU_LMT_UNIT_HOST=64K"));
  EXPECT_TRUE(has("export MPIGPU_LMT_UNIT_GPU=4M"));
  EXPECT_TRUE(has("export MPIGPU_LMT_UNIT_GPU_MIN=4M"));  // as measured: the unit pinned
  EXPECT_TRUE(has("export MPIGPU_LMT_UNITS=8"));
  EXPECT_TRUE(BestExports({}).empty());
}

TEST(SweepTune, ScoreIsTheGeometricMeanOfMpigpu) {
  Table t;
  t.sizes = {1, 2};
  t.series.push_back({"limit", kKindLimit, {100, 100}, ""});
  t.series.push_back({"mpigpu", kKindMpigpu, {2, 8}, ""});
  EXPECT_NEAR(TuneScore(t), 4.0, 1e-12);
}

// ---- launcher ----

TEST(SweepLaunch, CandidatesAndArgv) {
  std::map<std::string, std::string> env = {{"RUNFILES_DIR", "/r"}, {"TEST_SRCDIR", "/t"}};
  auto getenv = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  std::vector<std::string> c = LauncherCandidates("/opt/mpigpu/bin/mpigpu-sweep", "./sweep", getenv);
  ASSERT_GE(c.size(), 4u);
  EXPECT_EQ(c[0], "/opt/mpigpu/bin/mpigpurun");
  EXPECT_EQ(c[1], "./sweep.runfiles/mpigpu/tools/mpigpurun");
  EXPECT_EQ(c[c.size() - 2], "/r/mpigpu/tools/mpigpurun");
  EXPECT_EQ(c.back(), "/t/mpigpu/tools/mpigpurun");
  EXPECT_EQ(LauncherArgv("/l", {"MPIGPU_LMT=ring"}, "/e", {"bw", "H", "H"}),
            (std::vector<std::string>{"/l", "-n", "2", "-x", "MPIGPU_LMT=ring", "--", "/e", "bw",
                                      "H", "H"}));
}

TEST(SweepLaunch, RunArgvReportsTheExitStatus) {
  std::string error;
  EXPECT_EQ(RunArgv({"/bin/sh", "-c", "exit 3"}, &error), 3);
  EXPECT_EQ(RunArgv({"/bin/sh", "-c", "kill -9 $$"}, &error), 128 + 9);
  EXPECT_EQ(RunArgv({"/nonexistent/prog"}, &error), -1);
  EXPECT_NE(error.find("/nonexistent/prog"), std::string::npos);
}

}  // namespace
}  // namespace mpigpu::sweep

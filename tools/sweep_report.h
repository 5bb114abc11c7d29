// mpigpu-sweep's results and every way they are written: the OSU-style table (stdout), CSV, JSON
// (also how ranks hand results to the launcher-mode parent), plus the arithmetic that turns
// timings into latencies, bandwidths and ratios.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "memcopy/status.h"
#include "tools/sweep_json.h"
#include "tools/sweep_options.h"

namespace mpigpu {
namespace sweep {

// What a series is: mpigpu itself, the copy-engine limit (bandwidth), a floor (latency), or a
// peer library/method.
inline constexpr const char* kKindMpigpu = "mpigpu";
inline constexpr const char* kKindLimit = "limit";
inline constexpr const char* kKindFloor = "floor";
inline constexpr const char* kKindPeer = "peer";

// The latency floors, each a series of kind kKindFloor named so (FloorLegend says what each is):
// what no message between the two ranks can beat.
inline constexpr const char* kFloorCacheLine = "cacheline";  // H->H: half a cache line's round
                                                             // trip between the ranks' cores
inline constexpr const char* kFloorGpuFlag = "gpuflag";  // D->D: half a flag's round trip
                                                         // between kernels on the two GPUs
inline constexpr const char* kFloorCopy = "copy";  // H<->D, D->D: one host-driven copy issued
                                                   // and waited for
// A floor's meaning in one line ("" for a name that is not a floor).
std::string FloorLegend(const std::string& name);

// One column of a table: a value per message size (NaN where not measured).
struct Series {
  std::string name;  // column title: "mpigpu", "mpigpu[ring]", "limit", "cacheline", "nccl", ...
  std::string kind;  // kKindMpigpu, kKindLimit, kKindFloor or kKindPeer
  std::vector<double> values;
  std::string note;  // what it measures, or why it is n/a
  // Timed runs behind each value (0: not measured); empty in reports written before the
  // iteration rule (sweep_rule.h).
  std::vector<int> iterations = {};
};

// One test on one buffer pair.
struct Table {
  Test test = Test::kLatency;
  Pair pair;
  std::string src_name = "host";  // rank 0's buffer: "host" or the GPU's name
  std::string dst_name = "host";  // rank 1's buffer
  std::vector<size_t> sizes;
  std::vector<Series> series;
  // The iteration rule in words (sweep_rule.h; measured tables have one: the "# iterations:"
  // line), and whether counts may differ from size to size by it: then an "iters" column says
  // how many runs each row's values had (-i's fixed counts need no column).
  std::string rule;
  bool iters_column = false;

  Series* Find(const std::string& name);
  const Series* Find(const std::string& name) const;
  // The first mpigpu series: the one the ratio columns divide.
  const Series* Primary() const;
};

// One --tune launch: the settings tried and the bw score of each pair (NaN: the launch failed).
struct TuneTrial {
  size_t unit = 0;   // MPIGPU_LMT_UNIT_HOST and MPIGPU_LMT_UNIT_GPU
  size_t units = 0;  // MPIGPU_LMT_UNITS
  std::vector<std::string> pairs;
  std::vector<double> scores;  // GB/s, geometric mean over the sizes
};

struct Report {
  std::vector<Table> tables;
  std::vector<std::string> notes;    // printed as "# note: ..." after the tables
  std::vector<TuneTrial> tune;       // --tune: every trial
  std::vector<std::string> exports;  // --tune: "export MPIGPU_...=..." lines

  Table* FindTable(Test test, const Pair& pair);
  void AddNote(const std::string& note);  // once
};

// ---- arithmetic ----

// One-way latency in us from a ping-pong of `iters` round trips that took `seconds`.
double PingPongLatencyUs(double seconds, int iters);
// Latency in us of one operation when `iters` of them took `seconds`.
double PerOpUs(double seconds, int iters);
// GB/s (1e9 bytes/s) for `bytes` moved in `seconds`.
double BandwidthGBs(double bytes, double seconds);
// a / b, NaN when either is missing (NaN) or b is not positive.
double Ratio(double a, double b);
// Geometric mean of the finite positive values (NaN when there are none).
double GeoMean(const std::vector<double>& v);

// ---- output ----

const char* Unit(Test t);            // "us" or "GB/s"
const char* QuantityName(Test t);    // "Latency (us)", "Bandwidth (GB/s)", ...
std::string FormatValue(double v);   // fixed width-free text; "n/a" for NaN

// The OSU-style table of one test on one pair, with the ratio columns (mpigpu over each other
// series) and a "# floor NAME: ..." legend line per floor series: FormatTableHead, a
// FormatTableRow per size, FormatTableTail. The head needs only the table's series (not their
// values), so a sweep prints each row as soon as it is measured. Columns have fixed widths
// (from their titles).
std::string FormatTable(const Table& t);
std::string FormatTableHead(const Table& t);  // title lines and column titles
std::string FormatTableRow(const Table& t, size_t i);  // size i's row, from the values so far
std::string FormatTableTail(const Table& t);  // the series' notes
// Every table (a blank line between them), then FormatReportTail.
std::string FormatReport(const Report& r);
// The notes and the --tune lines.
std::string FormatReportTail(const Report& r);
// "N" when every measured series of row i ran N timed runs, "MIN-MAX" when they differ (merged
// --lmt runs), "n/a" when none says.
std::string IterationsText(const Table& t, size_t i);
// One row per point: test,pair,src,dst,series,kind,size,value,unit (empty value for n/a).
std::string ToCsv(const Report& r);
Json ToJson(const Report& r);
// Reads ToJson's form back. kInvalidArg naming the first missing or malformed field.
Status FromJson(const Json& j, Report* out);

// Adds `from`'s tables to `into`: series of a table with the same test and pair are appended
// (sizes must match), other tables are added whole; notes are merged without repeats.
Status MergeReports(Report* into, const Report& from);

// Writes `text` to `path` (whole file). kSystem naming the path on failure.
Status WriteFile(const std::string& path, const std::string& text);
Status ReadFile(const std::string& path, std::string* text);

}  // namespace sweep
}  // namespace mpigpu

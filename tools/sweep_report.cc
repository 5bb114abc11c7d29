#include "tools/sweep_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

namespace mpigpu {
namespace sweep {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string RatioText(double r) {
  if (std::isnan(r)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", r);  // 3 digits, also for ratios far below 1
  return buf;
}

Status Missing(const std::string& what) {
  return Status(Err::kInvalidArg, "result JSON: missing or malformed " + what);
}

}  // namespace

Series* Table::Find(const std::string& name) {
  for (Series& s : series)
    if (s.name == name) return &s;
  return nullptr;
}

const Series* Table::Find(const std::string& name) const {
  for (const Series& s : series)
    if (s.name == name) return &s;
  return nullptr;
}

const Series* Table::Primary() const {
  for (const Series& s : series)
    if (s.kind == kKindMpigpu) return &s;
  return nullptr;
}

Table* Report::FindTable(Test test, const Pair& pair) {
  for (Table& t : tables)
    if (t.test == test && t.pair == pair) return &t;
  return nullptr;
}

void Report::AddNote(const std::string& note) {
  if (std::find(notes.begin(), notes.end(), note) == notes.end()) notes.push_back(note);
}

double PingPongLatencyUs(double seconds, int iters) {
  return iters > 0 ? seconds * 1e6 / (2.0 * iters) : kNaN;
}

double PerOpUs(double seconds, int iters) { return iters > 0 ? seconds * 1e6 / iters : kNaN; }

double BandwidthGBs(double bytes, double seconds) {
  return seconds > 0 ? bytes / seconds / 1e9 : kNaN;
}

double Ratio(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || !(b > 0)) return kNaN;
  return a / b;
}

double GeoMean(const std::vector<double>& v) {
  double log_sum = 0;
  int n = 0;
  for (double x : v) {
    if (!std::isfinite(x) || x <= 0) continue;
    log_sum += std::log(x);
    ++n;
  }
  return n > 0 ? std::exp(log_sum / n) : kNaN;
}

std::string FloorLegend(const std::string& name) {
  if (name == kFloorCacheLine)
    return "half a cache line's round trip between the two ranks' cores (one way)";
  if (name == kFloorGpuFlag)
    return "half a flag's round trip between kernels on the two GPUs (one way)";
  if (name == kFloorCopy)
    return "one host-driven copy issued and waited for (cudaMemcpyAsync + stream sync)";
  return "";
}

const char* Unit(Test t) { return t == Test::kLatency ? "us" : "GB/s"; }

const char* QuantityName(Test t) {
  switch (t) {
    case Test::kLatency: return "Latency (us), one-way = half a round trip";
    case Test::kBw: return "Bandwidth (GB/s), rank 0 -> rank 1";
    case Test::kBibw: return "Bi-directional bandwidth (GB/s), both directions together";
  }
  return "?";
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "n/a";
  char buf[48];
  const double a = std::fabs(v);
  if (a >= 100) std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 1) std::snprintf(buf, sizeof buf, "%.2f", v);
  else std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

namespace {

constexpr size_t kSizeWidth = 12;  // the "# Size" column
constexpr size_t kMinWidth = 12;   // every other column: its title + 2, at least this

// The columns after the size: every series, then primary / each other series, then iters.
struct Column {
  std::string title;
  const Series* value = nullptr;  // a series' value
  const Series* over = nullptr;   // with value: the ratio value / over (primary first)
  bool iters = false;
};

std::vector<Column> Columns(const Table& t) {
  std::vector<Column> cols;
  for (const Series& s : t.series) cols.push_back({s.name, &s, nullptr, false});
  if (const Series* primary = t.Primary()) {
    for (const Series& s : t.series) {
      if (&s == primary || s.kind == kKindMpigpu) continue;
      cols.push_back({primary->name + "/" + s.name, primary, &s, false});
    }
  }
  if (t.iters_column) cols.push_back({"iters", nullptr, nullptr, true});
  return cols;
}

size_t Width(const Column& c) { return std::max(kMinWidth, c.title.size() + 2); }

// Right-aligned in `width`, with at least one space before it.
std::string Cell(const std::string& s, size_t width) {
  return s.size() + 1 > width ? " " + s : std::string(width - s.size(), ' ') + s;
}

double ValueAt(const Series* s, size_t i) {
  return s != nullptr && i < s->values.size() ? s->values[i] : kNaN;
}

}  // namespace

std::string IterationsText(const Table& t, size_t i) {
  int lo = 0, hi = 0;
  for (const Series& s : t.series) {
    const int n = i < s.iterations.size() ? s.iterations[i] : 0;
    if (n <= 0) continue;
    lo = lo == 0 ? n : std::min(lo, n);
    hi = std::max(hi, n);
  }
  if (hi == 0) return "n/a";
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

std::string FormatTableHead(const Table& t) {
  std::string out;
  const std::string pair = PairName(t.pair);
  out += "# mpigpu-sweep " + std::string(TestName(t.test)) + " [" + pair + "]: rank 0 " +
         pair[0] + " (" + t.src_name + ") -> rank 1 " + pair[1] + " (" + t.dst_name + ")\n";
  out += "# " + std::string(QuantityName(t.test)) + "\n";
  if (!t.rule.empty()) out += "# iterations: " + t.rule + "\n";
  for (const Series& s : t.series)
    if (s.kind == kKindFloor) {
      const std::string legend = FloorLegend(s.name);
      out += "# floor " + s.name + (legend.empty() ? "" : ": " + legend) + "\n";
    }
  std::string header = "# Size";
  header.resize(kSizeWidth, ' ');
  for (const Column& c : Columns(t)) header += Cell(c.title, Width(c));
  return out + header + "\n";
}

std::string FormatTableRow(const Table& t, size_t i) {
  std::string line = std::to_string(t.sizes[i]);
  line.resize(std::max(line.size() + 1, kSizeWidth), ' ');
  for (const Column& c : Columns(t)) {
    std::string text;
    if (c.iters) text = IterationsText(t, i);
    else if (c.over != nullptr) text = RatioText(Ratio(ValueAt(c.value, i), ValueAt(c.over, i)));
    else text = FormatValue(ValueAt(c.value, i));
    line += Cell(text, Width(c));
  }
  return line + "\n";
}

std::string FormatTableTail(const Table& t) {
  std::string out;
  for (const Series& s : t.series)
    if (!s.note.empty()) out += "# " + s.name + ": " + s.note + "\n";
  return out;
}

std::string FormatTable(const Table& t) {
  std::string out = FormatTableHead(t);
  for (size_t i = 0; i < t.sizes.size(); ++i) out += FormatTableRow(t, i);
  return out + FormatTableTail(t);
}

std::string FormatReport(const Report& r) {
  std::string out;
  for (size_t i = 0; i < r.tables.size(); ++i) {
    if (i) out += "\n";
    out += FormatTable(r.tables[i]);
  }
  return out + FormatReportTail(r);
}

std::string FormatReportTail(const Report& r) {
  std::string out;
  if (!r.notes.empty()) out += "\n";
  for (const std::string& n : r.notes) out += "# note: " + n + "\n";
  if (!r.tune.empty()) {
    out += "\n# --tune: bw score (GB/s, geometric mean over sizes) per unit size x units\n";
    std::string header = "# unit      units";
    for (const std::string& p : r.tune.front().pairs) header += Pad(p, 10);
    out += header + "\n";
    for (const TuneTrial& t : r.tune) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%-10s%7zu", SizeText(t.unit).c_str(), t.units);
      std::string line = buf;
      for (double s : t.scores) line += Pad(FormatValue(s), 10);
      out += line + "\n";
    }
  }
  for (const std::string& e : r.exports) out += e + "\n";
  return out;
}

std::string ToCsv(const Report& r) {
  std::string out = "test,pair,src,dst,series,kind,size,value,unit\n";
  auto field = [](const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const Table& t : r.tables) {
    for (const Series& s : t.series) {
      for (size_t i = 0; i < t.sizes.size(); ++i) {
        double v = i < s.values.size() ? s.values[i] : kNaN;
        char val[48] = "";
        if (!std::isnan(v)) std::snprintf(val, sizeof val, "%.6g", v);
        out += std::string(TestName(t.test)) + "," + PairName(t.pair) + "," + field(t.src_name) +
               "," + field(t.dst_name) + "," + field(s.name) + "," + s.kind + "," +
               std::to_string(t.sizes[i]) + "," + val + "," + Unit(t.test) + "\n";
      }
    }
  }
  return out;
}

Json ToJson(const Report& r) {
  Json root = Json::object();
  root["tool"] = "mpigpu-sweep";
  Json& tables = root["tables"] = Json::array();
  for (const Table& t : r.tables) {
    Json jt = Json::object({{"test", TestName(t.test)},
                            {"pair", PairName(t.pair)},
                            {"src", t.src_name},
                            {"dst", t.dst_name},
                            {"unit", Unit(t.test)}});
    if (!t.rule.empty()) jt["rule"] = t.rule;
    if (t.iters_column) jt["iters_column"] = true;
    jt["sizes"] = t.sizes;
    Json& series = jt["series"] = Json::array();
    for (const Series& s : t.series) {
      // NaN values are written as null.
      Json js = Json::object(
          {{"name", s.name}, {"kind", s.kind}, {"note", s.note}, {"values", s.values}});
      if (!s.iterations.empty()) js["iterations"] = s.iterations;
      series.push_back(std::move(js));
    }
    tables.push_back(std::move(jt));
  }
  root["notes"] = r.notes;
  Json& tune = root["tune"] = Json::array();
  for (const TuneTrial& t : r.tune)
    tune.push_back(Json::object(
        {{"unit", t.unit}, {"units", t.units}, {"pairs", t.pairs}, {"scores", t.scores}}));
  root["exports"] = r.exports;
  return root;
}

namespace {

using Is = bool (Json::*)() const noexcept;

// obj's member `key` when it exists and has the type `is` checks; else nullptr.
const Json* Field(const Json& obj, const char* key, Is is) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it != obj.end() && ((*it).*is)() ? &*it : nullptr;
}

// A number, or null for a value that was not measured (NaN).
bool NumberOrNull(const Json& v, double* out) {
  if (v.is_null()) *out = kNaN;
  else if (v.is_number()) *out = v.get<double>();
  else return false;
  return true;
}

// A count: an integer from 0 to `max`.
template <typename T>
bool Count(const Json& v, T max, T* out) {
  if (!v.is_number_integer() || (!v.is_number_unsigned() && v.get<int64_t>() < 0)) return false;
  const uint64_t n = v.get<uint64_t>();
  if (n > static_cast<uint64_t>(max)) return false;
  *out = static_cast<T>(n);
  return true;
}

Status ReadSeries(const Json& js, size_t sizes, Series* s) {
  const Json* name = Field(js, "name", &Json::is_string);
  const Json* kind = Field(js, "kind", &Json::is_string);
  const Json* values = Field(js, "values", &Json::is_array);
  if (name == nullptr || kind == nullptr || values == nullptr) return Missing("a series");
  s->name = name->get<std::string>();
  s->kind = kind->get<std::string>();
  if (const Json* note = Field(js, "note", &Json::is_string)) s->note = note->get<std::string>();
  for (const Json& v : *values) {
    double d;
    if (!NumberOrNull(v, &d)) return Missing("a value of series '" + s->name + "'");
    s->values.push_back(d);
  }
  if (s->values.size() != sizes)
    return Missing("series '" + s->name + "' (" + std::to_string(s->values.size()) +
                   " values for " + std::to_string(sizes) + " sizes)");
  if (js.contains("iterations")) {
    const Json* iters = Field(js, "iterations", &Json::is_array);
    if (iters == nullptr) return Missing("'iterations' of series '" + s->name + "'");
    for (const Json& n : *iters) {
      int count = 0;
      if (!Count(n, 1000000000, &count))
        return Missing("an iteration count of series '" + s->name + "'");
      s->iterations.push_back(count);
    }
    if (s->iterations.size() != sizes)
      return Missing("'iterations' of series '" + s->name + "' (one per size)");
  }
  return Status::Ok();
}

Status ReadTable(const Json& jt, Table* t) {
  const Json* test = Field(jt, "test", &Json::is_string);
  const Json* pair = Field(jt, "pair", &Json::is_string);
  if (test == nullptr || !ParseTest(test->get<std::string>(), &t->test))
    return Missing("table 'test'");
  if (pair == nullptr || !ParsePair(pair->get<std::string>(), &t->pair))
    return Missing("table 'pair'");
  const Json* src = Field(jt, "src", &Json::is_string);
  const Json* dst = Field(jt, "dst", &Json::is_string);
  if (src == nullptr || dst == nullptr) return Missing("table 'src'/'dst'");
  t->src_name = src->get<std::string>();
  t->dst_name = dst->get<std::string>();
  if (jt.contains("rule")) {
    const Json* rule = Field(jt, "rule", &Json::is_string);
    if (rule == nullptr) return Missing("table 'rule'");
    t->rule = rule->get<std::string>();
  }
  if (jt.contains("iters_column")) {
    const Json* col = Field(jt, "iters_column", &Json::is_boolean);
    if (col == nullptr) return Missing("table 'iters_column'");
    t->iters_column = col->get<bool>();
  }
  const Json* sizes = Field(jt, "sizes", &Json::is_array);
  if (sizes == nullptr) return Missing("table 'sizes'");
  for (const Json& s : *sizes) {
    size_t size = 0;
    if (!Count(s, kMaxMessage, &size)) return Missing("a size");
    t->sizes.push_back(size);
  }
  const Json* series = Field(jt, "series", &Json::is_array);
  if (series == nullptr) return Missing("table 'series'");
  for (const Json& js : *series) {
    Series s;
    MPIGPU_RETURN_IF_ERROR(ReadSeries(js, t->sizes.size(), &s));
    t->series.push_back(std::move(s));
  }
  return Status::Ok();
}

// The strings of an optional array of strings (anything else in it is skipped).
std::vector<std::string> Strings(const Json& j, const char* key) {
  std::vector<std::string> out;
  if (const Json* a = Field(j, key, &Json::is_array))
    for (const Json& v : *a)
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

}  // namespace

Status FromJson(const Json& j, Report* out) {
  *out = Report();
  if (!j.is_object()) return Missing("top-level object");
  const Json* tables = Field(j, "tables", &Json::is_array);
  if (tables == nullptr) return Missing("'tables'");
  for (const Json& jt : *tables) {
    Table t;
    MPIGPU_RETURN_IF_ERROR(ReadTable(jt, &t));
    out->tables.push_back(std::move(t));
  }
  out->notes = Strings(j, "notes");
  if (const Json* tune = Field(j, "tune", &Json::is_array)) {
    for (const Json& jt : *tune) {
      TuneTrial t;
      const Json* scores = Field(jt, "scores", &Json::is_array);
      if (!jt.is_object() || !jt.contains("unit") || !jt.contains("units") ||
          !Count(jt["unit"], kMaxMessage, &t.unit) ||
          !Count(jt["units"], size_t{1} << 20, &t.units) ||
          !Field(jt, "pairs", &Json::is_array) || !scores)
        return Missing("a tune trial");
      t.pairs = Strings(jt, "pairs");
      for (const Json& s : *scores) {
        double d;
        if (!NumberOrNull(s, &d)) return Missing("a tune score");
        t.scores.push_back(d);
      }
      out->tune.push_back(std::move(t));
    }
  }
  out->exports = Strings(j, "exports");
  return Status::Ok();
}

Status MergeReports(Report* into, const Report& from) {
  for (const Table& t : from.tables) {
    Table* have = into->FindTable(t.test, t.pair);
    if (have == nullptr) {
      into->tables.push_back(t);
      continue;
    }
    if (have->sizes != t.sizes)
      return Status(Err::kInvalidArg, std::string("cannot merge ") + TestName(t.test) + " " +
                                          PairName(t.pair) + ": the message sizes differ");
    for (const Series& s : t.series) {
      if (have->Find(s.name) != nullptr)
        return Status(Err::kInvalidArg, "cannot merge: series '" + s.name + "' twice in " +
                                            TestName(t.test) + " " + PairName(t.pair));
      have->series.push_back(s);
    }
  }
  for (const std::string& n : from.notes) into->AddNote(n);
  return Status::Ok();
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return Status(Err::kSystem, "cannot open '" + path + "' for writing");
  f << text;
  f.close();
  if (!f) return Status(Err::kSystem, "cannot write '" + path + "'");
  return Status::Ok();
}

Status ReadFile(const std::string& path, std::string* text) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(Err::kSystem, "cannot open '" + path + "'");
  std::stringstream ss;
  ss << f.rdbuf();
  *text = ss.str();
  return Status::Ok();
}

}  // namespace sweep
}  // namespace mpigpu

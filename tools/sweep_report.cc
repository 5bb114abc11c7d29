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

const Json* Field(const Json& obj, const std::string& key, Json::Type type) {
  const Json* v = obj.Find(key);
  return v != nullptr && v->type() == type ? v : nullptr;
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
  Json root = Json::Object();
  root.Set("tool", Json::String("mpigpu-sweep"));
  Json& tables = root.Set("tables", Json::Array());
  for (const Table& t : r.tables) {
    Json jt = Json::Object();
    jt.Set("test", Json::String(TestName(t.test)));
    jt.Set("pair", Json::String(PairName(t.pair)));
    jt.Set("src", Json::String(t.src_name));
    jt.Set("dst", Json::String(t.dst_name));
    jt.Set("unit", Json::String(Unit(t.test)));
    if (!t.rule.empty()) jt.Set("rule", Json::String(t.rule));
    if (t.iters_column) jt.Set("iters_column", Json::Bool(true));
    Json& sizes = jt.Set("sizes", Json::Array());
    for (size_t s : t.sizes) sizes.Push(Json::Number(static_cast<double>(s)));
    Json& series = jt.Set("series", Json::Array());
    for (const Series& s : t.series) {
      Json js = Json::Object();
      js.Set("name", Json::String(s.name));
      js.Set("kind", Json::String(s.kind));
      js.Set("note", Json::String(s.note));
      Json& values = js.Set("values", Json::Array());
      for (double v : s.values) values.Push(Json::Number(v));  // NaN -> null
      if (!s.iterations.empty()) {
        Json& iters = js.Set("iterations", Json::Array());
        for (int n : s.iterations) iters.Push(Json::Number(n));
      }
      series.Push(std::move(js));
    }
    tables.Push(std::move(jt));
  }
  Json& notes = root.Set("notes", Json::Array());
  for (const std::string& n : r.notes) notes.Push(Json::String(n));
  Json& tune = root.Set("tune", Json::Array());
  for (const TuneTrial& t : r.tune) {
    Json jt = Json::Object();
    jt.Set("unit", Json::Number(static_cast<double>(t.unit)));
    jt.Set("units", Json::Number(static_cast<double>(t.units)));
    Json& pairs = jt.Set("pairs", Json::Array());
    for (const std::string& p : t.pairs) pairs.Push(Json::String(p));
    Json& scores = jt.Set("scores", Json::Array());
    for (double s : t.scores) scores.Push(Json::Number(s));
    tune.Push(std::move(jt));
  }
  Json& exports = root.Set("exports", Json::Array());
  for (const std::string& e : r.exports) exports.Push(Json::String(e));
  return root;
}

Status FromJson(const Json& j, Report* out) {
  *out = Report();
  if (j.type() != Json::Type::kObject) return Missing("top-level object");
  const Json* tables = Field(j, "tables", Json::Type::kArray);
  if (tables == nullptr) return Missing("'tables'");
  for (const Json& jt : tables->items()) {
    Table t;
    const Json* test = Field(jt, "test", Json::Type::kString);
    const Json* pair = Field(jt, "pair", Json::Type::kString);
    if (test == nullptr || !ParseTest(test->as_string(), &t.test)) return Missing("table 'test'");
    if (pair == nullptr || !ParsePair(pair->as_string(), &t.pair)) return Missing("table 'pair'");
    const Json* src = Field(jt, "src", Json::Type::kString);
    const Json* dst = Field(jt, "dst", Json::Type::kString);
    if (src == nullptr || dst == nullptr) return Missing("table 'src'/'dst'");
    t.src_name = src->as_string();
    t.dst_name = dst->as_string();
    if (const Json* rule = jt.Find("rule")) {
      if (rule->type() != Json::Type::kString) return Missing("table 'rule'");
      t.rule = rule->as_string();
    }
    if (const Json* col = jt.Find("iters_column")) {
      if (col->type() != Json::Type::kBool) return Missing("table 'iters_column'");
      t.iters_column = col->as_bool();
    }
    const Json* sizes = Field(jt, "sizes", Json::Type::kArray);
    if (sizes == nullptr) return Missing("table 'sizes'");
    for (const Json& s : sizes->items()) {
      if (s.type() != Json::Type::kNumber || s.as_number() < 0) return Missing("a size");
      t.sizes.push_back(static_cast<size_t>(s.as_number()));
    }
    const Json* series = Field(jt, "series", Json::Type::kArray);
    if (series == nullptr) return Missing("table 'series'");
    for (const Json& js : series->items()) {
      Series s;
      const Json* name = Field(js, "name", Json::Type::kString);
      const Json* kind = Field(js, "kind", Json::Type::kString);
      const Json* note = Field(js, "note", Json::Type::kString);
      const Json* values = Field(js, "values", Json::Type::kArray);
      if (name == nullptr || kind == nullptr || values == nullptr) return Missing("a series");
      s.name = name->as_string();
      s.kind = kind->as_string();
      if (note != nullptr) s.note = note->as_string();
      for (const Json& v : values->items()) {
        if (v.is_null()) s.values.push_back(kNaN);
        else if (v.type() == Json::Type::kNumber) s.values.push_back(v.as_number());
        else return Missing("a value of series '" + s.name + "'");
      }
      if (const Json* iters = js.Find("iterations")) {
        if (iters->type() != Json::Type::kArray) return Missing("'iterations' of '" + s.name + "'");
        for (const Json& n : iters->items()) {
          if (n.type() != Json::Type::kNumber || n.as_number() < 0 || n.as_number() > 1e9)
            return Missing("an iteration count of series '" + s.name + "'");
          s.iterations.push_back(static_cast<int>(n.as_number()));
        }
        if (s.iterations.size() != t.sizes.size())
          return Missing("'iterations' of series '" + s.name + "' (one per size)");
      }
      if (s.values.size() != t.sizes.size())
        return Missing("series '" + s.name + "' (" + std::to_string(s.values.size()) +
                       " values for " + std::to_string(t.sizes.size()) + " sizes)");
      t.series.push_back(std::move(s));
    }
    out->tables.push_back(std::move(t));
  }
  if (const Json* notes = Field(j, "notes", Json::Type::kArray))
    for (const Json& n : notes->items())
      if (n.type() == Json::Type::kString) out->notes.push_back(n.as_string());
  if (const Json* tune = Field(j, "tune", Json::Type::kArray)) {
    for (const Json& jt : tune->items()) {
      TuneTrial t;
      const Json* unit = Field(jt, "unit", Json::Type::kNumber);
      const Json* units = Field(jt, "units", Json::Type::kNumber);
      const Json* pairs = Field(jt, "pairs", Json::Type::kArray);
      const Json* scores = Field(jt, "scores", Json::Type::kArray);
      if (!unit || !units || !pairs || !scores) return Missing("a tune trial");
      t.unit = static_cast<size_t>(unit->as_number());
      t.units = static_cast<size_t>(units->as_number());
      for (const Json& p : pairs->items()) t.pairs.push_back(p.as_string());
      for (const Json& s : scores->items()) t.scores.push_back(s.is_null() ? kNaN : s.as_number());
      out->tune.push_back(std::move(t));
    }
  }
  if (const Json* exports = Field(j, "exports", Json::Type::kArray))
    for (const Json& e : exports->items())
      if (e.type() == Json::Type::kString) out->exports.push_back(e.as_string());
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

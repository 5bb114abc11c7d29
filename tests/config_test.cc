// The settings registry (memcopy/params.h) and the components' tables in it (memcopy,
// transport, API): every MPIGPU_* variable parses its default, which lies in its range; malformed
// and out-of-range values and broken combinations are refused with a message naming the
// variable, the value and the allowed range (MPIGPU_Init returns it); unknown names are reported.
#include "memcopy/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>

#include "mpigpu_api/api_config.h"
#include "ringbuf/lmt_ring.h"
#include "transport/transport_config.h"

namespace mpigpu {
namespace {

// Every component's settings at once, as the registry holds them.
struct AllConfig : MemcopyConfig, TransportConfig, ApiConfig {};

// Parses every component's table from `env`; the problems of all, joined as ConfigStatus does.
Status ParseFrom(const std::map<std::string, std::string>& env, AllConfig* c,
                 std::vector<ConfigEntry>* entries = nullptr) {
  const EnvLookup lookup = [&](const char* n) {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  Status all;
  for (Status st : {MemcopyParams().Parse(lookup, c, entries),
                    TransportParams().Parse(lookup, c, entries), ApiParams().Parse(lookup, c, entries)})
    if (!st.ok()) params::AddProblem(&all, st.message());
  return all;
}

TEST(ConfigTest, EveryComponentIsRegisteredOnceInLayerOrder) {
  std::vector<std::string> names;
  for (const ParamSection* s : ParamSections()) names.push_back(s->component());
  EXPECT_EQ(names, (std::vector<std::string>{"memcopy", "transport", "api"}));
  size_t vars = 0;
  for (const ParamSection* s : ParamSections()) vars += s->Infos().size();
  EXPECT_EQ(DescribeConfig().size(), vars);
}

TEST(ConfigTest, ParseSizeAcceptsSuffixes) {
  size_t v = 0;
  EXPECT_TRUE(ParseSize("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseSize("123", &v));
  EXPECT_EQ(v, 123u);
  EXPECT_TRUE(ParseSize("64K", &v));
  EXPECT_EQ(v, 64u << 10);
  EXPECT_TRUE(ParseSize("64KiB", &v));
  EXPECT_EQ(v, 64u << 10);
  EXPECT_TRUE(ParseSize("2m", &v));
  EXPECT_EQ(v, 2u << 20);
  EXPECT_TRUE(ParseSize("1G", &v));
  EXPECT_EQ(v, size_t{1} << 30);
}

TEST(ConfigTest, ParseSizeRejectsGarbage) {
  size_t v = 7;
  for (const char* bad : {"", "-1", "K", "12Q", "1.5M", "99999999999999999999", "17179869184G",
                          " 1", "1 ", " -1", "+1", "0x10", "1e3", "64KBB", "64iB", "1B", "1T",
                          "\t8", "8\n", "99999999999999999999G"})
    EXPECT_FALSE(ParseSize(bad, &v)) << bad;
  EXPECT_FALSE(ParseSize(nullptr, &v));
  EXPECT_EQ(v, 7u);
}

TEST(ConfigTest, LauncherIntTakesPlainDigitsOnly) {
  const char* name = "MPIGPU_TEST_LAUNCHER_INT";
  unsetenv(name);
  EXPECT_EQ(LauncherInt(name), -1);
  for (const auto& [text, want] : std::map<std::string, int>{
           {"0", 0}, {"7", 7}, {"1073741824", 1 << 30}, {"", -1}, {"1073741825", -1},
           {"+7", -1}, {" 7", -1}, {"7 ", -1}, {"-1", -1}, {"7K", -1}, {"0x7", -1},
           {"99999999999999999999999", -1}}) {
    setenv(name, text.c_str(), 1);
    EXPECT_EQ(LauncherInt(name), want) << "'" << text << "'";
  }
  unsetenv(name);
}

TEST(ConfigTest, DefaultsAreValidAndDocumented) {
  AllConfig c;
  std::vector<ConfigEntry> entries;
  ASSERT_TRUE(ParseFrom({}, &c, &entries).ok());
  EXPECT_EQ(c.eager_limit, 64u << 10);
  EXPECT_EQ(c.cell_size, 64u << 10);
  EXPECT_EQ(c.memcpy_strategy, CopyStrategy::kParameterized);
  EXPECT_EQ(c.debug, LogLevel::kWarn);
  ASSERT_FALSE(entries.empty());
  for (const ConfigEntry& e : entries) {
    EXPECT_EQ(e.name.rfind("MPIGPU_", 0), 0u) << e.name;
    EXPECT_FALSE(e.help.empty()) << e.name;
    EXPECT_FALSE(e.range.empty()) << e.name;
    EXPECT_EQ(e.value, e.default_value) << e.name;
    EXPECT_FALSE(e.from_env);
    EXPECT_TRUE(e.error.empty()) << e.name << ": " << e.error;
  }
  EXPECT_EQ(c.yield, YieldMode::kAuto);
  EXPECT_EQ(c.bootstrap_timeout_s, 60u);
}

TEST(ConfigTest, EnvironmentOverrides) {
  AllConfig c;
  std::vector<ConfigEntry> entries;
  ASSERT_TRUE(ParseFrom({{"MPIGPU_EAGER_LIMIT", "8K"},
                         {"MPIGPU_DEBUG", "trace"},
                         {"MPIGPU_MEMCPY_STRATEGY", "query"},
                         {"MPIGPU_PIN_SHM", "off"}},
                        &c, &entries)
                  .ok());
  EXPECT_EQ(c.eager_limit, 8u << 10);
  EXPECT_EQ(c.debug, LogLevel::kTrace);
  EXPECT_EQ(c.memcpy_strategy, CopyStrategy::kQuery);
  EXPECT_FALSE(c.pin_shm);
  int from_env = 0;
  for (const ConfigEntry& e : entries) from_env += e.from_env;
  EXPECT_EQ(from_env, 4);
}

TEST(ConfigTest, BadValueKeepsDefaultAndNamesTheVariable) {
  AllConfig c;
  std::vector<ConfigEntry> entries;
  Status st = ParseFrom({{"MPIGPU_CELL_SIZE", "0"}}, &c, &entries);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("MPIGPU_CELL_SIZE='0' is out of range (allowed 1K..64M)"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(c.cell_size, 64u << 10);
  bool flagged = false;
  for (const ConfigEntry& e : entries) {
    if (e.name != "MPIGPU_CELL_SIZE") {
      EXPECT_TRUE(e.error.empty()) << e.name;
      continue;
    }
    flagged = true;
    EXPECT_FALSE(e.from_env);
    EXPECT_EQ(e.value, "64K");  // the default stays in effect (mpigpu-info prints it)
    EXPECT_NE(e.error.find("MPIGPU_CELL_SIZE='0'"), std::string::npos) << e.error;
  }
  EXPECT_TRUE(flagged);
  st = ParseFrom({{"MPIGPU_CELL_SIZE", "1K"}, {"MPIGPU_DEBUG", "loud"}}, &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("MPIGPU_DEBUG='loud'"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("MPIGPU_DEBUG='loud' is not valid (allowed warn | info | trace)"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(c.debug, LogLevel::kWarn);
  EXPECT_EQ(c.cell_size, 1u << 10);
}

// Each of these passed (or overflowed later) before; now each is refused with
// a message naming the variable, the value as given and the allowed range.
TEST(ConfigTest, OutOfRangeAndMalformedValuesAreRefusedWithNameValueAndRange) {
  struct Case {
    const char* name;
    const char* value;
    const char* range;
    const char* why;
  };
  const Case cases[] = {
      {"MPIGPU_BOOTSTRAP_TIMEOUT", "2147484", "1..86400 s", "out of range"},  // * 1000 > INT_MAX
      {"MPIGPU_BOOTSTRAP_TIMEOUT", " -1", "1..86400 s", "not a number"},
      {"MPIGPU_BOOTSTRAP_TIMEOUT", "1 ", "1..86400 s", "not a number"},
      {"MPIGPU_BOOTSTRAP_TIMEOUT", "0", "1..86400 s", "out of range"},
      {"MPIGPU_CMA_CHUNK", "1", "0 (off) or 64K..1G", "out of range"},
      {"MPIGPU_CMA_CHUNK", "65535", "0 (off) or 64K..1G", "out of range"},
      {"MPIGPU_LMT_UNITS", "1000000", "2..4096", "out of range"},
      {"MPIGPU_LMT_UNITS", "-5", "2..4096", "not a number"},
      {"MPIGPU_LMT_UNITS", "1", "2..4096", "out of range"},
      {"MPIGPU_EAGER_LIMIT", "99999999999999999999G", "1K..64M", "too large"},
      {"MPIGPU_EAGER_LIMIT", "17179869184G", "1K..64M", "too large"},
      {"MPIGPU_EAGER_LIMIT", "0", "1K..64M", "out of range"},
      {"MPIGPU_LMT_UNIT_HOST", "99999999999999999999", "4K..1G", "too large"},
      {"MPIGPU_CELL_SIZE", "0x10", "1K..64M", "not a size"},
      {"MPIGPU_CELL_SIZE", "+4K", "1K..64M", "not a size"},
      {"MPIGPU_CELLS_PER_RANK", "abc", "1..65536", "not a number"},
      {"MPIGPU_CELLS_PER_RANK", "1K", "1..65536", "not a number"},  // counts take no suffix
      {"MPIGPU_LMT_UNIT_GPU", "2K", "4K..1G", "out of range"},
      {"MPIGPU_LMT_MAX_PENDING", "0", "1..1024", "out of range"},
      {"MPIGPU_IPC_CACHE_SIZE", "5000", "1..4096", "out of range"},
      {"MPIGPU_GPU_COPIER_IDLE_US", "1000001", "1..1000000 us", "out of range"},
      {"MPIGPU_FASTBOX_SIZE", "1M", "0..64K", "out of range"},
      {"MPIGPU_MEMCPY_NT_THRESHOLD", "1", "0 (off) or 4K..1024G", "out of range"},
      {"MPIGPU_YIELD", "yes", "auto | on | off", "not valid"},
  };
  for (const Case& k : cases) {
    AllConfig c;
    AllConfig defaults;
    ASSERT_TRUE(ParseFrom({}, &defaults).ok());
    std::vector<ConfigEntry> entries;
    Status st = ParseFrom({{k.name, k.value}}, &c, &entries);
    const std::string where = std::string(k.name) + "='" + k.value + "'";
    EXPECT_EQ(st.code(), Err::kInvalidArg) << where;
    const std::string& m = st.message();
    EXPECT_EQ(m.rfind(where, 0), 0u) << m;  // name and value as given, quoted
    EXPECT_NE(m.find(k.why), std::string::npos) << m;
    EXPECT_NE(m.find(std::string("(allowed ") + k.range + ")"), std::string::npos) << m;
    // The refused value changes nothing: every field keeps its default.
    EXPECT_EQ(c.bootstrap_timeout_s, defaults.bootstrap_timeout_s) << where;
    EXPECT_EQ(c.cma_chunk, defaults.cma_chunk) << where;
    EXPECT_EQ(c.lmt_units, defaults.lmt_units) << where;
    EXPECT_EQ(c.eager_limit, defaults.eager_limit) << where;
    EXPECT_EQ(c.cell_size, defaults.cell_size) << where;
    EXPECT_EQ(c.cells_per_rank, defaults.cells_per_rank) << where;
    EXPECT_EQ(c.yield, defaults.yield) << where;
    int flagged = 0;
    for (const ConfigEntry& e : entries) flagged += !e.error.empty();
    EXPECT_EQ(flagged, 1) << where;
  }
}

TEST(ConfigTest, EveryProblemIsListed) {
  AllConfig c;
  Status st = ParseFrom({{"MPIGPU_LMT_UNITS", "1000000"},
                         {"MPIGPU_CMA_CHUNK", "1"},
                         {"MPIGPU_BOOTSTRAP_TIMEOUT", "2147484"}},
                        &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  for (const char* part : {"MPIGPU_LMT_UNITS='1000000'", "MPIGPU_CMA_CHUNK='1'",
                           "MPIGPU_BOOTSTRAP_TIMEOUT='2147484'"})
    EXPECT_NE(st.message().find(part), std::string::npos) << st.message();
}

// A field's value for a limits row (what the boundary test reads back).
size_t FieldOf(const AllConfig& c, const std::string& name) {
  const std::map<std::string, size_t> v = {
      {"MPIGPU_MEMCPY_NT_THRESHOLD", c.memcpy_nt_threshold},
      {"MPIGPU_EAGER_LIMIT", c.eager_limit},
      {"MPIGPU_CELL_SIZE", c.cell_size},
      {"MPIGPU_CELLS_PER_RANK", c.cells_per_rank},
      {"MPIGPU_FASTBOX_SIZE", c.fastbox_size},
      {"MPIGPU_LMT_UNIT_HOST", c.lmt_unit_host},
      {"MPIGPU_LMT_UNIT_GPU", c.lmt_unit_gpu},
      {"MPIGPU_LMT_UNIT_GPU_MIN", c.lmt_unit_gpu_min},
      {"MPIGPU_LMT_UNITS", c.lmt_units},
      {"MPIGPU_LMT_MAX_PENDING", c.lmt_max_pending},
      {"MPIGPU_CMA_CHUNK", c.cma_chunk},
      {"MPIGPU_IPC_CACHE_SIZE", c.ipc_cache_size},
      {"MPIGPU_GPU_COPIER_MAX", c.gpu_copier_max},
      {"MPIGPU_GPU_COPIER_STRIDED_MAX", c.gpu_copier_strided_max},
      {"MPIGPU_GPU_COPIER_IDLE_US", c.gpu_copier_idle_us},
      {"MPIGPU_SHARED_GPU_IPC_MIN", c.shared_gpu_ipc_min},
      {"MPIGPU_BOOTSTRAP_TIMEOUT", c.bootstrap_timeout_s},
  };
  auto it = v.find(name);
  return it == v.end() ? ~size_t{0} : it->second;
}

TEST(ConfigTest, EveryDefaultIsInsideItsRange) {
  AllConfig c;
  std::vector<ConfigEntry> entries;
  ASSERT_TRUE(ParseFrom({}, &c, &entries).ok());
  const std::vector<ConfigLimits> limits = NumericConfigLimits();
  EXPECT_EQ(limits.size(), 17u);  // every numeric variable has a row (FieldOf knows them all)
  for (const ConfigLimits& l : limits) {
    EXPECT_LE(l.min, l.max) << l.name;
    const size_t v = FieldOf(c, l.name);
    ASSERT_NE(v, ~size_t{0}) << l.name << " is not in FieldOf";
    EXPECT_TRUE((v >= l.min && v <= l.max) || (v == 0 && l.zero_allowed)) << l.name << " = " << v;
  }
  // The defaults pass the combination and node checks (on a /dev/shm of 64 MiB, Docker's).
  EXPECT_TRUE(CheckTransportConfig(c).ok());
  EXPECT_TRUE(CheckTransportConfigForNode(c, uint64_t{64} << 20).ok());
}

TEST(ConfigTest, BoundariesAreAcceptedAndOneBeyondRefused) {
  // Companions a boundary needs to pass the combination checks: MPIGPU_LMT_UNIT_GPU_MIN <=
  // MPIGPU_LMT_UNIT_GPU, and at most 65536 of the smallest GPU units per ring.
  for (const ConfigLimits& l : NumericConfigLimits()) {
    auto env = [&](size_t v) {
      std::map<std::string, std::string> e;
      if (l.name == "MPIGPU_LMT_UNIT_GPU" && v < (512u << 10))
        e["MPIGPU_LMT_UNIT_GPU_MIN"] = std::to_string(v);
      if (l.name == "MPIGPU_LMT_UNIT_GPU_MIN" && v > (4u << 20))
        e["MPIGPU_LMT_UNIT_GPU"] = std::to_string(v);
      e[l.name] = std::to_string(v);
      return e;
    };
    std::vector<size_t> good = {l.min, l.max};
    if (l.zero_allowed) good.push_back(0);
    for (size_t v : good) {
      AllConfig c;
      Status st = ParseFrom(env(v), &c);
      EXPECT_TRUE(st.ok()) << l.name << "=" << v << ": " << st.message();
      EXPECT_EQ(FieldOf(c, l.name), v) << l.name;
    }
    std::vector<size_t> bad = {l.max + 1};
    if (l.min > 0 && !(l.min == 1 && l.zero_allowed)) bad.push_back(l.min - 1);
    for (size_t v : bad) {
      AllConfig c;
      Status st = ParseFrom(env(v), &c);
      EXPECT_EQ(st.code(), Err::kInvalidArg) << l.name << "=" << v;
      EXPECT_NE(st.message().find(l.name + "='" + std::to_string(v) + "' is out of range"),
                std::string::npos)
          << st.message();
    }
  }
  // Sizes take suffixes in both cases, with "i" and "B" spellings; the value is the same.
  for (const char* text : {"64K", "64k", "64KiB", "64KB", "64Ki", "65536"}) {
    AllConfig c;
    ASSERT_TRUE(ParseFrom({{"MPIGPU_CMA_CHUNK", text}}, &c).ok()) << text;
    EXPECT_EQ(c.cma_chunk, 64u << 10) << text;
  }
}

TEST(ConfigTest, CombinationsAreChecked) {
  AllConfig c;
  // The smallest GPU unit above the largest.
  Status st = ParseFrom({{"MPIGPU_LMT_UNIT_GPU_MIN", "8M"}}, &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("MPIGPU_LMT_UNIT_GPU_MIN (8M) is above MPIGPU_LMT_UNIT_GPU (4M)"),
            std::string::npos)
      << st.message();
  EXPECT_TRUE(ParseFrom({{"MPIGPU_LMT_UNIT_GPU_MIN", "4M"}}, &c).ok());
  // One ring: LMT_UNITS x the largest unit, at most 64G (the host unit counts as well).
  EXPECT_TRUE(ParseFrom({{"MPIGPU_LMT_UNITS", "64"}, {"MPIGPU_LMT_UNIT_HOST", "1G"}}, &c).ok());
  st = ParseFrom({{"MPIGPU_LMT_UNITS", "65"}, {"MPIGPU_LMT_UNIT_HOST", "1G"}}, &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("MPIGPU_LMT_UNITS (65)"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("allowed up to 64G"), std::string::npos) << st.message();
  st = ParseFrom({{"MPIGPU_LMT_UNITS", "4096"}, {"MPIGPU_LMT_UNIT_GPU", "1G"}}, &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  // Flags: one per smallest GPU unit, at most 65536 (LmtRing::kMaxUnits).
  st = ParseFrom({{"MPIGPU_LMT_UNITS", "64"},
                  {"MPIGPU_LMT_UNIT_GPU", "1G"},
                  {"MPIGPU_LMT_UNIT_GPU_MIN", "4K"}},
                 &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("MPIGPU_LMT_UNITS x MPIGPU_LMT_UNIT_GPU / MPIGPU_LMT_UNIT_GPU_MIN"),
            std::string::npos)
      << st.message();
  EXPECT_EQ(kMaxLmtRingFlags, LmtRing::kMaxUnits);
  // One rank's cells, at most 64G.
  st = ParseFrom({{"MPIGPU_CELLS_PER_RANK", "65536"}, {"MPIGPU_CELL_SIZE", "64M"}}, &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("MPIGPU_CELLS_PER_RANK x MPIGPU_CELL_SIZE"), std::string::npos)
      << st.message();
  EXPECT_TRUE(ParseFrom({{"MPIGPU_CELLS_PER_RANK", "1024"}, {"MPIGPU_CELL_SIZE", "64M"}}, &c).ok());
}

TEST(ConfigTest, RingMustFitInDevShm) {
  AllConfig c;
  ASSERT_TRUE(ParseFrom({}, &c).ok());
  // The engine's own count: ShmSegment's header page + LmtRing::BytesFor(capacity, flags), with
  // MPIGPU_LMT_UNITS (8) x MPIGPU_LMT_UNIT_GPU (4M) and one flag per 512K.
  EXPECT_EQ(LmtRingBytes(c), 4096 + LmtRing::BytesFor(size_t{32} << 20, 64));
  EXPECT_TRUE(CheckTransportConfigForNode(c, 0).ok());  // size unknown: not checked
  EXPECT_TRUE(CheckTransportConfigForNode(c, LmtRingBytes(c)).ok());
  Status st = CheckTransportConfigForNode(c, LmtRingBytes(c) - 1);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("/dev/shm"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("MPIGPU_LMT_UNITS 8"), std::string::npos) << st.message();
  // A ring sized by the host unit when that is the larger.
  ASSERT_TRUE(ParseFrom({{"MPIGPU_LMT_UNIT_HOST", "16M"}, {"MPIGPU_LMT_UNITS", "4"}}, &c).ok());
  EXPECT_EQ(LmtRingBytes(c), 4096 + LmtRing::BytesFor(size_t{64} << 20, 4));
  EXPECT_GT(ShmTotalBytes(), 0u);  // Linux has /dev/shm
}

TEST(ConfigTest, BootstrapTimeoutMsFitsAnInt) {
  AllConfig c;
  ASSERT_TRUE(ParseFrom({{"MPIGPU_BOOTSTRAP_TIMEOUT", "86400"}}, &c).ok());
  EXPECT_EQ(BootstrapTimeoutMs(c), 86400000);
  ASSERT_TRUE(ParseFrom({{"MPIGPU_BOOTSTRAP_TIMEOUT", "3"}}, &c).ok());
  EXPECT_EQ(BootstrapTimeoutMs(c), 3000);
  c.bootstrap_timeout_s = 2147484;  // filled by hand past the range: clamped, never negative
  EXPECT_EQ(BootstrapTimeoutMs(c), 86400000);
}

TEST(ConfigTest, YieldModes) {
  AllConfig c;
  const std::pair<const char*, YieldMode> modes[] = {
      {"auto", YieldMode::kAuto}, {"on", YieldMode::kOn}, {"off", YieldMode::kOff}};
  for (const auto& [text, mode] : modes) {
    ASSERT_TRUE(ParseFrom({{"MPIGPU_YIELD", text}}, &c).ok()) << text;
    EXPECT_EQ(c.yield, mode) << text;
  }
  for (const char* bad : {"1", "ON", " on", ""}) {
    Status st = ParseFrom({{"MPIGPU_YIELD", bad}}, &c);
    EXPECT_EQ(st.code(), Err::kInvalidArg) << bad;
    EXPECT_EQ(c.yield, YieldMode::kAuto);
  }
}

TEST(ConfigTest, UnknownNamesAreReported) {
  char a[] = "MPIGPU_EAGER_LIMT=1";  // a typo
  char b[] = "MPIGPU_EAGER_LIMIT=1";
  char c[] = "MPIGPU_RANK=0";
  char d[] = "PATH=/bin";
  char* env[] = {a, b, c, d, nullptr};
  std::vector<std::string> unknown = UnknownConfigNames(env);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0], "MPIGPU_EAGER_LIMT");
}

}  // namespace
}  // namespace mpigpu

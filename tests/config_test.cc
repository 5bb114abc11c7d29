// Config: every MPIGPU_* variable parses its default, bad values fall back with a clear error,
// unknown names are reported.
#include "memcopy/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace mpigpu {
namespace {

Status ParseFrom(const std::map<std::string, std::string>& env, Config* c,
                 std::vector<ConfigEntry>* entries = nullptr) {
  return ParseConfig(
      [&](const char* n) {
        auto it = env.find(n);
        return it == env.end() ? nullptr : it->second.c_str();
      },
      c, entries);
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
  for (const char* bad : {"", "-1", "K", "12Q", "1.5M", "99999999999999999999", "17179869184G"})
    EXPECT_FALSE(ParseSize(bad, &v)) << bad;
  EXPECT_FALSE(ParseSize(nullptr, &v));
  EXPECT_EQ(v, 7u);
}

TEST(ConfigTest, DefaultsAreValidAndDocumented) {
  Config c;
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
    EXPECT_EQ(e.value, e.default_value) << e.name;
    EXPECT_FALSE(e.from_env);
  }
}

TEST(ConfigTest, EnvironmentOverrides) {
  Config c;
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
  Config c;
  Status st = ParseFrom({{"MPIGPU_CELL_SIZE", "0"}}, &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("MPIGPU_CELL_SIZE"), std::string::npos) << st.message();
  EXPECT_EQ(c.cell_size, 64u << 10);
  st = ParseFrom({{"MPIGPU_CELL_SIZE", "1K"}, {"MPIGPU_DEBUG", "loud"}}, &c);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("MPIGPU_DEBUG='loud'"), std::string::npos) << st.message();
  EXPECT_EQ(c.debug, LogLevel::kWarn);
  EXPECT_EQ(c.cell_size, 1u << 10);
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

// LogLimit: a flood of any size prints the first few lines of an interval and then one count.
#include "memcopy/log_limit.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mpigpu {
namespace {

TEST(LogLimitTest, AFloodPrintsABurstThenOneCountPerInterval) {
  std::vector<std::string> lines;
  const LogLimit::Print print = [&](const std::string& l) { lines.push_back(l); };
  LogLimit limit("server: refused", 3, 10);
  for (int i = 0; i < 100000; ++i) limit.Log(print, "refused " + std::to_string(i), 1 + i * 1e-5);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "refused 2");
  EXPECT_EQ(limit.held(), 99997u);
  limit.Flush(print, 5);  // the interval is not over: nothing yet
  EXPECT_EQ(lines.size(), 3u);
  limit.Flush(print, 11.5);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[3], "server: refused: 99997 more in the last 11 s (not shown one by one)");
  // A new interval: a burst again, and an event after it ends brings the count first.
  for (int i = 0; i < 5; ++i) limit.Log(print, "again", 20);
  EXPECT_EQ(lines.size(), 7u);
  limit.Log(print, "later", 31);
  ASSERT_EQ(lines.size(), 9u);
  EXPECT_EQ(lines[7], "server: refused: 2 more in the last 11 s (not shown one by one)");
  EXPECT_EQ(lines[8], "later");
}

TEST(LogLimitTest, QuietIntervalsPrintNoSummary) {
  std::vector<std::string> lines;
  const LogLimit::Print print = [&](const std::string& l) { lines.push_back(l); };
  LogLimit limit("x");
  limit.Log(print, "one", 0);
  limit.Flush(print, 100);
  limit.Log(print, "two", 200);
  EXPECT_EQ(lines, (std::vector<std::string>{"one", "two"}));
}

}  // namespace
}  // namespace mpigpu

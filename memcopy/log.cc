#include "memcopy/log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace mpigpu {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kWarn)};
std::atomic<int> g_rank{-1};
const char* const kLevelNames[] = {"warn", "info", "trace"};
}  // namespace

LogLevel CurrentLogLevel() { return static_cast<LogLevel>(g_level.load(std::memory_order_relaxed)); }
void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level), std::memory_order_relaxed); }
void SetLogRank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

void LogPrintf(LogLevel level, const char* fmt, ...) {
  char line[1024];
  int rank = g_rank.load(std::memory_order_relaxed);
  int n = rank >= 0 ? std::snprintf(line, sizeof line, "[mpigpu %d] %s: ", rank,
                                    kLevelNames[static_cast<int>(level)])
                    : std::snprintf(line, sizeof line, "[mpigpu] %s: ",
                                    kLevelNames[static_cast<int>(level)]);
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line + n, sizeof line - n, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "%s\n", line);  // one call: lines of different ranks do not interleave
}

}  // namespace mpigpu

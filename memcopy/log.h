// Logging to stderr, filtered by MPIGPU_DEBUG (warn | info | trace; default warn).
#pragma once

namespace mpigpu {

enum class LogLevel : int { kWarn = 0, kInfo = 1, kTrace = 2 };

LogLevel CurrentLogLevel();
void SetLogLevel(LogLevel level);
// Each line starts "[mpigpu N]" once the process knows its rank (-1: not yet).
void SetLogRank(int rank);
void LogPrintf(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace mpigpu

#define MPIGPU_LOG(level, ...)                                           \
  do {                                                                   \
    if (static_cast<int>(level) <= static_cast<int>(::mpigpu::CurrentLogLevel())) \
      ::mpigpu::LogPrintf(level, __VA_ARGS__);                           \
  } while (0)
#define MPIGPU_WARN(...) MPIGPU_LOG(::mpigpu::LogLevel::kWarn, __VA_ARGS__)
#define MPIGPU_INFO(...) MPIGPU_LOG(::mpigpu::LogLevel::kInfo, __VA_ARGS__)
#define MPIGPU_TRACE(...) MPIGPU_LOG(::mpigpu::LogLevel::kTrace, __VA_ARGS__)

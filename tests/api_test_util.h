// Helpers for tests of the public API (mpigpu.h) in forked ranks: checks that print the error
// string and leave the rank with status 1, and a job runner that initialises the API.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <string>

#include "mpigpu_api/mpigpu.h"
#include "tests/e2e_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {

inline std::string ErrorText(int code) {
  char s[MPIGPU_MAX_ERROR_STRING];
  int len = 0;
  MPIGPU_Error_string(code, s, &len);
  return std::string(s, len);
}

// In a rank: the call must succeed.
#define API_OK(call)                                                                      \
  do {                                                                                    \
    int _rc = (call);                                                                     \
    if (_rc != MPIGPU_SUCCESS) {                                                          \
      std::fprintf(stderr, "%s:%d: %s -> %s\n", __FILE__, __LINE__, #call,                \
                   ::mpigpu::testing::ErrorText(_rc).c_str());                            \
      std::fflush(stderr);                                                                \
      _exit(1);                                                                           \
    }                                                                                     \
  } while (0)

// In a rank: the call must fail with class `cls` (ERRORS_RETURN mode).
#define API_FAILS(cls, call)                                                              \
  do {                                                                                    \
    int _rc = (call);                                                                     \
    if (_rc != (cls)) {                                                                   \
      std::fprintf(stderr, "%s:%d: %s -> %d (%s), expected %s\n", __FILE__, __LINE__,     \
                   #call, _rc, ::mpigpu::testing::ErrorText(_rc).c_str(), #cls);          \
      std::fflush(stderr);                                                                \
      _exit(1);                                                                           \
    }                                                                                     \
  } while (0)

// In a rank: body(world rank) between MPIGPU_Init and MPIGPU_Finalize; returns 0 (a failed
// call leaves the rank with status 1).
inline int RunApiRank(const std::function<void(int)>& body) {
  API_OK(MPIGPU_Init(nullptr, nullptr));
  int rank = -1;
  API_OK(MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank));
  body(rank);
  API_OK(MPIGPU_Finalize());
  return 0;
}

// Runs body(world rank) in n forked ranks between MPIGPU_Init and MPIGPU_Finalize.
inline std::string RunApiJob(int n, const std::function<void(int)>& body, int timeout_s = 60) {
  return RunJob(n, [&](int) { return RunApiRank(body); }, timeout_s);
}

// In a rank: sends this process's stderr to `path` (to check what a fatal error prints).
inline void RedirectStderr(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  RANK_CHECK(fd >= 0);
  RANK_CHECK(dup2(fd, 2) == 2);
  close(fd);
}

// A file name in the test's scratch directory, unique to this process (read back with
// ReadFile from e2e_util.h).
inline std::string TempPath(const std::string& name) {
  return TestTmpDir() + "/" + name + "." + std::to_string(getpid());
}

}  // namespace mpigpu::testing

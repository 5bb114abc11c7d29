// MPIGPU_* return codes as Status, for the measuring programs (mpigpu-sweep, halo): the failing
// call and the API's error string reach the user, as MPIGPU_CUDA_CHECK does for CUDA.
#pragma once

#include <string>

#include "memcopy/status.h"
#include "mpigpu_api/mpigpu.h"

namespace mpigpu::perf {

// MPIGPU_Error_string's text for `rc`.
std::string ApiErrorString(int rc);

// A failed call as a Status: kInternal, "call: error string".
Status ApiFailure(int rc, const char* call);

}  // namespace mpigpu::perf

// In a function returning Status: a call returning anything but MPIGPU_SUCCESS returns its
// ApiFailure. The success path is one comparison (timed loops use it).
#define PERF_API(call)                                                          \
  do {                                                                          \
    const int _rc = (call);                                                     \
    if (_rc != MPIGPU_SUCCESS) return ::mpigpu::perf::ApiFailure(_rc, #call);   \
  } while (0)

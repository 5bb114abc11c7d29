// Error classes of the public API: their strings, and the mapping from the internal
// mpigpu::Status to them.
//
// Error codes are equal to error classes (MPIGPU_ERR_*): there are no per-call codes. The detail
// of a failure (which argument, what CUDA said) is kept per thread: an API call that fails calls
// SetLastError(code, detail) (or ReturnCode(status)) and MPIGPU_Error_string appends the detail
// when asked about that same code on that thread. The detail therefore describes the thread's
// latest failure of that class; a later success does not clear it.
#pragma once

#include <string>

#include "memcopy/status.h"
#include "mpigpu_api/mpigpu.h"

namespace mpigpu {

// True for MPIGPU_SUCCESS and every MPIGPU_ERR_* class.
bool IsValidErrorCode(int code);

// "MPIGPU_ERR_TAG"; "MPIGPU_SUCCESS"; nullptr for an unknown code.
const char* ErrorClassName(int code);

// Short text of a class ("invalid tag"); nullptr for an unknown code.
const char* ErrorClassText(int code);

// Class for an internal error kind. kInvalidArg becomes `invalid_arg_class`, so a caller that
// knows which argument was wrong names it (MPIGPU_ERR_COUNT, MPIGPU_ERR_TAG, ...); the others:
// kNoGpu -> NO_GPU, kTruncate -> TRUNCATE, kPeerFailed -> PROC_FAILED, kInternal and kNoMemory
// -> INTERN, kCuda, kSystem and kTimeout -> OTHER, kOk -> SUCCESS.
int ErrorClassOf(Err err, int invalid_arg_class = MPIGPU_ERR_ARG);
inline int ErrorClassOf(const Status& st, int invalid_arg_class = MPIGPU_ERR_ARG) {
  return ErrorClassOf(st.code(), invalid_arg_class);
}

// Records `detail` as the calling thread's latest failure with `code`; returns `code` so a call
// can `return SetLastError(MPIGPU_ERR_COUNT, "count -1 is negative");`. MPIGPU_SUCCESS records
// nothing.
int SetLastError(int code, std::string detail);
// The same for a fixed text, out of line: a call site builds no std::string, so hot functions
// that can fail this way keep a small frame.
[[gnu::cold]] int SetLastError(int code, const char* detail);

// The code for `st` (see ErrorClassOf), recording its message as the detail on failure.
// Inline: every engine call's status passes through here, and almost all are ok.
[[gnu::cold]] int FailureCode(const Status& st, int invalid_arg_class);  // st failed
inline int ReturnCode(const Status& st, int invalid_arg_class = MPIGPU_ERR_ARG) {
  return st.ok() ? MPIGPU_SUCCESS : FailureCode(st, invalid_arg_class);
}

// The calling thread's latest detail for `code`, or "" if its latest failure had another code.
std::string LastErrorDetail(int code);

// What MPIGPU_Error_string writes: "invalid tag (MPIGPU_ERR_TAG): <detail>", or
// "unknown error code N".
std::string ErrorMessage(int code);

}  // namespace mpigpu

#include "mpigpu_api/errors.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace mpigpu {
namespace {

struct ClassInfo {
  const char* name;
  const char* text;
};

// Indexed by code: 0 is MPIGPU_SUCCESS, then MPIGPU_ERR_RANK..MPIGPU_ERR_LASTCODE in order.
constexpr ClassInfo kClasses[] = {
    {"MPIGPU_SUCCESS", "no error"},
    {"MPIGPU_ERR_RANK", "invalid rank"},
    {"MPIGPU_ERR_COUNT", "invalid count"},
    {"MPIGPU_ERR_TAG", "invalid tag"},
    {"MPIGPU_ERR_TYPE", "invalid datatype"},
    {"MPIGPU_ERR_BUFFER", "invalid buffer pointer or buffer type"},
    {"MPIGPU_ERR_COMM", "invalid communicator"},
    {"MPIGPU_ERR_REQUEST", "invalid request"},
    {"MPIGPU_ERR_TRUNCATE", "message truncated: longer than the receive buffer"},
    {"MPIGPU_ERR_PROC_FAILED", "a peer process failed"},
    {"MPIGPU_ERR_NO_GPU", "no usable CUDA device"},
    {"MPIGPU_ERR_INTERN", "internal error"},
    {"MPIGPU_ERR_OTHER", "CUDA, system or timeout error"},
    {"MPIGPU_ERR_ARG", "invalid argument"},
    {"MPIGPU_ERR_OP", "invalid reduction operation"},
    {"MPIGPU_ERR_NOT_INITIALIZED", "mpigpu is not initialized (or already finalized)"},
    {"MPIGPU_ERR_ROOT", "invalid root"},
    {"MPIGPU_ERR_GROUP", "invalid group"},
    {"MPIGPU_ERR_TOPOLOGY", "invalid topology"},
    {"MPIGPU_ERR_DIMS", "invalid dimensions"},
    {"MPIGPU_ERR_UNKNOWN", "unknown error"},
    {"MPIGPU_ERR_IN_STATUS", "error code is in status"},
    {"MPIGPU_ERR_PENDING", "request pending"},
    {"MPIGPU_ERR_KEYVAL", "invalid attribute key"},
    {"MPIGPU_ERR_INFO", "invalid info object"},
    {"MPIGPU_ERR_INFO_KEY", "invalid info key"},
    {"MPIGPU_ERR_INFO_VALUE", "invalid info value"},
    {"MPIGPU_ERR_INFO_NOKEY", "no such info key"},
    {"MPIGPU_ERR_NO_MEM", "out of memory"},
    {"MPIGPU_ERR_UNSUPPORTED_OPERATION", "operation not supported by mpigpu"},
    {"MPIGPU_ERR_WIN", "invalid window"},
    {"MPIGPU_ERR_RMA_RANGE", "target memory outside the window"},
    {"MPIGPU_ERR_RMA_SYNC", "one-sided call outside its synchronisation epoch"},
    {"MPIGPU_ERR_RMA_CONFLICT", "conflicting one-sided accesses or epochs"},
    {"MPIGPU_ERR_RMA_ATTACH", "memory cannot be attached or detached"},
    {"MPIGPU_ERR_RMA_FLAVOR", "call not valid for the window's flavor"},
    {"MPIGPU_ERR_LOCKTYPE", "invalid lock type"},
    {"MPIGPU_ERR_ASSERT", "invalid assertion"},
    {"MPIGPU_ERR_DISP", "invalid displacement unit"},
    {"MPIGPU_ERR_SIZE", "invalid size"},
};
static_assert(sizeof(kClasses) / sizeof(kClasses[0]) == MPIGPU_ERR_LASTCODE + 1,
              "one entry per error class");

struct LastError {
  int code = MPIGPU_SUCCESS;
  std::string detail;
};
thread_local LastError t_last_error;

}  // namespace

bool IsValidErrorCode(int code) { return code >= MPIGPU_SUCCESS && code <= MPIGPU_ERR_LASTCODE; }

const char* ErrorClassName(int code) {
  return IsValidErrorCode(code) ? kClasses[code].name : nullptr;
}

const char* ErrorClassText(int code) {
  return IsValidErrorCode(code) ? kClasses[code].text : nullptr;
}

int ErrorClassOf(Err err, int invalid_arg_class) {
  switch (err) {
    case Err::kOk: return MPIGPU_SUCCESS;
    case Err::kInvalidArg: return invalid_arg_class;
    case Err::kNoGpu: return MPIGPU_ERR_NO_GPU;
    case Err::kTruncate: return MPIGPU_ERR_TRUNCATE;
    case Err::kPeerFailed: return MPIGPU_ERR_PROC_FAILED;
    case Err::kInternal:
    case Err::kNoMemory: return MPIGPU_ERR_INTERN;
    case Err::kCuda:
    case Err::kSystem:
    case Err::kTimeout: return MPIGPU_ERR_OTHER;
  }
  return MPIGPU_ERR_INTERN;  // an Err value outside the enum: a bug
}

int SetLastError(int code, std::string detail) {
  if (code != MPIGPU_SUCCESS) {
    t_last_error.code = code;
    t_last_error.detail = std::move(detail);
  }
  return code;
}

int SetLastError(int code, const char* detail) { return SetLastError(code, std::string(detail)); }

int FailureCode(const Status& st, int invalid_arg_class) {
  return SetLastError(ErrorClassOf(st, invalid_arg_class), st.ToString());
}

std::string LastErrorDetail(int code) {
  return code != MPIGPU_SUCCESS && t_last_error.code == code ? t_last_error.detail : "";
}

std::string ErrorMessage(int code) {
  if (!IsValidErrorCode(code)) return "unknown error code " + std::to_string(code);
  std::string msg = std::string(kClasses[code].text) + " (" + kClasses[code].name + ")";
  std::string detail = LastErrorDetail(code);
  if (!detail.empty()) msg += ": " + detail;
  return msg;
}

}  // namespace mpigpu

using mpigpu::IsValidErrorCode;

extern "C" int MPIGPU_Error_string(int errorcode, char* str, int* resultlen) {
  if (str == nullptr || resultlen == nullptr) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Error_string: null str or resultlen");
  }
  std::string msg = mpigpu::ErrorMessage(errorcode);
  size_t len = std::min(msg.size(), static_cast<size_t>(MPIGPU_MAX_ERROR_STRING - 1));
  std::memcpy(str, msg.data(), len);
  str[len] = '\0';
  *resultlen = static_cast<int>(len);
  if (!IsValidErrorCode(errorcode)) return MPIGPU_ERR_ARG;
  return MPIGPU_SUCCESS;
}

extern "C" int MPIGPU_Error_class(int errorcode, int* errorclass) {
  if (errorclass == nullptr) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Error_class: null errorclass");
  }
  if (!IsValidErrorCode(errorcode)) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG,
                                "unknown error code " + std::to_string(errorcode));
  }
  *errorclass = errorcode;
  return MPIGPU_SUCCESS;
}

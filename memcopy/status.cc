#include "memcopy/status.h"

#include <cstring>

namespace mpigpu {

const char* ErrName(Err e) {
  switch (e) {
    case Err::kOk: return "ok";
    case Err::kInvalidArg: return "invalid argument";
    case Err::kNoGpu: return "no GPU";
    case Err::kCuda: return "CUDA error";
    case Err::kSystem: return "system error";
    case Err::kNoMemory: return "out of memory";
    case Err::kTimeout: return "timeout";
    case Err::kPeerFailed: return "peer failed";
    case Err::kTruncate: return "truncated";
    case Err::kInternal: return "internal error";
  }
  return "unknown error";
}

const std::string& Status::message() const {
  static const std::string empty;
  return msg_ ? *msg_ : empty;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  return std::string(ErrName(code_)) + ": " + message();
}

Status SysError(const char* what, int err) {
  return Status(Err::kSystem, std::string(what) + ": " + std::strerror(err));
}

}  // namespace mpigpu

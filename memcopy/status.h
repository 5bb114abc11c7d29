// Status: the error value every internal layer returns (the public API maps it to MPIGPU_ERR_*).
//
// Calls into CUDA and the OS go through the check macros below (NCCL's checks.h idea): the failing
// call and its error string are captured in the Status, so the first error of a chain reaches the
// user with its cause; cleanup code keeps the first error (KeepFirst).
#pragma once

#include <cerrno>
#include <memory>
#include <string>
#include <utility>

namespace mpigpu {

enum class Err : int {
  kOk = 0,
  kInvalidArg,   // a caller passed something wrong (size, pointer, location, index)
  kNoGpu,        // a GPU was asked for and none is usable
  kCuda,         // a CUDA call failed
  kSystem,       // an OS call failed (errno in the message)
  kNoMemory,     // allocation failed, /dev/shm full, queue pools exhausted
  kTimeout,      // a bounded wait ran out
  kPeerFailed,   // a peer process died or vanished
  kTruncate,     // a message longer than the buffer meant for it
  kInternal,     // a broken invariant: a bug
};

const char* ErrName(Err e);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Err code, std::string msg)
      : code_(code), msg_(code == Err::kOk ? nullptr : new std::string(std::move(msg))) {}
  // The message lives on the heap only for errors: an ok Status is one word and a null pointer,
  // so the hot paths that pass ok statuses around pay no string construction or move.
  Status(const Status& o) : code_(o.code_), msg_(o.msg_ ? new std::string(*o.msg_) : nullptr) {}
  Status& operator=(const Status& o) {
    if (this != &o) *this = Status(o);
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Err::kOk; }
  Err code() const { return code_; }
  const std::string& message() const;
  // "kind: message", for logs and error strings.
  std::string ToString() const;

  // Keeps this status if it is already an error, else takes `other` (cleanup keeps the first).
  void KeepFirst(Status other) {
    if (ok()) *this = std::move(other);
  }

 private:
  Err code_ = Err::kOk;
  std::unique_ptr<std::string> msg_;  // null when ok
};

// Status for a failed OS call: "what: strerror(errno)".
Status SysError(const char* what, int err = errno);

}  // namespace mpigpu

#define MPIGPU_RETURN_IF_ERROR(expr)       \
  do {                                     \
    ::mpigpu::Status _st = (expr);         \
    if (!_st.ok()) return _st;             \
  } while (0)

// OS call returning -1 (and setting errno) on failure -> Status.
#define MPIGPU_SYS_CHECK(call)                              \
  do {                                                      \
    if ((call) == -1) return ::mpigpu::SysError(#call);     \
  } while (0)

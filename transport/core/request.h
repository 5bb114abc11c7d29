// A send or receive in flight, as the engine core and the back-ends see it. The core owns the
// request (pool, matching, completion); a back-end that carries its data keeps its own state in
// `op` (an LmtOp of its own type) and names itself in `lmt`. Only the engine's thread touches a
// request (one thread per process calls the engine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "memcopy/memloc.h"
#include "memcopy/status.h"
#include "pipeline/layout.h"
#include "transport/core/wire.h"
#include "transport/core/match.h"

namespace mpigpu::transport {

constexpr int kAnySource = kMatchAnySource;
constexpr int kAnyTag = kMatchAnyTag;

// Envelope and size of a message, as a receive or a probe sees it.
struct MsgInfo {
  int source = -1;
  int tag = -1;
  size_t bytes = 0;  // packed bytes the sender sent (may exceed the receive buffer: truncation)
};

// A user buffer: where it lives and its shape (the packed stream is what travels).
struct UserBuffer {
  void* ptr = nullptr;
  MemLoc loc = MemLoc::Host();
  Layout layout;
};

class LmtBackend;

// A back-end's per-request state (its own subclass), destroyed when the request completes.
class LmtOp {
 public:
  virtual ~LmtOp() = default;
};

// A back-end's finished states kept for its next requests, so that the message path allocates
// nothing once warm (a request's state used to live in Request's own fields). Take: a fresh T
// (value-initialized); Give: a T this pool's back-end made, at LmtBackend::Finished.
template <typename T>
class LmtOpPool {
 public:
  std::unique_ptr<T> Take() {
    if (free_.empty()) return std::make_unique<T>();
    std::unique_ptr<T> op = std::move(free_.back());
    free_.pop_back();
    *op = T();
    return op;
  }
  void Give(std::unique_ptr<LmtOp> op) {
    if (op != nullptr && free_.size() < kKept) free_.emplace_back(static_cast<T*>(op.release()));
  }

 private:
  static constexpr size_t kKept = 64;
  std::vector<std::unique_ptr<T>> free_;
};

class Request : public MatchEntry {
 public:
  // Complete, and no cancel of it is waiting for the receiver's answer (an eager send's buffer
  // went out at once, but whether its message was taken back is not known until then).
  bool done() const { return done_ && !cancel_pending_; }
  // The first error of this request (kTruncate, kPeerFailed, ...), ok otherwise.
  const Status& status() const { return status_; }
  // Receive: the matched envelope and the sender's size. Send: the destination and tag.
  const MsgInfo& info() const { return info_; }
  bool is_send() const { return kind_ == Kind::kSend; }
  // A receive withdrawn by Messenger::CancelRecv before any message matched it, or a send whose
  // message its receiver gave back unmatched (Messenger::CancelSend).
  bool cancelled() const { return cancelled_; }

  // What a back-end reads of the request it carries or offers for.
  // Send: destination; recv: source (kAnySource until matched).
  int peer() const { return peer_; }
  const UserBuffer& buf() const { return buf_; }
  // Send: packed size; recv: capacity of the packed stream.
  size_t bytes() const { return bytes_; }
  // Receive of a rendezvous message: the matched RTS (the sender's id in sreq, its buffer in the
  // body).
  const MsgHeader& rts() const { return rts_; }
  // The back-end that carries its data, and the one whose offer a send's RTS carried.
  LmtBackend* carrier() const { return lmt_; }
  LmtBackend* offerer() const { return offer_lmt_; }
  // The back-end's state as its own type (it made it).
  template <typename T>
  T* op() const { return static_cast<T*>(op_.get()); }
  template <typename T>
  T* offer_op() const { return static_cast<T*>(offer_op_.get()); }

  enum class Kind { kSend, kRecv };
  enum class State {
    kQueued,   // send: its first message waits in the destination's FIFO, or is not sent yet
    kPosted,   // recv: in the posted queue
    kWaitCts,  // send: RTS sent, waiting for a back-end's answer (named by WaitingSend)
    kLmt,      // either: a back-end carries the data (`lmt`, `op`)
    kDone,
  };

 private:
  // The engine owns every field; a back-end writes none of them: it completes a request through
  // LmtHost::Complete and claims it through LmtHost::Carry / Offered (the one place that sets
  // lmt_, op_, offer_lmt_, offer_op_ and the state they imply).
  friend class Engine;
  friend class LmtHost;

  Kind kind_ = Kind::kSend;
  State state_ = State::kQueued;
  bool done_ = false;
  bool released_ = false;  // the caller let go: delete on completion
  bool cancelled_ = false;  // see cancelled()
  bool cancel_pending_ = false;  // send: CancelSend asked the receiver, no answer yet
  bool sent_eager_ = false;  // send: completed by its one eager message (cancellable until matched)
  uint64_t number_ = 0;  // send: its message's number among those to its peer (engine sent_to_)
  Status status_;
  MsgInfo info_;
  int peer_ = -1;
  int tag_ = -1;
  int context_ = 0;
  UserBuffer buf_;
  size_t bytes_ = 0;
  // Receive of a rendezvous message: the matched RTS; `lmt_index_` is where in the pair's
  // preference list the search for a back-end stands (LmtHost::FallBack goes on after it).
  MsgHeader rts_{};
  int lmt_index_ = -1;
  // The back-end that carries this request's data, and its state; the back-end whose offer a
  // send's RTS carried, and its state (the receiver may pick another back-end). Both are told
  // when the request completes (LmtBackend::Finished), the offerer first.
  LmtBackend* lmt_ = nullptr;
  std::unique_ptr<LmtOp> op_;
  LmtBackend* offer_lmt_ = nullptr;
  std::unique_ptr<LmtOp> offer_op_;
};

// The receive's matched size: kTruncate when the message was longer than the buffer, else ok
// (inline: every receive asks).
Status TruncationError(const MsgInfo& m, size_t cap);
inline Status TruncationOf(const MsgInfo& m, size_t cap) {
  return m.bytes <= cap ? Status::Ok() : TruncationError(m, cap);
}
// Request errors the back-ends share.
Status PeerCopyError(int peer);  // its single copy failed on the peer's side
Status PeerDied(int peer);       // a copy from it found no process

}  // namespace mpigpu::transport

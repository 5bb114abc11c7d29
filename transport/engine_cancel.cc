// Send cancellation (MPI_Cancel of a send): the receiver decides. A send's message is withdrawn
// only while no receive has matched it, and only the receiving engine knows that: it is so
// exactly while the message (eager data or RTS) still waits in the receiver's unexpected queue.
//
// Protocol (kCtl, lmt kWireIdCore, header fields only):
//   kCancelAsk    sender -> receiver: bytes = the message's number in the pair's order (both
//                 sides count the pair's eager and RTS messages: engine.h sent_to_/arrived_from_),
//                 sreq = the send's id for the answer, with the message's tag and context. Sent
//                 through the same FIFO and channel as the message, so it arrives after it: the
//                 message is then either matched or unexpected, never on its way.
//   kCancelAnswer receiver -> sender: sreq echoed; flags kCancelled when the message was found
//                 unmatched and dropped (an RTS too: its sender's back-end lets go of the buffer
//                 when the send completes, cancelled).
// A message still in the sender's own FIFO never left: it is withdrawn there without asking.
// While the answer is awaited the request is not done() (Request::cancel_pending_), counts as
// waiting on the receiver (a dead receiver fails it) and is not freed even if released.
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "transport/core/wire_ids.h"
#include "transport/engine.h"

namespace mpigpu::transport {
namespace {

constexpr uint8_t kCancelAsk = 1;
constexpr uint8_t kCancelAnswer = 2;
constexpr uint8_t kCancelled = 1;  // kCancelAnswer's flag

}  // namespace

void Engine::CancelSend(Request* req) {
  if (req == nullptr || req->kind_ != Request::Kind::kSend || req->cancel_pending_ ||
      req->cancelled_ || finalized_)
    return;
  if (req->done_ && !req->sent_eager_) return;  // matched, or failed: the cancel fails
  const int dst = req->peer_;
  // Still waiting for room on its channel: nothing of it left this process.
  std::deque<OutMsg>& q = pending_[dst];
  for (auto it = q.begin(); it != q.end(); ++it) {
    if (it->req != req) continue;
    q.erase(it);
    --pending_count_;
    req->cancelled_ = true;
    Complete(req, Status::Ok());
    return;
  }
  if (peer_failed_[dst]) return;
  MsgHeader h{};
  h.lmt = kWireIdCore;
  h.op = kCancelAsk;
  h.tag = req->tag_;
  h.context = req->context_;
  h.sreq = reinterpret_cast<uint64_t>(req);
  h.bytes = req->number_;
  req->cancel_pending_ = true;
  cancelling_.insert(req);
  ++outstanding_[dst];  // the liveness check watches the receiver until it answers
  SendControl(dst, h, nullptr, 0);
}

Status Engine::OnCoreControl(const MsgHeader& h) {
  if (h.op == kCancelAsk) {
    Unexpected* found = nullptr;
    unexpected_.ForEach([&](Unexpected* u) {
      if (u->hdr.src == h.src && u->number == h.bytes && u->hdr.tag == h.tag &&
          u->hdr.context == h.context)
        found = u;
    });
    if (found != nullptr) {
      unexpected_.Remove(found);
      delete found;
    }
    MsgHeader a{};
    a.lmt = kWireIdCore;
    a.op = kCancelAnswer;
    a.flags = found != nullptr ? kCancelled : 0;
    a.sreq = h.sreq;
    SendControl(h.src, a, nullptr, 0);
    return Status::Ok();
  }
  if (h.op == kCancelAnswer) {
    auto* req = reinterpret_cast<Request*>(h.sreq);  // trusted only once found in cancelling_
    auto it = cancelling_.find(req);
    if (it == cancelling_.end() || req->peer_ != h.src)
      return Status(Err::kInternal, "rank " + std::to_string(h.src) +
                                        " answered a cancel that no send of this rank asked");
    cancelling_.erase(it);
    req->cancel_pending_ = false;
    --outstanding_[req->peer_];
    if (h.flags & kCancelled) req->cancelled_ = true;
    if (!req->done_) {
      // An RTS's send: complete now, its back-end letting go of the buffer (and freed if
      // released); a matched one completes when its transfer does.
      if (req->cancelled_) Complete(req, Status::Ok());
    } else if (req->released_) {
      FreeRequest(req);
    }
    return Status::Ok();
  }
  return Status(Err::kInternal, "control message " + std::to_string(h.op) +
                                    " of the engine's own from rank " + std::to_string(h.src) +
                                    " is unknown");
}

// `rank` failed: its answers will not come. A send that had completed (eager) cannot say
// whether its message was taken back: it fails too.
void Engine::EndCancels(int rank, const Status& why) {
  std::vector<Request*> ended;
  for (Request* r : cancelling_)
    if (r->peer_ == rank) ended.push_back(r);
  for (Request* r : ended) {
    cancelling_.erase(r);
    r->cancel_pending_ = false;
    --outstanding_[rank];
    if (!r->done_) {
      Complete(r, why);  // frees it if released
    } else {
      r->status_.KeepFirst(why);
      if (r->released_) FreeRequest(r);
    }
  }
}

}  // namespace mpigpu::transport

// Messenger: what the layers above the transport (the public API, mpigpu_api) ask of it, and
// nothing else: point-to-point requests, progress, the job's shape and finalize. The transport's
// engine (transport/engine.h) implements it; the API holds only this interface, so it never sees
// the engine's back-ends, queues or settings. A call is one virtual call (the engine is final):
// nothing is allocated or wrapped on the way.
//
// Threading: one thread per process calls a Messenger (the API's lock sees to it).
#pragma once

#include <vector>

#include "memcopy/status.h"
#include "transport/core/request.h"

namespace mpigpu::transport {

class Messenger {
 public:
  virtual ~Messenger() = default;

  // This process's rank in the job, and the job's size.
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Starts a send of buf's packed stream to `dst` (tag >= 0, context >= 0). The request is
  // done when the buffer may be reused.
  virtual Status Isend(const UserBuffer& buf, int dst, int tag, int context, Request** out) = 0;
  // Starts a synchronous send: as Isend, but the request is done only once the receiver has
  // matched the message (it goes by rendezvous whatever its size).
  virtual Status Issend(const UserBuffer& buf, int dst, int tag, int context, Request** out) = 0;
  // Withdraws a receive no message has matched yet: it completes at once, ok, with cancelled()
  // true, and the call returns true. False (nothing done) for a send or a matched receive.
  virtual bool CancelRecv(Request* req) = 0;
  // Asks to withdraw a send (MPI_Cancel): a message its receiver has not matched yet is taken
  // back, and the request completes (or stays complete) with cancelled() true; a matched one
  // goes on as if never cancelled. Until the receiver answered, the request is not done(), even
  // an eager one whose buffer already went out; a dead receiver fails it (kPeerFailed). No
  // effect on a receive, a send already asked for, or one that completed by a match or failed.
  virtual void CancelSend(Request* req) = 0;
  // Starts a receive into buf; src may be kAnySource, tag kAnyTag.
  virtual Status Irecv(const UserBuffer& buf, int src, int tag, int context, Request** out) = 0;
  // A blocking send's shortcut: true when the message went out at once and no request exists
  // (the buffer may be reused); false when nothing happened and the caller uses Isend.
  virtual bool TrySendNow(const UserBuffer& buf, int dst, int tag, int context) = 0;
  // A blocking receive's shortcut: true when src's next message matched and was copied into buf
  // (*info, and *st: ok or kTruncate); false when nothing was taken and the caller uses Irecv.
  // `spins`: how many times src's channel is asked.
  virtual bool TryRecvNow(const UserBuffer& buf, int src, int tag, int context, int spins,
                          MsgInfo* info, Status* st) = 0;
  // Looks for a matching message that has arrived, without receiving it.
  virtual Status Iprobe(int src, int tag, int context, bool* found, MsgInfo* info) = 0;

  // Does all work possible now; returns a transport-level error, request errors stay with
  // their requests.
  virtual Status Progress() = 0;
  // Lets go of a request: deleted now if done, else when it completes.
  virtual void Release(Request* req) = 0;
  // The program leaves the library for a while (a blocking collective ended): back-ends let go
  // of what its own GPU synchronisation would wait for (LmtBackend::Idle). Does not wait.
  virtual void Idle() = 0;

  // The ranks that take part in `context` (a communicator's): a rank's death fails the wildcard
  // receives of the contexts it belongs to only. A context never declared counts every rank.
  virtual void SetContextMembers(int context, const std::vector<int>& world_ranks) = 0;

  // Completes outstanding sends, waits (bounded) for every peer to finalize or die, removes the
  // shared memory this process created. The messenger is unusable afterwards.
  virtual Status Finalize() = 0;
};

}  // namespace mpigpu::transport

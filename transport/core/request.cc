#include "transport/core/request.h"

#include <string>

namespace mpigpu::transport {

Status TruncationError(const MsgInfo& m, size_t cap) {
  return Status(Err::kTruncate, "message of " + std::to_string(m.bytes) + " bytes from rank " +
                                    std::to_string(m.source) + " (tag " + std::to_string(m.tag) +
                                    ") is longer than the receive buffer (" + std::to_string(cap) +
                                    " bytes)");
}

Status PeerCopyError(int peer) {
  return Status(Err::kInternal,
                "rank " + std::to_string(peer) + " could not copy this message (see its error)");
}

Status PeerDied(int peer) {
  return Status(Err::kPeerFailed, "rank " + std::to_string(peer) + " has failed (its process is gone)");
}

}  // namespace mpigpu::transport

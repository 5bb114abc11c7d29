// What the engine's files share (engine.cc, engine_eager.cc, engine_ipc.cc, engine_lmt.cc): the
// definitions of its private message and ring types, and small helpers. Not for other users.
#pragma once

#include <string>

#include "memcopy/clock.h"
#include "transport/engine.h"
#include "transport/wire.h"

namespace mpigpu::transport {

// A message waiting for a free cell.
struct Engine::OutMsg {
  int dst = -1;
  MsgHeader hdr{};
  Request* req = nullptr;  // eager: packed at send time and completed; RTS: waits for CTS/FIN
  const UserBuffer* data = nullptr;  // eager: the buffer packed into the slot or cell
  bool has_ipc = false;    // RTS with kFlagIpc, IpcPut: `offer` travels as the payload
  IpcOffer offer;          // set (and read) only with has_ipc: no zeroing on the eager path
};

// The ring of one ordered pair, mapped in this process. The receiver creates its region.
struct Engine::RingPair {
  ShmSegment region;
  LmtRing ring;
  bool creator = false;
  bool pinned = false;
  uint64_t token = 0;  // the random part of its name (RingSegmentName)
  // Receiver: unit size and end slot of the last transfer given a CTS (the chain rule of
  // ringbuf/lmt_ring.h); chain_unit 0 until the first.
  size_t chain_unit = 0;
  size_t chain_slot = 0;
  // Receiver: a transfer failed part-way and may have left units in the ring; later ring
  // transfers from this sender fail instead of reading them.
  bool broken = false;
};

// A request whose single copy failed on the peer's side (kFlagCopyError).
inline Status PeerCopyError(int peer) {
  return Status(Err::kInternal,
                "rank " + std::to_string(peer) + " could not copy this message (see its error)");
}

// A request that ends because its peer's process is gone (a copy from it found no process).
inline Status PeerDied(int peer) {
  return Status(Err::kPeerFailed, "rank " + std::to_string(peer) + " has failed (its process is gone)");
}

// A ring transfer that fails because another one on the same ring failed part-way.
inline Status RingBroken(int sender, int receiver) {
  return Status(Err::kInternal, "the shared ring from rank " + std::to_string(sender) +
                                    " to rank " + std::to_string(receiver) +
                                    " failed in a transfer (see the first error)");
}

inline size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

inline MatchKey EnvelopeOf(const MsgHeader& h) { return MatchKey{h.context, h.src, h.tag}; }

// A process-independent name for a CUDA device (device ordinals differ between processes with
// different CUDA_VISIBLE_DEVICES): a hash of its UUID; 0 for none.
inline uint64_t GpuIdentity(int device) {
  cudaDeviceProp p{};
  if (device < 0 || cudaGetDeviceProperties(&p, device) != cudaSuccess) return 0;
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (char c : p.uuid.bytes) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h | 1;
}

// kTruncate when the message was longer than the receive buffer, else ok.
inline Status TruncationOf(const MsgInfo& m, size_t cap) {
  if (m.bytes <= cap) return Status::Ok();
  return Status(Err::kTruncate, "message of " + std::to_string(m.bytes) + " bytes from rank " +
                                    std::to_string(m.source) + " (tag " + std::to_string(m.tag) +
                                    ") is longer than the receive buffer (" + std::to_string(cap) +
                                    " bytes)");
}

}  // namespace mpigpu::transport

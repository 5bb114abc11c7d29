// The transport's message headers. MsgHeader is carried in each cell's 64-byte `hdr` line
// (ringbuf/cell_queue.h). A fastbox slot (ringbuf/fastbox.h) carries an eager message as a
// compact EagerHeader followed by the payload, so the header and a short payload share the
// slot's first line with its stamp; any other message as a MsgHeader followed by its payload.
// Both start with the type, which tells the receiver which of the two it holds.
//
// The sender writes the header and payload of a cell or slot it owns, then CellQueues::Enqueue
// or Fastboxes::Publish publishes them (their release stores pair with Dequeue's and Peek's
// acquire loads), so the receiver reads plain fields here: no atomics needed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "memcopy/memloc.h"
#include "transport/cuda_ipc.h"

namespace mpigpu::transport {

enum class MsgType : uint8_t {
  kEager = 1,  // payload in the cell
  kRts = 2,    // rendezvous request: size, location, address of the sender's buffer
  kCts = 3,    // receiver -> sender: the pair's ring is ready, unit size in `unit`, first unit
               // in `addr`
  kFin = 4,    // receiver -> sender: a single copy (CMA, CUDA IPC) read the sender's buffer. A
               // copy on the receiver's resident kernel stores the send's notify token instead
               // (IpcOffer::notify_slot), with no message.
  kCmaGo = 5,  // receiver -> sender: join the cooperative copy into `addr` (generation in `block`)
  kIpcPut = 6,    // receiver -> sender: copy into my device buffer (IpcExport in the payload);
                  // `addr` = the receiver's request id
  kPutDone = 7,   // sender -> receiver: the put is done (or kFlagFailed: use the ring); `addr` as
                  // in kIpcPut
  kRingAbort = 8,  // either side -> the other: a ring transfer failed part-way; the ring between
                   // them (sender -> receiver; kFlagRingReceiver: sent by its receiver) is retired
};

// MsgHeader::flags
constexpr uint16_t kFlagIpc = 1;     // RTS: an IpcExport of the sender's device buffer is the payload
constexpr uint16_t kFlagFailed = 2;  // PutDone: the sender could not copy; fall back to the ring
constexpr uint16_t kFlagCopyError = 8;  // FIN / PutDone: the single copy failed on the peer's
                                        // side; this request fails too (no waiting forever)
constexpr uint16_t kFlagRingReceiver = 16;  // RingAbort: sent by the ring's receiver
constexpr uint16_t kFlagBoxOn = 32;  // any message through a cell: the sender's fastbox to this
                                     // receiver is open; its later messages may come through it
constexpr uint16_t kFlagChained = 4;  // CTS: same unit size as the transfer before; start at unit
                                      // `addr` without waiting for the ring to drain

struct MsgHeader {
  MsgType type;
  uint8_t contiguous;  // RTS: the sender's buffer is one run of bytes (CMA can read it)
  uint16_t flags;      // kFlag* below
  int32_t src;         // sending rank
  int32_t tag;
  int32_t context;     // communicator context id
  uint64_t bytes;      // eager / RTS: packed message size; CTS, CmaGo: bytes to transfer
  uint64_t sreq;       // the sender's request id (echoed in CTS and FIN)
  uint64_t addr;       // RTS: the sender's buffer address; CmaGo: the receiver's; CTS: the
                       // transfer's first ring unit
  uint32_t unit;       // CTS: ring unit size; CmaGo: chunk size
  uint32_t block;      // RTS: the sender's layout block (0: contiguous); CTS: the fill block;
                       // CmaGo: the transfer's generation
  MemLoc loc;          // RTS: where the sender's buffer lives
  uint32_t seq;        // number of this message in its pair's order (fastbox and queue alike)
  uint32_t ring_token[2];  // CTS: the random part of the ring's name (RingSegmentName), which
                           // only the job's ranks learn: see RingToken / SetRingToken
};

inline uint64_t RingToken(const MsgHeader& h) {
  return static_cast<uint64_t>(h.ring_token[0]) << 32 | h.ring_token[1];
}
inline void SetRingToken(MsgHeader* h, uint64_t token) {
  h->ring_token[0] = static_cast<uint32_t>(token >> 32);
  h->ring_token[1] = static_cast<uint32_t>(token);
}
static_assert(std::is_trivially_copyable<MsgHeader>::value, "copied into shared memory");

// An eager message's header in a fastbox slot: what matching and ordering need (the sender is
// the slot's pair). The payload's size is the slot's length minus this header.
struct EagerHeader {
  MsgType type;  // kEager
  uint8_t pad[3];
  int32_t tag;
  int32_t context;
  uint32_t seq;
};
static_assert(std::is_trivially_copyable<EagerHeader>::value, "copied into shared memory");
static_assert(sizeof(EagerHeader) == 16 && offsetof(EagerHeader, type) == 0 &&
                  offsetof(MsgHeader, type) == 0,
              "both headers start with the type; the compact one leaves 40 payload bytes in a "
              "fastbox slot's first line");

constexpr uint32_t kNoNotify = ~0u;

// The payload of an RTS with kFlagIpc, and of an IpcPut: the exported buffer and its shape (a
// vector: `count` blocks of `block` bytes, `stride` apart; contiguous: count 1). An RTS may name
// one of the sender's notify slots (Engine's notify region in the job segment): a receiver that
// copies on its resident kernel has the kernel store `notify_token` there when the copy is done,
// which completes the send without a FIN. kNoNotify: the receiver sends a FIN.
struct IpcOffer {
  IpcExport ipc;
  uint64_t count;
  uint64_t block;
  uint64_t stride;
  uint32_t notify_slot;   // kNoNotify, or the slot among the sender's
  uint32_t notify_token;  // never 0
};
static_assert(std::is_trivially_copyable<IpcOffer>::value, "copied into shared memory");
static_assert(sizeof(MsgHeader) == 64, "MsgHeader fills a cell's header line");

}  // namespace mpigpu::transport

// The transport's message header: the core fields every message has (type, envelope, sizes, the
// channel's order number) and a body whose meaning belongs to the message's owner. The core owns
// eager messages and the RTS (body: RtsBody, the sender's buffer); every other message is a
// back-end's control message (type kCtl, `lmt` names the back-end, `op` its message), whose body
// and payload only that back-end reads (its *_wire.h).
//
// A channel carries a header and a payload per message (transport/core/channel.h); how it frames
// them is its own business (the shared-memory channel packs eager messages into a compact form).
// A channel delivers a message only after the sender's writes to it are published (its own
// release/acquire pairs), so the receiver reads plain fields here: no atomics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "memcopy/memloc.h"

namespace mpigpu::transport {

enum class MsgType : uint8_t {
  kEager = 1,  // payload: the packed message
  kRts = 2,    // rendezvous request: body RtsBody; payload: the offer of back-end `lmt`, if any
  kCtl = 3,    // a back-end's control message: `lmt` says whose, `op` which
};

// Back-end ids on the wire (LmtCaps::wire_id): fixed per back-end, so that ranks agree on them
// whatever their configuration; a message for a back-end a rank does not run is refused.
constexpr uint8_t kNoLmt = 0;

// MsgHeader::flags: bit 7 is the channel's; bits 0-6 belong to the message's owner.
constexpr uint8_t kFlagChannel = 0x80;

struct MsgHeader {
  MsgType type;
  uint8_t lmt;       // kRts: the back-end whose offer is the payload (kNoLmt: none); kCtl: owner
  uint8_t op;        // kCtl: the owner's message type
  uint8_t flags;     // see above
  int32_t src;       // sending rank
  int32_t tag;
  int32_t context;   // communicator context id
  uint32_t seq;      // the channel's order number (channels that need one)
  uint32_t reserved; // zero when delivered (a channel may use it on its own wire)
  uint64_t bytes;    // eager / RTS: packed message size; kCtl: the owner's
  uint64_t sreq;     // the sender's request id (RTS; echoed by back-ends that answer it)
  unsigned char body[24];  // RTS: RtsBody; kCtl: the owner's
};
static_assert(std::is_trivially_copyable<MsgHeader>::value, "copied into shared memory");
static_assert(sizeof(MsgHeader) == 64, "MsgHeader fills a cell's header line");

// Reads and writes a body as the owner's struct (memcpy: no aliasing, no alignment needs).
template <typename T>
T BodyOf(const MsgHeader& h) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= sizeof(h.body), "fits");
  T t;
  std::memcpy(&t, h.body, sizeof t);
  return t;
}
template <typename T>
void SetBody(MsgHeader* h, const T& t) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= sizeof(h->body), "fits");
  std::memcpy(h->body, &t, sizeof t);
}

// The RTS's body: the sender's buffer as the receiver's back-ends need to judge it.
struct RtsBody {
  uint64_t addr;        // the buffer's address in the sender (CMA reads it)
  MemLoc loc;           // where it lives
  uint32_t block;       // its layout's block (0: contiguous)
  uint8_t contiguous;   // one run of bytes
  uint8_t pad[7];
};
static_assert(sizeof(RtsBody) <= sizeof(MsgHeader::body), "fits the body");

// The largest payload of a control message or an RTS offer (an IPC handle and its shape).
constexpr size_t kCtlPayloadMax = 256;

}  // namespace mpigpu::transport

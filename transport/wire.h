// The transport's message header, carried in each cell's 64-byte `hdr` line (ringbuf/cell_queue.h).
//
// The sender writes the header and payload of a cell it allocated, then CellQueues::Enqueue
// publishes the whole cell (its release store pairs with Dequeue's acquire), so the receiver
// reads plain fields here: no atomics needed.
#pragma once

#include <cstdint>
#include <type_traits>

#include "memcopy/memloc.h"

namespace mpigpu::transport {

enum class MsgType : uint8_t {
  kEager = 1,  // payload in the cell
  kRts = 2,    // rendezvous request: size, location, address of the sender's buffer
  kCts = 3,    // receiver -> sender: the pair's ring is ready, unit size in `unit`
  kFin = 4,    // receiver -> sender: a single-copy (CMA) transfer read the sender's buffer
};

struct MsgHeader {
  MsgType type;
  uint8_t contiguous;  // RTS: the sender's buffer is one run of bytes (CMA can read it)
  uint16_t reserved;
  int32_t src;         // sending rank
  int32_t tag;
  int32_t context;     // communicator context id
  uint64_t bytes;      // eager / RTS: packed message size; CTS: bytes the ring will carry
  uint64_t sreq;       // the sender's request id (echoed in CTS and FIN)
  uint64_t addr;       // RTS: the sender's buffer address (CMA reads it)
  uint32_t unit;       // CTS: ring unit size
  uint32_t block;      // RTS: the sender's layout block (0: contiguous); CTS: the fill block
  MemLoc loc;          // RTS: where the sender's buffer lives
  uint32_t seq;        // number of this message in its pair's order (fastbox and queue alike)
  uint32_t pad[2];
};
static_assert(std::is_trivially_copyable<MsgHeader>::value, "copied into shared memory");
static_assert(sizeof(MsgHeader) == 64, "MsgHeader fills a cell's header line");

}  // namespace mpigpu::transport

// Fastboxes: per ordered pair of processes (sender -> receiver) a small ring of single-message
// slots for the smallest messages (Nemesis's fastbox, with Open MPI vader's ring of them). A
// message through a fastbox costs the two sides about one cache-line transfer: no atomic
// exchange on a shared tail, no cell to return, and no flag the receiver hands back per message.
// Larger messages, and small ones that find the ring full, go through the cell queues.
//
// Layout in a caller-given range (offsets only, so each process may map it elsewhere):
//   [0, 64)  FastboxesHeader
//   then nranks * nranks pair areas, pair (src, dst) at index src * nranks + dst, each
//     one FastboxAck line, then kSlots slots of `stride` bytes (8 + data bytes rounded up to 64).
// A slot's first line holds its stamp, its length and the first 56 bytes of the message, so a
// message that fits there (the caller's header and a short payload) reaches the receiver in
// one line.
//
// The pair's messages are numbered n = 0, 1, 2 ... in the order the sender publishes them;
// message n uses slot n % kSlots. One writer per field:
//   - Slot stamp, len, data: the sender. It writes len and data, then stores stamp = n + 1 with
//     release; that pairs with the receiver's acquire load in Peek (message n is there when its
//     slot's stamp is n + 1), so the receiver sees the whole message.
//   - Ack `consumed`: the receiver. After reading message n it stores consumed = n + 1 with
//     release; that pairs with the sender's acquire load in TryBegin, which reuses slot
//     n % kSlots for message n + kSlots only once consumed > n, so the receiver's reads are done.
//     The sender reads `consumed` only when its cached copy says the ring is full, so in a
//     steady exchange it seldom touches a line the receiver wrote.
// Counters wrap at 2^32; kSlots divides 2^32, so n % kSlots stays consistent across the wrap.
// Each process keeps its cursors (messages sent and acknowledged per destination, taken per
// source) in its own Fastboxes object: one sender and one receiver per pair.
// The header is written by Format, which publishes it last (PublishHeader, ringbuf/
// shared_header.h: a release store of magic); Attach's acquire load of magic (CheckHeader) pairs
// with it. Other processes attach only after the cell queues' publication, which follows the
// fastboxes' Format (transport/engine.cc), so Attach finds the header published and does not
// wait. Zero stamps and counters are every ring's empty state,
// and fresh shared memory is zero, so the rings themselves are never written before use: in a
// sparse segment a pair's pages get memory only when its sender calls PreparePair, before its
// first message through the ring (and the receiver looks at a ring only after that message told
// it to, so pairs that never talk cost nothing).
//
// Order: a fastbox message and a queue message from one sender can be seen in either order;
// the transport numbers every message of a pair to restore the order it was sent in.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "memcopy/status.h"
#include "ringbuf/shared_header.h"

namespace mpigpu {

// One slot: stamp, length, then the message's bytes (`data`, continuing past the struct).
struct alignas(64) Fastbox {
  std::atomic<uint32_t> stamp;  // n + 1 of the message in it; 0: never used
  uint32_t len;                 // bytes of data in use
  unsigned char data[56];       // the message's first bytes, opaque here
  static constexpr size_t kDataOffset = 8;
};
static_assert(std::is_standard_layout<Fastbox>::value, "shared layout");
static_assert(offsetof(Fastbox, stamp) == 0 && offsetof(Fastbox, len) == 4 &&
                  offsetof(Fastbox, data) == Fastbox::kDataOffset && sizeof(Fastbox) == 64,
              "stamp, length and the first 56 bytes of the message in one line");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared between processes");

// Written by the receiver only: messages of the pair it has read.
struct alignas(64) FastboxAck {
  std::atomic<uint32_t> consumed;
};
static_assert(std::is_standard_layout<FastboxAck>::value && sizeof(FastboxAck) == 64,
              "one line of its own: the receiver's writes do not disturb the slots");

struct alignas(64) FastboxesHeader {
  std::atomic<uint64_t> magic;  // Fastboxes::kMagic once the rest is written (PublishHeader)
  uint32_t version;             // Fastboxes::kVersion
  int32_t nranks;
  uint64_t data;      // data bytes per slot
  uint64_t stride;    // bytes from one slot to the next
  uint64_t boxes_offset;
  uint64_t total_bytes;
};
static_assert(std::is_standard_layout<FastboxesHeader>::value, "shared layout");
static_assert(sizeof(FastboxesHeader) == 64, "one cache line");
static_assert(HasSharedHeaderPrefix<FastboxesHeader>(), "magic and version as in shared_header.h");

class Fastboxes {
 public:
  static constexpr uint64_t kMagic = 0x5345584F42545346ull;  // "FSTBOXES"
  static constexpr uint32_t kVersion = 2;
  static constexpr SharedKind kKind{"fastboxes", kMagic, kVersion};
  static constexpr uint32_t kSlots = 4;  // per pair; a power of two (see the wrap above)
  static constexpr int kMaxRanks = 4096;
  static constexpr size_t kMaxData = size_t{1} << 20;
  static_assert((kSlots & (kSlots - 1)) == 0, "kSlots divides 2^32");

  // Bytes for nranks^2 rings of slots of `data` bytes; 0 when an argument is out of range.
  static size_t BytesFor(int nranks, size_t data);
  // Lays the rings out in [mem, mem + bytes) (64-aligned, zero-filled: all rings empty), for
  // process `self`. One process, before the range is shared; only the header is written.
  static Status Format(void* mem, size_t bytes, int nranks, size_t data, int self,
                       Fastboxes* out);
  // Opens rings another process formatted, for process `self`; checks the header against `bytes`.
  static Status Attach(void* mem, size_t bytes, int self, Fastboxes* out);

  bool valid() const { return base_ != nullptr; }
  size_t data() const { return data_; }  // message bytes one slot holds
  int nranks() const { return nranks_; }

  // Slot i of the pair src -> dst (layout checks).
  Fastbox* slot(int src, int dst, uint32_t i) const {
    return reinterpret_cast<Fastbox*>(pair(src, dst) + sizeof(FastboxAck) +
                                      static_cast<size_t>(i % kSlots) * stride_);
  }

  // Sender: gives the pages of the ring self -> dst memory now (MADV_POPULATE_WRITE), so that a
  // full /dev/shm is an error here (kNoMemory) instead of a SIGBUS at the first store. The
  // bytes already there are not changed (pages are shared with neighbouring pairs in use).
  Status PreparePair(int dst) const;

  // Sender (self -> dst): the next free slot, or null when the ring is full. The caller fills
  // len and data, then calls Publish.
  Fastbox* TryBegin(int dst) {
    const uint32_t n = sent_[dst];
    if (n - acked_[dst] >= kSlots) {
      acked_[dst] = ack(self_, dst)->consumed.load(std::memory_order_acquire);  // pairs with Release
      if (n - acked_[dst] >= kSlots) return nullptr;
    }
    return slot(self_, dst, n);
  }
  void Publish(int dst, Fastbox* b) {
    b->stamp.store(++sent_[dst], std::memory_order_release);  // -> Peek
  }
  // Receiver (src -> self): the next message from src if it has arrived, else null.
  Fastbox* Peek(int src) const {
    const uint32_t n = taken_[src];
    Fastbox* b = slot(src, self_, n);
    return b->stamp.load(std::memory_order_acquire) == n + 1 ? b : nullptr;  // pairs with Publish
  }
  // Receiver: done with the message Peek returned; its slot goes back to the sender.
  void Release(int src) {
    ack(src, self_)->consumed.store(++taken_[src], std::memory_order_release);  // -> TryBegin
  }

 private:
  char* pair(int src, int dst) const {
    return base_ + boxes_offset_ + (static_cast<size_t>(src) * nranks_ + dst) * pair_bytes_;
  }
  FastboxAck* ack(int src, int dst) const { return reinterpret_cast<FastboxAck*>(pair(src, dst)); }

  char* base_ = nullptr;
  int nranks_ = 0;
  int self_ = 0;
  size_t data_ = 0;
  size_t stride_ = 0;
  size_t pair_bytes_ = 0;
  size_t boxes_offset_ = 0;
  // This process's cursors, by peer rank (see the protocol above).
  std::vector<uint32_t> sent_;   // messages published to each destination
  std::vector<uint32_t> acked_;  // the destination's `consumed` as last read
  std::vector<uint32_t> taken_;  // messages read from each source
};

}  // namespace mpigpu

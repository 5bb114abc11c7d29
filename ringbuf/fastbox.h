// Fastboxes: one single-slot mailbox per ordered pair of processes (sender -> receiver), for the
// smallest messages (Nemesis's fastbox). A message through a fastbox costs the two sides a few
// cache-line transfers and no queue operation: no atomic exchange on a shared tail, no cell to
// return to the sender's free queue. Larger messages, and small ones that find the box full, go
// through the cell queues.
//
// Layout in a caller-given range (offsets only, so each process may map it elsewhere):
//   [0, 128)  FastboxesHeader (one line, then padding)
//   then nranks * nranks boxes, box (src, dst) at index src * nranks + dst, each
//   Fastbox::kPayloadOffset + payload bytes rounded up to 128.
//
// Protocol of one box, one writer per field at any time:
//   - full == 0: the box belongs to the sender. It writes hdr, len and payload, then stores
//     full = 1 with release; that pairs with the receiver's acquire load in Peek, so the
//     receiver sees the whole message.
//   - full == 1: the box belongs to the receiver. It reads the message, then stores full = 0
//     with release; that pairs with the sender's acquire load in TryBegin, so the sender
//     overwrites the box only after the receiver's reads are done.
// The header is written once by Format before the range is shown to other processes (the job
// segment's own publication covers it) and read-only afterwards.
//
// Order: a fastbox message and a queue message from one sender can be seen in either order;
// the transport numbers every message of a pair to restore the order it was sent in.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "memcopy/status.h"

namespace mpigpu {

// One box: the header line, then the flag and length, then the payload, all in one 128-byte
// aligned block for small messages, so the receiver's miss on the flag brings the header along
// (the adjacent-line prefetcher works on 128-byte pairs) and a short payload sits beside the flag.
struct alignas(128) Fastbox {
  unsigned char hdr[64];       // the transport's message header, opaque here
  std::atomic<uint32_t> full;  // 0: sender's turn; 1: receiver's turn
  uint32_t len;                // payload bytes in use
  // `payload` bytes follow at kPayloadOffset.
  static constexpr size_t kPayloadOffset = 72;
  unsigned char* payload() { return reinterpret_cast<unsigned char*>(this) + kPayloadOffset; }
  const unsigned char* payload() const {
    return reinterpret_cast<const unsigned char*>(this) + kPayloadOffset;
  }
};
static_assert(std::is_standard_layout<Fastbox>::value, "shared layout");
static_assert(offsetof(Fastbox, full) == 64 && offsetof(Fastbox, len) == 68 &&
                  sizeof(Fastbox) == 128,
              "header line, then flag, length and payload in the next line");
static_assert(std::atomic<uint32_t>::is_always_lock_free, "shared between processes");

struct alignas(64) FastboxesHeader {
  uint64_t magic;
  uint32_t version;
  int32_t nranks;
  uint64_t payload;   // payload bytes per box
  uint64_t stride;    // bytes from one box to the next
  uint64_t boxes_offset;
  uint64_t total_bytes;
};
static_assert(std::is_standard_layout<FastboxesHeader>::value, "shared layout");
static_assert(sizeof(FastboxesHeader) == 64, "one cache line");

class Fastboxes {
 public:
  static constexpr uint64_t kMagic = 0x5345584F42545346ull;  // "FSTBOXES"
  static constexpr uint32_t kVersion = 1;
  static constexpr int kMaxRanks = 4096;
  static constexpr size_t kMaxPayload = size_t{1} << 20;

  // Bytes for nranks^2 boxes of `payload` bytes; 0 when an argument is out of range.
  static size_t BytesFor(int nranks, size_t payload);
  // Lays the boxes out in [mem, mem + bytes) (128-aligned), all empty. One process, before the
  // range is shared.
  static Status Format(void* mem, size_t bytes, int nranks, size_t payload, Fastboxes* out);
  // Opens boxes another process formatted; checks the header against `bytes`.
  static Status Attach(void* mem, size_t bytes, Fastboxes* out);

  bool valid() const { return base_ != nullptr; }
  size_t payload() const { return payload_; }
  int nranks() const { return nranks_; }

  // The box of the pair src -> dst (both in [0, nranks)).
  Fastbox* box(int src, int dst) const {
    return reinterpret_cast<Fastbox*>(base_ + boxes_offset_ +
                                      (static_cast<size_t>(src) * nranks_ + dst) * stride_);
  }
  // Sender: the box src -> dst if it is empty (the caller fills it and calls Publish), else null.
  Fastbox* TryBegin(int src, int dst) const {
    Fastbox* b = box(src, dst);
    return b->full.load(std::memory_order_acquire) == 0 ? b : nullptr;  // pairs with Release
  }
  static void Publish(Fastbox* b) { b->full.store(1, std::memory_order_release); }  // -> Peek
  // Receiver: the box src -> dst if it holds a message, else null.
  Fastbox* Peek(int src, int dst) const {
    Fastbox* b = box(src, dst);
    return b->full.load(std::memory_order_acquire) != 0 ? b : nullptr;  // pairs with Publish
  }
  static void Release(Fastbox* b) { b->full.store(0, std::memory_order_release); }  // -> TryBegin

 private:
  char* base_ = nullptr;
  int nranks_ = 0;
  size_t payload_ = 0;
  size_t stride_ = 0;
  size_t boxes_offset_ = 0;
};

}  // namespace mpigpu

// LmtRing: the large-message (LMT) copy ring of one ordered pair of processes, sender -> receiver.
//
// It lives in a caller-given shared memory range (a piece of the job segment) and holds only
// offsets, so each process may map the range at a different address:
//
//   [0, 64)                 LmtRingHeader: magic, version, sizes, offsets (written once by Format)
//   [64, 64 + 64*max_units) one LmtUnitFlag per unit, each on its own cache line
//   [data_offset, +capacity) the data area; data_offset is a multiple of 4096 (it is pinned with
//                            cudaHostRegister when a GPU is used, and DMA likes whole pages)
//
// A transfer picks its unit size u (agreed in the rendezvous handshake; larger with GPU buffers).
// The data area is then cut into n = UnitsFor(u) = min(max_units, capacity / u) units; unit i is
// [i*u, (i+1)*u) of the data area and flag i tells whether it is full.
//
// Protocol, one writer per field:
//   - flag[i].len: 0 = empty (owned by the sender), > 0 = full, carrying len bytes (owned by the
//     receiver). The sender writes the unit's data, then publish(i, len): a release store that
//     pairs with the receiver's acquire load in unit_len(i), so the receiver sees the data.
//     The receiver copies the data out, then release_unit(i): a release store of 0 that pairs with
//     the sender's acquire load in unit_empty(i), so the sender overwrites the unit only after
//     the receiver's reads are done. Each store hands the unit to the other side, so the flag has
//     exactly one writer at any time: the side that owns the unit.
//   - header: written once by Format, which publishes it last (PublishHeader, ringbuf/
//     shared_header.h: a release store of magic, after the header fields and the cleared flags);
//     Attach's acquire load of magic (CheckHeader) pairs with it. Read-only afterwards. The peer
//     attaches only after the message that names the ring (the receiver formats it before its
//     CTS), so Attach finds the header published and does not wait.
// Transfers follow each other in one order on both sides. Each walks the units in order from a
// first unit, wrapping at n. A transfer with the unit size of the one before it continues at the
// unit after that one's last (chained): the sender may fill the units the receiver frees while
// the previous transfer still drains, since a full flag can only belong to that transfer. A
// transfer with another unit size starts at unit 0 once every flag is 0 (AllEmpty()): the units
// of the two sizes overlap.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "memcopy/status.h"
#include "ringbuf/shared_header.h"

namespace mpigpu {

struct alignas(64) LmtRingHeader {
  std::atomic<uint64_t> magic;  // LmtRing::kMagic once the rest is written (PublishHeader)
  uint32_t version;             // LmtRing::kVersion
  uint32_t reserved;
  uint64_t capacity;      // bytes in the data area
  uint64_t max_units;     // flag words
  uint64_t flags_offset;  // from the start of the range
  uint64_t data_offset;   // from the start of the range; multiple of 4096
  uint64_t total_bytes;   // BytesFor(capacity, max_units)
};
static_assert(std::is_standard_layout<LmtRingHeader>::value, "shared layout");
static_assert(sizeof(LmtRingHeader) == 64, "LmtRingHeader is one cache line");
static_assert(HasSharedHeaderPrefix<LmtRingHeader>(), "magic and version as in shared_header.h");

// A unit's length word; 0 = empty. Its own cache line so the two sides do not false-share.
struct alignas(64) LmtUnitFlag {
  std::atomic<uint64_t> len;
};
static_assert(std::is_standard_layout<LmtUnitFlag>::value, "shared layout");
static_assert(sizeof(LmtUnitFlag) == 64 && alignof(LmtUnitFlag) == 64, "one flag per cache line");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "flags are shared between processes");

// A process-local handle onto a ring in shared memory (the handle itself is not shared).
class LmtRing {
 public:
  static constexpr uint64_t kMagic = 0x474E49522D544D4Cull;  // "LMT-RING"
  static constexpr uint32_t kVersion = 1;
  static constexpr SharedKind kKind{"LMT ring", kMagic, kVersion};
  static constexpr size_t kDataAlign = 4096;
  // Limits that keep every offset computation far from overflow.
  static constexpr size_t kMaxCapacity = size_t{1} << 44;
  static constexpr size_t kMaxUnits = size_t{1} << 16;

  LmtRing() = default;

  // Bytes a ring needs (a multiple of 4096); 0 when an argument is 0 or over the limits above.
  static size_t BytesFor(size_t capacity, size_t max_units);
  // Lays a ring out in [mem, mem + bytes): writes the header, clears the flags. mem must be
  // 4096-aligned and bytes >= BytesFor(capacity, max_units).
  static Status Format(void* mem, size_t bytes, size_t capacity, size_t max_units, LmtRing* out);
  // Opens a ring another process formatted (magic, version and sizes checked against `bytes`).
  static Status Attach(void* mem, size_t bytes, LmtRing* out);

  bool valid() const { return base_ != nullptr; }
  size_t capacity() const { return capacity_; }
  size_t max_units() const { return max_units_; }
  // The data area (for cudaHostRegister); capacity() bytes, 4096-aligned.
  char* data() const { return data_; }
  // Units a transfer with this unit size uses: min(max_units, capacity / unit_bytes); 0 when
  // unit_bytes is 0 or larger than the capacity.
  size_t UnitsFor(size_t unit_bytes) const;
  // Start of unit i for unit size unit_bytes (i < UnitsFor(unit_bytes)).
  char* unit_data(size_t i, size_t unit_bytes) const { return data_ + i * unit_bytes; }

  // Producer (sender) side.
  bool unit_empty(size_t i) const {
    return flags_[i].len.load(std::memory_order_acquire) == 0;  // pairs with release_unit
  }
  void publish(size_t i, uint64_t len) {  // len > 0; the unit's data is written
    flags_[i].len.store(len, std::memory_order_release);  // pairs with unit_len's acquire
  }
  // True when every flag is 0: the previous transfer is fully drained.
  bool AllEmpty() const;

  // Consumer (receiver) side.
  uint64_t unit_len(size_t i) const {  // 0 = empty
    return flags_[i].len.load(std::memory_order_acquire);  // pairs with publish
  }
  void release_unit(size_t i) {  // the unit's data has been read
    flags_[i].len.store(0, std::memory_order_release);  // pairs with unit_empty's acquire
  }

 private:
  char* base_ = nullptr;
  LmtUnitFlag* flags_ = nullptr;
  char* data_ = nullptr;
  size_t capacity_ = 0;
  size_t max_units_ = 0;
};

}  // namespace mpigpu

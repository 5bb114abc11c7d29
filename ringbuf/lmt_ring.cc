#include "ringbuf/lmt_ring.h"

#include <cstring>
#include <new>
#include <string>

namespace mpigpu {
namespace {

constexpr size_t RoundUp(size_t x, size_t a) { return (x + a - 1) / a * a; }

// Offset of the data area: header and flags, rounded up to a page.
size_t DataOffset(size_t max_units) {
  return RoundUp(sizeof(LmtRingHeader) + max_units * sizeof(LmtUnitFlag), LmtRing::kDataAlign);
}

Status CheckRange(void* mem, size_t bytes, size_t need) {
  if (mem == nullptr) return Status(Err::kInvalidArg, "LMT ring: null memory range");
  if (reinterpret_cast<uintptr_t>(mem) % LmtRing::kDataAlign != 0)
    return Status(Err::kInvalidArg, "LMT ring: memory range is not 4096-aligned");
  if (bytes < need)
    return Status(Err::kInvalidArg, "LMT ring: range of " + std::to_string(bytes) +
                                        " bytes, needs " + std::to_string(need));
  return Status::Ok();
}

}  // namespace

size_t LmtRing::BytesFor(size_t capacity, size_t max_units) {
  if (capacity == 0 || max_units == 0 || capacity > kMaxCapacity || max_units > kMaxUnits)
    return 0;
  return DataOffset(max_units) + RoundUp(capacity, kDataAlign);
}

Status LmtRing::Format(void* mem, size_t bytes, size_t capacity, size_t max_units, LmtRing* out) {
  if (out == nullptr) return Status(Err::kInvalidArg, "LMT ring: null output");
  size_t need = BytesFor(capacity, max_units);
  if (need == 0)
    return Status(Err::kInvalidArg, "LMT ring: capacity " + std::to_string(capacity) +
                                        " / max_units " + std::to_string(max_units) +
                                        " is zero or over the limits");
  MPIGPU_RETURN_IF_ERROR(CheckRange(mem, bytes, need));
  auto* base = static_cast<char*>(mem);
  auto* h = new (base) LmtRingHeader{};  // magic 0: not published while being written
  h->capacity = capacity;
  h->max_units = max_units;
  h->flags_offset = sizeof(LmtRingHeader);
  h->data_offset = DataOffset(max_units);
  h->total_bytes = need;
  auto* flags = reinterpret_cast<LmtUnitFlag*>(base + h->flags_offset);
  for (size_t i = 0; i < max_units; ++i) {
    new (&flags[i]) LmtUnitFlag{};
    flags[i].len.store(0, std::memory_order_relaxed);  // published by the release below
  }
  PublishHeader(h, kKind);  // pairs with Attach's CheckHeader
  return Attach(mem, bytes, out);
}

Status LmtRing::Attach(void* mem, size_t bytes, LmtRing* out) {
  if (out == nullptr) return Status(Err::kInvalidArg, "LMT ring: null output");
  MPIGPU_RETURN_IF_ERROR(CheckRange(mem, bytes, sizeof(LmtRingHeader)));
  auto* base = static_cast<char*>(mem);
  const auto* h = reinterpret_cast<const LmtRingHeader*>(base);
  MPIGPU_RETURN_IF_ERROR(CheckHeader(h, kKind));  // pairs with Format's PublishHeader
  // Recompute the layout from the sizes: a damaged header cannot point outside the range.
  const size_t need = BytesFor(h->capacity, h->max_units);
  MPIGPU_RETURN_IF_ERROR(CheckHeaderSizes(
      kKind, "",
      need != 0 && h->total_bytes == need && h->flags_offset == sizeof(LmtRingHeader) &&
          h->data_offset == DataOffset(h->max_units),
      "capacity " + std::to_string(h->capacity) + " bytes, " + std::to_string(h->max_units) +
          " units, total " + std::to_string(h->total_bytes) + " bytes",
      need, bytes));
  LmtRing r;
  r.base_ = base;
  r.flags_ = reinterpret_cast<LmtUnitFlag*>(base + h->flags_offset);
  r.data_ = base + h->data_offset;
  r.capacity_ = h->capacity;
  r.max_units_ = h->max_units;
  *out = r;
  return Status::Ok();
}

size_t LmtRing::UnitsFor(size_t unit_bytes) const {
  if (unit_bytes == 0 || unit_bytes > capacity_) return 0;
  size_t n = capacity_ / unit_bytes;
  return n < max_units_ ? n : max_units_;
}

bool LmtRing::AllEmpty() const {
  for (size_t i = 0; i < max_units_; ++i)
    if (!unit_empty(i)) return false;
  return true;
}

}  // namespace mpigpu

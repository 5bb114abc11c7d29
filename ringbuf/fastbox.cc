#include "ringbuf/fastbox.h"

#include <cstring>
#include <new>
#include <string>

#include "ringbuf/populate.h"

namespace mpigpu {
namespace {

size_t StrideFor(size_t data) { return (Fastbox::kDataOffset + data + 63) / 64 * 64; }
size_t PairBytesFor(size_t data) { return sizeof(FastboxAck) + Fastboxes::kSlots * StrideFor(data); }
constexpr size_t kBoxesOffset = sizeof(FastboxesHeader);

}  // namespace

size_t Fastboxes::BytesFor(int nranks, size_t data) {
  if (nranks < 1 || nranks > kMaxRanks || data == 0 || data > kMaxData) return 0;
  return kBoxesOffset + static_cast<size_t>(nranks) * nranks * PairBytesFor(data);
}

Status Fastboxes::Format(void* mem, size_t bytes, int nranks, size_t data, int self,
                         Fastboxes* out) {
  const size_t need = BytesFor(nranks, data);
  if (need == 0)
    return Status(Err::kInvalidArg, "fastboxes: " + std::to_string(nranks) + " ranks with " +
                                        std::to_string(data) + "-byte slots is out of range");
  if (mem == nullptr || reinterpret_cast<uintptr_t>(mem) % 64 != 0 || bytes < need)
    return Status(Err::kInvalidArg, "fastboxes: range must be 64-aligned and hold " +
                                        std::to_string(need) + " bytes");
  auto* h = new (mem) FastboxesHeader();  // magic 0: not published while being written
  h->nranks = nranks;
  h->data = data;
  h->stride = StrideFor(data);
  h->boxes_offset = kBoxesOffset;
  h->total_bytes = need;
  PublishHeader(h, kKind);  // pairs with Attach's CheckHeader
  return Attach(mem, bytes, self, out);
}

Status Fastboxes::PreparePair(int dst) const {
  if (dst < 0 || dst >= nranks_)
    return Status(Err::kInvalidArg, "fastboxes: no rank " + std::to_string(dst));
  return PopulateForWrite(pair(self_, dst), pair_bytes_, "the fastbox to rank " + std::to_string(dst));
}

Status Fastboxes::Attach(void* mem, size_t bytes, int self, Fastboxes* out) {
  if (mem == nullptr || bytes < sizeof(FastboxesHeader))
    return Status(Err::kInvalidArg, "fastboxes: range too small for the header");
  const auto* h = static_cast<const FastboxesHeader*>(mem);
  MPIGPU_RETURN_IF_ERROR(CheckHeader(h, kKind));  // pairs with Format's PublishHeader
  MPIGPU_RETURN_IF_ERROR(CheckHeaderSizes(
      kKind, "",
      h->total_bytes != 0 && BytesFor(h->nranks, h->data) == h->total_bytes &&
          h->stride == StrideFor(h->data) && h->boxes_offset == kBoxesOffset,
      std::to_string(h->nranks) + " ranks, " + std::to_string(h->data) + "-byte slots, total " +
          std::to_string(h->total_bytes) + " bytes",
      h->total_bytes, bytes));
  if (self < 0 || self >= h->nranks)
    return Status(Err::kInvalidArg, "fastboxes: process " + std::to_string(self) +
                                        " is not in [0, " + std::to_string(h->nranks) + ")");
  out->base_ = static_cast<char*>(mem);
  out->nranks_ = h->nranks;
  out->self_ = self;
  out->data_ = h->data;
  out->stride_ = h->stride;
  out->pair_bytes_ = PairBytesFor(h->data);
  out->boxes_offset_ = h->boxes_offset;
  out->sent_.assign(h->nranks, 0);
  out->acked_.assign(h->nranks, 0);
  out->taken_.assign(h->nranks, 0);
  return Status::Ok();
}

}  // namespace mpigpu

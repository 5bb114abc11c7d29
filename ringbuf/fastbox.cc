#include "ringbuf/fastbox.h"

#include <cstring>
#include <new>
#include <string>

namespace mpigpu {
namespace {

size_t StrideFor(size_t payload) { return (Fastbox::kPayloadOffset + payload + 127) / 128 * 128; }
constexpr size_t kBoxesOffset = 128;  // the header line, padded to a box boundary

}  // namespace

size_t Fastboxes::BytesFor(int nranks, size_t payload) {
  if (nranks < 1 || nranks > kMaxRanks || payload == 0 || payload > kMaxPayload) return 0;
  return kBoxesOffset + static_cast<size_t>(nranks) * nranks * StrideFor(payload);
}

Status Fastboxes::Format(void* mem, size_t bytes, int nranks, size_t payload, Fastboxes* out) {
  const size_t need = BytesFor(nranks, payload);
  if (need == 0)
    return Status(Err::kInvalidArg, "fastboxes: " + std::to_string(nranks) + " ranks with " +
                                        std::to_string(payload) + "-byte boxes is out of range");
  if (mem == nullptr || reinterpret_cast<uintptr_t>(mem) % 128 != 0 || bytes < need)
    return Status(Err::kInvalidArg, "fastboxes: range must be 128-aligned and hold " +
                                        std::to_string(need) + " bytes");
  auto* h = new (mem) FastboxesHeader();
  h->magic = kMagic;
  h->version = kVersion;
  h->nranks = nranks;
  h->payload = payload;
  h->stride = StrideFor(payload);
  h->boxes_offset = kBoxesOffset;
  h->total_bytes = need;
  char* base = static_cast<char*>(mem);
  for (size_t i = 0; i < static_cast<size_t>(nranks) * nranks; ++i) {
    auto* b = new (base + h->boxes_offset + i * h->stride) Fastbox();
    b->full.store(0, std::memory_order_relaxed);  // published with the segment
    b->len = 0;
  }
  return Attach(mem, bytes, out);
}

Status Fastboxes::Attach(void* mem, size_t bytes, Fastboxes* out) {
  if (mem == nullptr || bytes < sizeof(FastboxesHeader))
    return Status(Err::kInvalidArg, "fastboxes: range too small for the header");
  const auto* h = static_cast<const FastboxesHeader*>(mem);
  if (h->magic != kMagic || h->version != kVersion)
    return Status(Err::kInvalidArg, "fastboxes: not formatted by this version of mpigpu");
  if (BytesFor(h->nranks, h->payload) != h->total_bytes || h->total_bytes > bytes ||
      h->stride != StrideFor(h->payload) || h->boxes_offset != kBoxesOffset)
    return Status(Err::kInvalidArg, "fastboxes: header does not match its range");
  out->base_ = static_cast<char*>(mem);
  out->nranks_ = h->nranks;
  out->payload_ = h->payload;
  out->stride_ = h->stride;
  out->boxes_offset_ = h->boxes_offset;
  return Status::Ok();
}

}  // namespace mpigpu

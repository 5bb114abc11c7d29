// The header that opens each structure in shared memory, published and checked one way.
//
// The job segment (SegmentHeader), the cell queues (CellQueuesHeader), the fastboxes
// (FastboxesHeader) and each LMT ring (LmtRingHeader) begin with
//   [0, 8)   std::atomic<uint64_t> magic   0 until the header is published, then the kind's magic
//   [8, 12)  uint32_t version              the kind's layout version
// and go on with fields of their own (sizes and offsets, read-only once published).
//
// One writer per header (the structure's Create or Format) writes every other field, and
// whatever else the magic is to publish, then calls PublishHeader: it stores the version, then
// the magic with a release store. A reader's acquire load of the magic (HeaderPublished,
// CheckHeader) that finds the kind's magic pairs with that store, so everything written before
// it is visible. Readers that may come first poll HeaderPublished (the segment, the cell
// queues); readers that come only after another handshake told them the structure exists (the
// fastboxes, an LMT ring) call CheckHeader once. Either way CheckHeader then checks the magic
// and version, and CheckHeaderSizes the header's sizes against the range, each failure as
// kInvalidArg "<kind>[ <name>]: <what is wrong>".
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "memcopy/status.h"

namespace mpigpu {

// One kind of shared structure: its name in messages, its magic and its layout version.
struct SharedKind {
  const char* name;
  uint64_t magic;
  uint32_t version;
};

// Whether Header starts with the two fields above, as the functions below need.
template <class Header>
constexpr bool HasSharedHeaderPrefix() {
  return std::is_standard_layout<Header>::value &&
         std::is_same<decltype(Header::magic), std::atomic<uint64_t>>::value &&
         std::is_same<decltype(Header::version), uint32_t>::value &&
         offsetof(Header, magic) == 0 && offsetof(Header, version) == 8 &&
         std::atomic<uint64_t>::is_always_lock_free;
}

// Writer, last: the version, then the magic (release; pairs with the readers' acquire loads).
template <class Header>
inline void PublishHeader(Header* h, const SharedKind& kind) {
  static_assert(HasSharedHeaderPrefix<Header>(), "magic at 0, version at 8");
  h->version = kind.version;
  h->magic.store(kind.magic, std::memory_order_release);
}

// Reader: whether the writer has published (acquire; pairs with PublishHeader).
template <class Header>
inline bool HeaderPublished(const Header* h, const SharedKind& kind) {
  static_assert(HasSharedHeaderPrefix<Header>(), "magic at 0, version at 8");
  return h->magic.load(std::memory_order_acquire) == kind.magic;
}

// The failure of a header check: kInvalidArg "<kind>[ <where>]: <why>".
Status SharedHeaderError(const SharedKind& kind, const std::string& where, const std::string& why);
// Magic and version as read from a header, checked against `kind`.
Status CheckMagicAndVersion(const SharedKind& kind, const std::string& where, uint64_t magic,
                            uint32_t version);

// Reader: the header is published (acquire, as HeaderPublished) by this kind's writer with this
// build's layout version. `where` names the instance in messages ("" for none).
template <class Header>
inline Status CheckHeader(const Header* h, const SharedKind& kind, const std::string& where = "") {
  static_assert(HasSharedHeaderPrefix<Header>(), "magic at 0, version at 8");
  const uint64_t magic = h->magic.load(std::memory_order_acquire);  // pairs with PublishHeader
  return CheckMagicAndVersion(kind, where, magic, h->version);
}

// Reader, after CheckHeader: `consistent` says whether the header's fields agree with what this
// build computes from its sizes (so a damaged header cannot point outside the range; `fields`
// describes them for the message), and the structure's `need` bytes must fit in the range's
// `bytes`.
Status CheckHeaderSizes(const SharedKind& kind, const std::string& where, bool consistent,
                        const std::string& fields, uint64_t need, uint64_t bytes);

}  // namespace mpigpu

// ShmSegment: a named POSIX shared memory object (Boost.Interprocess) with a small header, shared
// by the processes of one job on one node. The job segment (cell queues) is one; each per-pair
// LMT ring may live in its own (RingSegmentName). JobSegment is the same type.
//
// Layout of the object /dev/shm/<name>:
//   [0, 4096)              SegmentHeader (below), rest of the page unused
//   [4096, 4096 + payload) the payload, page-aligned in every process's mapping
//
// Life cycle:
//   - Create: one process (the job's local rank 0) creates the name exclusively with mode 0600,
//     after checking that /dev/shm has room; the pages are allocated at once (posix_fallocate),
//     so a full /dev/shm is an error here, never a SIGBUS at a later first touch (except a
//     sparse tail, which its users allocate piece by piece, with the same care). The creator
//     counts as the first of `nranks` attached processes.
//   - Attach: the others open the name (waiting, bounded, for it to appear and be published),
//     check the header and count themselves in `attached`.
//   - Unlink once AllAttached() (or the launcher removes the name when the job ends); mappings
//     stay valid after the name is gone. A segment whose creator died is stale:
//     FindStaleSegments / RemoveStaleSegments clean up after crashed jobs.
//
// Header fields, one writer each:
//   - magic, version: the creator publishes the header last (PublishHeader, ringbuf/
//     shared_header.h: a release store of magic); an attacher's acquire load that reads kMagic
//     (HeaderPublished) pairs with it, so the other header fields are visible to the attacher.
//     The payload is not covered: each structure in it publishes its own header the same way
//     (the cell queues, the fastboxes, an LMT ring; written after Create returned).
//   - header_bytes, payload_bytes, nranks, creator_pid: creator, before magic; read-only
//     afterwards.
//   - attached: fetch_add by each attacher (acq_rel); starts at 1 (the creator).
// Invariant once magic == kMagic: 1 <= attached <= nranks, and the object holds at least
// header_bytes + payload_bytes bytes.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <boost/interprocess/mapped_region.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "memcopy/status.h"
#include "ringbuf/shared_header.h"

namespace mpigpu {

struct alignas(64) SegmentHeader {
  std::atomic<uint64_t> magic;  // 0 until the creator published the header
  uint32_t version;             // ShmSegment::kVersion
  uint32_t header_bytes;        // offset of the payload: ShmSegment::kHeaderBytes
  uint64_t payload_bytes;       // as asked for in Create
  int32_t nranks;               // processes expected to attach, the creator included
  int32_t creator_pid;          // for stale segment detection
  alignas(64) std::atomic<int32_t> attached;  // own line: every attacher writes it
};
static_assert(std::is_standard_layout<SegmentHeader>::value, "shared layout");
static_assert(sizeof(SegmentHeader) == 128 && alignof(SegmentHeader) == 64, "two cache lines");
static_assert(HasSharedHeaderPrefix<SegmentHeader>(), "magic and version as in shared_header.h");
static_assert(offsetof(SegmentHeader, magic) == 0 && offsetof(SegmentHeader, creator_pid) == 28,
              "stale detection reads magic and creator_pid at these offsets");
static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<int32_t>::is_always_lock_free,
              "atomics shared between processes must be lock-free");

class ShmSegment {
 public:
  static constexpr uint64_t kMagic = 0x544E454D47455355ull;  // "USEGMENT"
  static constexpr uint32_t kVersion = 1;
  static constexpr SharedKind kKind{"segment", kMagic, kVersion};
  static constexpr size_t kHeaderBytes = 4096;
  static constexpr size_t kMaxPayloadBytes = size_t{1} << 44;
  static constexpr int kMaxRanks = 1 << 16;
  static constexpr size_t kMaxNameLength = 200;

  ShmSegment() = default;
  ~ShmSegment();
  ShmSegment(ShmSegment&& other) noexcept { *this = std::move(other); }
  ShmSegment& operator=(ShmSegment&& other) noexcept;

  // Creates `name` exclusively (mode 0600) with `payload_bytes` of payload for `nranks`
  // processes. numa_node >= 0 places the pages on that node (BindToNumaNode before allocation).
  // Errors: kInvalidArg (bad name, payload_bytes 0 or > kMaxPayloadBytes, nranks outside
  // [1, kMaxRanks], name already exists), kNoMemory (/dev/shm too small or full), kSystem.
  // On error nothing is left behind.
  // The last `sparse_tail` bytes of the payload get no memory now (no posix_fallocate, not
  // counted against /dev/shm's free space): their users give their pages memory when they first
  // need them (Fastboxes::PreparePair), so structures that are mostly never used cost nothing.
  static Status Create(const std::string& name, size_t payload_bytes, int nranks,
                       ShmSegment* out, int numa_node = -1, size_t sparse_tail = 0);
  // Opens `name` made by Create in another process, waiting up to timeout_ms for it to exist and
  // be published. kTimeout when it does not; kInvalidArg when its header does not match this
  // build (magic, version, sizes) or all nranks processes have attached already; kSystem
  // (EPERM) when the object belongs to another user or others may open it (never ours to use). With
  // `creator_alive` (optional), the wait ends as soon as it returns false (kPeerFailed): the
  // process that was to create the segment died.
  static Status Attach(const std::string& name, ShmSegment* out, int timeout_ms,
                       const std::function<bool()>& creator_alive = nullptr);

  // Removes the name; this mapping (and every other process's) stays valid.
  Status Unlink();
  // Removes a segment by name (e.g. the launcher after a job). kInvalidArg if there is none.
  static Status Remove(const std::string& name);

  bool valid() const { return header_ != nullptr; }
  // True once all nranks processes have attached (acquire: pairs with the attachers' fetch_add).
  bool AllAttached() const;
  int attached() const { return header_->attached.load(std::memory_order_acquire); }
  int nranks() const { return header_->nranks; }
  void* payload() const { return reinterpret_cast<char*>(header_) + kHeaderBytes; }
  size_t payload_bytes() const { return header_->payload_bytes; }
  pid_t creator_pid() const { return header_->creator_pid; }
  const std::string& name() const { return name_; }

 private:
  // Where PopulateForWrite falls back (ringbuf/populate.h), the mapping's file is registered
  // with it (a dup of the object's fd) until the mapping goes.
  void RegisterFileForPopulate(int fd);

  boost::interprocess::mapped_region region_;
  SegmentHeader* header_ = nullptr;
  std::string name_;
  bool file_registered_ = false;
};

// The job's segment: the name used in the design and the task list.
using JobSegment = ShmSegment;

// "mpigpu-<uid>-<jobid>" (uid = getuid()).
std::string SegmentName(const std::string& jobid);
// "mpigpu-<uid>-<jobid>-ring-<src>-<dst>-<token>": the LMT ring of the pair src -> dst. The
// token (16 hex digits, random, made by the ring's creator and handed to its peer inside the
// job) keeps the name unguessable: the job segment's name is visible in /dev/shm while a job
// starts, and a name derived from it alone could be created first by another local user.
std::string RingSegmentName(const std::string& jobid, int src, int dst, uint64_t token);
// 64 random bits from the kernel (getrandom); kSystem if it has none to give.
Status RandomToken(uint64_t* token);
// A fresh job id for a job started without a launcher: 16 hex digits from /dev/urandom.
Status RandomJobId(std::string* jobid);

// Names of this user's segments (mpigpu-<uid>-*) in /dev/shm whose creator process is gone (or a
// zombie: !ProcessAlive), or that were never published and are older than a minute (the creator
// died inside Create).
std::vector<std::string> FindStaleSegments();
// Removes every FindStaleSegments() name; keeps the first error, removes the rest anyway.
Status RemoveStaleSegments();

}  // namespace mpigpu

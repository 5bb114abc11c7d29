// CellQueues: the Nemesis cell queues of a job, in a caller-given shared memory range.
//
// Every process (rank) owns cells_per_rank cells and two queues: its free queue (its own cells
// that are not in use) and its receive queue (cells sent to it). A sender takes a cell from its
// own free queue (Alloc), writes the message into it, and Enqueues it on the receiver's receive
// queue; the receiver Dequeues it, reads it, and Frees it back to the owner's free queue.
//
// Layout of the range (offsets from its start; nothing in it is a pointer, so each process may
// map it at a different address):
//   [0, 64)                    CellQueuesHeader: sizes and offsets, written once by Format
//   queues_offset              per rank r: QueuePair{free, recv}, each head and tail on its own
//                              cache line (128 bytes per queue)
//   cells_offset (64-aligned)  nranks * cells_per_rank cells of cell_stride bytes; the cells of
//                              rank r are indices [r * cells_per_rank, (r + 1) * cells_per_rank)
//   A cell: Cell (128 bytes: ringbuf's line + the transport's 64-byte hdr), then cell_payload
//   payload bytes, padded to 64.
//
// Queue algorithm (Nemesis, MPICH's MPID_nem_queue): a singly linked list through Cell::next,
// with head and tail offsets (0 = none; no cell sits at offset 0).
//   Enqueue (any number of producers, any process):
//     cell.next = 0 (relaxed); prev = tail.exchange(cell, acq_rel);
//     prev == 0 ? head.store(cell, release) : prev.next.store(cell, release).
//   Dequeue (one consumer, the queue's owner):
//     h = head.load(acquire); 0 -> empty (or a producer between its exchange and its head store).
//     n = h.next.load(acquire); n != 0 -> head = n, return h.
//     else h looks last: head = 0, then tail.compare_exchange(h -> 0, acq_rel). Success: h was
//     last, return it. Failure: a producer swapped the tail past h but has not linked h.next
//     yet: put head back to h and return nullptr (the next Dequeue finds the link); the
//     consumer never waits on a producer.
//
// Who writes what, and the release/acquire pairs:
//   - header: Format only, which publishes it last (PublishHeader, ringbuf/shared_header.h: a
//     release store of magic, after the header and every cell's place on its free queue);
//     Attach's acquire load of magic (HeaderPublished) pairs with it. Read-only afterwards.
//   - tail: producers (exchange, acq_rel) and the consumer (CAS to 0, acq_rel). A producer that
//     reads 0 from the exchange synchronises with the consumer's CAS, so the consumer's head = 0
//     store is ordered before that producer's head store.
//   - head: the consumer; also the one producer whose exchange returned 0 (the queue was empty,
//     so the consumer is not touching head). The producer's release store pairs with the
//     consumer's acquire load: the cell's contents written before Enqueue are visible after
//     Dequeue.
//   - cell.next: the producer that enqueues the cell (reset to 0), then the producer that
//     enqueues the following cell (release; pairs with the consumer's acquire load).
//   - cell.owner: Format only. cell.payload_len, cell.hdr, payload: whoever holds the cell (it
//     was Alloc'ed or Dequeue'd and not yet Enqueue'd or Freed); handed over by the queue.
// Invariants: every cell is on exactly one queue or held by exactly one process; tail == 0 iff
// the queue is empty or its consumer is taking the last cell; a cell goes back only to its
// owner's free queue, so a rank never holds more than cells_per_rank of its own cells.
//
// Threads: Enqueue and Free may run concurrently from any thread of any process. Alloc(r) and
// Dequeue(r) consume rank r's queues: one thread at a time per rank (the transport's progress
// engine serialises them).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "memcopy/status.h"
#include "ringbuf/shared_header.h"

namespace mpigpu {

struct alignas(64) Cell {
  // ringbuf's line.
  std::atomic<uint64_t> next;  // offset of the next cell on the same queue; 0 = none
  int32_t owner;               // rank whose free queue the cell belongs to (Format)
  uint32_t payload_len;        // bytes of payload in use; Alloc sets 0, the sender sets it
  // The transport's line: its message header, opaque to ringbuf.
  alignas(64) unsigned char hdr[64];

  // cell_payload bytes follow the struct.
  unsigned char* payload() { return reinterpret_cast<unsigned char*>(this + 1); }
  const unsigned char* payload() const { return reinterpret_cast<const unsigned char*>(this + 1); }
};
static_assert(std::is_standard_layout<Cell>::value, "shared layout");
static_assert(sizeof(Cell) == 128 && alignof(Cell) == 64, "Cell: two cache lines");
static_assert(offsetof(Cell, hdr) == 64, "hdr on its own cache line");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared atomics must be lock-free");

struct alignas(64) CellQueue {
  alignas(64) std::atomic<uint64_t> head;  // offset of the first cell; 0 = none
  alignas(64) std::atomic<uint64_t> tail;  // offset of the last cell; 0 = empty
};
static_assert(std::is_standard_layout<CellQueue>::value, "shared layout");
static_assert(sizeof(CellQueue) == 128 && offsetof(CellQueue, tail) == 64,
              "head and tail on their own cache lines");

struct CellQueuePair {
  CellQueue free_q;  // consumer: the owning rank (Alloc); producers: anyone (Free)
  CellQueue recv_q;  // consumer: the owning rank (Dequeue); producers: anyone (Enqueue)
};
static_assert(sizeof(CellQueuePair) == 256, "shared layout");

struct alignas(64) CellQueuesHeader {
  std::atomic<uint64_t> magic;  // CellQueues::kMagic once the rest is written (PublishHeader)
  uint32_t version;             // CellQueues::kVersion
  int32_t nranks;
  uint64_t cells_per_rank;
  uint64_t cell_payload;   // payload bytes per cell
  uint64_t cell_stride;    // sizeof(Cell) + cell_payload rounded up to 64
  uint64_t queues_offset;  // CellQueuePair[nranks]
  uint64_t cells_offset;
  uint64_t total_bytes;    // BytesFor(...)
};
static_assert(std::is_standard_layout<CellQueuesHeader>::value, "shared layout");
static_assert(sizeof(CellQueuesHeader) == 64, "CellQueuesHeader is one cache line");
static_assert(HasSharedHeaderPrefix<CellQueuesHeader>(), "magic and version as in shared_header.h");

// A process-local handle onto the queues (the handle itself is not shared).
class CellQueues {
 public:
  static constexpr uint64_t kMagic = 0x534C4C4543424D4Eull;  // "NMBCELLS"
  static constexpr uint32_t kVersion = 1;
  static constexpr SharedKind kKind{"cell queues", kMagic, kVersion};
  static constexpr int kMaxRanks = 1 << 16;
  static constexpr size_t kMaxCellsPerRank = size_t{1} << 20;
  static constexpr size_t kMaxCellPayload = size_t{1} << 30;

  CellQueues() = default;

  // Bytes the queues need; 0 when an argument is 0 or above the limits.
  static size_t BytesFor(int nranks, size_t cells_per_rank, size_t cell_payload);
  // Lays the queues out in [mem, mem + bytes) and puts every rank's cells on its free queue.
  // mem must be 64-aligned and bytes >= BytesFor(...). Run by one process (the creator) while no
  // other uses the range; Attach in the others then waits for it.
  static Status Format(void* mem, size_t bytes, int nranks, size_t cells_per_rank,
                       size_t cell_payload, CellQueues* out);
  // Opens queues Format laid out (possibly at another address, in another process); waits up to
  // timeout_ms for Format to publish them. kTimeout if it does not, kInvalidArg if the header
  // does not match this build or does not fit in `bytes`.
  static Status Attach(void* mem, size_t bytes, CellQueues* out, int timeout_ms = 0);

  bool valid() const { return base_ != nullptr; }
  int nranks() const { return nranks_; }
  size_t cells_per_rank() const { return cells_per_rank_; }
  size_t cell_payload() const { return cell_payload_; }

  // A free cell of my_rank (payload_len = 0), or nullptr when all are in use (or my_rank is out
  // of range). Consumer side of my_rank's free queue.
  Cell* Alloc(int my_rank);
  // Hands `cell` (held by the caller, filled) to dst_rank. dst_rank must be in [0, nranks) and
  // `cell` one of these queues' cells: asserted in debug builds; in release a bad call is logged
  // and ignored (the cell stays with the caller) rather than corrupting shared memory.
  void Enqueue(int dst_rank, Cell* cell);
  // The oldest cell sent to my_rank, or nullptr when there is none (right now).
  Cell* Dequeue(int my_rank);
  // Whether a cell sent to my_rank may be waiting: a hint for pollers that must not consume
  // (a relaxed load of the tail, which a producer's exchange sets before it links the cell).
  bool Pending(int my_rank) const {
    return queues_[my_rank].recv_q.tail.load(std::memory_order_relaxed) != 0;
  }
  // Returns `cell` to its owner's free queue; any process may call it. Same checks as Enqueue.
  void Free(Cell* cell);

  // True when `cell` is one of these queues' cells (start of a cell, inside the range).
  bool IsCell(const Cell* cell) const;

 private:
  Cell* CellAt(uint64_t off) const { return reinterpret_cast<Cell*>(base_ + off); }
  uint64_t OffsetOf(const Cell* cell) const {
    return static_cast<uint64_t>(reinterpret_cast<const char*>(cell) - base_);
  }
  void Push(CellQueue* q, Cell* cell);
  Cell* Pop(CellQueue* q);

  char* base_ = nullptr;
  CellQueuePair* queues_ = nullptr;
  int nranks_ = 0;
  size_t cells_per_rank_ = 0;
  size_t cell_payload_ = 0;
  size_t cell_stride_ = 0;
  size_t cells_offset_ = 0;
  size_t cells_end_ = 0;
};

}  // namespace mpigpu

#include "ringbuf/cell_queue.h"

#include <cassert>
#include <chrono>
#include <string>
#include <thread>

#include "memcopy/log.h"

namespace mpigpu {
namespace {

constexpr size_t kQueuesOffset = sizeof(CellQueuesHeader);

size_t StrideFor(size_t cell_payload) { return sizeof(Cell) + ((cell_payload + 63) & ~size_t{63}); }

bool ArgsInRange(int nranks, size_t cells_per_rank, size_t cell_payload) {
  return nranks >= 1 && nranks <= CellQueues::kMaxRanks && cells_per_rank >= 1 &&
         cells_per_rank <= CellQueues::kMaxCellsPerRank && cell_payload >= 1 &&
         cell_payload <= CellQueues::kMaxCellPayload;
}

size_t CellsOffset(int nranks) { return kQueuesOffset + nranks * sizeof(CellQueuePair); }

std::string Describe(int nranks, size_t cells_per_rank, size_t cell_payload) {
  return "nranks " + std::to_string(nranks) + ", cells_per_rank " +
         std::to_string(cells_per_rank) + ", cell_payload " + std::to_string(cell_payload);
}

}  // namespace

size_t CellQueues::BytesFor(int nranks, size_t cells_per_rank, size_t cell_payload) {
  if (!ArgsInRange(nranks, cells_per_rank, cell_payload)) return 0;
  size_t cells = 0, cell_bytes = 0, total = 0;
  if (__builtin_mul_overflow(static_cast<size_t>(nranks), cells_per_rank, &cells) ||
      __builtin_mul_overflow(cells, StrideFor(cell_payload), &cell_bytes) ||
      __builtin_add_overflow(cell_bytes, CellsOffset(nranks), &total)) {
    return 0;
  }
  return total;
}

Status CellQueues::Format(void* mem, size_t bytes, int nranks, size_t cells_per_rank,
                          size_t cell_payload, CellQueues* out) {
  if (mem == nullptr || out == nullptr) {
    return Status(Err::kInvalidArg, "CellQueues::Format: null memory or output");
  }
  if (reinterpret_cast<uintptr_t>(mem) % 64 != 0) {
    return Status(Err::kInvalidArg, "CellQueues::Format: memory is not 64-byte aligned");
  }
  const size_t need = BytesFor(nranks, cells_per_rank, cell_payload);
  if (need == 0) {
    return Status(Err::kInvalidArg, "CellQueues::Format: " +
                                        Describe(nranks, cells_per_rank, cell_payload) +
                                        " (limits: nranks 1.." + std::to_string(kMaxRanks) +
                                        ", cells 1.." + std::to_string(kMaxCellsPerRank) +
                                        ", payload 1.." + std::to_string(kMaxCellPayload) + ")");
  }
  if (bytes < need) {
    return Status(Err::kInvalidArg, "CellQueues::Format: " + std::to_string(bytes) +
                                        " bytes given, " +
                                        Describe(nranks, cells_per_rank, cell_payload) + " need " +
                                        std::to_string(need));
  }

  auto* h = static_cast<CellQueuesHeader*>(mem);
  h->magic.store(0, std::memory_order_relaxed);  // not published while being laid out
  h->nranks = nranks;
  h->cells_per_rank = cells_per_rank;
  h->cell_payload = cell_payload;
  h->cell_stride = StrideFor(cell_payload);
  h->queues_offset = kQueuesOffset;
  h->cells_offset = CellsOffset(nranks);
  h->total_bytes = need;

  CellQueues q;
  q.base_ = static_cast<char*>(mem);
  q.queues_ = reinterpret_cast<CellQueuePair*>(q.base_ + kQueuesOffset);
  q.nranks_ = nranks;
  q.cells_per_rank_ = cells_per_rank;
  q.cell_payload_ = cell_payload;
  q.cell_stride_ = h->cell_stride;
  q.cells_offset_ = h->cells_offset;
  q.cells_end_ = need;
  for (int r = 0; r < nranks; ++r) {
    for (CellQueue* cq : {&q.queues_[r].free_q, &q.queues_[r].recv_q}) {
      cq->head.store(0, std::memory_order_relaxed);
      cq->tail.store(0, std::memory_order_relaxed);
    }
    for (size_t i = 0; i < cells_per_rank; ++i) {
      Cell* c = q.CellAt(q.cells_offset_ + (r * cells_per_rank + i) * q.cell_stride_);
      c->owner = r;
      c->payload_len = 0;
      q.Push(&q.queues_[r].free_q, c);
    }
  }
  PublishHeader(h, kKind);  // pairs with Attach's acquire load (HeaderPublished)
  *out = q;
  return Status::Ok();
}

Status CellQueues::Attach(void* mem, size_t bytes, CellQueues* out, int timeout_ms) {
  if (mem == nullptr || out == nullptr) {
    return Status(Err::kInvalidArg, "CellQueues::Attach: null memory or output");
  }
  if (reinterpret_cast<uintptr_t>(mem) % 64 != 0 || bytes < sizeof(CellQueuesHeader)) {
    return Status(Err::kInvalidArg, "CellQueues::Attach: range not 64-byte aligned or only " +
                                        std::to_string(bytes) + " bytes");
  }
  if (timeout_ms < 0) {
    return Status(Err::kInvalidArg, "CellQueues::Attach: timeout_ms " + std::to_string(timeout_ms));
  }
  auto* h = static_cast<CellQueuesHeader*>(mem);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!HeaderPublished(h, kKind)) {  // pairs with Format's PublishHeader
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(Err::kTimeout, "CellQueues::Attach: the queues were not formatted within " +
                                       std::to_string(timeout_ms) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  MPIGPU_RETURN_IF_ERROR(CheckHeader(h, kKind));
  const size_t need = BytesFor(h->nranks, h->cells_per_rank, h->cell_payload);
  MPIGPU_RETURN_IF_ERROR(CheckHeaderSizes(
      kKind, "",
      need != 0 && h->total_bytes == need && h->cell_stride == StrideFor(h->cell_payload) &&
          h->queues_offset == kQueuesOffset && h->cells_offset == CellsOffset(h->nranks),
      Describe(h->nranks, h->cells_per_rank, h->cell_payload) + ", total " +
          std::to_string(h->total_bytes) + " bytes",
      need, bytes));
  CellQueues q;
  q.base_ = static_cast<char*>(mem);
  q.queues_ = reinterpret_cast<CellQueuePair*>(q.base_ + kQueuesOffset);
  q.nranks_ = h->nranks;
  q.cells_per_rank_ = h->cells_per_rank;
  q.cell_payload_ = h->cell_payload;
  q.cell_stride_ = h->cell_stride;
  q.cells_offset_ = h->cells_offset;
  q.cells_end_ = need;
  *out = q;
  return Status::Ok();
}

bool CellQueues::IsCell(const Cell* cell) const {
  const char* p = reinterpret_cast<const char*>(cell);
  if (base_ == nullptr || p < base_ + cells_offset_ || p >= base_ + cells_end_) return false;
  return (OffsetOf(cell) - cells_offset_) % cell_stride_ == 0;
}

void CellQueues::Push(CellQueue* q, Cell* cell) {
  const uint64_t off = OffsetOf(cell);
  cell->next.store(0, std::memory_order_relaxed);  // published by the release below
  uint64_t prev = q->tail.exchange(off, std::memory_order_acq_rel);
  if (prev == 0) {
    q->head.store(off, std::memory_order_release);  // pairs with Pop's head acquire
  } else {
    CellAt(prev)->next.store(off, std::memory_order_release);  // pairs with Pop's next acquire
  }
}

Cell* CellQueues::Pop(CellQueue* q) {
  const uint64_t off = q->head.load(std::memory_order_acquire);
  if (off == 0) return nullptr;
  Cell* cell = CellAt(off);
  uint64_t next = cell->next.load(std::memory_order_acquire);
  if (next == 0) {
    // The cell looks last. Clear head first: once tail is 0 the next producer writes head.
    q->head.store(0, std::memory_order_relaxed);  // ordered before the CAS's release
    uint64_t expected = off;
    if (q->tail.compare_exchange_strong(expected, 0, std::memory_order_acq_rel,
                                        std::memory_order_acquire)) {
      return cell;
    }
    // A producer swapped tail past `cell`; tail stays non-zero, so only we write head.
    next = cell->next.load(std::memory_order_acquire);
    if (next == 0) {
      q->head.store(off, std::memory_order_relaxed);  // its link is not there yet: try later
      return nullptr;
    }
  }
  q->head.store(next, std::memory_order_relaxed);  // only the consumer writes a non-empty head
  return cell;
}

Cell* CellQueues::Alloc(int my_rank) {
  if (my_rank < 0 || my_rank >= nranks_) return nullptr;
  Cell* cell = Pop(&queues_[my_rank].free_q);
  if (cell != nullptr) cell->payload_len = 0;
  return cell;
}

void CellQueues::Enqueue(int dst_rank, Cell* cell) {
  const bool ok = dst_rank >= 0 && dst_rank < nranks_ && IsCell(cell);
  assert(ok && "CellQueues::Enqueue: bad rank or not a cell");
  if (!ok) {
    MPIGPU_WARN("CellQueues::Enqueue: rank %d (of %d) or cell %p is invalid; ignored", dst_rank,
                nranks_, static_cast<void*>(cell));
    return;
  }
  Push(&queues_[dst_rank].recv_q, cell);
}

Cell* CellQueues::Dequeue(int my_rank) {
  if (my_rank < 0 || my_rank >= nranks_) return nullptr;
  return Pop(&queues_[my_rank].recv_q);
}

void CellQueues::Free(Cell* cell) {
  const bool ok = IsCell(cell) && cell->owner >= 0 && cell->owner < nranks_;
  assert(ok && "CellQueues::Free: not a cell");
  if (!ok) {
    MPIGPU_WARN("CellQueues::Free: %p is not a cell of these queues; ignored",
                static_cast<void*>(cell));
    return;
  }
  Push(&queues_[cell->owner].free_q, cell);
}

}  // namespace mpigpu

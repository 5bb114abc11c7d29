// CellQueues: layout checks, FIFO semantics, empty/full, the producer-not-linked-yet window,
// and fuzz tests with threads and with processes.
#include "ringbuf/cell_queue.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "ringbuf/segment.h"
#include "memcopy/pattern.h"
#include "tests/ringbuf_test_util.h"

namespace mpigpu {
namespace {

using testing::FillPattern;
using testing::FirstMismatch;
using testing::PatternByte;

// 64-byte aligned heap memory for queues that live in one process.
struct Arena {
  explicit Arena(size_t n) : bytes(n), mem(static_cast<char*>(std::aligned_alloc(64, n))) {
    std::memset(mem, 0, n);
  }
  ~Arena() { std::free(mem); }
  size_t bytes;
  char* mem;
};

TEST(CellQueuesTest, BytesForAndBadArguments) {
  EXPECT_EQ(CellQueues::BytesFor(0, 4, 64), 0u);
  EXPECT_EQ(CellQueues::BytesFor(2, 0, 64), 0u);
  EXPECT_EQ(CellQueues::BytesFor(2, 4, 0), 0u);
  EXPECT_EQ(CellQueues::BytesFor(CellQueues::kMaxRanks + 1, 4, 64), 0u);
  EXPECT_EQ(CellQueues::BytesFor(2, CellQueues::kMaxCellsPerRank + 1, 64), 0u);
  EXPECT_EQ(CellQueues::BytesFor(2, 4, CellQueues::kMaxCellPayload + 1), 0u);
  // Header + 2 queue pairs + 8 cells of 128 + 64 bytes (payload 50 rounds up to 64).
  EXPECT_EQ(CellQueues::BytesFor(2, 4, 50), 64u + 2 * 256 + 8 * (128 + 64));

  const size_t need = CellQueues::BytesFor(2, 4, 64);
  Arena a(need + 64);
  CellQueues q;
  EXPECT_EQ(CellQueues::Format(nullptr, need, 2, 4, 64, &q).code(), Err::kInvalidArg);
  EXPECT_EQ(CellQueues::Format(a.mem, need, 2, 4, 64, nullptr).code(), Err::kInvalidArg);
  EXPECT_EQ(CellQueues::Format(a.mem + 8, need, 2, 4, 64, &q).code(), Err::kInvalidArg);
  Status st = CellQueues::Format(a.mem, need - 1, 2, 4, 64, &q);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find(std::to_string(need - 1) + " bytes given"), std::string::npos)
      << st.message();
  st = CellQueues::Format(a.mem, need, 0, 4, 64, &q);
  EXPECT_NE(st.message().find("nranks 0"), std::string::npos) << st.message();
  EXPECT_FALSE(q.valid());

  // Attach to unformatted memory times out; to a smaller range or a changed header, fails.
  EXPECT_EQ(CellQueues::Attach(a.mem, need, &q, 20).code(), Err::kTimeout);
  EXPECT_EQ(CellQueues::Attach(a.mem, need, &q, -1).code(), Err::kInvalidArg);
  ASSERT_TRUE(CellQueues::Format(a.mem, need, 2, 4, 64, &q).ok());
  CellQueues other;
  EXPECT_TRUE(CellQueues::Attach(a.mem, need, &other).ok());
  EXPECT_EQ(CellQueues::Attach(a.mem, need - 64, &other).code(), Err::kInvalidArg);
  auto* h = reinterpret_cast<CellQueuesHeader*>(a.mem);
  h->cell_stride += 64;
  EXPECT_EQ(CellQueues::Attach(a.mem, need, &other).code(), Err::kInvalidArg);
  h->cell_stride -= 64;
  h->version = 99;
  st = CellQueues::Attach(a.mem, need, &other);
  EXPECT_EQ(st.code(), Err::kInvalidArg);
  EXPECT_NE(st.message().find("version 99"), std::string::npos) << st.message();
}

TEST(CellQueuesTest, FifoEmptyAndFull) {
  constexpr int kCells = 8;
  constexpr size_t kPayload = 200;
  Arena a(CellQueues::BytesFor(2, kCells, kPayload));
  CellQueues q;
  ASSERT_TRUE(CellQueues::Format(a.mem, a.bytes, 2, kCells, kPayload, &q).ok());
  EXPECT_EQ(q.nranks(), 2);
  EXPECT_EQ(q.cells_per_rank(), size_t{kCells});
  EXPECT_EQ(q.cell_payload(), kPayload);
  EXPECT_EQ(q.Dequeue(0), nullptr);
  EXPECT_EQ(q.Dequeue(1), nullptr);

  // Full: rank 0 owns exactly kCells cells.
  std::vector<Cell*> cells;
  for (int i = 0; i < kCells; ++i) {
    Cell* c = q.Alloc(0);
    ASSERT_NE(c, nullptr) << i;
    EXPECT_EQ(c->owner, 0);
    EXPECT_EQ(c->payload_len, 0u);
    EXPECT_TRUE(q.IsCell(c));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(c) % 64, 0u);
    cells.push_back(c);
  }
  EXPECT_EQ(q.Alloc(0), nullptr);
  Cell* other = q.Alloc(1);  // rank 1's cells are separate
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->owner, 1);

  // FIFO through rank 1's receive queue; payload and hdr arrive intact.
  for (int i = 0; i < kCells; ++i) {
    FillPattern(cells[i]->payload(), kPayload, 100 + i);
    FillPattern(cells[i]->hdr, sizeof cells[i]->hdr, 200 + i);
    cells[i]->payload_len = kPayload - i;
    q.Enqueue(1, cells[i]);
  }
  EXPECT_EQ(q.Dequeue(0), nullptr);  // nothing went to rank 0
  for (int i = 0; i < kCells; ++i) {
    Cell* c = q.Dequeue(1);
    ASSERT_EQ(c, cells[i]) << i;
    EXPECT_EQ(c->payload_len, kPayload - i);
    EXPECT_EQ(FirstMismatch(c->payload(), kPayload, 100 + i), -1);
    EXPECT_EQ(FirstMismatch(c->hdr, sizeof c->hdr, 200 + i), -1);
    q.Free(c);  // rank 1 frees rank 0's cells: they go back to rank 0
  }
  EXPECT_EQ(q.Dequeue(1), nullptr);

  // Interleaved enqueue/dequeue keeps order and empties cleanly each time.
  for (int round = 0; round < 100; ++round) {
    Cell* c = q.Alloc(0);
    ASSERT_NE(c, nullptr);
    c->payload_len = round;
    q.Enqueue(1, c);
    Cell* d = q.Alloc(0);
    ASSERT_NE(d, nullptr);
    d->payload_len = round + 1000;
    q.Enqueue(1, d);
    ASSERT_EQ(q.Dequeue(1), c);
    ASSERT_EQ(q.Dequeue(1), d);
    ASSERT_EQ(q.Dequeue(1), nullptr);
    q.Free(c);
    q.Free(d);
  }
  // All of rank 0's cells are free again.
  for (int i = 0; i < kCells; ++i) ASSERT_NE(q.Alloc(0), nullptr);
  EXPECT_EQ(q.Alloc(0), nullptr);
  q.Free(other);
}

TEST(CellQueuesTest, BadRanks) {
  Arena a(CellQueues::BytesFor(2, 2, 64));
  CellQueues q;
  ASSERT_TRUE(CellQueues::Format(a.mem, a.bytes, 2, 2, 64, &q).ok());
  EXPECT_EQ(q.Alloc(-1), nullptr);
  EXPECT_EQ(q.Alloc(2), nullptr);
  EXPECT_EQ(q.Dequeue(-1), nullptr);
  EXPECT_EQ(q.Dequeue(2), nullptr);
  Cell* c = q.Alloc(0);
  ASSERT_NE(c, nullptr);
  EXPECT_FALSE(q.IsCell(nullptr));
  EXPECT_FALSE(q.IsCell(reinterpret_cast<Cell*>(reinterpret_cast<char*>(c) + 64)));
  EXPECT_DEBUG_DEATH(q.Enqueue(2, c), "bad rank or not a cell");
  EXPECT_DEBUG_DEATH(q.Enqueue(-1, c), "bad rank or not a cell");
  EXPECT_DEBUG_DEATH(q.Free(reinterpret_cast<Cell*>(a.mem)), "not a cell");
  // The death tests ran in children: this process's queues are untouched.
  EXPECT_EQ(q.Dequeue(0), nullptr);
  EXPECT_EQ(q.Dequeue(1), nullptr);
}

// The consumer must not wait for a producer that swapped the tail but has not linked yet.
TEST(CellQueuesTest, UnlinkedProducerWindowReturnsNull) {
  Arena a(CellQueues::BytesFor(2, 4, 64));
  CellQueues q;
  ASSERT_TRUE(CellQueues::Format(a.mem, a.bytes, 2, 4, 64, &q).ok());
  Cell* first = q.Alloc(0);
  Cell* second = q.Alloc(0);
  q.Enqueue(1, first);
  // Half of a Push of `second` (see cell_queue.h): the tail exchange, without the link.
  auto* pairs = reinterpret_cast<CellQueuePair*>(
      a.mem + reinterpret_cast<CellQueuesHeader*>(a.mem)->queues_offset);
  const uint64_t first_off = reinterpret_cast<char*>(first) - a.mem;
  const uint64_t second_off = reinterpret_cast<char*>(second) - a.mem;
  second->next.store(0);
  ASSERT_EQ(pairs[1].recv_q.tail.exchange(second_off), first_off);

  EXPECT_EQ(q.Dequeue(1), nullptr);  // first looks last but is not: come back later
  EXPECT_EQ(q.Dequeue(1), nullptr);
  first->next.store(second_off, std::memory_order_release);  // the producer links
  EXPECT_EQ(q.Dequeue(1), first);
  EXPECT_EQ(q.Dequeue(1), second);
  EXPECT_EQ(q.Dequeue(1), nullptr);
  EXPECT_EQ(pairs[1].recv_q.tail.load(), 0u);
  EXPECT_EQ(pairs[1].recv_q.head.load(), 0u);

  // Same window on an empty queue: the tail is swapped from 0 but head not yet written.
  ASSERT_EQ(pairs[1].recv_q.tail.exchange(first_off), 0u);
  first->next.store(0);
  EXPECT_EQ(q.Dequeue(1), nullptr);
  pairs[1].recv_q.head.store(first_off, std::memory_order_release);
  EXPECT_EQ(q.Dequeue(1), first);
  EXPECT_EQ(q.Dequeue(1), nullptr);
}

// Two mappings of one segment: cells travel as offsets, so each side sees its own address.
TEST(CellQueuesTest, PositionIndependentAcrossMappings) {
  const std::string name = testing::FreshSegmentName("cq-pi");
  const size_t bytes = CellQueues::BytesFor(2, 4, 256);
  ShmSegment seg_a, seg_b;
  ASSERT_TRUE(ShmSegment::Create(name, bytes, 2, &seg_a).ok());
  ASSERT_TRUE(ShmSegment::Attach(name, &seg_b, 1000).ok());
  ASSERT_TRUE(seg_a.Unlink().ok());
  ASSERT_NE(seg_a.payload(), seg_b.payload());
  CellQueues qa, qb;
  ASSERT_TRUE(CellQueues::Format(seg_a.payload(), seg_a.payload_bytes(), 2, 4, 256, &qa).ok());
  ASSERT_TRUE(CellQueues::Attach(seg_b.payload(), seg_b.payload_bytes(), &qb, 1000).ok());
  for (int i = 0; i < 10; ++i) {
    Cell* c = qa.Alloc(0);
    ASSERT_NE(c, nullptr);
    FillPattern(c->payload(), 256, i);
    c->payload_len = 256;
    qa.Enqueue(1, c);
    Cell* d = qb.Dequeue(1);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(reinterpret_cast<char*>(d) - static_cast<char*>(seg_b.payload()),
              reinterpret_cast<char*>(c) - static_cast<char*>(seg_a.payload()));
    EXPECT_EQ(FirstMismatch(d->payload(), d->payload_len, i), -1);
    qb.Free(d);
  }
}

// ---- fuzz: producers (ranks 1..P) send numbered messages to rank 0 ----

// A message: hdr = {producer, seq}; payload = 8 + seq % 57 bytes of pattern (seed producer,
// starting at seq), so a cell delivered twice, late, or to the wrong place is caught.
size_t MessageLen(uint64_t seq) { return 8 + seq % 57; }

void Produce(CellQueues& q, int rank, uint64_t count, uint64_t* checksum) {
  uint64_t sum = 0;
  for (uint64_t seq = 0; seq < count; ++seq) {
    Cell* c;
    while ((c = q.Alloc(rank)) == nullptr) sched_yield();  // all our cells are in flight
    const int32_t producer = rank;
    std::memcpy(c->hdr, &producer, sizeof producer);
    std::memcpy(c->hdr + 8, &seq, sizeof seq);
    const size_t len = MessageLen(seq);
    FillPattern(c->payload(), len, rank, seq);
    c->payload_len = static_cast<uint32_t>(len);
    sum += seq * 31 + len;
    q.Enqueue(0, c);
  }
  *checksum = sum;
}

// Receives producers * count messages; checks each and the per-producer order. Returns "" or
// the first problem. Gives up at `deadline`.
std::string Consume(CellQueues& q, int producers, uint64_t count,
                    std::chrono::steady_clock::time_point deadline,
                    std::vector<uint64_t>* checksums) {
  std::vector<uint64_t> next(producers + 1, 0);
  checksums->assign(producers + 1, 0);
  const uint64_t total = producers * count;
  uint64_t empty_polls = 0;
  for (uint64_t got = 0; got < total;) {
    Cell* c = q.Dequeue(0);
    if (c == nullptr) {
      if ((++empty_polls & 0xff) == 0 && std::chrono::steady_clock::now() > deadline) {
        return "timed out after " + std::to_string(got) + " of " + std::to_string(total);
      }
      sched_yield();
      continue;
    }
    int32_t producer;
    uint64_t seq;
    std::memcpy(&producer, c->hdr, sizeof producer);
    std::memcpy(&seq, c->hdr + 8, sizeof seq);
    if (producer < 1 || producer > producers || c->owner != producer) {
      return "bad producer " + std::to_string(producer) + " (owner " + std::to_string(c->owner) +
             ")";
    }
    if (seq != next[producer]) {
      return "producer " + std::to_string(producer) + ": seq " + std::to_string(seq) +
             ", expected " + std::to_string(next[producer]) + " (lost, duplicated or reordered)";
    }
    const size_t len = MessageLen(seq);
    if (c->payload_len != len || FirstMismatch(c->payload(), len, producer, seq) != -1) {
      return "producer " + std::to_string(producer) + " seq " + std::to_string(seq) +
             ": payload corrupt";
    }
    (*checksums)[producer] += seq * 31 + len;
    ++next[producer];
    ++got;
    q.Free(c);
  }
  if (q.Dequeue(0) != nullptr) return "a message beyond the expected count";
  return "";
}

constexpr int kProducers = 4;
// Far above the ~1.5 s each fuzz run takes on 2 cores, below the "small" test timeout (60 s).
constexpr int kConsumeSeconds = 25;
constexpr size_t kFuzzCells = 64;
constexpr size_t kFuzzPayload = 64;

TEST(CellQueuesFuzzTest, FourProducerThreads) {
  constexpr uint64_t kCount = 1000000;
  Arena a(CellQueues::BytesFor(kProducers + 1, kFuzzCells, kFuzzPayload));
  CellQueues q;
  ASSERT_TRUE(
      CellQueues::Format(a.mem, a.bytes, kProducers + 1, kFuzzCells, kFuzzPayload, &q).ok());
  std::vector<uint64_t> sent(kProducers + 1, 0);
  std::vector<std::thread> threads;
  for (int p = 1; p <= kProducers; ++p) {
    threads.emplace_back([&q, &sent, p] { Produce(q, p, kCount, &sent[p]); });
  }
  std::vector<uint64_t> received;
  std::string problem = Consume(q, kProducers, kCount,
                                std::chrono::steady_clock::now() + std::chrono::seconds(kConsumeSeconds),
                                &received);
  if (!problem.empty()) {
    // Producers blocked on Alloc would never finish: this is not recoverable in-process.
    std::fprintf(stderr, "FAIL: %s\n", problem.c_str());
    std::_Exit(1);
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(received, sent);
  // Every cell is back on its owner's free queue.
  for (int r = 0; r <= kProducers; ++r) {
    for (size_t i = 0; i < kFuzzCells; ++i) ASSERT_NE(q.Alloc(r), nullptr) << r << " " << i;
    EXPECT_EQ(q.Alloc(r), nullptr);
  }
}

// RINGBUF_TEST_PROC_MESSAGES overrides the per-process message count (default below).
uint64_t ProcessMessages() {
  const char* env = std::getenv("RINGBUF_TEST_PROC_MESSAGES");
  return env != nullptr ? std::strtoull(env, nullptr, 10) : 1000000;
}

TEST(CellQueuesFuzzTest, FourProducerProcesses) {
  const uint64_t count = ProcessMessages();
  const std::string name = testing::FreshSegmentName("cq-fuzz");
  const size_t bytes = CellQueues::BytesFor(kProducers + 1, kFuzzCells, kFuzzPayload);
  ShmSegment seg;
  ASSERT_TRUE(ShmSegment::Create(name, bytes, kProducers + 1, &seg).ok());
  CellQueues q;
  ASSERT_TRUE(CellQueues::Format(seg.payload(), seg.payload_bytes(), kProducers + 1, kFuzzCells,
                                 kFuzzPayload, &q)
                  .ok());
  testing::NameGuard guard{name};
  std::vector<pid_t> children;
  for (int p = 1; p <= kProducers; ++p) {
    children.push_back(testing::ForkChild(
        [&name, p, count] {
          ShmSegment mine;  // a mapping of its own, at its own address
          if (!ShmSegment::Attach(name, &mine, 10000).ok()) return 10;
          CellQueues cq;
          if (!CellQueues::Attach(mine.payload(), mine.payload_bytes(), &cq, 10000).ok()) {
            return 11;
          }
          uint64_t sum;
          Produce(cq, p, count, &sum);
          return 0;
        },
        kConsumeSeconds + 10));
  }
  std::vector<uint64_t> received;
  std::string problem = Consume(q, kProducers, count,
                                std::chrono::steady_clock::now() + std::chrono::seconds(kConsumeSeconds),
                                &received);
  EXPECT_EQ(problem, "");
  for (pid_t pid : children) {
    if (!problem.empty()) kill(pid, SIGKILL);  // possibly stuck waiting for free cells
    int rc = testing::WaitChild(pid, 30);
    if (problem.empty()) {
      EXPECT_EQ(rc, 0) << "producer process " << pid;
    }
  }
  EXPECT_TRUE(seg.AllAttached());
  // The children's checksums depend only on count: compute them here.
  uint64_t expected = 0;
  for (uint64_t seq = 0; seq < count; ++seq) expected += seq * 31 + MessageLen(seq);
  for (int p = 1; p <= kProducers; ++p) EXPECT_EQ(received[p], expected) << "producer " << p;
}

}  // namespace
}  // namespace mpigpu

// Cell queue micro-benchmarks: the cost of one enqueue + dequeue, throughput with 1..4 producer
// threads into one receive queue, and the one-way latency of a two-process ping-pong through the
// queues in a shared memory segment.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "ringbuf/cell_queue.h"
#include "ringbuf/segment.h"

namespace mpigpu {
namespace {

// Queues in 64-byte aligned process memory.
struct LocalQueues {
  LocalQueues(int nranks, size_t cells, size_t payload) {
    bytes = CellQueues::BytesFor(nranks, cells, payload);
    mem = std::aligned_alloc(64, bytes);
    if (!CellQueues::Format(mem, bytes, nranks, cells, payload, &q).ok()) std::abort();
  }
  ~LocalQueues() { std::free(mem); }
  size_t bytes;
  void* mem;
  CellQueues q;
};

// One thread: Alloc, Enqueue, Dequeue, Free.
void BM_EnqueueDequeue(benchmark::State& state) {
  LocalQueues lq(2, 64, 64);
  CellQueues& q = lq.q;
  for (auto _ : state) {
    Cell* c = q.Alloc(0);
    c->payload_len = 8;
    q.Enqueue(1, c);
    Cell* d = q.Dequeue(1);
    benchmark::DoNotOptimize(d);
    q.Free(d);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EnqueueDequeue);

// Producers (ranks 1..P, one thread each) send kMessages 8-byte messages each to rank 0, which
// this thread drains and frees.
void BM_Throughput(benchmark::State& state) {
  const int producers = static_cast<int>(state.range(0));
  constexpr uint64_t kMessages = 200000;
  LocalQueues lq(producers + 1, 64, 64);
  CellQueues& q = lq.q;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int p = 1; p <= producers; ++p) {
      threads.emplace_back([&q, p] {
        for (uint64_t i = 0; i < kMessages; ++i) {
          Cell* c;
          while ((c = q.Alloc(p)) == nullptr) sched_yield();
          std::memcpy(c->payload(), &i, sizeof i);
          c->payload_len = sizeof i;
          q.Enqueue(0, c);
        }
      });
    }
    for (uint64_t got = 0; got < producers * kMessages;) {
      Cell* c = q.Dequeue(0);
      if (c == nullptr) {
        sched_yield();
        continue;
      }
      ++got;
      q.Free(c);
    }
    for (auto& t : threads) t.join();
  }
  state.SetItemsProcessed(state.iterations() * producers * kMessages);
}
BENCHMARK(BM_Throughput)->DenseRange(1, 4)->UseRealTime()->Unit(benchmark::kMillisecond);

// Two processes, rank 0 (this one) and rank 1 (a forked child), bounce a message of
// state.range(0) payload bytes; the child copies it into a fresh cell of its own and sends it
// back. Both sides busy-poll. one_way_ns = round trip / 2.
void BM_PingPong(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::string jobid;
  ShmSegment seg;
  CellQueues q;
  if (!RandomJobId(&jobid).ok() ||
      !ShmSegment::Create(SegmentName("bench-" + jobid), CellQueues::BytesFor(2, 16, bytes), 2,
                          &seg)
           .ok() ||
      !seg.Unlink().ok() ||  // the child inherits the mapping; the name is not needed
      !CellQueues::Format(seg.payload(), seg.payload_bytes(), 2, 16, bytes, &q).ok()) {
    state.SkipWithError("segment setup failed");
    return;
  }
  constexpr uint32_t kStop = 0xffffffffu;
  pid_t child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    alarm(600);
    for (;;) {
      Cell* in = q.Dequeue(1);
      if (in == nullptr) continue;
      if (in->payload_len == kStop) _exit(0);
      Cell* out = q.Alloc(1);
      std::memcpy(out->payload(), in->payload(), in->payload_len);
      out->payload_len = in->payload_len;
      q.Free(in);
      q.Enqueue(0, out);
    }
  }
  std::vector<unsigned char> msg(bytes, 0x5a);
  auto start = std::chrono::steady_clock::now();
  for (auto _ : state) {
    Cell* c = q.Alloc(0);
    std::memcpy(c->payload(), msg.data(), bytes);
    c->payload_len = static_cast<uint32_t>(bytes);
    q.Enqueue(1, c);
    Cell* reply;
    while ((reply = q.Dequeue(0)) == nullptr) {
    }
    benchmark::DoNotOptimize(reply->payload()[bytes - 1]);
    q.Free(reply);
  }
  auto ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start);
  Cell* stop = q.Alloc(0);
  stop->payload_len = kStop;
  q.Enqueue(1, stop);
  int status;
  waitpid(child, &status, 0);
  state.counters["one_way_ns"] = ns.count() / static_cast<double>(state.iterations()) / 2;
  state.SetBytesProcessed(state.iterations() * bytes * 2);
}
BENCHMARK(BM_PingPong)->Arg(8)->Arg(4096)->Arg(65536)->UseRealTime();

}  // namespace
}  // namespace mpigpu

// Two processes stream 1 GiB through a small LMT ring (4 units x 64 KiB) in a shared mapping:
// the parent sends, a forked child receives and checks every byte. 16 transfers of 64 MiB, each
// with its own pattern, so the ring is also handed from one transfer to the next.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "pipeline/copy_engine.h"
#include "pipeline/pipeline.h"
#include "ringbuf/lmt_ring.h"

namespace mpigpu {
namespace {

constexpr size_t kUnit = 64 << 10;
constexpr size_t kUnits = 4;
constexpr size_t kMessage = 64 << 20;
constexpr int kTransfers = 16;  // 16 x 64 MiB = 1 GiB
constexpr int kTimeoutS = 50;  // below the "small" test timeout

// Word i of transfer t (8-byte words keep filling and checking 1 GiB quick).
uint64_t Word(int t, uint64_t i) {
  uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t(t) << 56);
  return x ^ (x >> 31);
}

// Runs one side to completion, yielding when a call moved nothing (two processes on few cores).
Status Drive(LmtPipelineBase* side) {
  bool done = false;
  while (!done) {
    uint64_t before = side->units_issued() + side->units_retired();
    MPIGPU_RETURN_IF_ERROR(side->Progress(&done));
    if (!done && side->units_issued() + side->units_retired() == before) sched_yield();
  }
  return Status::Ok();
}

// The child: receives every transfer and checks it. Exit code 0 = all bytes right.
int Receive(void* mem, size_t bytes) {
  alarm(kTimeoutS);  // a hung child dies on its own
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  LmtRing ring;
  Status st = LmtRing::Attach(mem, bytes, &ring);
  if (!st.ok()) {
    std::fprintf(stderr, "child attach: %s\n", st.ToString().c_str());
    return 2;
  }
  HostCopyEngine engine;
  std::vector<uint64_t> buf(kMessage / 8);
  for (int t = 0; t < kTransfers; ++t) {
    std::fill(buf.begin(), buf.end(), 0);
    LmtReceiver r;
    st = LmtReceiver::Create(&ring, &engine,
                             {buf.data(), MemLoc::Host(), Layout::Contiguous(kMessage)},
                             {kMessage, kUnit, 0, 4}, &r);
    if (st.ok()) st = Drive(&r);
    if (!st.ok()) {
      std::fprintf(stderr, "child transfer %d: %s\n", t, st.ToString().c_str());
      return 3;
    }
    for (uint64_t i = 0; i < buf.size(); ++i) {
      if (buf[i] != Word(t, i)) {
        std::fprintf(stderr, "transfer %d: word %llu wrong\n", t, (unsigned long long)i);
        return 4;
      }
    }
  }
  return 0;
}

TEST(PipelineForkTest, StreamsOneGiBThroughASmallRing) {
  const size_t bytes = LmtRing::BytesFor(kUnits * kUnit, kUnits);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  LmtRing ring;
  ASSERT_TRUE(LmtRing::Format(mem, bytes, kUnits * kUnit, kUnits, &ring).ok());

  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(Receive(mem, bytes));

  // The parent sends, with its own deadline; on failure it kills the child.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(kTimeoutS);
  HostCopyEngine engine;
  std::vector<uint64_t> buf(kMessage / 8);
  Status st;
  for (int t = 0; t < kTransfers && st.ok(); ++t) {
    for (uint64_t i = 0; i < buf.size(); ++i) buf[i] = Word(t, i);
    LmtSender s;
    st = LmtSender::Create(&ring, &engine,
                           {buf.data(), MemLoc::Host(), Layout::Contiguous(kMessage)},
                           {kMessage, kUnit, 0, 4}, &s);
    bool done = false;
    while (st.ok() && !done) {
      uint64_t before = s.units_issued() + s.units_retired();
      st = s.Progress(&done);
      if (std::chrono::steady_clock::now() > deadline)
        st = Status(Err::kTimeout, "sender: transfer " + std::to_string(t) + " timed out");
      // The child died: no one will drain the ring.
      if (!done && s.units_issued() + s.units_retired() == before) {
        if (waitpid(child, nullptr, WNOHANG) == child) {
          child = -1;
          st = Status(Err::kPeerFailed, "receiver exited early");
        }
        sched_yield();
      }
    }
  }
  if (!st.ok() && child > 0) kill(child, SIGKILL);
  int wstatus = 0;
  if (child > 0) {
    ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  }
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (child > 0) {
    EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0)
        << "receiver failed, wait status " << wstatus;
  }
  munmap(mem, bytes);
}

}  // namespace
}  // namespace mpigpu

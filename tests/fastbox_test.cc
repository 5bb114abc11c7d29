// Fastboxes: layout checks, the ring hand-over (in order, full when kSlots messages wait, a slot
// reused only after the receiver released it), and a two-process stream that proves each
// message is seen whole and exactly once, in order.
#include "ringbuf/fastbox.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace mpigpu {
namespace {

struct Mapping {
  explicit Mapping(size_t n) : bytes(n) {
    mem = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  }
  ~Mapping() { munmap(mem, bytes); }
  void* mem;
  size_t bytes;
};

TEST(FastboxTest, FormatAndAttachCheckTheirArguments) {
  EXPECT_EQ(Fastboxes::BytesFor(0, 64), 0u);
  EXPECT_EQ(Fastboxes::BytesFor(2, 0), 0u);
  EXPECT_EQ(Fastboxes::BytesFor(Fastboxes::kMaxRanks + 1, 64), 0u);
  const size_t n = Fastboxes::BytesFor(3, 100);
  ASSERT_GT(n, 0u);
  Mapping m(n);
  Fastboxes f;
  EXPECT_EQ(Fastboxes::Format(m.mem, n - 1, 3, 100, 0, &f).code(), Err::kInvalidArg);
  EXPECT_EQ(Fastboxes::Format(static_cast<char*>(m.mem) + 32, n, 3, 100, 0, &f).code(),
            Err::kInvalidArg);
  ASSERT_TRUE(Fastboxes::Format(m.mem, n, 3, 100, 0, &f).ok());
  EXPECT_EQ(f.nranks(), 3);
  EXPECT_EQ(f.data(), 100u);
  Fastboxes g;
  EXPECT_TRUE(Fastboxes::Attach(m.mem, n, 2, &g).ok());
  EXPECT_EQ(Fastboxes::Attach(m.mem, n, 3, &g).code(), Err::kInvalidArg);  // not a process
  EXPECT_EQ(Fastboxes::Attach(m.mem, n - 64, 1, &g).code(), Err::kInvalidArg);
  std::memset(m.mem, 0, 8);  // magic gone
  EXPECT_EQ(Fastboxes::Attach(m.mem, n, 1, &g).code(), Err::kInvalidArg);
}

TEST(FastboxTest, SlotsAreDistinctLinesInsideTheRange) {
  const int kRanks = 4;
  const size_t data = 256;
  const size_t n = Fastboxes::BytesFor(kRanks, data);
  Mapping m(n);
  Fastboxes f;
  ASSERT_TRUE(Fastboxes::Format(m.mem, n, kRanks, data, 0, &f).ok());
  std::vector<const char*> starts;
  for (int s = 0; s < kRanks; ++s)
    for (int d = 0; d < kRanks; ++d)
      for (uint32_t i = 0; i < Fastboxes::kSlots; ++i) {
        Fastbox* b = f.slot(s, d, i);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 64, 0u);  // stamp, len, data share line 0
        EXPECT_LE(reinterpret_cast<char*>(b->data) + data, static_cast<char*>(m.mem) + n);
        starts.push_back(reinterpret_cast<const char*>(b));
      }
  std::sort(starts.begin(), starts.end());
  for (size_t i = 1; i < starts.size(); ++i)
    EXPECT_GE(starts[i] - starts[i - 1], static_cast<long>(Fastbox::kDataOffset + data));
}

TEST(FastboxTest, RingHandsOverInOrderAndReusesOnlyReleasedSlots) {
  const size_t n = Fastboxes::BytesFor(4, 64);
  Mapping m(n);
  Fastboxes sender, receiver, other;  // processes 1 and 2 of the job, and 3
  ASSERT_TRUE(Fastboxes::Format(m.mem, n, 4, 64, 1, &sender).ok());
  ASSERT_TRUE(Fastboxes::Attach(m.mem, n, 2, &receiver).ok());
  ASSERT_TRUE(Fastboxes::Attach(m.mem, n, 3, &other).ok());
  EXPECT_EQ(receiver.Peek(1), nullptr);
  auto send = [&](uint32_t k) {
    Fastbox* b = sender.TryBegin(2);
    if (b == nullptr) return false;
    std::memcpy(b->data, &k, sizeof k);
    b->len = sizeof k;
    sender.Publish(2, b);
    return true;
  };
  auto take = [&](uint32_t* k) {
    const Fastbox* b = receiver.Peek(1);
    if (b == nullptr) return false;
    EXPECT_EQ(b->len, sizeof *k);
    std::memcpy(k, b->data, sizeof *k);
    receiver.Release(1);
    return true;
  };
  // Fill the ring: the next send finds it full until the receiver releases a slot.
  for (uint32_t k = 0; k < Fastboxes::kSlots; ++k) ASSERT_TRUE(send(k));
  EXPECT_FALSE(send(99));
  EXPECT_EQ(other.Peek(1), nullptr);  // another pair's ring
  EXPECT_EQ(receiver.Peek(3), nullptr);
  uint32_t got = 0;
  ASSERT_TRUE(take(&got));
  EXPECT_EQ(got, 0u);
  ASSERT_TRUE(send(Fastboxes::kSlots));  // reuses slot 0 only now
  // Many rounds, through the counters' slot reuse: everything arrives once, in order.
  uint32_t next_send = Fastboxes::kSlots + 1, next_take = 1;
  for (int round = 0; round < 1000; ++round) {
    while (send(next_send)) ++next_send;
    for (int i = 0; i < round % 3 + 1 && take(&got); ++i) EXPECT_EQ(got, next_take++);
  }
  while (take(&got)) EXPECT_EQ(got, next_take++);
  EXPECT_EQ(next_take, next_send);
}

TEST(FastboxTest, TwoProcessStreamIsWholeOnceAndInOrder) {
  const size_t data = 512;
  const size_t n = Fastboxes::BytesFor(2, data);
  Mapping m(n);
  Fastboxes f;
  ASSERT_TRUE(Fastboxes::Format(m.mem, n, 2, data, 1, &f).ok());
  const uint64_t kMsgs = 200000;
  pid_t pid = fork();
  if (pid == 0) {  // sender (process 0): message k is k, then len - 8 bytes of k's low byte
    alarm(60);
    Fastboxes s;
    if (!Fastboxes::Attach(m.mem, n, 0, &s).ok()) _exit(2);
    for (uint64_t k = 0; k < kMsgs; ++k) {
      Fastbox* b;
      while ((b = s.TryBegin(1)) == nullptr) {
      }
      uint32_t len = static_cast<uint32_t>(k % (data - 8)) + 8;
      std::memcpy(b->data, &k, sizeof k);
      std::memset(b->data + 8, static_cast<int>(k & 0xFF), len - 8);
      b->len = len;
      s.Publish(1, b);
    }
    _exit(0);
  }
  uint64_t bad = 0;
  for (uint64_t k = 0; k < kMsgs; ++k) {
    const Fastbox* b;
    while ((b = f.Peek(0)) == nullptr) {
    }
    uint64_t got;
    std::memcpy(&got, b->data, sizeof got);
    bad += got != k;
    bad += b->len != (k % (data - 8)) + 8;
    for (uint32_t i = 8; i < b->len; ++i) bad += b->data[i] != static_cast<unsigned char>(k & 0xFF);
    f.Release(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(bad, 0u);
}

// A 1000-rank job's fastboxes (a million pairs, 16 GiB) in a sparse segment: formatting them
// writes only the header; a pair gets memory when its sender prepares it, about its own slots'
// worth; pairs that never talk cost nothing.
TEST(FastboxTest, PairsGetMemoryOnlyWhenTheyTalk) {
  const int n = 1000;
  const size_t bytes = Fastboxes::BytesFor(n, 4096 + 64);
  ASSERT_GT(bytes, size_t{15} << 30);
  const std::string name = "/mpigpu-fastbox-sparse-" + std::to_string(getpid());
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  shm_unlink(name.c_str());
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto allocated = [fd] {
    struct stat st;
    return fstat(fd, &st) == 0 ? static_cast<size_t>(st.st_blocks) * 512 : ~size_t{0};
  };
  Fastboxes sender, receiver;
  ASSERT_TRUE(Fastboxes::Format(mem, bytes, n, 4096 + 64, 3, &sender).ok());
  ASSERT_TRUE(Fastboxes::Attach(mem, bytes, 997, &receiver).ok());
  EXPECT_LE(allocated(), size_t{4096});  // the header's page
  ASSERT_TRUE(sender.PreparePair(997).ok());
  const size_t one_pair = allocated();
  EXPECT_GE(one_pair, size_t{16} << 10);
  EXPECT_LE(one_pair, size_t{32} << 10);
  // The prepared ring works, and what it holds survives a second PreparePair.
  Fastbox* b = sender.TryBegin(997);
  ASSERT_NE(b, nullptr);
  b->len = 4;
  std::memcpy(b->data, "ping", 4);
  sender.Publish(997, b);
  ASSERT_TRUE(sender.PreparePair(997).ok());
  const Fastbox* got = receiver.Peek(3);
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(std::memcmp(got->data, "ping", 4), 0);
  receiver.Release(3);
  EXPECT_EQ(allocated(), one_pair);
  munmap(mem, bytes);
  close(fd);
}

}  // namespace
}  // namespace mpigpu

// Fastboxes: layout checks, the one-slot hand-over, and a two-process stream that proves each
// message is seen whole and exactly once, in order.
#include "ringbuf/fastbox.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
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
  EXPECT_EQ(Fastboxes::Format(m.mem, n - 1, 3, 100, &f).code(), Err::kInvalidArg);
  EXPECT_EQ(Fastboxes::Format(static_cast<char*>(m.mem) + 64, n, 3, 100, &f).code(), Err::kInvalidArg);
  ASSERT_TRUE(Fastboxes::Format(m.mem, n, 3, 100, &f).ok());
  EXPECT_EQ(f.nranks(), 3);
  EXPECT_EQ(f.payload(), 100u);
  Fastboxes g;
  EXPECT_TRUE(Fastboxes::Attach(m.mem, n, &g).ok());
  EXPECT_EQ(Fastboxes::Attach(m.mem, n - 64, &g).code(), Err::kInvalidArg);
  std::memset(m.mem, 0, 8);  // magic gone
  EXPECT_EQ(Fastboxes::Attach(m.mem, n, &g).code(), Err::kInvalidArg);
}

TEST(FastboxTest, BoxesAreDistinctAndHandOverOneMessage) {
  const size_t n = Fastboxes::BytesFor(4, 256);
  Mapping m(n);
  Fastboxes f;
  ASSERT_TRUE(Fastboxes::Format(m.mem, n, 4, 256, &f).ok());
  for (int s = 0; s < 4; ++s)
    for (int d = 0; d < 4; ++d) {
      Fastbox* b = f.box(s, d);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 128, 0u);
      EXPECT_LE(reinterpret_cast<char*>(b->payload()) + 256, static_cast<char*>(m.mem) + n);
      for (int s2 = 0; s2 < 4; ++s2)
        for (int d2 = 0; d2 < 4; ++d2)
          if (s != s2 || d != d2) EXPECT_NE(b, f.box(s2, d2));
    }
  EXPECT_EQ(f.Peek(1, 2), nullptr);
  Fastbox* b = f.TryBegin(1, 2);
  ASSERT_NE(b, nullptr);
  std::memcpy(b->payload(), "hello", 5);
  b->len = 5;
  Fastboxes::Publish(b);
  EXPECT_EQ(f.TryBegin(1, 2), nullptr);  // full: the sender must wait
  EXPECT_EQ(f.Peek(2, 1), nullptr);      // the other direction is its own box
  Fastbox* got = f.Peek(1, 2);
  ASSERT_EQ(got, b);
  EXPECT_EQ(got->len, 5u);
  EXPECT_EQ(std::memcmp(got->payload(), "hello", 5), 0);
  Fastboxes::Release(got);
  EXPECT_EQ(f.Peek(1, 2), nullptr);
  EXPECT_NE(f.TryBegin(1, 2), nullptr);
}

TEST(FastboxTest, TwoProcessStreamIsWholeOnceAndInOrder) {
  const size_t payload = 512;
  const size_t n = Fastboxes::BytesFor(2, payload);
  Mapping m(n);
  Fastboxes f;
  ASSERT_TRUE(Fastboxes::Format(m.mem, n, 2, payload, &f).ok());
  const uint64_t kMsgs = 200000;
  pid_t pid = fork();
  if (pid == 0) {  // sender: message k fills len bytes with k's low byte, header holds k
    alarm(60);
    for (uint64_t k = 0; k < kMsgs; ++k) {
      Fastbox* b;
      while ((b = f.TryBegin(0, 1)) == nullptr) {
      }
      uint32_t len = static_cast<uint32_t>(k % payload) + 1;
      std::memset(b->payload(), static_cast<int>(k & 0xFF), len);
      std::memcpy(b->hdr, &k, sizeof k);
      b->len = len;
      Fastboxes::Publish(b);
    }
    _exit(0);
  }
  uint64_t bad = 0;
  for (uint64_t k = 0; k < kMsgs; ++k) {
    Fastbox* b;
    while ((b = f.Peek(0, 1)) == nullptr) {
    }
    uint64_t got;
    std::memcpy(&got, b->hdr, sizeof got);
    bad += got != k;
    bad += b->len != (k % payload) + 1;
    for (uint32_t i = 0; i < b->len; ++i) bad += b->payload()[i] != static_cast<unsigned char>(k & 0xFF);
    Fastboxes::Release(b);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace mpigpu

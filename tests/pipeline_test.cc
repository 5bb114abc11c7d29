// The LMT pipeline in one process: unit lengths, packed copies, and sender + receiver moving
// pattern-filled messages through small rings (host copies, and a copy engine that completes
// copies late and at random, as a DMA engine would).
#include "pipeline/pipeline.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "pipeline/copy_engine.h"
#include "pipeline/layout.h"
#include "tests/lmt_test_util.h"

namespace mpigpu {
namespace {

using testing::CheckLayout;
using testing::ClearLayout;
using testing::FillLayout;
using testing::RunBoth;
using testing::TestRing;

// Host copies that run only when Poll decides the piece completed (at random, in order), so a
// publish or release that comes before its copy finished shows up as wrong bytes.
class LateCopyEngine final : public CopyEngine {
 public:
  explicit LateCopyEngine(uint32_t seed) : rng_(seed) {}
  Status Issue(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc, size_t bytes) override {
    ops_.push_back([=] { return host_.Issue(dst, dst_loc, src, src_loc, bytes); });
    return Status::Ok();
  }
  Status Issue2D(void* dst, MemLoc dst_loc, size_t dpitch, const void* src, MemLoc src_loc,
                 size_t spitch, size_t width, size_t height) override {
    ops_.push_back([=] {
      return host_.Issue2D(dst, dst_loc, dpitch, src, src_loc, spitch, width, height);
    });
    return Status::Ok();
  }
  Status Mark(Ticket* out) override {
    marks_.push_back(ops_.size());
    *out = marks_.size();
    return Status::Ok();
  }
  Status Poll(Ticket t, bool* done) override {
    if (t == 0 || t > marks_.size()) return Status(Err::kInvalidArg, "bad ticket");
    if (t > completed_ && rng_() % 3 == 0) RunThrough(t);
    *done = t <= completed_;
    return Status::Ok();
  }
  Status Wait(Ticket t) override {
    if (t > completed_) RunThrough(t);
    return Status::Ok();
  }

 private:
  void RunThrough(Ticket t) {
    for (; run_ < marks_[t - 1]; ++run_) EXPECT_TRUE(ops_[run_]().ok());
    completed_ = t;
  }
  HostCopyEngine host_;
  std::mt19937 rng_;
  std::vector<std::function<Status()>> ops_;
  std::vector<size_t> marks_;  // ops_ size at each Mark
  size_t run_ = 0;
  Ticket completed_ = 0;
};

TEST(LmtUnitsTest, FillCutsUnitsOnWholeBlocks) {
  EXPECT_EQ(LmtUnitFill(4096, 0), 4096u);
  EXPECT_EQ(LmtUnitFill(4096, 100), 4000u);
  EXPECT_EQ(LmtUnitFill(4096, 4096), 4096u);
  EXPECT_EQ(LmtUnitFill(4096, 5000), 4096u);  // a block larger than a unit is split
  EXPECT_EQ(LmtUnitCount(0, 4096, 0), 0u);
  EXPECT_EQ(LmtUnitCount(1, 4096, 0), 1u);
  EXPECT_EQ(LmtUnitCount(8192, 4096, 0), 2u);
  EXPECT_EQ(LmtUnitCount(8193, 4096, 0), 3u);
  EXPECT_EQ(LmtUnitCount(8000, 4096, 100), 2u);
  EXPECT_EQ(LmtUnitLen(8193, 4096, 0, 2), 1u);
  EXPECT_EQ(LmtUnitLen(8100, 4096, 100, 0), 4000u);
  EXPECT_EQ(LmtUnitLen(8100, 4096, 100, 2), 100u);
  EXPECT_EQ(LmtUnitLen(8100, 4096, 100, 3), 0u);
}

TEST(LmtUnitsTest, GpuUnitGrowsWithTheTransferWithinItsBounds) {
  const size_t k = 1024, m = 1024 * 1024;
  static_assert(kLmtGpuSplit == 2, "the cases below assume 1/2");
  EXPECT_EQ(LmtGpuUnit(1, 512 * k, 4 * m), 512 * k);
  EXPECT_EQ(LmtGpuUnit(m, 512 * k, 4 * m), 512 * k);  // 1 MiB / 2 = 512 KiB
  EXPECT_EQ(LmtGpuUnit(m + 1, 512 * k, 4 * m), m);    // rounds up
  EXPECT_EQ(LmtGpuUnit(4 * m, 512 * k, 4 * m), 2 * m);
  EXPECT_EQ(LmtGpuUnit(8 * m, 512 * k, 4 * m), 4 * m);
  EXPECT_EQ(LmtGpuUnit(16 * m, 512 * k, 4 * m), 4 * m);
  EXPECT_EQ(LmtGpuUnit(size_t{1} << 40, 512 * k, 4 * m), 4 * m);
  EXPECT_EQ(LmtGpuUnit(m, 4 * m, 2 * m), 2 * m);         // a minimum above the maximum is cut
  EXPECT_EQ(LmtGpuUnit(64 * m, 512 * k, 3 * m), 3 * m);  // a maximum that is not a power of two
  EXPECT_EQ(LmtGpuUnit(0, 512 * k, 2 * m), 512 * k);
}

TEST(LmtUnitsTest, FillBlockPrefersTheReceiversVector) {
  Layout c = Layout::Contiguous(10000);
  Layout v8 = Layout::Vector(100, 8, 16), v12 = Layout::Vector(100, 12, 20);
  Layout big = Layout::Vector(2, 5000, 6000);
  EXPECT_EQ(LmtFillBlock(c, c, 4096), 0u);
  EXPECT_EQ(LmtFillBlock(v8, c, 4096), 8u);
  EXPECT_EQ(LmtFillBlock(c, v12, 4096), 12u);
  EXPECT_EQ(LmtFillBlock(v8, v12, 4096), 12u);
  EXPECT_EQ(LmtFillBlock(c, big, 4096), 0u);
  EXPECT_EQ(LmtFillBlock(v8, big, 4096), 8u);
  EXPECT_EQ(LmtFillBlock(c, Layout::Vector(10, 8, 8), 4096), 0u);  // dense vector: contiguous
}

// Counts the copies CopyPacked issues.
class CountingEngine final : public CopyEngine {
 public:
  Status Issue(void* d, MemLoc dl, const void* s, MemLoc sl, size_t n) override {
    ++copies;
    return host.Issue(d, dl, s, sl, n);
  }
  Status Issue2D(void* d, MemLoc dl, size_t dp, const void* s, MemLoc sl, size_t sp, size_t w,
                 size_t h) override {
    ++copies2d;
    return host.Issue2D(d, dl, dp, s, sl, sp, w, h);
  }
  Status Mark(Ticket* t) override { return host.Mark(t); }
  Status Poll(Ticket t, bool* done) override { return host.Poll(t, done); }
  Status Wait(Ticket t) override { return host.Wait(t); }
  HostCopyEngine host;
  int copies = 0, copies2d = 0;
};

TEST(CopyPackedTest, HeadStridedMiddleTailRoundTrip) {
  const Layout v = Layout::Vector(50, 10, 24);
  std::vector<char> user(v.extent()), plain(v.packed_bytes()), back(v.extent());
  FillLayout(user.data(), v, 3);
  // Pack bytes [15, 15 + 437): head of 5 (block 1), 43 whole blocks, tail of 2.
  CountingEngine e;
  ASSERT_TRUE(CopyPacked(e, PackDir::kPack, user.data(), MemLoc::Host(), v, 15, 437,
                         plain.data(), MemLoc::Host())
                  .ok());
  EXPECT_EQ(e.copies, 2);
  EXPECT_EQ(e.copies2d, 1);
  EXPECT_EQ(testing::FirstMismatch(plain.data(), 437, 3, 15), -1);
  // Unpack the whole stream in two ranges into a cleared buffer.
  ASSERT_TRUE(CopyPacked(e, PackDir::kPack, user.data(), MemLoc::Host(), v, 0, 500,
                         plain.data(), MemLoc::Host())
                  .ok());
  ClearLayout(back.data(), v);
  ASSERT_TRUE(CopyPacked(e, PackDir::kUnpack, back.data(), MemLoc::Host(), v, 0, 123,
                         plain.data(), MemLoc::Host())
                  .ok());
  ASSERT_TRUE(CopyPacked(e, PackDir::kUnpack, back.data(), MemLoc::Host(), v, 123, 377,
                         plain.data() + 123, MemLoc::Host())
                  .ok());
  EXPECT_EQ(CheckLayout(back.data(), v, 3, 500), "");
}

TEST(CopyPackedTest, ContiguousIsOneCopyAndRangesAreChecked) {
  const Layout c = Layout::Contiguous(100);
  char user[100] = {}, plain[100] = {};
  CountingEngine e;
  ASSERT_TRUE(CopyPacked(e, PackDir::kPack, user, MemLoc::Host(), c, 10, 90, plain,
                         MemLoc::Host())
                  .ok());
  EXPECT_EQ(e.copies, 1);
  EXPECT_EQ(CopyPacked(e, PackDir::kPack, user, MemLoc::Host(), c, 10, 91, plain, MemLoc::Host())
                .code(),
            Err::kInvalidArg);
  EXPECT_EQ(CopyPacked(e, PackDir::kPack, user, MemLoc::Host(), Layout::Vector(3, 10, 5), 0, 1,
                       plain, MemLoc::Host())
                .code(),
            Err::kInvalidArg);  // overlapping blocks
  EXPECT_EQ(CopyPacked(e, PackDir::kPack, user, MemLoc::Host(), c, 0, 1, plain, MemLoc::Device(0))
                .code(),
            Err::kInvalidArg);  // the host engine cannot reach a device
}

struct Case {
  size_t capacity, max_units, unit, pending;
};

// Sender (vector or contiguous) -> receiver (vector or contiguous), `total` bytes, byte-verified.
void Transfer(LmtRing* ring, CopyEngine* se, CopyEngine* re, const Layout& sl, const Layout& rl,
              uint64_t total, size_t unit, size_t pending, uint32_t seed) {
  std::vector<char> src(sl.extent() + 1), dst(rl.extent() + 1);
  FillLayout(src.data(), sl, seed);
  ClearLayout(dst.data(), rl);
  LmtParams p;
  p.total_bytes = total;
  p.unit_bytes = unit;
  p.fill_block = LmtFillBlock(sl, rl, unit);
  p.max_pending = pending;
  LmtSender s;
  LmtReceiver r;
  Status st = LmtSender::Create(ring, se, LmtBuffer{src.data(), MemLoc::Host(), sl}, p, &s);
  ASSERT_TRUE(st.ok()) << st.ToString();
  st = LmtReceiver::Create(ring, re, LmtBuffer{dst.data(), MemLoc::Host(), rl}, p, &r);
  ASSERT_TRUE(st.ok()) << st.ToString();
  RunBoth(&s, &r, seed);
  EXPECT_EQ(CheckLayout(dst.data(), rl, seed, total), "")
      << "total " << total << " unit " << unit << " pending " << pending;
  EXPECT_TRUE(ring->AllEmpty());
}

const Case kCases[] = {
    {4 * 4096, 4, 4096, 4},     // unit = capacity / units
    {12 * 1000 + 388, 8, 1000, 2},  // more room than flags: 8 units of 1000
    {65536, 2, 32768, 1},       // two units, one copy in flight
    {4096, 1, 4096, 3},         // a single unit
    {10000, 16, 3000, 16},      // pending capped by the 3 units
};

TEST(LmtPipelineTest, ContiguousSizesAroundUnitAndCapacity) {
  HostCopyEngine e;
  uint32_t seed = 1;
  for (const Case& c : kCases) {
    TestRing t(c.capacity, c.max_units);
    size_t cap = t.ring.UnitsFor(c.unit) * c.unit;
    for (uint64_t total : {uint64_t{0}, uint64_t{1}, uint64_t{c.unit - 1}, uint64_t{c.unit},
                           uint64_t{c.unit + 1}, uint64_t{cap - 1}, uint64_t{cap},
                           uint64_t{cap + 1}, uint64_t{5 * cap + 17}}) {
      Layout l = Layout::Contiguous(total);
      Transfer(&t.ring, &e, &e, l, l, total, c.unit, c.pending, seed++);
    }
  }
}

TEST(LmtPipelineTest, VectorLayoutsOnEitherSide) {
  HostCopyEngine e;
  TestRing t(4 * 4096, 4);
  uint32_t seed = 100;
  const Layout vectors[] = {
      Layout::Vector(700, 100, 160),   // block fits a unit: units cut to 4000 bytes
      Layout::Vector(9, 5000, 5100),   // block larger than a unit: split across units
      Layout::Vector(16, 4096, 8192),  // block = unit
      Layout::Vector(1, 3000, 3000),   // a single block
  };
  for (const Layout& v : vectors) {
    uint64_t total = v.packed_bytes();
    Layout c = Layout::Contiguous(total);
    Transfer(&t.ring, &e, &e, v, c, total, 4096, 3, seed++);  // pack on the sender only
    Transfer(&t.ring, &e, &e, c, v, total, 4096, 3, seed++);  // unpack on the receiver only
    Transfer(&t.ring, &e, &e, v, v, total, 4096, 3, seed++);
    Transfer(&t.ring, &e, &e, v, v, total - 7, 4096, 3, seed++);  // message shorter than buffer
  }
  // Different blocks on the two sides: units are cut on the receiver's.
  Layout a = Layout::Vector(300, 120, 200), b = Layout::Vector(400, 90, 97);
  Transfer(&t.ring, &e, &e, a, b, 36000, 4096, 2, seed++);
  Transfer(&t.ring, &e, &e, b, a, 36000, 4096, 2, seed++);
}

TEST(LmtPipelineTest, LateCompletionsInRandomProgressOrder) {
  // Copies complete late and at random; sender and receiver progress in random order. Every
  // seed gives another interleaving; the bytes must always arrive whole and in place.
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    LateCopyEngine se(seed), re(seed * 7919);
    const Case& c = kCases[seed % 5];
    TestRing t(c.capacity, c.max_units);
    size_t cap = t.ring.UnitsFor(c.unit) * c.unit;
    uint64_t total = 3 * cap + seed * 37;
    Layout v = Layout::Vector((total + 99) / 100, 100, 130);
    Layout l = Layout::Contiguous(total);
    Transfer(&t.ring, &se, &re, seed % 2 ? v : l, seed % 3 ? l : v, total, c.unit, c.pending,
             seed);
  }
}

TEST(LmtPipelineTest, NextTransferWaitsForTheRingToDrainAndMayChangeUnitSize) {
  HostCopyEngine e;
  TestRing t(8 * 1024, 8);
  std::vector<char> a(20000), b(20000), out1(20000), out2(20000);
  testing::FillPattern(a.data(), a.size(), 1);
  testing::FillPattern(b.data(), b.size(), 2);
  LmtParams p1{20000, 1024, 0, 4}, p2{20000, 4096, 0, 2};
  Layout l = Layout::Contiguous(20000);
  LmtSender s1, s2;
  LmtReceiver r1, r2;
  ASSERT_TRUE(LmtSender::Create(&t.ring, &e, {a.data(), MemLoc::Host(), l}, p1, &s1).ok());
  ASSERT_TRUE(LmtReceiver::Create(&t.ring, &e, {out1.data(), MemLoc::Host(), l}, p1, &r1).ok());
  ASSERT_TRUE(LmtSender::Create(&t.ring, &e, {b.data(), MemLoc::Host(), l}, p2, &s2).ok());
  ASSERT_TRUE(LmtReceiver::Create(&t.ring, &e, {out2.data(), MemLoc::Host(), l}, p2, &r2).ok());
  bool sd = false, rd = false;
  // Sender 1 fills all 8 units; the receiver has not started.
  ASSERT_TRUE(s1.Progress(&sd).ok());
  EXPECT_FALSE(sd);
  EXPECT_EQ(s1.units_retired(), 8u);
  // Run transfer 1 to its last publish but leave units full; transfer 2's sender must wait.
  while (!sd) {
    ASSERT_TRUE(r1.Progress(&rd).ok());
    ASSERT_TRUE(s1.Progress(&sd).ok());
  }
  ASSERT_FALSE(rd);
  bool sd2 = false;
  ASSERT_TRUE(s2.Progress(&sd2).ok());
  EXPECT_EQ(s2.units_issued(), 0u);  // transfer 1 still has full units
  RunBoth(&s1, &r1, 5);
  RunBoth(&s2, &r2, 6);
  EXPECT_EQ(testing::FirstMismatch(out1.data(), out1.size(), 1), -1);
  EXPECT_EQ(testing::FirstMismatch(out2.data(), out2.size(), 2), -1);
}

TEST(LmtPipelineTest, ChainedTransfersRefillUnitsWhileThePreviousOneDrains) {
  // Four transfers of one unit size in a row, as the transport chains them: transfer i+1 starts
  // at the unit after transfer i's last and does not wait for the ring to drain. Each side runs
  // its transfers in order (the next one once its own part of the previous is done); progress
  // and copy completions are random. The bytes must arrive whole, and the senders must have run
  // ahead of the receivers (that is the point of chaining).
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    LateCopyEngine se(seed), re(seed * 104729);
    TestRing t(8 * 1024, 8);
    const size_t n = t.ring.UnitsFor(1024);
    constexpr int kTransfers = 4;
    const uint64_t total = 9000 + seed * 311;  // 9..15 units: the slots wrap around differently
    const Layout l = Layout::Contiguous(total);
    std::vector<std::vector<char>> in(kTransfers, std::vector<char>(total)),
        out(kTransfers, std::vector<char>(total));
    LmtSender s[kTransfers];
    LmtReceiver r[kTransfers];
    size_t slot = 0;
    for (int i = 0; i < kTransfers; ++i) {
      testing::FillPattern(in[i].data(), total, seed * 10 + i);
      LmtParams p{total, 1024, 0, 3};
      p.first_slot = slot;
      p.wait_drained = i == 0;
      ASSERT_TRUE(LmtSender::Create(&t.ring, &se, {in[i].data(), MemLoc::Host(), l}, p, &s[i]).ok());
      ASSERT_TRUE(
          LmtReceiver::Create(&t.ring, &re, {out[i].data(), MemLoc::Host(), l}, p, &r[i]).ok());
      slot = (slot + s[i].units_total()) % n;
    }
    std::mt19937 rng(seed);
    int si = 0, ri = 0;
    bool ran_ahead = false;
    for (int step = 0; step < 1'000'000 && ri < kTransfers; ++step) {
      bool done = false;
      if ((rng() & 1) && si < kTransfers) {
        ASSERT_TRUE(s[si].Progress(&done).ok());
        if (done) ++si;
      } else {
        ASSERT_TRUE(r[ri].Progress(&done).ok());
        if (done) ++ri;
      }
      ran_ahead |= si > ri && si < kTransfers && s[si].units_issued() > 0;
    }
    ASSERT_EQ(ri, kTransfers) << "seed " << seed << ": the chain did not finish";
    for (int i = 0; i < kTransfers; ++i)
      EXPECT_EQ(testing::FirstMismatch(out[i].data(), total, seed * 10 + i), -1)
          << "seed " << seed << " transfer " << i;
    EXPECT_TRUE(t.ring.AllEmpty());
    EXPECT_TRUE(ran_ahead) << "seed " << seed << ": no sender ever ran ahead of its receiver";
  }
}

TEST(LmtPipelineTest, ZeroBytesCompleteAtOnce) {
  HostCopyEngine e;
  TestRing t(4096, 1);
  LmtParams p{0, 4096, 0, 1};
  LmtSender s;
  LmtReceiver r;
  ASSERT_TRUE(LmtSender::Create(&t.ring, &e, {nullptr, MemLoc::Host(), {}}, p, &s).ok());
  ASSERT_TRUE(LmtReceiver::Create(&t.ring, &e, {nullptr, MemLoc::Host(), {}}, p, &r).ok());
  bool done = false;
  ASSERT_TRUE(s.Progress(&done).ok());
  EXPECT_TRUE(done);
  done = false;
  ASSERT_TRUE(r.Progress(&done).ok());
  EXPECT_TRUE(done);
}

TEST(LmtPipelineTest, CreateRejectsBadArguments) {
  HostCopyEngine e;
  TestRing t(4 * 4096, 4);
  char buf[8192];
  LmtBuffer b{buf, MemLoc::Host(), Layout::Contiguous(sizeof buf)};
  LmtSender s;
  LmtRing unformatted;
  EXPECT_EQ(LmtSender::Create(&unformatted, &e, b, {100, 4096, 0, 1}, &s).code(),
            Err::kInvalidArg);
  EXPECT_EQ(LmtSender::Create(&t.ring, nullptr, b, {100, 4096, 0, 1}, &s).code(),
            Err::kInvalidArg);
  EXPECT_EQ(LmtSender::Create(&t.ring, &e, b, {100, 0, 0, 1}, &s).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtSender::Create(&t.ring, &e, b, {100, 65536, 0, 1}, &s).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtSender::Create(&t.ring, &e, b, {100, 4096, 0, 0}, &s).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtSender::Create(&t.ring, &e, b, {8193, 4096, 0, 1}, &s).code(), Err::kInvalidArg);
  LmtParams past_end{100, 4096, 0, 1};
  past_end.first_slot = t.ring.UnitsFor(4096);  // slots are 0..n-1
  EXPECT_EQ(LmtSender::Create(&t.ring, &e, b, past_end, &s).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtSender::Create(&t.ring, &e, {nullptr, MemLoc::Host(), b.layout},
                              {100, 4096, 0, 1}, &s)
                .code(),
            Err::kInvalidArg);
  bool done;
  EXPECT_EQ(s.Progress(&done).code(), Err::kInvalidArg);  // never created
}

TEST(LmtPipelineTest, MismatchedUnitLengthsAreReportedAndEngineErrorsPropagate) {
  HostCopyEngine e;
  TestRing t(4 * 4096, 4);
  std::vector<char> src(10000), dst(10000);
  Layout l = Layout::Contiguous(10000);
  LmtSender s;
  LmtReceiver r;
  // The sides disagree on the fill block.
  ASSERT_TRUE(LmtSender::Create(&t.ring, &e, {src.data(), MemLoc::Host(), l},
                                {10000, 4096, 0, 2}, &s).ok());
  ASSERT_TRUE(LmtReceiver::Create(&t.ring, &e, {dst.data(), MemLoc::Host(), l},
                                  {10000, 4096, 100, 2}, &r).ok());
  bool done = false;
  ASSERT_TRUE(s.Progress(&done).ok());
  Status st = r.Progress(&done);
  EXPECT_EQ(st.code(), Err::kInternal) << st.ToString();
  EXPECT_EQ(r.Progress(&done).code(), Err::kInternal);  // the error sticks

  // A device buffer handed to the host engine: the engine's error comes back from Progress.
  TestRing t2(4 * 4096, 4);
  LmtSender s2;
  ASSERT_TRUE(LmtSender::Create(&t2.ring, &e, {src.data(), MemLoc::Device(0), l},
                                {10000, 4096, 0, 2}, &s2).ok());
  EXPECT_EQ(s2.Progress(&done).code(), Err::kInvalidArg);
  EXPECT_FALSE(done);
}

}  // namespace
}  // namespace mpigpu

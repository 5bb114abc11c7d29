// LmtRing in one process: layout, Format/Attach checks, and the flag protocol.
#include "ringbuf/lmt_ring.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "tests/lmt_test_util.h"

namespace mpigpu {
namespace {

using testing::PageBlock;

TEST(LmtRingTest, BytesForCoversHeaderFlagsAndData) {
  EXPECT_EQ(LmtRing::BytesFor(0, 4), 0u);
  EXPECT_EQ(LmtRing::BytesFor(4096, 0), 0u);
  EXPECT_EQ(LmtRing::BytesFor(LmtRing::kMaxCapacity + 1, 4), 0u);
  EXPECT_EQ(LmtRing::BytesFor(4096, LmtRing::kMaxUnits + 1), 0u);
  // 64-byte header + 4 flags fit in one page; the data follows on the next.
  EXPECT_EQ(LmtRing::BytesFor(4 * 65536, 4), 4096u + 4 * 65536u);
  // 100 flags take 6464 bytes: data starts at 8192; odd capacities round up to a page.
  EXPECT_EQ(LmtRing::BytesFor(5000, 100), 8192u + 8192u);
}

TEST(LmtRingTest, FormatLaysOutAlignedDataAndEmptyFlags) {
  const size_t cap = 3 * 4096 + 100, units = 70;
  PageBlock mem(LmtRing::BytesFor(cap, units));
  std::memset(mem.get(), 0xFF, mem.bytes);  // Format must clear every flag
  LmtRing ring;
  ASSERT_TRUE(LmtRing::Format(mem.get(), mem.bytes, cap, units, &ring).ok());
  EXPECT_TRUE(ring.valid());
  EXPECT_EQ(ring.capacity(), cap);
  EXPECT_EQ(ring.max_units(), units);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ring.data()) % 4096, 0u);
  EXPECT_GE(ring.data(), mem.get() + 64 + 64 * units);
  EXPECT_LE(ring.data() + cap, mem.get() + mem.bytes);
  EXPECT_TRUE(ring.AllEmpty());
  for (size_t i = 0; i < units; ++i) EXPECT_EQ(ring.unit_len(i), 0u);
}

TEST(LmtRingTest, FormatRejectsBadArguments) {
  PageBlock mem(LmtRing::BytesFor(65536, 4));
  LmtRing ring;
  EXPECT_EQ(LmtRing::Format(nullptr, mem.bytes, 65536, 4, &ring).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtRing::Format(mem.get(), mem.bytes, 65536, 4, nullptr).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtRing::Format(mem.get(), mem.bytes, 0, 4, &ring).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtRing::Format(mem.get(), mem.bytes, 65536, 0, &ring).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtRing::Format(mem.get(), mem.bytes - 1, 65536, 4, &ring).code(), Err::kInvalidArg);
  EXPECT_EQ(LmtRing::Format(mem.get() + 64, mem.bytes - 64, 4096, 4, &ring).code(),
            Err::kInvalidArg);  // not page-aligned
  EXPECT_FALSE(ring.valid());
}

TEST(LmtRingTest, AttachSeesTheSameRingAndChecksTheHeader) {
  PageBlock mem(LmtRing::BytesFor(65536, 4));
  LmtRing a, b;
  ASSERT_TRUE(LmtRing::Format(mem.get(), mem.bytes, 65536, 4, &a).ok());
  ASSERT_TRUE(LmtRing::Attach(mem.get(), mem.bytes, &b).ok());
  EXPECT_EQ(b.capacity(), 65536u);
  EXPECT_EQ(b.max_units(), 4u);
  EXPECT_EQ(b.data(), a.data());
  a.publish(2, 77);
  EXPECT_EQ(b.unit_len(2), 77u);

  EXPECT_EQ(LmtRing::Attach(mem.get(), mem.bytes - 4096, &b).code(), Err::kInvalidArg);
  auto* h = reinterpret_cast<LmtRingHeader*>(mem.get());
  h->version = LmtRing::kVersion + 1;
  EXPECT_EQ(LmtRing::Attach(mem.get(), mem.bytes, &b).code(), Err::kInvalidArg);
  h->version = LmtRing::kVersion;
  h->max_units = 1 << 12;  // a damaged size must not send offsets outside the range
  EXPECT_EQ(LmtRing::Attach(mem.get(), mem.bytes, &b).code(), Err::kInvalidArg);
  h->max_units = 4;
  h->magic = 0;
  EXPECT_EQ(LmtRing::Attach(mem.get(), mem.bytes, &b).code(), Err::kInvalidArg);
  PageBlock zero(8192);
  std::memset(zero.get(), 0, zero.bytes);
  EXPECT_EQ(LmtRing::Attach(zero.get(), zero.bytes, &b).code(), Err::kInvalidArg);
}

TEST(LmtRingTest, UnitsForDependsOnUnitSize) {
  testing::TestRing t(10 * 1000, 8);
  EXPECT_EQ(t.ring.UnitsFor(0), 0u);
  EXPECT_EQ(t.ring.UnitsFor(10001), 0u);
  EXPECT_EQ(t.ring.UnitsFor(10000), 1u);
  EXPECT_EQ(t.ring.UnitsFor(3000), 3u);
  EXPECT_EQ(t.ring.UnitsFor(1000), 8u);  // capped by the flag count
  EXPECT_EQ(t.ring.unit_data(3, 1000), t.ring.data() + 3000);
}

TEST(LmtRingTest, FlagsHandUnitsBackAndForth) {
  testing::TestRing t(4 * 4096, 4);
  LmtRing& r = t.ring;
  for (size_t i = 0; i < 4; ++i) EXPECT_TRUE(r.unit_empty(i));
  std::memset(r.unit_data(1, 4096), 7, 4096);
  r.publish(1, 4096);
  EXPECT_FALSE(r.unit_empty(1));
  EXPECT_FALSE(r.AllEmpty());
  EXPECT_TRUE(r.unit_empty(0));
  EXPECT_EQ(r.unit_len(1), 4096u);
  EXPECT_EQ(r.unit_len(0), 0u);
  EXPECT_EQ(r.unit_data(1, 4096)[4095], 7);
  r.release_unit(1);
  EXPECT_TRUE(r.unit_empty(1));
  EXPECT_TRUE(r.AllEmpty());
}

}  // namespace
}  // namespace mpigpu

// Helpers for the LMT ring and pipeline tests: page-aligned rings, pattern-filled layouts, and a
// driver that runs a sender and a receiver to completion with a bounded number of steps.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "pipeline/layout.h"
#include "pipeline/pipeline.h"
#include "ringbuf/lmt_ring.h"
#include "memcopy/pattern.h"

namespace mpigpu::testing {

// A page-aligned heap block (what a segment hands out), freed on destruction.
struct PageBlock {
  explicit PageBlock(size_t bytes)
      : bytes(bytes), mem(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096), &std::free) {}
  char* get() const { return static_cast<char*>(mem.get()); }
  size_t bytes;
  std::unique_ptr<void, decltype(&std::free)> mem;
};

// A formatted ring in its own page-aligned block.
struct TestRing {
  TestRing(size_t capacity, size_t max_units)
      : block(LmtRing::BytesFor(capacity, max_units)) {
    Status s = LmtRing::Format(block.get(), block.bytes, capacity, max_units, &ring);
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  PageBlock block;
  LmtRing ring;
};

// Byte the gaps of a receiver's vector buffer hold before and after the transfer.
constexpr uint8_t kGapByte = 0xA5;

// Writes PatternByte(seed, p) at packed-stream position p of `layout` in `user`, and a different
// pattern (seed + 1000) into the gaps between blocks.
inline void FillLayout(char* user, const Layout& layout, uint32_t seed) {
  FillPattern(user, layout.extent(), seed + 1000);
  for (size_t b = 0; b < layout.count; ++b)
    FillPattern(user + b * layout.stride, layout.block, seed, b * layout.block);
}

// Gaps of `layout` set to kGapByte, blocks to zero.
inline void ClearLayout(char* user, const Layout& layout) {
  std::memset(user, kGapByte, layout.extent());
  for (size_t b = 0; b < layout.count; ++b) std::memset(user + b * layout.stride, 0, layout.block);
}

// Checks the first `total` packed bytes against the pattern, the rest of the blocks still zero
// and every gap byte untouched. Returns "" or a description of the first wrong byte.
inline std::string CheckLayout(const char* user, const Layout& layout, uint32_t seed,
                               uint64_t total) {
  for (size_t b = 0; b < layout.count; ++b) {
    const char* blk = user + b * layout.stride;
    uint64_t first = uint64_t{b} * layout.block;
    size_t data = total > first ? std::min<uint64_t>(layout.block, total - first) : 0;
    long long bad = FirstMismatch(blk, data, seed, first);
    if (bad >= 0) return "packed byte " + std::to_string(first + bad) + " wrong";
    for (size_t i = data; i < layout.block; ++i)
      if (blk[i] != 0) return "byte past the message in block " + std::to_string(b) + " written";
    if (b + 1 < layout.count)
      for (size_t i = layout.block; i < layout.stride; ++i)
        if (static_cast<uint8_t>(blk[i]) != kGapByte)
          return "gap byte after block " + std::to_string(b) + " written";
  }
  return "";
}

// Drives both sides to completion, choosing at random which one progresses next (seeded, so a
// failure repeats). Fails instead of spinning forever when nothing finishes in `max_steps`.
inline void RunBoth(LmtSender* s, LmtReceiver* r, uint32_t seed, size_t max_steps = 50'000'000) {
  std::mt19937 rng(seed);
  bool sdone = false, rdone = false;
  for (size_t step = 0; step < max_steps && !(sdone && rdone); ++step) {
    Status st = (rng() & 1) ? s->Progress(&sdone) : r->Progress(&rdone);
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  ASSERT_TRUE(sdone && rdone) << "pipeline did not finish: sender " << s->units_retired() << "/"
                              << s->units_total() << ", receiver " << r->units_retired() << "/"
                              << r->units_total();
}

}  // namespace mpigpu::testing

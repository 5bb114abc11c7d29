#include "tools/sweep_check.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "perf/api_check.h"

namespace mpigpu {
namespace sweep {
namespace {

// -c sends up to a window of messages into separate slots; this bounds the slots' memory.
constexpr size_t kCheckBytes = size_t{64} << 20;

// Distinct per size, sending rank and slot, so a stale or misplaced message is caught.
uint32_t Seed(size_t size_index, int sender, int slot) {
  return static_cast<uint32_t>((size_index + 1) * 100000 + static_cast<size_t>(sender) * 10000 +
                               static_cast<size_t>(slot));
}
constexpr uint32_t kPoisonSeed = 0xDEADu;

[[noreturn]] void CheckFailed(const Ctx& c, size_t size, const char* what, int slots,
                              const Mismatch& m) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "DATA CHECK FAILED: %s %s, %zu-byte %s %d of %d received by rank %d: byte %lld "
                "is 0x%02x, expected 0x%02x",
                TestName(c.test), PairName(c.pair).c_str(), size, what, m.slot + 1, slots, c.rank,
                m.byte, m.got, m.want);
  Die(kExitCheckFailed, buf);
}

}  // namespace

size_t CheckBufferBytes(const Options& o) {
  return std::min(o.max_size * static_cast<size_t>(o.window), std::max(kCheckBytes, o.max_size));
}

Status PrepareCheck(Ctx& c, size_t size_index, size_t size) {
  if (Sends(c)) MPIGPU_RETURN_IF_ERROR(c.sbuf.Fill(size, {Seed(size_index, c.rank, 0)}));
  if (Receives(c)) MPIGPU_RETURN_IF_ERROR(c.rbuf.Fill(size, {kPoisonSeed}));
  return Status::Ok();
}

Status CheckSize(Ctx& c, size_t size_index, size_t size) {
  Mismatch m;
  if (Receives(c)) {
    MPIGPU_RETURN_IF_ERROR(c.rbuf.Verify(size, {Seed(size_index, c.peer, 0)}, &m));
    if (m.slot >= 0) CheckFailed(c, size, "timed message (the last)", 1, m);
  }

  int slots = 1;
  if (c.test != Test::kLatency) {
    size_t fit = size == 0 ? static_cast<size_t>(c.o->window) : kCheckBytes / size;
    slots = static_cast<int>(std::max<size_t>(1, std::min<size_t>(c.o->window, fit)));
  }
  std::vector<uint32_t> mine, theirs;
  for (int k = 0; k < slots; ++k) {
    mine.push_back(Seed(size_index, c.rank, k + 1));
    theirs.push_back(Seed(size_index, c.peer, k + 1));
  }
  if (Sends(c)) MPIGPU_RETURN_IF_ERROR(c.check_s.Fill(size, mine));
  if (Receives(c))
    MPIGPU_RETURN_IF_ERROR(c.check_r.Fill(size, std::vector<uint32_t>(slots, kPoisonSeed)));
  PERF_API(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
  std::vector<MPIGPU_Request> reqs;
  for (int k = 0; k < slots; ++k) {
    const size_t off = static_cast<size_t>(k) * size;
    if (Receives(c)) {
      reqs.emplace_back();
      PERF_API(MPIGPU_Irecv(c.check_r.at(off), c.check_r.tag(), Count(size), MPIGPU_BYTE, c.peer,
                            kTagCheck, MPIGPU_COMM_WORLD, &reqs.back()));
    }
    if (Sends(c)) {
      reqs.emplace_back();
      PERF_API(MPIGPU_Isend(c.check_s.at(off), c.check_s.tag(), Count(size), MPIGPU_BYTE, c.peer,
                            kTagCheck, MPIGPU_COMM_WORLD, &reqs.back()));
    }
  }
  PERF_API(MPIGPU_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPIGPU_STATUSES_IGNORE));
  if (Receives(c)) {
    MPIGPU_RETURN_IF_ERROR(c.check_r.Verify(size, theirs, &m));
    if (m.slot >= 0) CheckFailed(c, size, "check message", slots, m);
  }
  return Status::Ok();
}

}  // namespace sweep
}  // namespace mpigpu

// The async DMA pipelining engine: the sender and receiver loops of the seed paper's Algorithm 1
// (Ji et al., "Efficient Intranode Communication in GPU-Accelerated Systems"), moving one large
// message through an LmtRing.
//
// The message is the first `total_bytes` of the sender's packed stream (see layout.h); it is cut
// into units of LmtUnitFill(unit_bytes, fill_block) bytes (the last one shorter). Unit k of the
// transfer goes through ring unit (first_slot + k) mod n, n = ring.UnitsFor(unit_bytes).
//
// Sender, two indices, both advanced only by the sender:
//   Sa (ahead)   next unit to fill. While unit Sa's flag is empty and fewer than `cap` copies are
//                in flight, issue the copy user -> unit Sa and advance Sa.
//   Sr (retire)  oldest unit whose copy is in flight. When its copy is done, publish(Sr, len)
//                and advance Sr.
// Receiver, mirrored:
//   Ra (ahead)   next unit to drain. While unit Ra's flag is full and fewer than `cap` copies are
//                in flight, issue the copy unit Ra -> user and advance Ra.
//   Rr (retire)  when the copy of unit Rr is done, release_unit(Rr) and advance Rr.
// cap = min(max_pending, n), so Sa - Sr <= n and Ra - Rr <= n: an in-flight unit (its flag not
// yet flipped) is never handed out a second time.
//
// Why retirement is in order: the receiver drains units strictly in order, so publishing unit
// k+1 before unit k would gain nothing; in-order flips keep each side's whole state in two
// counters, and on one CUDA stream the copies complete in order anyway.
//
// Progress(done) is re-entrant and never blocks: it does what can be done now (retire finished
// copies, issue new ones) and returns, so the transport's progress engine can call it among other
// work until *done. All state lives in the object.
//
// Surfeit rule (the paper's): when fill_block is set (a vector block that fits in a unit), every
// unit carries whole blocks only, LmtUnitFill = largest multiple of fill_block <= unit_bytes;
// what does not fit moves ahead into the next unit. Both sides compute unit lengths with the same
// LmtUnitLen(); the receiver checks each published length against it.
//
// Preconditions the transport keeps: transfers on one ring run one at a time on each side and in
// the same order on both (each side starts the next once its own part of the previous is done);
// the first slot follows the rule in ringbuf/lmt_ring.h. A sender with wait_drained starts
// issuing only once every flag is empty (Progress waits for it), so the previous transfer is fully
// drained when the unit size changes; a chained sender (same unit size, first_slot where the
// previous transfer ended) refills units as the receiver frees them, so the ring does not run dry
// between messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "memcopy/memloc.h"
#include "memcopy/status.h"
#include "pipeline/copy_engine.h"
#include "pipeline/layout.h"
#include "ringbuf/lmt_ring.h"

namespace mpigpu {

// Bytes each unit carries: unit_bytes cut down to a multiple of fill_block when 0 < fill_block <=
// unit_bytes; unit_bytes otherwise.
size_t LmtUnitFill(size_t unit_bytes, size_t fill_block);
// Units a transfer of `total` bytes takes (0 for an empty transfer).
uint64_t LmtUnitCount(uint64_t total, size_t unit_bytes, size_t fill_block);
// Bytes unit k (0-based, k < LmtUnitCount) carries.
uint64_t LmtUnitLen(uint64_t total, size_t unit_bytes, size_t fill_block, uint64_t k);
// The block to cut units on, agreed in the handshake: the receiver's vector block when it fits in
// a unit (its unpack then moves whole blocks), else the sender's, else 0 (no cutting).
size_t LmtFillBlock(const Layout& send, const Layout& recv, size_t unit_bytes);

// The ring unit of a transfer of `total` bytes with a GPU buffer on either side: min_unit doubled
// until it reaches total / kLmtGpuSplit, at most max_unit (min_unit is cut to max_unit). Every
// copy has a fixed cost of about 3 us on the H200 node, so large units win; a lone message pays
// the pipeline's fill and drain (about one unit's copy each), so it wants at least two units.
// Messages in a row are chained through the ring (no fill or drain between them), and there
// half the message beat an eighth at every size from 1 to 64 MiB (2×H200, 2026-11-22, fixed and
// adaptive units with chaining: benchmarks/results/2026-11-22-ring-chaining-h200x2/).
inline constexpr uint64_t kLmtGpuSplit = 2;
size_t LmtGpuUnit(uint64_t total, size_t min_unit, size_t max_unit);

// One side's user buffer.
struct LmtBuffer {
  void* ptr = nullptr;
  MemLoc loc = MemLoc::Host();
  Layout layout;  // its packed stream holds at least total_bytes
};

// What both sides agree on in the rendezvous handshake (max_pending is each side's own).
struct LmtParams {
  uint64_t total_bytes = 0;
  size_t unit_bytes = 0;   // MPIGPU_LMT_UNIT_HOST or MPIGPU_LMT_UNIT_GPU
  size_t fill_block = 0;   // LmtFillBlock(...)
  size_t max_pending = 1;  // MPIGPU_LMT_MAX_PENDING
  size_t first_slot = 0;   // ring unit of the transfer's unit 0 (< ring.UnitsFor(unit_bytes))
  bool wait_drained = true;  // sender: issue only once every flag is empty (see above)
};

// What both sides share: parameters, the two indices and the tickets of the copies in flight.
class LmtPipelineBase {
 public:
  virtual ~LmtPipelineBase() = default;
  // Does what can be done now and returns; *done once this side has flipped every unit's flag
  // (sender: all published, the receiver may still be draining; receiver: all copied into the
  // user buffer and released). After an error every call returns that error.
  Status Progress(bool* done);
  uint64_t units_total() const { return units_; }
  // Units whose flags this side has flipped (published / released).
  uint64_t units_retired() const { return retired_; }
  uint64_t units_issued() const { return ahead_; }

 protected:
  Status Init(LmtRing* ring, CopyEngine* engine, const LmtBuffer& buf, const LmtParams& params,
              const char* side);
  // Retire finished copies, issue new ones.
  virtual Status Step() = 0;
  // Flips the flags of finished copies, oldest first, up to the first unfinished one.
  virtual Status Retire() = 0;
  // Issues copies while the ahead unit is ready and the pending cap allows.
  virtual Status Issue() = 0;
  // Retire + Issue until nothing changes.
  Status RunPasses();
  uint64_t UnitLen(uint64_t k) const;
  // Ring unit of the transfer's unit k, and its data.
  size_t Slot(uint64_t k) const { return (params_.first_slot + k) % ring_units_; }
  char* UnitData(uint64_t k) const;

  LmtRing* ring_ = nullptr;
  CopyEngine* engine_ = nullptr;
  LmtBuffer buf_;
  LmtParams params_;
  size_t fill_ = 0;          // bytes per full unit
  size_t ring_units_ = 0;    // n
  size_t cap_ = 0;           // min(max_pending, n)
  uint64_t units_ = 0;       // units in the transfer
  uint64_t ahead_ = 0;       // Sa / Ra
  uint64_t retired_ = 0;     // Sr / Rr
  std::vector<Ticket> tickets_;  // ticket of unit k at k % cap_, for ahead_ > k >= retired_
  Status error_;             // the first error; every later Progress returns it
};

class LmtSender : public LmtPipelineBase {
 public:
  // kInvalidArg for a bad ring, engine, buffer or parameter (message names it).
  static Status Create(LmtRing* ring, CopyEngine* engine, const LmtBuffer& src,
                       const LmtParams& params, LmtSender* out);

 private:
  Status Step() override;
  Status Retire() override;
  Status Issue() override;
  bool started_ = false;  // the ring was seen drained (or need not be); issuing may begin
};

class LmtReceiver : public LmtPipelineBase {
 public:
  static Status Create(LmtRing* ring, CopyEngine* engine, const LmtBuffer& dst,
                       const LmtParams& params, LmtReceiver* out);

 private:
  Status Step() override;
  Status Retire() override;
  Status Issue() override;
};

}  // namespace mpigpu

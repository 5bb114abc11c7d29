#include "pipeline/pipeline.h"

#include <algorithm>
#include <string>

namespace mpigpu {

size_t LmtUnitFill(size_t unit_bytes, size_t fill_block) {
  if (fill_block == 0 || fill_block > unit_bytes) return unit_bytes;
  return unit_bytes - unit_bytes % fill_block;
}

uint64_t LmtUnitCount(uint64_t total, size_t unit_bytes, size_t fill_block) {
  size_t fill = LmtUnitFill(unit_bytes, fill_block);
  return fill == 0 ? 0 : (total + fill - 1) / fill;
}

uint64_t LmtUnitLen(uint64_t total, size_t unit_bytes, size_t fill_block, uint64_t k) {
  uint64_t fill = LmtUnitFill(unit_bytes, fill_block);
  uint64_t start = k * fill;
  if (start >= total) return 0;
  return total - start < fill ? total - start : fill;
}

size_t LmtGpuUnit(uint64_t total, size_t min_unit, size_t max_unit) {
  min_unit = std::min(min_unit, max_unit);
  const uint64_t want = (total + kLmtGpuSplit - 1) / kLmtGpuSplit;
  size_t unit = min_unit;
  while (unit < want && unit < max_unit) unit = unit > max_unit / 2 ? max_unit : unit * 2;
  return unit;
}

size_t LmtFillBlock(const Layout& send, const Layout& recv, size_t unit_bytes) {
  if (!recv.contiguous() && recv.block > 0 && recv.block <= unit_bytes) return recv.block;
  if (!send.contiguous() && send.block > 0 && send.block <= unit_bytes) return send.block;
  return 0;
}

Status LmtPipelineBase::Init(LmtRing* ring, CopyEngine* engine, const LmtBuffer& buf,
                             const LmtParams& params, const char* side) {
  std::string who = std::string("LMT ") + side + ": ";
  if (ring == nullptr || !ring->valid())
    return Status(Err::kInvalidArg, who + "ring is not formatted or attached");
  if (engine == nullptr) return Status(Err::kInvalidArg, who + "null copy engine");
  size_t n = ring->UnitsFor(params.unit_bytes);
  if (n == 0)
    return Status(Err::kInvalidArg, who + "unit size " + std::to_string(params.unit_bytes) +
                                        " does not fit a ring of " +
                                        std::to_string(ring->capacity()) + " bytes");
  if (params.max_pending == 0) return Status(Err::kInvalidArg, who + "max_pending is 0");
  if (params.first_slot >= n)
    return Status(Err::kInvalidArg, who + "first slot " + std::to_string(params.first_slot) +
                                        " is not below the ring's " + std::to_string(n) +
                                        " units");
  if (params.total_bytes > 0) {
    MPIGPU_RETURN_IF_ERROR(buf.layout.Validate());
    if (buf.ptr == nullptr) return Status(Err::kInvalidArg, who + "null user buffer");
    if (buf.layout.packed_bytes() < params.total_bytes)
      return Status(Err::kInvalidArg, who + "user buffer holds " +
                                          std::to_string(buf.layout.packed_bytes()) +
                                          " bytes, the transfer " +
                                          std::to_string(params.total_bytes));
  }
  ring_ = ring;
  engine_ = engine;
  buf_ = buf;
  params_ = params;
  fill_ = LmtUnitFill(params.unit_bytes, params.fill_block);
  ring_units_ = n;
  cap_ = params.max_pending < n ? params.max_pending : n;
  units_ = LmtUnitCount(params.total_bytes, params.unit_bytes, params.fill_block);
  ahead_ = retired_ = 0;
  tickets_.assign(cap_, 0);
  error_ = Status::Ok();
  return Status::Ok();
}

uint64_t LmtPipelineBase::UnitLen(uint64_t k) const {
  return LmtUnitLen(params_.total_bytes, params_.unit_bytes, params_.fill_block, k);
}

char* LmtPipelineBase::UnitData(uint64_t k) const {
  return ring_->unit_data(Slot(k), params_.unit_bytes);
}

Status LmtPipelineBase::Progress(bool* done) {
  if (done == nullptr) return Status(Err::kInvalidArg, "LMT pipeline: null done flag");
  *done = false;
  if (ring_ == nullptr) return Status(Err::kInvalidArg, "LMT pipeline used before Create");
  if (!error_.ok()) return error_;
  if (retired_ < units_) {
    Status s = Step();
    if (!s.ok()) {
      error_ = s;
      return s;
    }
  }
  *done = retired_ == units_;
  return Status::Ok();
}

Status LmtPipelineBase::RunPasses() {
  // Retire, then issue, until a pass changes nothing: copies that finish at once (host engine)
  // flip their flags in this same call, and units the peer frees meanwhile are refilled. At most
  // one lap of the ring per call, so a fast peer cannot keep one call going for the whole message.
  const uint64_t lap_end = ahead_ + ring_units_;
  for (;;) {
    uint64_t before = ahead_ + retired_;
    MPIGPU_RETURN_IF_ERROR(Retire());
    if (ahead_ < lap_end) MPIGPU_RETURN_IF_ERROR(Issue());
    if (ahead_ + retired_ == before) return Status::Ok();
  }
}

// ---- sender ----

Status LmtSender::Create(LmtRing* ring, CopyEngine* engine, const LmtBuffer& src,
                         const LmtParams& params, LmtSender* out) {
  if (out == nullptr) return Status(Err::kInvalidArg, "LMT sender: null output");
  LmtSender s;
  MPIGPU_RETURN_IF_ERROR(s.Init(ring, engine, src, params, "sender"));
  *out = std::move(s);
  return Status::Ok();
}

Status LmtSender::Retire() {
  while (retired_ < ahead_) {
    bool done = false;
    MPIGPU_RETURN_IF_ERROR(engine_->Poll(tickets_[retired_ % cap_], &done));
    if (!done) break;
    ring_->publish(Slot(retired_), UnitLen(retired_));
    ++retired_;
  }
  return Status::Ok();
}

Status LmtSender::Issue() {
  // Sa - Sr < cap <= n: unit Sa is not one of ours in flight, so "empty" means the receiver
  // released it.
  while (ahead_ < units_ && ahead_ - retired_ < cap_ && ring_->unit_empty(Slot(ahead_))) {
    MPIGPU_RETURN_IF_ERROR(CopyPacked(*engine_, PackDir::kPack, buf_.ptr, buf_.loc, buf_.layout,
                                      ahead_ * fill_, UnitLen(ahead_), UnitData(ahead_),
                                      MemLoc::Host()));
    MPIGPU_RETURN_IF_ERROR(engine_->Mark(&tickets_[ahead_ % cap_]));
    ++ahead_;
  }
  return Status::Ok();
}

Status LmtSender::Step() {
  if (!started_) {
    // The previous transfer used another unit size and is still draining.
    if (params_.wait_drained && !ring_->AllEmpty()) return Status::Ok();
    started_ = true;
  }
  return RunPasses();
}

// ---- receiver ----

Status LmtReceiver::Create(LmtRing* ring, CopyEngine* engine, const LmtBuffer& dst,
                           const LmtParams& params, LmtReceiver* out) {
  if (out == nullptr) return Status(Err::kInvalidArg, "LMT receiver: null output");
  LmtReceiver r;
  MPIGPU_RETURN_IF_ERROR(r.Init(ring, engine, dst, params, "receiver"));
  *out = std::move(r);
  return Status::Ok();
}

Status LmtReceiver::Retire() {
  while (retired_ < ahead_) {
    bool done = false;
    MPIGPU_RETURN_IF_ERROR(engine_->Poll(tickets_[retired_ % cap_], &done));
    if (!done) break;
    ring_->release_unit(Slot(retired_));
    ++retired_;
  }
  return Status::Ok();
}

Status LmtReceiver::Issue() {
  // Ra - Rr < cap <= n: unit Ra is not one we are still copying out of.
  while (ahead_ < units_ && ahead_ - retired_ < cap_) {
    uint64_t len = ring_->unit_len(Slot(ahead_));
    if (len == 0) break;  // the sender has not published it yet
    if (len != UnitLen(ahead_))
      return Status(Err::kInternal,
                    "LMT receiver: unit " + std::to_string(ahead_) + " carries " +
                        std::to_string(len) + " bytes, expected " +
                        std::to_string(UnitLen(ahead_)) +
                        " (the sides disagree on unit size, fill block or total)");
    MPIGPU_RETURN_IF_ERROR(CopyPacked(*engine_, PackDir::kUnpack, buf_.ptr, buf_.loc,
                                      buf_.layout, ahead_ * fill_, len, UnitData(ahead_),
                                      MemLoc::Host()));
    MPIGPU_RETURN_IF_ERROR(engine_->Mark(&tickets_[ahead_ % cap_]));
    ++ahead_;
  }
  return Status::Ok();
}

Status LmtReceiver::Step() { return RunPasses(); }

}  // namespace mpigpu

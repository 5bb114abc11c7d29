// Running collective schedules (coll_sched.h).
#include "mpigpu_api/coll_sched.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

// Nonblocking collectives' tags: a block of kNbcStride tags per collective, above every fixed
// tag of the blocking ones, cycling through kNbcSlots blocks (far more than can be in flight).
constexpr int kNbcTagFirst = 0x1000;
constexpr int kNbcStride = 0x200;
constexpr int kNbcSlots = 1 << 18;
static_assert(kNbcTagFirst + static_cast<long long>(kNbcStride) * kNbcSlots <= MPIGPU_TAG_UB,
              "nonblocking collective tags stay in the tag range");

}  // namespace

CollSched::~CollSched() {
  // Only an abandoned schedule (a failed progress) has transfers left: their buffers are ours.
  for (ApiRequest* r : inflight_) Detach(r);
}

unsigned char* CollSched::Buffer(size_t bytes) {
  buffers_.emplace_back(new unsigned char[bytes ? bytes : 1]());
  return buffers_.back().get();
}

void CollSched::Advance() {
  while (!done_) {
    if (!started_) {
      started_ = true;
      for (const Xfer& x : rounds_[cur_].xfers) {
        ApiRequest* r = nullptr;
        const CommPtr& on = x.local ? c_->local_comm : c_;
        const int rc = StartP2P(x.recv, x.b, on, x.peer, tag_base_ + x.tag, on->ctx_coll, &r);
        if (rc != MPIGPU_SUCCESS) {
          Fail(rc);
          break;
        }
        inflight_.push_back(r);
      }
    }
    for (ApiRequest* r : inflight_)
      if (!P2PDone(r)) return;
    for (ApiRequest* r : inflight_) Fail(CompleteP2P(r, MPIGPU_STATUS_IGNORE));
    inflight_.clear();
    // By index: a step may add rounds (NextRound and more), which may move rounds_.
    if (rc_ == MPIGPU_SUCCESS)
      for (size_t i = 0; i < rounds_[cur_].steps.size(); ++i)
        if (int rc = rounds_[cur_].steps[i](); rc != MPIGPU_SUCCESS) {
          Fail(rc);
          break;
        }
    started_ = false;
    if (rc_ != MPIGPU_SUCCESS || ++cur_ == rounds_.size()) done_ = true;
  }
}

int CollSched::Run(Lock& lk) {
  const int rc = ProgressUntil(lk, [this] {
    Advance();
    return done_;
  });
  if (rc != MPIGPU_SUCCESS) {
    for (ApiRequest* r : inflight_) Detach(r);
    inflight_.clear();
    return rc;
  }
  return rc_;
}

bool CollSchedDone(const CollSched& s) { return s.done(); }
int CollSchedResult(const CollSched& s) { return s.result(); }

int NbcTagBase(const CommData& c) {
  // By collective context id: unique per communicator, never reused by this process.
  static std::unordered_map<int, unsigned>* seq = new std::unordered_map<int, unsigned>();
  const unsigned n = (*seq)[c.ctx_coll]++;
  return kNbcTagFirst + static_cast<int>(n % kNbcSlots) * kNbcStride;
}

void AdvanceCollScheds() {
  auto& v = GetState().coll_scheds;
  for (size_t i = 0; i < v.size();) {
    v[i]->Advance();
    if (v[i]->done()) {
      v[i] = v.back();
      v.pop_back();
    } else {
      ++i;
    }
  }
}

}  // namespace mpigpu::api

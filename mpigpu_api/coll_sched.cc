// Running collective schedules (coll_sched.h).
#include "mpigpu_api/coll_sched.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_map>

#include "mpigpu_api/coll_internal.h"
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

namespace {

// What a failed schedule sends instead of what it owes: a message of another size, which the
// receiver, posted for the size owed, takes for an error (shorter or truncated).
TypedBuf ErrorMarker(const TypedBuf& owed) {
  static unsigned char marker = 0;
  return HostBytes(&marker, owed.desc.total_bytes == 1 ? 0 : 1);
}

}  // namespace

int CollSched::Start(const Xfer& x, ApiRequest** r) {
  const CommPtr& on = x.local ? c_->local_comm : c_;
  const int tag = tag_base_ + x.tag, ctx = on->ctx_coll;
  if (x.recv) return StartP2P(true, x.b, on, x.peer, tag, ctx, r);
  int rc = MPIGPU_SUCCESS;
  if (rc_ == MPIGPU_SUCCESS) {
    rc = StartP2P(false, x.b, on, x.peer, tag, ctx, r);
    if (rc == MPIGPU_SUCCESS) return rc;
  }
  // Failed earlier, or this send's data cannot be read: the peer is owed a message still.
  (void)StartP2P(false, ErrorMarker(x.b), on, x.peer, tag, ctx, r);
  return rc;
}

int CollSched::Complete(const Xfer& x, ApiRequest* r) {
  if (!x.recv || x.peer == MPIGPU_PROC_NULL) return CompleteP2P(r, MPIGPU_STATUS_IGNORE);
  MPIGPU_Status st;
  const int rc = CompleteP2P(r, &st);
  if (rc != MPIGPU_SUCCESS || st.count_bytes == x.b.desc.total_bytes) return rc;
  return SetLastError(MPIGPU_ERR_OTHER,
                      "collective size mismatch: a message of " + std::to_string(st.count_bytes) +
                          " bytes from rank " + std::to_string(x.peer) + " where " +
                          std::to_string(x.b.desc.total_bytes) +
                          " were expected (the ranks' arguments disagree, or that rank failed "
                          "earlier in this collective)");
}

void CollSched::Advance() {
  while (!done_) {
    const std::vector<Xfer>& xfers = rounds_[cur_].xfers;
    if (!started_) {
      started_ = true;
      for (size_t i = 0; i < xfers.size(); ++i) {
        ApiRequest* r = nullptr;
        Fail(Start(xfers[i], &r));
        if (r == nullptr) continue;
        inflight_.push_back(r);
        inflight_xfer_.push_back(i);
      }
    }
    for (ApiRequest* r : inflight_)
      if (!P2PDone(r)) return;
    for (size_t i = 0; i < inflight_.size(); ++i)
      Fail(Complete(xfers[inflight_xfer_[i]], inflight_[i]));
    inflight_.clear();
    inflight_xfer_.clear();
    // By index: a step may add rounds (NextRound and more), which may move rounds_. A failed
    // schedule skips them (their data is not what it should be) but goes on sending.
    if (rc_ == MPIGPU_SUCCESS)
      for (size_t i = 0; i < rounds_[cur_].steps.size(); ++i)
        if (int rc = rounds_[cur_].steps[i](); rc != MPIGPU_SUCCESS) {
          Fail(rc);
          break;
        }
    started_ = false;
    if (stop_ || ++cur_ == rounds_.size()) done_ = true;
  }
}

int CollSched::Run(Lock& lk) {
  const int rc = ProgressUntil(lk, [this] {
    Advance();
    return done_;
  });
  // A blocking collective returns to a program that likely synchronises its GPU next: that must
  // not wait out the resident copy kernel's idle time (transport/lmt/device_copier.h).
  if (State& st = GetState(); st.engine) st.engine->Idle();
  if (rc != MPIGPU_SUCCESS) {
    for (ApiRequest* r : inflight_) Detach(r);
    inflight_.clear();
    inflight_xfer_.clear();
    return rc;
  }
  return result();
}

int CollSched::result() const {
  // Later errors of the run may have replaced the first one's detail.
  return rc_ == MPIGPU_SUCCESS ? rc_ : SetLastError(rc_, detail_);
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

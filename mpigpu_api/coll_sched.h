// A collective as a schedule: rounds of sends and receives on a communicator's collective
// context, each round's transfers posted together, and local steps (combine, unpack) that run
// once a round's transfers have completed. A blocking collective builds one and runs it to the
// end (Run); a nonblocking one (MPIGPU_I*) hands it to a request, and every progress round of
// the process advances it (AdvanceCollScheds) without ever blocking, so no rank waits inside an
// I-call for a peer that is busy elsewhere.
//
// Tags: a blocking collective completes before the next collective on its communicator
// starts, so its fixed tags (coll_internal.h) never meet another's. Nonblocking ones may
// overlap each other: each takes a tag block of its own from a per-communicator sequence
// number, which every rank draws alike because MPI orders a communicator's collectives.
//
// Errors (docs/collective-errors.md): a failed transfer or step does not end the schedule, which
// would leave its peers waiting for what it still owes them. It records the first error and runs
// on to its end: receives still drain what arrives, steps are skipped, and every later send
// carries a marker (a message of another size than the one owed) that its receiver takes for an
// error. A receive whose message is shorter than posted is an error too (ERR_OTHER, as MPICH's
// "collective size mismatch"; a longer one is ERR_TRUNCATE): ranks whose arguments disagree
// get an error wherever a message shows it, and no rank waits for ever. Stop ends a schedule at
// once, for an outcome every rank shares (the argument check of coll_check.h).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {

class CollSched {
 public:
  // tag_base 0 for a blocking collective; NbcTagBase(c) for a nonblocking one.
  CollSched(const CommPtr& c, int tag_base) : c_(c), tag_base_(tag_base) { rounds_.emplace_back(); }
  ~CollSched();
  CollSched(const CollSched&) = delete;
  CollSched& operator=(const CollSched&) = delete;

  // The communicator that comm(), rank(), size(), Send and Recv address: the collective's own,
  // or after OnLocal(true) (an intercommunicator's collectives, coll_inter.cc) the
  // intracommunicator over its local group, so the intra algorithms run inside one group.
  void OnLocal(bool local) { local_ = local; }
  const CommPtr& comm() const { return local_ ? c_->local_comm : c_; }
  int rank() const { return comm()->rank; }
  int size() const { return comm()->size(); }
  // `bytes` of zeroed host memory owned by the schedule (stable until it is destroyed).
  unsigned char* Buffer(size_t bytes);
  // Keeps `p` alive until the schedule is destroyed (device scratch, coll_device.h).
  void Keep(std::shared_ptr<void> p) { kept_.push_back(std::move(p)); }

  // Building: transfers and steps join the current round; NextRound closes it.
  void Send(const TypedBuf& b, int peer, int tag) {
    rounds_.back().xfers.push_back({false, local_, b, peer, tag});
  }
  void Recv(const TypedBuf& b, int peer, int tag) {
    rounds_.back().xfers.push_back({true, local_, b, peer, tag});
  }
  // fn runs after the current round's transfers completed (steps in the order given).
  void Then(std::function<int()> fn) { rounds_.back().steps.push_back(std::move(fn)); }
  void NextRound() {
    if (!rounds_.back().xfers.empty() || !rounds_.back().steps.empty()) rounds_.emplace_back();
  }
  // A step of the last round may build more (NextRound first): a schedule whose length depends
  // on what it received (an agreement that retries) goes on.

  // Running: starts and completes what it can, never blocks.
  void Advance();
  bool done() const { return done_; }
  // The first error (its detail recorded again), or SUCCESS.
  int result() const;
  // Ends the schedule after the current round with `rc` (every rank decides alike).
  int Stop(int rc) {
    Fail(rc);
    stop_ = true;
    return rc;
  }
  // Runs to the end (progressing the engine); the first error.
  int Run(Lock& lk);

  // For the argument check (coll_check.cc): the collective's communicator and tag base, every
  // transfer of the schedule (before it starts), and rounds put in front of the others.
  const CommPtr& coll_comm() const { return c_; }
  int tag_base() const { return tag_base_; }
  template <class Fn>
  void ForEachXfer(Fn fn) const {
    for (const Round& r : rounds_)
      for (const Xfer& x : r.xfers) fn(x.recv, x.local, x.b, x.peer);
  }
  void PrependRounds(CollSched& front) {
    if (front.rounds_.back().xfers.empty() && front.rounds_.back().steps.empty())
      front.rounds_.pop_back();
    rounds_.insert(rounds_.begin(), std::make_move_iterator(front.rounds_.begin()),
                   std::make_move_iterator(front.rounds_.end()));
    for (auto& b : front.buffers_) buffers_.push_back(std::move(b));
  }

 private:
  struct Xfer {
    bool recv;
    bool local;  // on c_->local_comm
    TypedBuf b;
    int peer;
    int tag;
  };
  struct Round {
    std::vector<Xfer> xfers;
    std::vector<std::function<int()>> steps;
  };
  void Fail(int rc) {
    if (rc_ != MPIGPU_SUCCESS || rc == MPIGPU_SUCCESS) return;
    rc_ = rc;
    detail_ = LastErrorDetail(rc);
  }
  // A transfer started (*r: null when nothing could start); completed, sizes checked.
  int Start(const Xfer& x, ApiRequest** r);
  int Complete(const Xfer& x, ApiRequest* r);

  CommPtr c_;
  int tag_base_;
  bool local_ = false;
  std::vector<Round> rounds_;
  std::vector<std::unique_ptr<unsigned char[]>> buffers_;
  std::vector<std::shared_ptr<void>> kept_;
  size_t cur_ = 0;
  bool started_ = false;
  bool done_ = false;
  bool stop_ = false;
  int rc_ = MPIGPU_SUCCESS;
  std::string detail_;  // rc_'s
  std::vector<ApiRequest*> inflight_;
  std::vector<size_t> inflight_xfer_;  // the transfer (index in its round) of each request
};

// The tag base of the next nonblocking collective on c (see above).
int NbcTagBase(const CommData& c);
// The schedule's error once done.
int CollSchedResult(const CollSched& s);

}  // namespace mpigpu::api

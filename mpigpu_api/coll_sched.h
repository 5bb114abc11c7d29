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
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "mpigpu_api/api_internal.h"

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
  int result() const { return rc_; }
  // Runs to the end (progressing the engine); the first error.
  int Run(Lock& lk);

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
    if (rc_ == MPIGPU_SUCCESS) rc_ = rc;
  }

  CommPtr c_;
  int tag_base_;
  bool local_ = false;
  std::vector<Round> rounds_;
  std::vector<std::unique_ptr<unsigned char[]>> buffers_;
  std::vector<std::shared_ptr<void>> kept_;
  size_t cur_ = 0;
  bool started_ = false;
  bool done_ = false;
  int rc_ = MPIGPU_SUCCESS;
  std::vector<ApiRequest*> inflight_;
};

// The tag base of the next nonblocking collective on c (see above).
int NbcTagBase(const CommData& c);
// The schedule's error once done.
int CollSchedResult(const CollSched& s);

}  // namespace mpigpu::api

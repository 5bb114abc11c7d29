// LocalJob: the bootstrap of the ranks of one job on this node. They meet in one shared segment
// (ringbuf::JobSegment) named from MPIGPU_JOBID: local rank 0 creates it, the others attach,
// every rank publishes itself in the rank table, and once all are there the name is unlinked
// (the mappings stay). It also answers who is alive and who has finalized. The engine lays its
// back-ends' areas (SegmentNeeds: cells, fastboxes, notify words, CMA slots) out in the payload
// behind the rank table; a cross-node bootstrap (PMIx, mpigpurun --host) extends this with the ranks of other hosts.
//
// Rank table (one 64-byte slot per rank in the segment), written only by its rank:
//   pid, gpu, gpu_id: stored once in Join (relaxed; published by the state store).
//   state: kJoined in Join, kFinalized in MarkFinalized; release stores that pair with the
//          acquire loads of the peers waiting in Join and in the engine's finalize.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "memcopy/status.h"
#include "ringbuf/segment.h"

namespace mpigpu::transport {

// What the job looks like to this process (from the launcher's environment).
struct JobInfo {
  int rank = 0;
  int size = 1;
  std::string jobid;  // empty: make one (single-rank job)
  // From the environment: MPIGPU_RANK/SIZE/JOBID; a one-rank job when MPIGPU_RANK is unset.
  static Status FromEnvironment(JobInfo* out);
};

class LocalJob {
 public:
  LocalJob() = default;
  LocalJob(const LocalJob&) = delete;
  LocalJob& operator=(const LocalJob&) = delete;

  // Opens the job segment with `dense_bytes` of the caller's payload behind the rank table and a
  // sparse tail of `sparse_bytes` (memory only where touched: ShmSegment::Create). Local rank 0
  // creates it; the others attach, waiting up to timeout_ms, and stop waiting as soon as the
  // rank meant to create it died (MPIGPU_CREATOR_PID, set by mpigpurun). *payload: where the
  // caller's areas start (page-aligned), the same bytes in every rank. The caller formats its
  // areas (creator) or attaches to them, then calls Join.
  Status Open(const JobInfo& job, size_t dense_bytes, size_t sparse_bytes, int timeout_ms,
              char** payload);
  // Publishes this rank (pid, its CUDA device and a process-independent id of it, -1 / 0 for
  // none) and waits up to timeout_s until every rank has; then the creator unlinks the name.
  Status Join(int device, uint64_t gpu_id, double timeout_s);
  // After a failed start-up: the creator removes the name, so that a rerun with the same job id
  // does not find it taken.
  void Abandon();

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& jobid() const { return jobid_; }
  // The size of the caller's dense payload the segment was opened with.
  size_t payload_bytes() const;

  pid_t pid(int rank) const;
  int gpu(int rank) const;          // its CUDA device at start-up, -1 without one
  uint64_t gpu_id(int rank) const;  // 0 without one
  // Its process runs (a zombie counts as dead); true for this rank.
  bool Alive(int rank) const;
  bool Finalized(int rank) const;
  void MarkFinalized();

 private:
  struct RankSlot;
  RankSlot* slot(int rank) const;

  int rank_ = 0;
  int size_ = 1;
  std::string jobid_;
  JobSegment segment_;
  RankSlot* ranks_ = nullptr;  // in the segment: one slot per rank
  size_t table_bytes_ = 0;     // the rank table, page-rounded
};

}  // namespace mpigpu::transport

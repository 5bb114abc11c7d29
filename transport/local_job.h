// LocalJob: the bootstrap of the ranks of one job on this node. They meet in one shared segment
// (ringbuf::JobSegment) named from MPIGPU_JOBID and the node: the node's first rank (its leader)
// creates it, the others attach, every rank publishes itself in the rank table, and once the
// node's ranks are all there the name is unlinked (the mappings stay). It also answers which of
// the node's ranks are alive and which have finalized. The engine lays its back-ends' areas
// (SegmentNeeds: cells, fastboxes, notify words, CMA slots) out in the payload behind the tables.
//
// A job that spans nodes (JobInfo::node_of, from MPIGPU_NODE_MAP) has one such segment per node;
// what ranks on other nodes need (addresses, the job's secret) comes from the job's Bootstrap
// (transport/core/bootstrap.h): this class is that bootstrap for a job on one node, where the
// exchange goes through the segment, and internode/boot's client is the one for a job that spans
// nodes. Tables are indexed by world rank; only the node's ranks use their slots.
//
// Rank table (one 64-byte slot per rank in the segment), written only by its rank:
//   pid, gpu, gpu_id: stored once in Join (relaxed; published by the state store).
//   state: kJoined in Join, kFinalized in MarkFinalized; release stores that pair with the
//          acquire loads of the peers waiting in Join and in the engine's finalize.
// Card table (one kCardBytes slot per rank), written only by its rank in Allgather: the bytes
//   (relaxed), then len + 1 with a release store that pairs with the readers' acquire loads.
// Secret (one slot after the cards): written by the leader in Open, before its Join's release
//   store of kJoined, which every rank's Join acquires before Allgather reads it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <vector>

#include "memcopy/status.h"
#include "ringbuf/segment.h"
#include "transport/core/bootstrap.h"
#include "transport/core/node_job.h"

namespace mpigpu::transport {

// What the job looks like to this process (from the launcher's environment).
struct JobInfo {
  int rank = 0;
  int size = 1;
  std::string jobid;  // empty: make one (single-rank job)
  // Each rank's node (0..nodes-1), or empty: every rank on this node.
  std::vector<int> node_of;
  // The exchange the job's launcher offers, where it has one of its own (PMIx: a launcher's
  // server, internode/pmix); the engine then uses it for cards and the secret. Null: the node's
  // segment (one node) or mpigpurun's boot server (several).
  std::shared_ptr<Bootstrap> launcher_boot;

  int NodeOf(int r) const { return node_of.empty() ? 0 : node_of[r]; }
  int node() const { return NodeOf(rank); }
  bool SameNode(int r) const { return NodeOf(r) == node(); }
  bool SpansNodes() const;
  // The lowest rank on this rank's node: it creates the node's segment.
  int Leader() const;
  // This rank's index among its node's ranks, and how many they are.
  int LocalRank() const;
  int LocalSize() const;

  // From the environment: MPIGPU_RANK/SIZE/JOBID and MPIGPU_NODE_MAP; a one-rank job when
  // MPIGPU_RANK is unset.
  static Status FromEnvironment(JobInfo* out);
  // MPIGPU_NODE_MAP's form: each rank's node in rank order, comma-separated, "N*k" for k ranks
  // on node N in a row ("0*2,1*2": ranks 0, 1 on node 0 and 2, 3 on node 1). Nodes are numbered
  // from 0 without gaps.
  static Status ParseNodeMap(const char* text, int size, std::vector<int>* out);
  static std::string FormatNodeMap(const std::vector<int>& node_of);
};

class LocalJob final : public Bootstrap, public NodeJob {
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
  // Bootstrap, for a job on one node, through the segment (after Join). Cards of up to
  // kCardBytes - 4 bytes.
  const std::string& secret() const override { return secret_; }
  Status Allgather(const std::string& mine, std::vector<std::string>* all,
                   double timeout_s) override;
  std::string LocalAddress() const override { return "127.0.0.1"; }
  bool LauncherGone() const override;
  // One node: the engine waits for its ranks through the segment (Finalized, Alive): nothing
  // else to say or learn.
  Status Depart() override { return Status::Ok(); }
  Status Departed(bool* all, std::vector<int>* gone) override {
    *all = true;
    gone->clear();
    return Status::Ok();
  }
  void Ended(bool, std::vector<EndedRank>* ended) override { ended->clear(); }
  static constexpr size_t kCardBytes = 128;
  // After a failed start-up: the creator removes the name, so that a rerun with the same job id
  // does not find it taken.
  void Abandon();

  const JobInfo& info() const { return job_; }
  int rank() const { return job_.rank; }
  // NodeJob, for the back-ends.
  bool leader() const override { return job_.rank == job_.Leader(); }
  int size() const { return job_.size; }
  const std::string& jobid() const override { return jobid_; }
  // The size of the caller's dense payload the segment was opened with.
  size_t payload_bytes() const;

  pid_t pid(int rank) const override;
  int gpu(int rank) const override;
  uint64_t gpu_id(int rank) const override;
  bool Alive(int rank) const override;
  bool Finalized(int rank) const;
  void MarkFinalized();

 private:
  struct RankSlot;
  struct CardSlot;
  RankSlot* slot(int rank) const;

  JobInfo job_;
  std::string secret_;
  CardSlot* cards_ = nullptr;  // in the segment: one slot per rank, then the secret
  std::string jobid_;
  JobSegment segment_;
  RankSlot* ranks_ = nullptr;  // in the segment: one slot per rank
  size_t table_bytes_ = 0;     // the rank table, page-rounded
};

}  // namespace mpigpu::transport

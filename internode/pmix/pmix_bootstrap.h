// PmixBootstrap: the Bootstrap (transport/core/bootstrap.h) of a rank that a PMIx launcher
// started (Open MPI's mpirun, Slurm's srun --mpi=pmix, PRRTE's prterun): the job's description
// comes from the launcher's PMIx server, and cards and the secret go through PMIx
// Put/Commit/Fence/Get. libpmix is loaded at run time (pmix_lib.h).
//
// What PMIx says, and how it becomes a JobInfo (transport/local_job.h):
//   rank: PMIx_Init's; size: PMIX_JOB_SIZE; jobid: a hash of the namespace (hex, so it names
//   shared memory safely; the same on every rank); each rank's node: PMIX_NODEID for every rank
//   where the server gives them all, else PMIX_HOSTNAME (Open MPI 4.1 gives a remote rank's
//   host but not its node id), else PMIX_LOCAL_PEERS (this node's ranks; each other rank then
//   counts as a node of its own, which only matters for which ranks share memory). Nodes are
//   numbered in the order of their lowest rank, so every rank of a node names its segment the
//   same and its lowest rank leads it.
// The secret: rank 0 makes it (NewJobSecret) and Puts it with its first card; every rank Gets
//   it after that exchange's Fence. It travels only inside PMIx (the server's socket and store,
//   private to the job's user): no command line, no file of ours.
// Allgather: each call Puts "mpigpu.card.<n>" (n counts calls), Commits, Fences with data
//   collection and Gets every rank's. The Fence is started non-blocking and waited on here, so
//   the timeout holds whatever the server does with PMIX_TIMEOUT (passed too).
// LauncherGone: PMIx's "lost connection to the server" event (its handler sets a flag; the check
//   reads it): the launcher's daemon on this node went away.
// Ended: the ranks the launcher says ended without finalizing (pmix_ended.h: PMIx's failure
//   events, and its process table asked while the engine waits on a peer). A launcher that ends
//   the job on a rank's death (Open MPI's mpirun by default, Slurm always) kills the others
//   first; one that lets them run on (mpirun --enable-recovery) answers the table.
// LocalAddress: MPIGPU_NET_IF decides where set (tcp_channel). Else, in a job that spans nodes,
//   Start exchanges every rank's IPv4 addresses (one more Fence; no name lookups, which can hang
//   where DNS is unreachable) and picks this host's address in a subnet another node has an
//   address in (an address every host has, a local bridge's, does not count), else the source
//   of its route to one, else its first up non-loopback address.
//   Loopback for a job on one node.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "memcopy/status.h"
#include "transport/core/bootstrap.h"
#include "transport/local_job.h"

namespace mpigpu::internode {

class PmixEnded;

class PmixBootstrap final : public transport::Bootstrap {
 public:
  // A PMIx launcher started this process: PMIX_RANK and PMIX_NAMESPACE are set.
  static bool Launched();
  // Connects to the launcher's PMIx server (PMIx_Init) and describes the job: *job gets rank,
  // size, jobid, node_of and this bootstrap (job->launcher_boot). kSystem when libpmix cannot
  // be loaded (the message names it), kInvalidArg when PMIx's answers make no job.
  static Status Start(transport::JobInfo* job);
  ~PmixBootstrap() override;

  const std::string& secret() const override { return secret_; }
  Status Allgather(const std::string& mine, std::vector<std::string>* all,
                   double timeout_s) override;
  std::string LocalAddress() const override { return local_address_; }
  bool LauncherGone() const override;
  // A job that spans nodes: a fence without data over every rank (PMIx_Fence_nb), polled. It
  // completes once every rank reached it or (a launcher that runs on after a death) ended; a
  // rank that died keeps it from completing where the launcher ends the job, or fails it where
  // the launcher says so (kPeerFailed, no rank named). Once it completed, Departed asks the
  // launcher's process table once more (waiting up to kLastWordWait s for the answer) and names
  // in `gone` every rank the launcher says ended. On one node: nothing (the engine waits for its
  // ranks through the segment).
  Status Depart() override;
  Status Departed(bool* all, std::vector<int>* gone) override;
  void Ended(bool asking, std::vector<transport::EndedRank>* ended) override;
  static constexpr double kLastWordWait = 2;

  // The namespace's jobid: 16 hex digits (FNV-1a of the name).
  static std::string JobIdOf(const std::string& nspace);
  // Each rank's node label (any int, equal for ranks on one node) renumbered 0, 1, ... in the
  // order of each node's lowest rank.
  static std::vector<int> NumberNodes(const std::vector<int>& labels);
  // The address to listen on from this host's IPv4 addresses and the other nodes' (lists of
  // "a.b.c.d/prefix,..."), as LocalAddress describes; route_source(ipv4 in host order) gives the
  // source address of this host's route there ("" if none). "" when this host has none.
  static std::string PickAddress(const std::string& mine,
                                 const std::vector<std::string>& others,
                                 std::string (*route_source)(uint32_t));

 private:
  struct Impl;
  explicit PmixBootstrap(std::unique_ptr<Impl> impl);
  Status Describe(transport::JobInfo* job);
  Status ChooseLocalAddress(const transport::JobInfo& job);

  std::unique_ptr<Impl> impl_;
  std::string secret_;
  std::string local_address_;
  int calls_ = 0;
  bool spans_nodes_ = false;
  void* depart_ = nullptr;  // the finalize fence's FenceWait while PMIx holds it
  PmixEnded* ended_ = nullptr;  // lives as long as the process (pmix_ended.h)
  bool asking_last_word_ = false;     // Departed's query after the fence is due or in flight
  uint64_t last_word_ = 0;            // its ticket once asked
  double last_word_until_ = 0;        // how long Departed waits for its answer
};

}  // namespace mpigpu::internode

// Bootstrap: what a rank learns from the job beyond its own node once it has started: the job's
// secret and every rank's card (the address a back-end publishes so peers can reach it).
//
// Implementations: transport/local_job.h for a job on one node (through its shared segment),
// internode/boot/boot_client.h for a job that spans nodes (mpigpurun's boot server),
// internode/pmix/pmix_bootstrap.h for a job a PMIx launcher started (its server's Fence);
// wiring/job_source.h picks one. The engine asks only this interface, and only when some
// channel publishes a card (Channel::Card), so a job on one node over shared memory never
// exchanges anything.
#pragma once

#include <string>
#include <vector>

#include "memcopy/status.h"

namespace mpigpu::transport {

// A rank the job's launcher says ended without finalizing, and the launcher's words on it.
struct EndedRank {
  int rank;
  std::string why;
};

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  // Bytes only the job's ranks know: network back-ends admit a connection that proves it.
  virtual const std::string& secret() const = 0;
  // Collective over every rank of the job: `mine` in, every rank's card out (in rank order).
  // kTimeout after timeout_s; kPeerFailed when the exchange's other side is gone.
  virtual Status Allgather(const std::string& mine, std::vector<std::string>* all,
                           double timeout_s) = 0;
  // This host's address as the bootstrap reached it (the default for network back-ends'
  // listeners: the interface the job's hosts already use).
  virtual std::string LocalAddress() const = 0;
  // The job's launcher is gone, by any sign this bootstrap has (the launcher link's hang-up,
  // launcher_link.h; the exchange's connection closing): nobody else would end this rank. A
  // check with no wait.
  virtual bool LauncherGone() const = 0;
  // Finalize's word with the job's ranks on other nodes (those on this node meet in the
  // segment): Depart says, once, that this rank is finalizing; Departed then answers, with no
  // wait, whether every rank of the job has said so or is known to have ended without it (its
  // process gone, whether or not any rank talked to it), naming the latter in `gone`. The engine
  // serves its messages between calls until MPIGPU_BOOTSTRAP_TIMEOUT. One that cannot name the
  // ranks that ended may fail with kPeerFailed naming none, or never answer (PMIx's fence: its
  // launcher ends the job); one with nothing to say (one node) answers true at once. kPeerFailed
  // when the exchange's other side is gone.
  virtual Status Depart() = 0;
  virtual Status Departed(bool* all, std::vector<int>* gone) = 0;
  // The ranks the job's launcher says ended without finalizing (killed, aborted), as far as this
  // bootstrap has heard: a check with no wait. `asking`: the engine waits on a peer, so a
  // bootstrap that must ask its launcher may start a request (a later call sees its answer).
  // The engine fails their requests with kPeerFailed naming them. One whose launcher says
  // nothing of the kind (a job on one node, mpigpurun's) answers none: there the engine learns
  // a death from the segment and its connections.
  virtual void Ended(bool asking, std::vector<EndedRank>* ended) = 0;
};

}  // namespace mpigpu::transport

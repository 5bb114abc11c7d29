// What back-ends may ask of the job's ranks on this node: the node segment's rank table, written
// once by each rank when it joins (transport/local_job.h implements it).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace mpigpu::transport {

class NodeJob {
 public:
  // The job's id (names of what its ranks share on this node: sockets, segments).
  virtual const std::string& jobid() const = 0;
  // This rank created the node's segment (and formats the areas in it that need formatting).
  virtual bool leader() const = 0;
  // Ranks of this node only: its process id, its CUDA device at start-up (-1 without one) and a
  // process-independent id of that device (0 without one).
  virtual pid_t pid(int rank) const = 0;
  virtual int gpu(int rank) const = 0;
  virtual uint64_t gpu_id(int rank) const = 0;
  // Its process runs (a zombie counts as dead); true for this rank.
  virtual bool Alive(int rank) const = 0;

 protected:
  ~NodeJob() = default;
};

}  // namespace mpigpu::transport

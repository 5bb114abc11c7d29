// Helpers of the engine's multi-process tests: join the job in a forked rank, send and receive
// with checked waits, run a body in forked ranks (on GPUs too), device copies of host bytes.
// Inside a rank a failed check ends the process (RANK_CHECK), which RunJob reports.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "tests/multiproc.h"
#include "transport/engine.h"

namespace mpigpu::transport {

inline std::unique_ptr<Engine> Join() {
  JobInfo job;
  Status st = JobInfo::FromEnvironment(&job);
  RANK_CHECK(st.ok());
  std::unique_ptr<Engine> e;
  st = Engine::Create(job, &e);
  if (!st.ok()) std::fprintf(stderr, "join: %s\n", st.ToString().c_str());
  RANK_CHECK(st.ok());
  return e;
}

inline UserBuffer Host(void* p, size_t n) {
  return UserBuffer{p, MemLoc::Host(), Layout::Contiguous(n)};
}

inline void WaitOk(Engine& e, Request* r) {
  Status st = e.Wait(r, 60);
  if (!st.ok() || !r->status().ok())
    std::fprintf(stderr, "wait: %s / %s\n", st.ToString().c_str(), r->status().ToString().c_str());
  RANK_CHECK(st.ok() && r->status().ok());
}

// Sends buf to dst and waits until it is done.
inline void SendOk(Engine* e, const UserBuffer& buf, int dst, int tag, int ctx = 0) {
  Request* req = nullptr;
  RANK_CHECK(e->Isend(buf, dst, tag, ctx, &req).ok());
  WaitOk(*e, req);
  e->Release(req);
}

// Receives into buf and waits until it is done; what arrived.
inline MsgInfo RecvOk(Engine* e, const UserBuffer& buf, int src, int tag, int ctx = 0) {
  Request* req = nullptr;
  RANK_CHECK(e->Irecv(buf, src, tag, ctx, &req).ok());
  WaitOk(*e, req);
  const MsgInfo info = req->info();
  e->Release(req);
  return info;
}

// Runs body(rank, engine) in n forked ranks between Join() and Finalize(); "" on success.
inline std::string RunEngineJob(int n, const std::function<void(int, Engine*)>& body,
                                int timeout_s = 60) {
  return mpigpu::testing::RunJob(n, [&](int rank) {
    auto e = Join();
    body(rank, e.get());
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, timeout_s);
}

// The same on GPUs, two ranks: body(rank, device, engine). Rank r uses device r mod count, or
// device 0 for both ranks when same_gpu. Every rank skips without a GPU (the ranks decide: the
// parent must not touch CUDA before it forks).
inline std::string RunGpuEngineJob(bool same_gpu,
                                   const std::function<void(int, int, Engine*)>& body,
                                   int timeout_s) {
  return mpigpu::testing::RunJob(2, [&](int rank) {
    int gpus = CudaDeviceCount();
    if (gpus == 0) return mpigpu::testing::kRankSkip;
    const int dev = same_gpu ? 0 : rank % gpus;
    RANK_CHECK(cudaSetDevice(dev) == cudaSuccess);
    auto e = Join();
    body(rank, dev, e.get());
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, timeout_s);
}

// In a rank: a device buffer holding host's bytes, ready for the engine.
inline void* DeviceCopyOf(const std::vector<unsigned char>& host) {
  void* dbuf = nullptr;
  RANK_CHECK(cudaMalloc(&dbuf, host.size()) == cudaSuccess);
  RANK_CHECK(cudaMemcpy(dbuf, host.data(), host.size(), cudaMemcpyHostToDevice) == cudaSuccess);
  // A pageable cudaMemcpy H2D may return before its DMA lands, and mpigpu copies on its own
  // non-blocking streams: as with any CUDA-aware MPI, the data must be ready first.
  RANK_CHECK(cudaDeviceSynchronize() == cudaSuccess);
  return dbuf;
}

// In a rank: host->size() bytes of dbuf into *host.
inline void CopyToHost(std::vector<unsigned char>* host, const void* dbuf) {
  RANK_CHECK(cudaMemcpy(host->data(), dbuf, host->size(), cudaMemcpyDeviceToHost) == cudaSuccess);
}

}  // namespace mpigpu::transport

// Barrier (dissemination) and Bcast (binomial tree), blocking and nonblocking, and the internal
// AllgatherInts of the communicator constructors. The other collectives are in coll_gather.cc,
// coll_alltoall.cc and coll_reduce.cc; their shared pieces in coll_util.cc, schedules in
// coll_sched.cc.
#include <algorithm>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_build.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {

int BuildBarrier(CollSched& s) {
  if (s.comm()->inter) return BuildInterBarrier(s);
  AddBarrierRounds(s);
  return MPIGPU_SUCCESS;
}

int BuildBcast(CollSched& s, void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt,
               int root) {
  if (s.comm()->inter) return BuildInterBcast(s, buf, bt, count, dt, root);
  TypedBuf b;
  if (int rc = UserBuf(buf, bt, count, dt, &b); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckRoot(*s.comm(), root); rc != MPIGPU_SUCCESS) return rc;
  AddBcastTree(s, b, root);
  return MPIGPU_SUCCESS;
}

void AddBarrierRounds(CollSched& s) {
  const int n = s.size(), me = s.rank();
  const TypedBuf empty = HostBytes(nullptr, 0);
  for (int dist = 1, round = 0; dist < n; dist <<= 1, ++round) {
    s.Recv(empty, (me - dist + n) % n, kTagBarrier + round);
    s.Send(empty, (me + dist) % n, kTagBarrier + round);
    s.NextRound();
  }
}

int AllgatherInts(Lock& lk, const CommPtr& comm, const std::vector<int>& mine,
                  std::vector<int>* all) {
  const int n = comm->size();
  const int k = static_cast<int>(mine.size());
  all->assign(static_cast<size_t>(n) * k, 0);
  // Gather to rank 0 (receives posted together), then broadcast the whole table.
  CollSched s(comm, 0);
  if (comm->rank == 0) {
    std::copy(mine.begin(), mine.end(), all->begin());
    for (int r = 1; r < n; ++r) s.Recv(HostBuf(all->data() + r * k, k, MPIGPU_INT), r, kTagGather);
  } else {
    s.Send(HostBuf(const_cast<int*>(mine.data()), k, MPIGPU_INT), 0, kTagGather);
  }
  s.NextRound();
  AddBcastTree(s, HostBuf(all->data(), n * k, MPIGPU_INT), 0);
  return s.Run(lk);
}

}  // namespace mpigpu::api

using mpigpu::api::CollSched;
using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
using mpigpu::api::RunColl;

extern "C" int MPIGPU_Barrier(MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Barrier", comm, RunColl(lk, comm, nullptr, false, [](CollSched& s) {
                  return mpigpu::api::BuildBarrier(s);
                }));
}

extern "C" int MPIGPU_Ibarrier(MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Ibarrier", comm, RunColl(lk, comm, request, true, [](CollSched& s) {
                  return mpigpu::api::BuildBarrier(s);
                }));
}

extern "C" int MPIGPU_Bcast(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                            int root, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Bcast", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildBcast(s, buf, buftype, count, datatype, root);
                }));
}

extern "C" int MPIGPU_Ibcast(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                             int root, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Ibcast", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildBcast(s, buf, buftype, count, datatype, root);
                }));
}

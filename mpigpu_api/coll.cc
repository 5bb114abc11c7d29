// Barrier (dissemination) and Bcast (binomial tree) over a communicator's collective context,
// and the internal AllgatherInts of the communicator constructors. The other collectives are in
// coll_gather.cc, coll_alltoall.cc and coll_reduce.cc; their shared pieces in coll_util.cc.
#include <algorithm>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

int Barrier(Lock& lk, const CommPtr& c) {
  const int n = c->size();
  const TypedBuf empty = HostBytes(nullptr, 0);
  for (int dist = 1, round = 0; dist < n; dist <<= 1, ++round) {
    Batch batch(lk, c);
    const int tag = kTagBarrier + round;
    if (int rc = batch.Recv(empty, (c->rank - dist + n) % n, tag); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = batch.Send(empty, (c->rank + dist) % n, tag); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = batch.Wait(); rc != MPIGPU_SUCCESS) return rc;
  }
  return MPIGPU_SUCCESS;
}

int DoBarrier(Lock& lk, MPIGPU_Comm comm) {
  CommPtr c;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  return Barrier(lk, c);
}

int DoBcast(Lock& lk, void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt, int root,
            MPIGPU_Comm comm) {
  CommPtr c;
  TypedBuf b;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = UserBuf(buf, bt, count, dt, &b); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckRoot(*c, root); rc != MPIGPU_SUCCESS) return rc;
  return BcastTree(lk, c, b, root);
}

}  // namespace

int AllgatherInts(Lock& lk, const CommPtr& comm, const std::vector<int>& mine,
                  std::vector<int>* all) {
  const int n = comm->size();
  const int k = static_cast<int>(mine.size());
  all->assign(static_cast<size_t>(n) * k, 0);
  // Gather to rank 0 (receives posted together), then broadcast the whole table.
  if (comm->rank == 0) {
    std::copy(mine.begin(), mine.end(), all->begin());
    Batch batch(lk, comm);
    for (int r = 1; r < n; ++r)
      if (int rc = batch.Recv(HostBuf(all->data() + r * k, k, MPIGPU_INT), r, kTagGather);
          rc != MPIGPU_SUCCESS)
        return rc;
    if (int rc = batch.Wait(); rc != MPIGPU_SUCCESS) return rc;
  } else {
    if (int rc = CollSend(lk, comm, HostBuf(const_cast<int*>(mine.data()), k, MPIGPU_INT), 0,
                          kTagGather);
        rc != MPIGPU_SUCCESS)
      return rc;
  }
  return BcastTree(lk, comm, HostBuf(all->data(), n * k, MPIGPU_INT), 0);
}

}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;

extern "C" int MPIGPU_Barrier(MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Barrier", comm, mpigpu::api::DoBarrier(lk, comm));
}

extern "C" int MPIGPU_Bcast(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                            int root, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Bcast", comm,
                mpigpu::api::DoBcast(lk, buf, buftype, count, datatype, root, comm));
}

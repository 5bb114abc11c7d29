// The schedule builders of the collectives (coll.cc, coll_gather.cc, coll_alltoall.cc,
// coll_reduce.cc): each validates its arguments and adds its rounds to a schedule, reading the
// user's send data (staging it where it must) at build time. The blocking and nonblocking calls
// build once per call; persistent collectives (coll_persistent.cc) build afresh at every
// MPIGPU_Start, so every start sees the buffers' contents of that moment.
#pragma once

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/coll_sched.h"

namespace mpigpu::api {

int BuildBarrier(CollSched& s);
int BuildBcast(CollSched& s, void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt,
               int root);

// Gather(v) / Scatter(v) / Allgather(v): counts/displs null for the regular form.
int BuildGather(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                MPIGPU_Datatype stype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
                const int* recvcounts, const int* displs, MPIGPU_Datatype rtype, int root,
                bool vform);
int BuildScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                 const int* sendcounts, const int* displs, MPIGPU_Datatype stype, void* recvbuf,
                 MPIGPU_Buftype rbt, int recvcount, MPIGPU_Datatype rtype, int root, bool vform);
int BuildAllgather(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                   MPIGPU_Datatype stype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
                   const int* recvcounts, const int* displs, MPIGPU_Datatype rtype, bool vform);

int BuildAlltoall(CollSched& s, const AlltoallSide& send, const AlltoallSide& recv);

// Reduce to `root`, or Allreduce (`all`).
int BuildReduce(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                MPIGPU_Buftype rbt, int count, MPIGPU_Datatype dt, MPIGPU_Op op, int root,
                bool all);
// Reduce_scatter (recvcounts) or Reduce_scatter_block (recvcounts null, `block` each).
int BuildReduceScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                       MPIGPU_Buftype rbt, const int* recvcounts, int block, MPIGPU_Datatype dt,
                       MPIGPU_Op op);
// Scan (`inclusive`) or Exscan.
int BuildScan(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
              MPIGPU_Buftype rbt, int count, MPIGPU_Datatype dt, MPIGPU_Op op, bool inclusive);

// Neighborhood collectives (coll_neighbor.cc). One side: a block per neighbour. Regular:
// `count` elements at k * count * extent (or the same block for every k: `same`, allgather's
// send side); v form: counts[k] elements at displs[k] extents; w form: counts[k] elements of
// types[k] at byte displacement wdispls[k].
struct NeighborSide {
  const void* buf = nullptr;
  MPIGPU_Buftype bt = MPIGPU_BUF_HOST;
  int count = 0;
  MPIGPU_Datatype type = MPIGPU_DATATYPE_NULL;
  bool same = false;
  bool vform = false;  // counts and displs (or wdispls) given
  bool wform = false;  // types and byte displacements (wdispls) given
  const int* counts = nullptr;
  const int* displs = nullptr;
  const MPIGPU_Aint* wdispls = nullptr;
  const MPIGPU_Datatype* types = nullptr;
};
NeighborSide NeighborRegular(const void* buf, MPIGPU_Buftype bt, int count,
                             MPIGPU_Datatype type, bool same = false);
NeighborSide NeighborVForm(const void* buf, MPIGPU_Buftype bt, const int* counts,
                           const int* displs, MPIGPU_Datatype type);
NeighborSide NeighborWForm(const void* buf, MPIGPU_Buftype bt, const int* counts,
                           const MPIGPU_Aint* displs, const MPIGPU_Datatype* types);
int BuildNeighbor(CollSched& s, const NeighborSide& send, const NeighborSide& recv);
// c's in- and out-neighbour counts (ERR_TOPOLOGY without a topology).
int NeighborDegrees(const CommData& c, int* in, int* out);

}  // namespace mpigpu::api

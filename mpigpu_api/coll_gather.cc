// Gather(v) and Scatter(v) (the root posts every transfer at once, straight between the user's
// typed blocks), Allgather(v) (a ring: n - 1 steps, each passing on the block received in the
// step before). Transfers go between the user's buffers, so device memory and derived types
// move as in point to point; the local block is copied through LocalCopy.
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_build.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {

// Gather(v): counts/displs null for the regular form.
int BuildGather(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                MPIGPU_Datatype stype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
                const int* recvcounts, const int* displs, MPIGPU_Datatype rtype, int root,
                bool vform) {
  if (s.comm()->inter)
    return BuildInterGather(s, sendbuf, sbt, sendcount, stype, recvbuf, rbt, recvcount,
                            recvcounts, displs, rtype, root, vform);
  const CommPtr& c = s.comm();
  if (int rc = CheckRoot(*c, root); rc != MPIGPU_SUCCESS) return rc;
  const int n = c->size();
  const bool in_place = IsInPlace(sendbuf);
  if (c->rank != root) {
    if (in_place) return InPlaceError("at a rank other than the root of Gather");
    TypedBuf sb;
    if (int rc = UserBuf(sendbuf, sbt, sendcount, stype, &sb); rc != MPIGPU_SUCCESS) return rc;
    s.Send(sb, root, kTagGather);
    return MPIGPU_SUCCESS;
  }
  if (IsInPlace(recvbuf)) return InPlaceError("as recvbuf");
  if (vform)
    if (int rc = CheckCountArrays(recvcounts, displs); rc != MPIGPU_SUCCESS) return rc;
  TypedBuf rb, sb;
  if (int rc = UserBuf(recvbuf, rbt, 0, rtype, &rb); rc != MPIGPU_SUCCESS) return rc;
  std::vector<TypedBuf> blocks;
  if (int rc = BlocksOf(rb, n, recvcounts, recvcount, displs, &blocks); rc != MPIGPU_SUCCESS)
    return rc;
  if (!in_place)
    if (int rc = UserBuf(sendbuf, sbt, sendcount, stype, &sb); rc != MPIGPU_SUCCESS) return rc;
  if (!in_place)
    if (int rc = LocalCopy(sb, blocks[root]); rc != MPIGPU_SUCCESS) return rc;
  for (int r = 0; r < n; ++r)
    if (r != root) s.Recv(blocks[r], r, kTagGather);
  return MPIGPU_SUCCESS;
}

int BuildScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                 const int* sendcounts, const int* displs, MPIGPU_Datatype stype, void* recvbuf,
                 MPIGPU_Buftype rbt, int recvcount, MPIGPU_Datatype rtype, int root, bool vform) {
  if (s.comm()->inter)
    return BuildInterScatter(s, sendbuf, sbt, sendcount, sendcounts, displs, stype, recvbuf, rbt,
                             recvcount, rtype, root, vform);
  const CommPtr& c = s.comm();
  if (int rc = CheckRoot(*c, root); rc != MPIGPU_SUCCESS) return rc;
  const int n = c->size();
  const bool in_place = IsInPlace(recvbuf);
  if (c->rank != root) {
    if (in_place) return InPlaceError("at a rank other than the root of Scatter");
    TypedBuf rb;
    if (int rc = UserBuf(recvbuf, rbt, recvcount, rtype, &rb); rc != MPIGPU_SUCCESS) return rc;
    s.Recv(rb, root, kTagScatter);
    return MPIGPU_SUCCESS;
  }
  if (IsInPlace(sendbuf)) return InPlaceError("as sendbuf");
  if (vform)
    if (int rc = CheckCountArrays(sendcounts, displs); rc != MPIGPU_SUCCESS) return rc;
  TypedBuf sb, rb;
  if (int rc = UserBuf(sendbuf, sbt, 0, stype, &sb); rc != MPIGPU_SUCCESS) return rc;
  std::vector<TypedBuf> blocks;
  if (int rc = BlocksOf(sb, n, sendcounts, sendcount, displs, &blocks); rc != MPIGPU_SUCCESS)
    return rc;
  if (!in_place)
    if (int rc = UserBuf(recvbuf, rbt, recvcount, rtype, &rb); rc != MPIGPU_SUCCESS) return rc;
  if (!in_place)
    if (int rc = LocalCopy(blocks[root], rb); rc != MPIGPU_SUCCESS) return rc;
  for (int r = 0; r < n; ++r)
    if (r != root) s.Send(blocks[r], r, kTagScatter);
  return MPIGPU_SUCCESS;
}

int BuildAllgather(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                   MPIGPU_Datatype stype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
                   const int* recvcounts, const int* displs, MPIGPU_Datatype rtype, bool vform) {
  if (s.comm()->inter)
    return BuildInterAllgather(s, sendbuf, sbt, sendcount, stype, recvbuf, rbt, recvcount,
                               recvcounts, displs, rtype, vform);
  const int n = s.size(), me = s.rank();
  if (IsInPlace(recvbuf)) return InPlaceError("as recvbuf");
  if (vform)
    if (int rc = CheckCountArrays(recvcounts, displs); rc != MPIGPU_SUCCESS) return rc;
  TypedBuf rb, sb;
  if (int rc = UserBuf(recvbuf, rbt, 0, rtype, &rb); rc != MPIGPU_SUCCESS) return rc;
  std::vector<TypedBuf> blocks;
  if (int rc = BlocksOf(rb, n, recvcounts, recvcount, displs, &blocks); rc != MPIGPU_SUCCESS)
    return rc;
  if (!IsInPlace(sendbuf)) {
    if (int rc = UserBuf(sendbuf, sbt, sendcount, stype, &sb); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = LocalCopy(sb, blocks[me]); rc != MPIGPU_SUCCESS) return rc;
  }
  const int right = (me + 1) % n, left = (me - 1 + n) % n;
  for (int k = 0; k + 1 < n; ++k) {
    s.Recv(blocks[(me - k - 1 + n) % n], left, kTagAllgather);
    s.Send(blocks[(me - k + n) % n], right, kTagAllgather);
    s.NextRound();
  }
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu::api

using mpigpu::api::CollSched;
using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
using mpigpu::api::RunColl;

extern "C" int MPIGPU_Gather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                             MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                             int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Gather", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildGather(s, sendbuf, sendbuftype, sendcount, sendtype,
                                                  recvbuf, recvbuftype, recvcount, nullptr, nullptr,
                                                  recvtype, root, false);
                }));
}

extern "C" int MPIGPU_Igather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                              MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                              int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                              MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Igather", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildGather(s, sendbuf, sendbuftype, sendcount, sendtype,
                                                  recvbuf, recvbuftype, recvcount, nullptr, nullptr,
                                                  recvtype, root, false);
                }));
}

extern "C" int MPIGPU_Gatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                              MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                              const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
                              int root, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Gatherv", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildGather(s, sendbuf, sendbuftype, sendcount, sendtype,
                                                  recvbuf, recvbuftype, 0, recvcounts, displs,
                                                  recvtype, root, true);
                }));
}

extern "C" int MPIGPU_Igatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                               MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                               const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
                               int root, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Igatherv", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildGather(s, sendbuf, sendbuftype, sendcount, sendtype,
                                                  recvbuf, recvbuftype, 0, recvcounts, displs,
                                                  recvtype, root, true);
                }));
}

extern "C" int MPIGPU_Scatter(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                              MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                              int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Scatter", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildScatter(s, sendbuf, sendbuftype, sendcount, nullptr,
                                                   nullptr, sendtype, recvbuf, recvbuftype,
                                                   recvcount, recvtype, root, false);
                }));
}

extern "C" int MPIGPU_Iscatter(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                               MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                               int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                               MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iscatter", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildScatter(s, sendbuf, sendbuftype, sendcount, nullptr,
                                                   nullptr, sendtype, recvbuf, recvbuftype,
                                                   recvcount, recvtype, root, false);
                }));
}

extern "C" int MPIGPU_Scatterv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                               const int sendcounts[], const int displs[], MPIGPU_Datatype sendtype,
                               void* recvbuf, MPIGPU_Buftype recvbuftype, int recvcount,
                               MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Scatterv", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildScatter(s, sendbuf, sendbuftype, 0, sendcounts, displs,
                                                   sendtype, recvbuf, recvbuftype, recvcount,
                                                   recvtype, root, true);
                }));
}

extern "C" int MPIGPU_Iscatterv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                const int sendcounts[], const int displs[],
                                MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                                int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                                MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iscatterv", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildScatter(s, sendbuf, sendbuftype, 0, sendcounts, displs,
                                                   sendtype, recvbuf, recvbuftype, recvcount,
                                                   recvtype, root, true);
                }));
}

extern "C" int MPIGPU_Allgather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                                int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Allgather", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildAllgather(s, sendbuf, sendbuftype, sendcount, sendtype,
                                                     recvbuf, recvbuftype, recvcount, nullptr,
                                                     nullptr, recvtype, false);
                }));
}

extern "C" int MPIGPU_Iallgather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                 MPIGPU_Datatype sendtype, void* recvbuf,
                                 MPIGPU_Buftype recvbuftype, int recvcount,
                                 MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                 MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iallgather", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildAllgather(s, sendbuf, sendbuftype, sendcount, sendtype,
                                                     recvbuf, recvbuftype, recvcount, nullptr,
                                                     nullptr, recvtype, false);
                }));
}

extern "C" int MPIGPU_Allgatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                 MPIGPU_Datatype sendtype, void* recvbuf,
                                 MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                 const int displs[], MPIGPU_Datatype recvtype, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Allgatherv", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildAllgather(s, sendbuf, sendbuftype, sendcount, sendtype,
                                                     recvbuf, recvbuftype, 0, recvcounts, displs,
                                                     recvtype, true);
                }));
}

extern "C" int MPIGPU_Iallgatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                  MPIGPU_Datatype sendtype, void* recvbuf,
                                  MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                  const int displs[], MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                  MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iallgatherv", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildAllgather(s, sendbuf, sendbuftype, sendcount, sendtype,
                                                     recvbuf, recvbuftype, 0, recvcounts, displs,
                                                     recvtype, true);
                }));
}

// The reductions: Reduce (binomial tree), Allreduce (Reduce to rank 0, then Bcast),
// Reduce_scatter(_block) (Reduce to rank 0, then its blocks sent out), Scan and Exscan (a
// chain in rank order), Reduce_local; and the user-op calls Op_create/Op_free/Op_commutative.
// Data is combined on the host in packed form: contributions are staged there (device buffers
// and derived types through the packer), results unpacked back into the user's buffer.
// Non-commutative ops are applied in rank order (ReduceToRoot, the chains).
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"
#include "mpigpu_api/ops.h"

namespace mpigpu::api {
namespace {

// The contribution of a reduction over `count` elements: sendbuf, or recvbuf with IN_PLACE.
int Contribution(const void* sendbuf, MPIGPU_Buftype sbt, const TypedBuf& recv, int count,
                 MPIGPU_Datatype dt, TypedBuf* out) {
  if (IsInPlace(sendbuf)) {
    *out = recv;
    return MPIGPU_SUCCESS;
  }
  return UserBuf(sendbuf, sbt, count, dt, out);
}

int DoReduce(Lock& lk, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
             MPIGPU_Buftype rbt, int count, MPIGPU_Datatype dt, MPIGPU_Op op, int root, bool all,
             MPIGPU_Comm comm) {
  CommPtr c;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  if (!all)
    if (int rc = CheckRoot(*c, root); rc != MPIGPU_SUCCESS) return rc;
  ReduceCtx ctx;
  if (int rc = MakeReduceCtx(op, dt, count, &ctx); rc != MPIGPU_SUCCESS) return rc;
  const bool gets_result = all || c->rank == root;
  TypedBuf rb, sb;
  if (gets_result) {
    if (IsInPlace(recvbuf)) return InPlaceError("as recvbuf");
    if (int rc = UserBuf(recvbuf, rbt, count, dt, &rb); rc != MPIGPU_SUCCESS) return rc;
  } else if (IsInPlace(sendbuf)) {
    return InPlaceError("at a rank other than the root of Reduce");
  }
  if (int rc = Contribution(sendbuf, sbt, rb, count, dt, &sb); rc != MPIGPU_SUCCESS) return rc;
  if (count == 0) return MPIGPU_SUCCESS;  // every rank has count 0: nothing to combine

  std::vector<unsigned char> acc;
  if (int rc = StageContribution(sb, &acc); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = ReduceToRoot(lk, c, ctx, &acc, all ? 0 : root); rc != MPIGPU_SUCCESS) return rc;
  if (all)
    if (int rc = BcastTree(lk, c, HostBytes(acc.data(), acc.size()), 0); rc != MPIGPU_SUCCESS)
      return rc;
  if (!gets_result) return MPIGPU_SUCCESS;
  return UnpackFromHost(acc.data(), acc.size(), rb);
}

// Reduce_scatter with block r of counts[r] elements for rank r.
int DoReduceScatter(Lock& lk, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                    MPIGPU_Buftype rbt, const std::vector<int>& counts, MPIGPU_Datatype dt,
                    MPIGPU_Op op, const CommPtr& c) {
  const int n = c->size();
  int64_t total = 0;
  for (int r = 0; r < n; ++r) {
    if (counts[r] < 0)
      return SetLastError(MPIGPU_ERR_COUNT, "recvcounts[" + std::to_string(r) + "] = " +
                                                std::to_string(counts[r]) + " is negative");
    total += counts[r];
  }
  if (total > INT_MAX)
    return SetLastError(MPIGPU_ERR_COUNT, "the counts add up to more than INT_MAX elements");
  ReduceCtx ctx;
  if (int rc = MakeReduceCtx(op, dt, static_cast<int>(total), &ctx); rc != MPIGPU_SUCCESS)
    return rc;
  const int mine = counts[c->rank];
  TypedBuf rb, sb;
  if (IsInPlace(recvbuf)) return InPlaceError("as recvbuf");
  if (IsInPlace(sendbuf)) {
    // The contribution is the whole recvbuf; the result lands at its start.
    if (int rc = UserBuf(recvbuf, rbt, static_cast<int>(total), dt, &sb); rc != MPIGPU_SUCCESS)
      return rc;
    if (int rc = BlockAt(sb, 0, mine, &rb); rc != MPIGPU_SUCCESS) return rc;
  } else {
    if (int rc = UserBuf(recvbuf, rbt, mine, dt, &rb); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = UserBuf(sendbuf, sbt, static_cast<int>(total), dt, &sb); rc != MPIGPU_SUCCESS)
      return rc;
  }
  if (total == 0) return MPIGPU_SUCCESS;

  std::vector<unsigned char> acc;
  if (int rc = StageContribution(sb, &acc); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = ReduceToRoot(lk, c, ctx, &acc, 0); rc != MPIGPU_SUCCESS) return rc;
  const size_t elem = ctx.desc.size;
  if (c->rank == 0) {
    Batch batch(lk, c);
    size_t off = static_cast<size_t>(counts[0]) * elem;
    for (int r = 1; r < n; ++r) {
      const size_t bytes = static_cast<size_t>(counts[r]) * elem;
      if (int rc = batch.Send(HostBytes(acc.data() + off, bytes), r, kTagScatter);
          rc != MPIGPU_SUCCESS)
        return rc;
      off += bytes;
    }
    if (int rc = UnpackFromHost(acc.data(), static_cast<size_t>(mine) * elem, rb);
        rc != MPIGPU_SUCCESS)
      return rc;
    return batch.Wait();
  }
  std::vector<unsigned char> block(static_cast<size_t>(mine) * elem);
  if (int rc = CollRecv(lk, c, HostBytes(block.data(), block.size()), 0, kTagScatter);
      rc != MPIGPU_SUCCESS)
    return rc;
  return UnpackFromHost(block.data(), block.size(), rb);
}

int DoReduceScatterV(Lock& lk, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                     MPIGPU_Buftype rbt, const int* recvcounts, MPIGPU_Datatype dt, MPIGPU_Op op,
                     MPIGPU_Comm comm) {
  CommPtr c;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  if (recvcounts == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null recvcounts");
  std::vector<int> counts(recvcounts, recvcounts + c->size());
  return DoReduceScatter(lk, sendbuf, sbt, recvbuf, rbt, counts, dt, op, c);
}

int DoReduceScatterBlock(Lock& lk, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                         MPIGPU_Buftype rbt, int recvcount, MPIGPU_Datatype dt, MPIGPU_Op op,
                         MPIGPU_Comm comm) {
  CommPtr c;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  std::vector<int> counts(c->size(), recvcount);
  return DoReduceScatter(lk, sendbuf, sbt, recvbuf, rbt, counts, dt, op, c);
}

// Scan (inclusive) or Exscan: a chain in rank order; rank r receives x0 op ... op xr-1 from
// r - 1 and passes x0 op ... op xr on.
int DoScan(Lock& lk, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf, MPIGPU_Buftype rbt,
           int count, MPIGPU_Datatype dt, MPIGPU_Op op, bool inclusive, MPIGPU_Comm comm) {
  CommPtr c;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  ReduceCtx ctx;
  if (int rc = MakeReduceCtx(op, dt, count, &ctx); rc != MPIGPU_SUCCESS) return rc;
  if (IsInPlace(recvbuf)) return InPlaceError("as recvbuf");
  TypedBuf rb, sb;
  if (int rc = UserBuf(recvbuf, rbt, count, dt, &rb); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = Contribution(sendbuf, sbt, rb, count, dt, &sb); rc != MPIGPU_SUCCESS) return rc;
  if (count == 0) return MPIGPU_SUCCESS;
  const int n = c->size(), me = c->rank;
  std::vector<unsigned char> mine, pre(ctx.bytes);
  if (int rc = StageContribution(sb, &mine); rc != MPIGPU_SUCCESS) return rc;
  if (me > 0) {
    if (int rc = CollRecv(lk, c, HostBytes(pre.data(), pre.size()), me - 1, kTagScan);
        rc != MPIGPU_SUCCESS)
      return rc;
    if (!inclusive)
      if (int rc = UnpackFromHost(pre.data(), pre.size(), rb); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = ctx.Combine(pre.data(), mine.data()); rc != MPIGPU_SUCCESS) return rc;
  }
  if (me + 1 < n)
    if (int rc = CollSend(lk, c, HostBytes(mine.data(), mine.size()), me + 1, kTagScan);
        rc != MPIGPU_SUCCESS)
      return rc;
  if (inclusive) return UnpackFromHost(mine.data(), mine.size(), rb);
  return MPIGPU_SUCCESS;
}

int DoReduceLocal(const void* inbuf, MPIGPU_Buftype ibt, void* inoutbuf, MPIGPU_Buftype iobt,
                  int count, MPIGPU_Datatype dt, MPIGPU_Op op) {
  ReduceCtx ctx;
  if (int rc = MakeReduceCtx(op, dt, count, &ctx); rc != MPIGPU_SUCCESS) return rc;
  TypedBuf in, io;
  if (int rc = UserBuf(inbuf, ibt, count, dt, &in); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = UserBuf(inoutbuf, iobt, count, dt, &io); rc != MPIGPU_SUCCESS) return rc;
  if (count == 0) return MPIGPU_SUCCESS;
  std::vector<unsigned char> a, b;
  if (int rc = StageContribution(in, &a); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = StageContribution(io, &b); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = ctx.Combine(a.data(), b.data()); rc != MPIGPU_SUCCESS) return rc;
  return UnpackFromHost(b.data(), b.size(), io);
}

int DoOpCommutative(MPIGPU_Op op, int* commute) {
  if (commute == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null commute pointer");
  if (!IsValidOp(op)) return SetLastError(MPIGPU_ERR_OP, "op " + std::to_string(op) + " is not valid");
  *commute = IsCommutativeOp(op) ? 1 : 0;
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;

extern "C" int MPIGPU_Reduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                             MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                             MPIGPU_Op op, int root, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Reduce", comm,
                mpigpu::api::DoReduce(lk, sendbuf, sendbuftype, recvbuf, recvbuftype, count,
                                      datatype, op, root, false, comm));
}

extern "C" int MPIGPU_Allreduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                                MPIGPU_Op op, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Allreduce", comm,
                mpigpu::api::DoReduce(lk, sendbuf, sendbuftype, recvbuf, recvbuftype, count,
                                      datatype, op, 0, true, comm));
}

extern "C" int MPIGPU_Reduce_scatter(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                     void* recvbuf, MPIGPU_Buftype recvbuftype,
                                     const int recvcounts[], MPIGPU_Datatype datatype,
                                     MPIGPU_Op op, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Reduce_scatter", comm,
                mpigpu::api::DoReduceScatterV(lk, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                              recvcounts, datatype, op, comm));
}

extern "C" int MPIGPU_Reduce_scatter_block(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                           void* recvbuf, MPIGPU_Buftype recvbuftype,
                                           int recvcount, MPIGPU_Datatype datatype, MPIGPU_Op op,
                                           MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Reduce_scatter_block", comm,
                mpigpu::api::DoReduceScatterBlock(lk, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                  recvcount, datatype, op, comm));
}

extern "C" int MPIGPU_Scan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                           MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                           MPIGPU_Op op, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Scan", comm,
                mpigpu::api::DoScan(lk, sendbuf, sendbuftype, recvbuf, recvbuftype, count,
                                    datatype, op, true, comm));
}

extern "C" int MPIGPU_Exscan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                             MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                             MPIGPU_Op op, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Exscan", comm,
                mpigpu::api::DoScan(lk, sendbuf, sendbuftype, recvbuf, recvbuftype, count,
                                    datatype, op, false, comm));
}

extern "C" int MPIGPU_Reduce_local(const void* inbuf, MPIGPU_Buftype inbuftype, void* inoutbuf,
                                   MPIGPU_Buftype inoutbuftype, int count,
                                   MPIGPU_Datatype datatype, MPIGPU_Op op) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Reduce_local", MPIGPU_COMM_WORLD,
                mpigpu::api::DoReduceLocal(inbuf, inbuftype, inoutbuf, inoutbuftype, count,
                                           datatype, op));
}

extern "C" int MPIGPU_Op_create(MPIGPU_User_function* fn, int commute, MPIGPU_Op* op) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Op_create", MPIGPU_COMM_WORLD,
                mpigpu::CreateUserOp(fn, commute != 0, op));
}

extern "C" int MPIGPU_Op_free(MPIGPU_Op* op) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Op_free", MPIGPU_COMM_WORLD, mpigpu::FreeUserOp(op));
}

extern "C" int MPIGPU_Op_commutative(MPIGPU_Op op, int* commute) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Op_commutative", MPIGPU_COMM_WORLD,
                mpigpu::api::DoOpCommutative(op, commute));
}

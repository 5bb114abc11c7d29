// The reductions, blocking and nonblocking: Reduce (binomial tree), Allreduce (Reduce to rank
// 0, then Bcast), Reduce_scatter(_block) (Reduce to rank 0, then its blocks sent out), Scan and
// Exscan (a chain in rank order); Reduce_local; and the user-op calls Op_create/Op_free/
// Op_commutative.
// Data is combined in packed form: on the GPU by kernels for predefined ops on device buffers
// (coll_device.h), else on the host, where contributions are staged (device buffers and
// derived types through the packer) and results unpacked back into the user's buffer.
// Non-commutative ops are applied in rank order (ReduceToRoot, the chains).
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_build.h"
#include "mpigpu_api/coll_device.h"
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

}  // namespace

// Reduce to `root`, or Allreduce (`all`).
int BuildReduce(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                MPIGPU_Buftype rbt, int count, MPIGPU_Datatype dt, MPIGPU_Op op, int root,
                bool all) {
  if (s.comm()->inter)
    return BuildInterReduce(s, sendbuf, sbt, recvbuf, rbt, count, dt, op, root, all);
  if (!all)
    if (int rc = CheckRoot(*s.comm(), root); rc != MPIGPU_SUCCESS) return rc;
  auto ctx = std::make_shared<ReduceCtx>();
  if (int rc = MakeReduceCtx(op, dt, count, ctx.get()); rc != MPIGPU_SUCCESS) return rc;
  const bool gets_result = all || s.rank() == root;
  TypedBuf rb, sb;
  if (gets_result) {
    if (IsInPlace(recvbuf)) return InPlaceError("as recvbuf");
    if (int rc = UserBuf(recvbuf, rbt, count, dt, &rb); rc != MPIGPU_SUCCESS) return rc;
  } else if (IsInPlace(sendbuf)) {
    return InPlaceError("at a rank other than the root of Reduce");
  }
  if (int rc = Contribution(sendbuf, sbt, rb, count, dt, &sb); rc != MPIGPU_SUCCESS) return rc;
  if (count == 0) return MPIGPU_SUCCESS;  // every rank has count 0: nothing to combine

  ChooseReduceLoc(ctx.get(), {&sb, gets_result ? &rb : nullptr});
  unsigned char* acc = nullptr;
  if (int rc = StageReduce(s, *ctx, sb, &acc); rc != MPIGPU_SUCCESS) return rc;
  const size_t bytes = ctx->bytes;
  if (int rc = AddReduceToRoot(s, ctx, acc, all ? 0 : root); rc != MPIGPU_SUCCESS) return rc;
  if (all) AddBcastTree(s, ctx->Packed(acc, bytes), 0);
  if (gets_result) s.Then([ctx, acc, bytes, rb] { return UnpackReduce(*ctx, acc, bytes, rb); });
  return MPIGPU_SUCCESS;
}


int PrepareReduceScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                         MPIGPU_Buftype rbt, const int* recvcounts, int block, MPIGPU_Datatype dt,
                         MPIGPU_Op op, ReduceScatterArgs* a) {
  const int n = s.size(), me = s.rank();
  if (recvcounts == nullptr && block < 0)
    return SetLastError(MPIGPU_ERR_COUNT, "recvcount " + std::to_string(block) + " is negative");
  a->counts.assign(n, block);
  if (recvcounts != nullptr) a->counts.assign(recvcounts, recvcounts + n);
  int64_t total = 0;
  for (int r = 0; r < n; ++r) {
    if (a->counts[r] < 0)
      return SetLastError(MPIGPU_ERR_COUNT, "recvcounts[" + std::to_string(r) + "] = " +
                                                std::to_string(a->counts[r]) + " is negative");
    total += a->counts[r];
  }
  if (total > INT_MAX)
    return SetLastError(MPIGPU_ERR_COUNT, "the counts add up to more than INT_MAX elements");
  a->total = static_cast<int>(total);
  a->ctx = std::make_shared<ReduceCtx>();
  if (int rc = MakeReduceCtx(op, dt, a->total, a->ctx.get()); rc != MPIGPU_SUCCESS) return rc;
  const int mine = a->counts[me];
  if (IsInPlace(recvbuf)) return InPlaceError("as recvbuf");
  if (IsInPlace(sendbuf)) {
    // The contribution is the whole recvbuf; the result lands at its start.
    if (int rc = UserBuf(recvbuf, rbt, a->total, dt, &a->sb); rc != MPIGPU_SUCCESS) return rc;
    return BlockAt(a->sb, 0, mine, &a->rb);
  }
  if (int rc = UserBuf(recvbuf, rbt, mine, dt, &a->rb); rc != MPIGPU_SUCCESS) return rc;
  return UserBuf(sendbuf, sbt, a->total, dt, &a->sb);
}

int AddScatterResult(CollSched& s, const ReduceScatterArgs& a, unsigned char* result) {
  // Rank 0 sends block r of the result to rank r.
  const std::shared_ptr<const ReduceCtx> ctx = a.ctx;
  const int n = s.size(), me = s.rank();
  const size_t elem = a.ctx->desc.size;
  const size_t my_bytes = static_cast<size_t>(a.counts[me]) * elem;
  const TypedBuf rb = a.rb;
  if (me == 0) {
    size_t off = static_cast<size_t>(a.counts[0]) * elem;
    for (int r = 1; r < n; ++r) {
      const size_t bytes = static_cast<size_t>(a.counts[r]) * elem;
      s.Send(ctx->Packed(result + off, bytes), r, kTagScatter);
      off += bytes;
    }
    s.Then([ctx, result, my_bytes, rb] { return UnpackReduce(*ctx, result, my_bytes, rb); });
  } else {
    unsigned char* block_buf = nullptr;
    if (int rc = ReduceScratch(s, *ctx, my_bytes, &block_buf); rc != MPIGPU_SUCCESS) return rc;
    s.Recv(ctx->Packed(block_buf, my_bytes), 0, kTagScatter);
    s.Then([ctx, block_buf, my_bytes, rb] { return UnpackReduce(*ctx, block_buf, my_bytes, rb); });
  }
  return MPIGPU_SUCCESS;
}


// Reduce_scatter with block r of counts[r] elements for rank r (counts: n entries, or null
// with `block` elements each): Reduce to rank 0, which sends the blocks out.
int BuildReduceScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                       MPIGPU_Buftype rbt, const int* recvcounts, int block, MPIGPU_Datatype dt,
                       MPIGPU_Op op) {
  if (s.comm()->inter)
    return BuildInterReduceScatter(s, sendbuf, sbt, recvbuf, rbt, recvcounts, block, dt, op);
  ReduceScatterArgs a;
  if (int rc = PrepareReduceScatter(s, sendbuf, sbt, recvbuf, rbt, recvcounts, block, dt, op, &a);
      rc != MPIGPU_SUCCESS)
    return rc;
  if (a.total == 0) return MPIGPU_SUCCESS;
  ChooseReduceLoc(a.ctx.get(), {&a.sb, &a.rb});
  unsigned char* acc = nullptr;
  if (int rc = StageReduce(s, *a.ctx, a.sb, &acc); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = AddReduceToRoot(s, a.ctx, acc, 0); rc != MPIGPU_SUCCESS) return rc;
  return AddScatterResult(s, a, acc);
}

// Scan (inclusive) or Exscan: a chain in rank order; rank r receives x0 op ... op xr-1 from
// r - 1 and passes x0 op ... op xr on.
int BuildScan(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
              MPIGPU_Buftype rbt, int count, MPIGPU_Datatype dt, MPIGPU_Op op, bool inclusive) {
  if (s.comm()->inter)
    return SetLastError(MPIGPU_ERR_COMM, std::string(inclusive ? "Scan" : "Exscan") +
                                             " is not defined on an intercommunicator");
  auto ctx = std::make_shared<ReduceCtx>();
  if (int rc = MakeReduceCtx(op, dt, count, ctx.get()); rc != MPIGPU_SUCCESS) return rc;
  if (IsInPlace(recvbuf)) return InPlaceError("as recvbuf");
  TypedBuf rb, sb;
  if (int rc = UserBuf(recvbuf, rbt, count, dt, &rb); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = Contribution(sendbuf, sbt, rb, count, dt, &sb); rc != MPIGPU_SUCCESS) return rc;
  if (count == 0) return MPIGPU_SUCCESS;
  const int n = s.size(), me = s.rank();
  const size_t bytes = ctx->bytes;
  ChooseReduceLoc(ctx.get(), {&sb, &rb});
  unsigned char* mine = nullptr;
  if (int rc = StageReduce(s, *ctx, sb, &mine); rc != MPIGPU_SUCCESS) return rc;
  if (me > 0) {
    unsigned char* pre = nullptr;
    if (int rc = ReduceScratch(s, *ctx, bytes, &pre); rc != MPIGPU_SUCCESS) return rc;
    s.Recv(ctx->Packed(pre, bytes), me - 1, kTagScan);
    if (!inclusive) s.Then([ctx, pre, bytes, rb] { return UnpackReduce(*ctx, pre, bytes, rb); });
    s.Then([ctx, pre, mine] { return ctx->Combine(pre, mine); });  // mine = pre op mine
    s.NextRound();
  }
  if (me + 1 < n) s.Send(ctx->Packed(mine, bytes), me + 1, kTagScan);
  if (inclusive) s.Then([ctx, mine, bytes, rb] { return UnpackReduce(*ctx, mine, bytes, rb); });
  return MPIGPU_SUCCESS;
}

namespace {

int DoReduceLocal(const void* inbuf, MPIGPU_Buftype ibt, void* inoutbuf, MPIGPU_Buftype iobt,
                  int count, MPIGPU_Datatype dt, MPIGPU_Op op) {
  ReduceCtx ctx;
  if (int rc = MakeReduceCtx(op, dt, count, &ctx); rc != MPIGPU_SUCCESS) return rc;
  TypedBuf in, io;
  if (int rc = UserBuf(inbuf, ibt, count, dt, &in); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = UserBuf(inoutbuf, iobt, count, dt, &io); rc != MPIGPU_SUCCESS) return rc;
  if (count == 0) return MPIGPU_SUCCESS;
  ChooseReduceLoc(&ctx, {&in, &io});
  if (ctx.loc.is_device()) return ReduceLocalOnDevice(ctx, in, io);
  std::vector<unsigned char> a(ctx.bytes), b(ctx.bytes);
  if (int rc = PackToHost(in, a.data()); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = PackToHost(io, b.data()); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = ctx.Combine(a.data(), b.data()); rc != MPIGPU_SUCCESS) return rc;
  return UnpackFromHost(b.data(), b.size(), io);
}

int DoOpCommutative(MPIGPU_Op op, int* commute) {
  if (commute == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null commute pointer");
  if (!IsValidOp(op))
    return SetLastError(MPIGPU_ERR_OP, "op " + std::to_string(op) + " is not valid");
  *commute = IsCommutativeOp(op) ? 1 : 0;
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

using mpigpu::api::CollSched;
using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
using mpigpu::api::RunColl;

extern "C" int MPIGPU_Reduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                             MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                             MPIGPU_Op op, int root, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Reduce", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildReduce(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                  count, datatype, op, root, false);
                }));
}

extern "C" int MPIGPU_Ireduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                              MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                              MPIGPU_Op op, int root, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Ireduce", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildReduce(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                  count, datatype, op, root, false);
                }));
}

extern "C" int MPIGPU_Allreduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                                MPIGPU_Op op, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Allreduce", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildReduce(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                  count, datatype, op, 0, true);
                }));
}

extern "C" int MPIGPU_Iallreduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                 MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                                 MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iallreduce", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildReduce(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                  count, datatype, op, 0, true);
                }));
}

extern "C" int MPIGPU_Reduce_scatter(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                     MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                     MPIGPU_Datatype datatype, MPIGPU_Op op, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Reduce_scatter", comm,
                recvcounts == nullptr ? mpigpu::SetLastError(MPIGPU_ERR_ARG, "null recvcounts")
                                      : RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                                          return mpigpu::api::BuildReduceScatter(
                                              s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                              recvcounts, 0, datatype, op);
                                        }));
}

extern "C" int MPIGPU_Ireduce_scatter(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                      void* recvbuf, MPIGPU_Buftype recvbuftype,
                                      const int recvcounts[], MPIGPU_Datatype datatype,
                                      MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Ireduce_scatter", comm,
                recvcounts == nullptr ? mpigpu::SetLastError(MPIGPU_ERR_ARG, "null recvcounts")
                                      : RunColl(lk, comm, request, true, [&](CollSched& s) {
                                          return mpigpu::api::BuildReduceScatter(
                                              s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                              recvcounts, 0, datatype, op);
                                        }));
}

extern "C" int MPIGPU_Reduce_scatter_block(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                           void* recvbuf, MPIGPU_Buftype recvbuftype, int recvcount,
                                           MPIGPU_Datatype datatype, MPIGPU_Op op,
                                           MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish(
      "MPIGPU_Reduce_scatter_block", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
        return mpigpu::api::BuildReduceScatter(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                               nullptr, recvcount, datatype, op);
      }));
}

extern "C" int MPIGPU_Ireduce_scatter_block(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                            void* recvbuf, MPIGPU_Buftype recvbuftype,
                                            int recvcount, MPIGPU_Datatype datatype, MPIGPU_Op op,
                                            MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish(
      "MPIGPU_Ireduce_scatter_block", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
        return mpigpu::api::BuildReduceScatter(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                               nullptr, recvcount, datatype, op);
      }));
}

extern "C" int MPIGPU_Scan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                           MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                           MPIGPU_Op op, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Scan", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildScan(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                count, datatype, op, true);
                }));
}

extern "C" int MPIGPU_Iscan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                            MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                            MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iscan", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildScan(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                count, datatype, op, true);
                }));
}

extern "C" int MPIGPU_Exscan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                             MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                             MPIGPU_Op op, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Exscan", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildScan(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                count, datatype, op, false);
                }));
}

extern "C" int MPIGPU_Iexscan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                              MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                              MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Iexscan", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildScan(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                count, datatype, op, false);
                }));
}

extern "C" int MPIGPU_Reduce_local(const void* inbuf, MPIGPU_Buftype inbuftype, void* inoutbuf,
                                   MPIGPU_Buftype inoutbuftype, int count, MPIGPU_Datatype datatype,
                                   MPIGPU_Op op) {
  Lock lk(GetState().mu);
  return Finish(
      "MPIGPU_Reduce_local", MPIGPU_COMM_WORLD,
      mpigpu::api::DoReduceLocal(inbuf, inbuftype, inoutbuf, inoutbuftype, count, datatype, op));
}

extern "C" int MPIGPU_Op_create(MPIGPU_User_function* fn, int commute, MPIGPU_Op* op) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Op_create", MPIGPU_COMM_WORLD, mpigpu::CreateUserOp(fn, commute != 0, op));
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

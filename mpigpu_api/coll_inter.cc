// Collectives on intercommunicators (MPI 3.1 §5.2.2): data goes from one group to the other.
// Ranks on the intercommunicator name the remote group; each group also has its local
// intracommunicator (CommData::local_comm), which CollSched::OnLocal points a schedule at, so
// the intra pieces (AddReduceToRoot, AddBcastTree, AddBarrierRounds, AddScatterResult) run
// unchanged inside one group. The ones that combine or spread data go through the local
// leaders (local rank 0): a group reduces to its leader, the leaders swap over the
// intercommunicator, each leader spreads what it got in its group. The ones that move every
// rank's own blocks (Gather, Scatter, Allgather, Alltoall) go straight between the ranks of the
// two groups, between the user's typed buffers (device memory and derived types as in point to
// point). Rooted ones: the root passes MPIGPU_ROOT, the rest of its group MPIGPU_PROC_NULL (and
// do nothing), the other group the root's remote rank.
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

enum class Role {
  kRoot,  // root == MPIGPU_ROOT
  kIdle,  // root == MPIGPU_PROC_NULL: the root's group apart from the root
  kLeaf,  // root names a rank of the remote group
};

int RoleOf(const CommData& c, int root, Role* role) {
  if (root == MPIGPU_ROOT) {
    *role = Role::kRoot;
  } else if (root == MPIGPU_PROC_NULL) {
    *role = Role::kIdle;
  } else if (root >= 0 && root < c.size()) {
    *role = Role::kLeaf;
  } else {
    return SetLastError(MPIGPU_ERR_ROOT,
                        "root " + std::to_string(root) +
                            " on an intercommunicator is none of MPIGPU_ROOT, MPIGPU_PROC_NULL "
                            "or a rank of the remote group of size " +
                            std::to_string(c.size()));
  }
  return MPIGPU_SUCCESS;
}

int NoInPlace(const void* a, const void* b) {
  if (IsInPlace(a) || IsInPlace(b)) return InPlaceError("on an intercommunicator");
  return MPIGPU_SUCCESS;
}

// The leaders swap `mine` for the remote leader's `theirs` over the intercommunicator; the
// schedule addresses the local group again afterwards.
void AddLeaderSwap(CollSched& s, const TypedBuf& mine, const TypedBuf& theirs, int tag) {
  s.OnLocal(false);
  if (s.rank() == 0) {
    s.Recv(theirs, 0, tag);
    s.Send(mine, 0, tag);
  }
  s.NextRound();
  s.OnLocal(true);
}

}  // namespace

int BuildInterBarrier(CollSched& s) {
  // Everyone in this group entered (local barrier), the leaders learn the same of the other
  // group, and tell their own.
  const TypedBuf empty = HostBytes(nullptr, 0);
  s.OnLocal(true);
  AddBarrierRounds(s);
  AddLeaderSwap(s, empty, empty, kTagBarrier);
  AddBcastTree(s, empty, 0);
  return MPIGPU_SUCCESS;
}

int BuildInterBcast(CollSched& s, void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt,
                    int root) {
  Role role;
  if (int rc = RoleOf(*s.comm(), root, &role); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = NoInPlace(buf, nullptr); rc != MPIGPU_SUCCESS) return rc;
  if (role == Role::kIdle) return MPIGPU_SUCCESS;
  TypedBuf b;
  if (int rc = UserBuf(buf, bt, count, dt, &b); rc != MPIGPU_SUCCESS) return rc;
  if (role == Role::kRoot) {
    s.Send(b, 0, kTagBcast);  // to the other group's leader
    return MPIGPU_SUCCESS;
  }
  if (s.rank() == 0) s.Recv(b, root, kTagBcast);
  s.NextRound();
  s.OnLocal(true);
  AddBcastTree(s, b, 0);
  return MPIGPU_SUCCESS;
}

int BuildInterGather(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                     MPIGPU_Datatype stype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
                     const int* recvcounts, const int* displs, MPIGPU_Datatype rtype, int root,
                     bool vform) {
  Role role;
  if (int rc = RoleOf(*s.comm(), root, &role); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = NoInPlace(sendbuf, recvbuf); rc != MPIGPU_SUCCESS) return rc;
  if (role == Role::kIdle) return MPIGPU_SUCCESS;
  if (role == Role::kLeaf) {
    TypedBuf sb;
    if (int rc = UserBuf(sendbuf, sbt, sendcount, stype, &sb); rc != MPIGPU_SUCCESS) return rc;
    s.Send(sb, root, kTagGather);
    return MPIGPU_SUCCESS;
  }
  if (vform)
    if (int rc = CheckCountArrays(recvcounts, displs); rc != MPIGPU_SUCCESS) return rc;
  TypedBuf rb;
  if (int rc = UserBuf(recvbuf, rbt, 0, rtype, &rb); rc != MPIGPU_SUCCESS) return rc;
  std::vector<TypedBuf> blocks;
  if (int rc = BlocksOf(rb, s.size(), recvcounts, recvcount, displs, &blocks);
      rc != MPIGPU_SUCCESS)
    return rc;
  for (int r = 0; r < s.size(); ++r) s.Recv(blocks[r], r, kTagGather);
  return MPIGPU_SUCCESS;
}

int BuildInterScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                      const int* sendcounts, const int* displs, MPIGPU_Datatype stype,
                      void* recvbuf, MPIGPU_Buftype rbt, int recvcount, MPIGPU_Datatype rtype,
                      int root, bool vform) {
  Role role;
  if (int rc = RoleOf(*s.comm(), root, &role); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = NoInPlace(sendbuf, recvbuf); rc != MPIGPU_SUCCESS) return rc;
  if (role == Role::kIdle) return MPIGPU_SUCCESS;
  if (role == Role::kLeaf) {
    TypedBuf rb;
    if (int rc = UserBuf(recvbuf, rbt, recvcount, rtype, &rb); rc != MPIGPU_SUCCESS) return rc;
    s.Recv(rb, root, kTagScatter);
    return MPIGPU_SUCCESS;
  }
  if (vform)
    if (int rc = CheckCountArrays(sendcounts, displs); rc != MPIGPU_SUCCESS) return rc;
  TypedBuf sb;
  if (int rc = UserBuf(sendbuf, sbt, 0, stype, &sb); rc != MPIGPU_SUCCESS) return rc;
  std::vector<TypedBuf> blocks;
  if (int rc = BlocksOf(sb, s.size(), sendcounts, sendcount, displs, &blocks);
      rc != MPIGPU_SUCCESS)
    return rc;
  for (int r = 0; r < s.size(); ++r) s.Send(blocks[r], r, kTagScatter);
  return MPIGPU_SUCCESS;
}

int BuildInterAllgather(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                        MPIGPU_Datatype stype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
                        const int* recvcounts, const int* displs, MPIGPU_Datatype rtype,
                        bool vform) {
  // Every rank sends its block to every remote rank and gets block r from remote rank r.
  if (int rc = NoInPlace(sendbuf, recvbuf); rc != MPIGPU_SUCCESS) return rc;
  if (vform)
    if (int rc = CheckCountArrays(recvcounts, displs); rc != MPIGPU_SUCCESS) return rc;
  TypedBuf rb, sb;
  if (int rc = UserBuf(recvbuf, rbt, 0, rtype, &rb); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = UserBuf(sendbuf, sbt, sendcount, stype, &sb); rc != MPIGPU_SUCCESS) return rc;
  std::vector<TypedBuf> blocks;
  if (int rc = BlocksOf(rb, s.size(), recvcounts, recvcount, displs, &blocks);
      rc != MPIGPU_SUCCESS)
    return rc;
  for (int r = 0; r < s.size(); ++r) {
    s.Recv(blocks[r], r, kTagAllgather);
    s.Send(sb, r, kTagAllgather);
  }
  return MPIGPU_SUCCESS;
}

int BuildInterAlltoall(CollSched& s, const AlltoallSide& send, const AlltoallSide& recv) {
  // Block r of sendbuf goes to remote rank r, whose block for this rank lands in block r.
  if (int rc = NoInPlace(send.buf, recv.buf); rc != MPIGPU_SUCCESS) return rc;
  std::vector<TypedBuf> rblocks, sblocks;
  if (int rc = AlltoallBlocks(recv, s.size(), &rblocks); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = AlltoallBlocks(send, s.size(), &sblocks); rc != MPIGPU_SUCCESS) return rc;
  // Starting at this rank's own index spreads the first messages over the remote ranks.
  const int n = s.size();
  for (int k = 0; k < n; ++k) {
    const int r = (s.rank() + k) % n;
    s.Recv(rblocks[r], r, kTagAlltoall);
    s.Send(sblocks[r], r, kTagAlltoall);
  }
  return MPIGPU_SUCCESS;
}

int BuildInterReduce(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                     MPIGPU_Buftype rbt, int count, MPIGPU_Datatype dt, MPIGPU_Op op, int root,
                     bool all) {
  Role role = Role::kLeaf;
  if (!all)
    if (int rc = RoleOf(*s.comm(), root, &role); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = NoInPlace(sendbuf, recvbuf); rc != MPIGPU_SUCCESS) return rc;
  if (role == Role::kIdle) return MPIGPU_SUCCESS;
  auto ctx = std::make_shared<ReduceCtx>();
  if (int rc = MakeReduceCtx(op, dt, count, ctx.get()); rc != MPIGPU_SUCCESS) return rc;
  const size_t bytes = ctx->bytes;
  TypedBuf rb, sb;
  if (all || role == Role::kRoot)
    if (int rc = UserBuf(recvbuf, rbt, count, dt, &rb); rc != MPIGPU_SUCCESS) return rc;
  if (all || role == Role::kLeaf)
    if (int rc = UserBuf(sendbuf, sbt, count, dt, &sb); rc != MPIGPU_SUCCESS) return rc;
  if (count == 0) return MPIGPU_SUCCESS;  // every rank has count 0: nothing to move
  if (role == Role::kRoot) {
    // The other group's leader sends its group's result.
    unsigned char* res = s.Buffer(bytes);
    s.Recv(HostBytes(res, bytes), 0, kTagReduce);
    s.Then([res, bytes, rb] { return UnpackFromHost(res, bytes, rb); });
    return MPIGPU_SUCCESS;
  }
  unsigned char* acc = nullptr;
  if (int rc = StageInto(s, sb, &acc); rc != MPIGPU_SUCCESS) return rc;
  s.OnLocal(true);
  if (int rc = AddReduceToRoot(s, ctx, acc, 0); rc != MPIGPU_SUCCESS) return rc;
  if (!all) {
    s.OnLocal(false);
    if (s.rank() == 0) s.Send(HostBytes(acc, bytes), root, kTagReduce);
    return MPIGPU_SUCCESS;
  }
  // Allreduce: each group gets the other group's result from its leader.
  unsigned char* res = s.Buffer(bytes);
  AddLeaderSwap(s, HostBytes(acc, bytes), HostBytes(res, bytes), kTagReduce);
  AddBcastTree(s, HostBytes(res, bytes), 0);
  s.Then([res, bytes, rb] { return UnpackFromHost(res, bytes, rb); });
  return MPIGPU_SUCCESS;
}

int BuildInterReduceScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                            MPIGPU_Buftype rbt, const int* recvcounts, int block,
                            MPIGPU_Datatype dt, MPIGPU_Op op) {
  // recvcounts name the local group's blocks; each group contributes as many elements as the
  // local counts add up to (equal on both sides), reduces them to its leader, the leaders swap,
  // and each scatters the other group's result in its own.
  if (int rc = NoInPlace(sendbuf, recvbuf); rc != MPIGPU_SUCCESS) return rc;
  s.OnLocal(true);
  ReduceScatterArgs a;
  if (int rc = PrepareReduceScatter(s, sendbuf, sbt, recvbuf, rbt, recvcounts, block, dt, op, &a);
      rc != MPIGPU_SUCCESS)
    return rc;
  if (a.total == 0) return MPIGPU_SUCCESS;
  const size_t bytes = a.ctx->bytes;
  unsigned char* acc = nullptr;
  if (int rc = StageInto(s, a.sb, &acc); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = AddReduceToRoot(s, a.ctx, acc, 0); rc != MPIGPU_SUCCESS) return rc;
  unsigned char* res = s.Buffer(bytes);
  AddLeaderSwap(s, HostBytes(acc, bytes), HostBytes(res, bytes), kTagReduce);
  return AddScatterResult(s, a, res);
}

}  // namespace mpigpu::api

// Collectives over a communicator's collective context, built on the point-to-point core:
// Barrier (dissemination), Bcast (binomial tree), Reduce (binomial tree, combined on the host;
// device buffers are staged through host memory), Allreduce (Reduce to rank 0, then Bcast).
// Simple algorithms, correctness first. Every rank calls a communicator's collectives in the
// same order and messages of one pair never overtake each other, so fixed tags per kind suffice.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/errors.h"
#include "mpigpu_api/ops.h"

namespace mpigpu::api {
namespace {

constexpr int kTagBcast = 1;
constexpr int kTagReduce = 2;
constexpr int kTagGather = 3;
constexpr int kTagBarrier = 0x100;  // + round

int CollSend(Lock& lk, const CommPtr& c, const TypedBuf& b, int dst, int tag) {
  ApiRequest* r = nullptr;
  if (int rc = StartP2P(false, b, c, dst, tag, c->ctx_coll, &r); rc != MPIGPU_SUCCESS) return rc;
  return WaitP2P(lk, r, MPIGPU_STATUS_IGNORE);
}

int CollRecv(Lock& lk, const CommPtr& c, const TypedBuf& b, int src, int tag) {
  ApiRequest* r = nullptr;
  if (int rc = StartP2P(true, b, c, src, tag, c->ctx_coll, &r); rc != MPIGPU_SUCCESS) return rc;
  return WaitP2P(lk, r, MPIGPU_STATUS_IGNORE);
}

// `count` elements of predefined `type` in host memory.
TypedBuf HostBuf(void* p, int count, MPIGPU_Datatype type) {
  TypedBuf b;
  b.ptr = p;
  (void)DescribeForComm(type, count, &b.desc);  // a predefined type and count >= 0: cannot fail
  return b;
}

// Copies between host memory and a buffer at `loc`, complete on return.
int CopySync(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc, size_t bytes) {
  if (bytes == 0) return MPIGPU_SUCCESS;
  const MemLoc dev = dst_loc.is_device() ? dst_loc : src_loc;
  DeviceScope scope(dev);  // default-stream copies run on the current device
  Status st = Copy(dst, dst_loc, src, src_loc, bytes, nullptr);
  if (!st.ok()) return ReturnCode(st, MPIGPU_ERR_BUFFER);
  return dev.is_device() ? SyncDefaultStream() : MPIGPU_SUCCESS;
}

int Barrier(Lock& lk, const CommPtr& c) {
  const int n = c->size();
  const TypedBuf empty = HostBuf(nullptr, 0, MPIGPU_BYTE);
  for (int dist = 1, round = 0; dist < n; dist <<= 1, ++round) {
    ApiRequest *rr = nullptr, *sr = nullptr;
    const int tag = kTagBarrier + round;
    if (int rc = StartP2P(true, empty, c, (c->rank - dist + n) % n, tag, c->ctx_coll, &rr);
        rc != MPIGPU_SUCCESS)
      return rc;
    if (int rc = StartP2P(false, empty, c, (c->rank + dist) % n, tag, c->ctx_coll, &sr);
        rc != MPIGPU_SUCCESS)
      return rc;
    int src = WaitP2P(lk, sr, MPIGPU_STATUS_IGNORE);
    int rrc = WaitP2P(lk, rr, MPIGPU_STATUS_IGNORE);
    if (src != MPIGPU_SUCCESS) return src;
    if (rrc != MPIGPU_SUCCESS) return rrc;
  }
  return MPIGPU_SUCCESS;
}

// Binomial tree from `root`: receive from the parent, then send to the children.
int Bcast(Lock& lk, const CommPtr& c, const TypedBuf& b, int root) {
  const int n = c->size();
  const int vr = (c->rank - root + n) % n;  // rank relative to the root
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if (vr & mask) {
      if (int rc = CollRecv(lk, c, b, (vr - mask + root) % n, kTagBcast); rc != MPIGPU_SUCCESS)
        return rc;
      break;
    }
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (vr + mask < n)
      if (int rc = CollSend(lk, c, b, (vr + mask + root) % n, kTagBcast); rc != MPIGPU_SUCCESS)
        return rc;
  }
  return MPIGPU_SUCCESS;
}

// Binomial tree towards `root`: acc (count elements of `type`, host) combines the subtree's
// contributions; at the root it ends as the result. The ops are commutative.
int ReduceHost(Lock& lk, const CommPtr& c, std::vector<unsigned char>* acc, int count,
               MPIGPU_Datatype type, MPIGPU_Op op, int root) {
  const int n = c->size();
  const int vr = (c->rank - root + n) % n;
  std::vector<unsigned char> in(acc->size());
  for (int mask = 1; mask < n; mask <<= 1) {
    if (vr & mask)
      return CollSend(lk, c, HostBuf(acc->data(), count, type), (vr - mask + root) % n,
                      kTagReduce);
    if (vr + mask < n) {
      if (int rc = CollRecv(lk, c, HostBuf(in.data(), count, type), (vr + mask + root) % n,
                            kTagReduce);
          rc != MPIGPU_SUCCESS)
        return rc;
      if (int rc = ApplyOp(op, type, acc->data(), in.data(), static_cast<size_t>(count));
          rc != MPIGPU_SUCCESS)
        return rc;
    }
  }
  return MPIGPU_SUCCESS;
}

int CheckRoot(const CommData& c, int root) {
  if (root < 0 || root >= c.size())
    return SetLastError(MPIGPU_ERR_RANK, "root " + std::to_string(root) +
                                             " is not in communicator of size " +
                                             std::to_string(c.size()));
  return MPIGPU_SUCCESS;
}

int CommOf(MPIGPU_Comm comm, CommPtr* c) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  *c = LookupComm(comm);
  return *c ? MPIGPU_SUCCESS : MPIGPU_ERR_COMM;
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
  if (int rc = ResolveTypedBuf(buf, bt, count, dt, &b); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckRoot(*c, root); rc != MPIGPU_SUCCESS) return rc;
  return Bcast(lk, c, b, root);
}

// Reduce to `root`, or Allreduce (`all`): validates, stages the contribution to the host,
// reduces, and delivers the result.
int DoReduce(Lock& lk, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
             MPIGPU_Buftype rbt, int count, MPIGPU_Datatype dt, MPIGPU_Op op, int root, bool all,
             MPIGPU_Comm comm) {
  CommPtr c;
  TypedBuf sb, rb;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  if (!all)
    if (int rc = CheckRoot(*c, root); rc != MPIGPU_SUCCESS) return rc;
  if (!IsValidOp(op))
    return SetLastError(MPIGPU_ERR_OP, "operation " + std::to_string(op) + " is not valid");
  if (int rc = ResolveTypedBuf(sendbuf, sbt, count, dt, &sb); rc != MPIGPU_SUCCESS) return rc;
  if (!IsPredefinedType(dt))
    return SetLastError(MPIGPU_ERR_TYPE, "reductions need a predefined datatype (got a derived one)");
  const bool gets_result = all || c->rank == root;
  if (gets_result)
    if (int rc = ResolveTypedBuf(recvbuf, rbt, count, dt, &rb); rc != MPIGPU_SUCCESS) return rc;

  const size_t bytes = sb.desc.total_bytes;
  std::vector<unsigned char> acc(bytes);
  if (int rc = CopySync(acc.data(), MemLoc::Host(), sb.ptr, sb.loc, bytes); rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = ReduceHost(lk, c, &acc, count, dt, op, root); rc != MPIGPU_SUCCESS) return rc;
  if (all)
    if (int rc = Bcast(lk, c, HostBuf(acc.data(), count, dt), 0); rc != MPIGPU_SUCCESS) return rc;
  if (!gets_result) return MPIGPU_SUCCESS;
  return CopySync(rb.ptr, rb.loc, acc.data(), MemLoc::Host(), bytes);
}

}  // namespace

int AllgatherInts(Lock& lk, const CommPtr& comm, const std::vector<int>& mine,
                  std::vector<int>* all) {
  const int n = comm->size();
  const int k = static_cast<int>(mine.size());
  all->assign(static_cast<size_t>(n) * k, 0);
  // Gather to rank 0 (linear), then broadcast the whole table.
  if (comm->rank == 0) {
    std::copy(mine.begin(), mine.end(), all->begin());
    for (int r = 1; r < n; ++r)
      if (int rc = CollRecv(lk, comm, HostBuf(all->data() + r * k, k, MPIGPU_INT), r, kTagGather);
          rc != MPIGPU_SUCCESS)
        return rc;
  } else {
    if (int rc = CollSend(lk, comm, HostBuf(const_cast<int*>(mine.data()), k, MPIGPU_INT), 0,
                          kTagGather);
        rc != MPIGPU_SUCCESS)
      return rc;
  }
  return Bcast(lk, comm, HostBuf(all->data(), n * k, MPIGPU_INT), 0);
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

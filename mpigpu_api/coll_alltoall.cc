// Alltoall, Alltoallv and Alltoallw by pairwise exchange: in step s (1..n-1) rank r sends its
// block for r + s and receives the block of r - s, both posted before either is waited for, so
// no step waits on a rendezvous the peer has not posted. With MPIGPU_IN_PLACE the outgoing
// blocks are first packed to the host (they live in the receive buffer being overwritten).
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

// Per-peer counts, displacements and types of one side of an alltoall. Displacements count
// in elements of the type's extent (regular and v forms) or in bytes (w form).
struct Side {
  const void* buf = nullptr;
  MPIGPU_Buftype bt = MPIGPU_BUF_HOST;
  int count = 0;             // regular form
  const int* counts = nullptr;
  const int* displs = nullptr;
  MPIGPU_Datatype type = MPIGPU_DATATYPE_NULL;
  const MPIGPU_Datatype* types = nullptr;  // w form
  bool vform = false;  // counts and displs given (v and w forms)
  bool wform = false;  // types given, displacements in bytes
};

int SideBlocks(const Side& s, int n, std::vector<TypedBuf>* out) {
  if (s.vform && (s.counts == nullptr || s.displs == nullptr))
    return SetLastError(MPIGPU_ERR_ARG, "null counts or displacements array");
  if (s.wform && s.types == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null types array");
  TypedBuf base;
  const MPIGPU_Datatype first = s.wform ? MPIGPU_BYTE : s.type;
  if (int rc = UserBuf(s.buf, s.bt, 0, first, &base); rc != MPIGPU_SUCCESS) return rc;
  out->resize(n);
  for (int r = 0; r < n; ++r) {
    int rc;
    if (s.wform) {
      rc = BlockOfType(base, s.displs[r], s.counts[r], s.types[r], &(*out)[r]);
    } else {
      const int cnt = s.vform ? s.counts[r] : s.count;
      const ptrdiff_t disp = s.vform ? ptrdiff_t{s.displs[r]} : ptrdiff_t{r} * s.count;
      rc = BlockAt(base, disp * static_cast<ptrdiff_t>(base.desc.extent), cnt, &(*out)[r]);
    }
    if (rc != MPIGPU_SUCCESS)
      return SetLastError(rc, "block " + std::to_string(r) + ": " + LastErrorDetail(rc));
  }
  return MPIGPU_SUCCESS;
}

int DoAlltoall(Lock& lk, const Side& send, const Side& recv, MPIGPU_Comm comm) {
  CommPtr c;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  const int n = c->size(), me = c->rank;
  if (IsInPlace(recv.buf)) return InPlaceError("as recvbuf");
  std::vector<TypedBuf> rblocks, sblocks;
  if (int rc = SideBlocks(recv, n, &rblocks); rc != MPIGPU_SUCCESS) return rc;
  // In place: what goes out is what the receive blocks hold now, packed before any arrives.
  std::vector<unsigned char> staged;
  if (IsInPlace(send.buf)) {
    std::vector<size_t> off(n + 1, 0);
    for (int r = 0; r < n; ++r) off[r + 1] = off[r] + rblocks[r].desc.total_bytes;
    staged.resize(off[n]);
    sblocks.resize(n);
    for (int r = 0; r < n; ++r) {
      if (r != me)
        if (int rc = PackToHost(rblocks[r], staged.data() + off[r]); rc != MPIGPU_SUCCESS)
          return rc;
      sblocks[r] = HostBytes(staged.data() + off[r], rblocks[r].desc.total_bytes);
    }
  } else {
    if (int rc = SideBlocks(send, n, &sblocks); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = LocalCopy(sblocks[me], rblocks[me]); rc != MPIGPU_SUCCESS) return rc;
  }
  for (int s = 1; s < n; ++s) {
    const int dst = (me + s) % n, src = (me - s + n) % n;
    Batch batch(lk, c);
    if (int rc = batch.Recv(rblocks[src], src, kTagAlltoall); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = batch.Send(sblocks[dst], dst, kTagAlltoall); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = batch.Wait(); rc != MPIGPU_SUCCESS) return rc;
  }
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
using mpigpu::api::Side;

extern "C" int MPIGPU_Alltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                               MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                               int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm) {
  Side s, r;
  s.buf = sendbuf, s.bt = sendbuftype, s.count = sendcount, s.type = sendtype;
  r.buf = recvbuf, r.bt = recvbuftype, r.count = recvcount, r.type = recvtype;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoall", comm, mpigpu::api::DoAlltoall(lk, s, r, comm));
}

extern "C" int MPIGPU_Alltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                const int sendcounts[], const int sdispls[],
                                MPIGPU_Datatype sendtype, void* recvbuf,
                                MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                const int rdispls[], MPIGPU_Datatype recvtype, MPIGPU_Comm comm) {
  Side s, r;
  s.buf = sendbuf, s.bt = sendbuftype, s.counts = sendcounts, s.displs = sdispls,
  s.type = sendtype;
  s.vform = r.vform = true;
  r.buf = recvbuf, r.bt = recvbuftype, r.counts = recvcounts, r.displs = rdispls,
  r.type = recvtype;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoallv", comm, mpigpu::api::DoAlltoall(lk, s, r, comm));
}

extern "C" int MPIGPU_Alltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                const int sendcounts[], const int sdispls[],
                                const MPIGPU_Datatype sendtypes[], void* recvbuf,
                                MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                const int rdispls[], const MPIGPU_Datatype recvtypes[],
                                MPIGPU_Comm comm) {
  Side s, r;
  s.buf = sendbuf, s.bt = sendbuftype, s.counts = sendcounts, s.displs = sdispls,
  s.types = sendtypes;
  s.vform = r.vform = s.wform = r.wform = true;
  r.buf = recvbuf, r.bt = recvbuftype, r.counts = recvcounts, r.displs = rdispls,
  r.types = recvtypes;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoallw", comm, mpigpu::api::DoAlltoall(lk, s, r, comm));
}

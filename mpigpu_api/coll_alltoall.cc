// Alltoall, Alltoallv and Alltoallw by pairwise exchange: in step s (1..n-1) rank r sends its
// block for r + s and receives the block of r - s, both posted before either is waited for, so
// no step waits on a rendezvous the peer has not posted. With MPIGPU_IN_PLACE the outgoing
// blocks are first packed to the host (they live in the receive buffer being overwritten).
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_build.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {

int BuildAlltoall(CollSched& s, const AlltoallSide& send, const AlltoallSide& recv) {
  if (s.comm()->inter) return BuildInterAlltoall(s, send, recv);
  const int n = s.size(), me = s.rank();
  if (IsInPlace(recv.buf)) return InPlaceError("as recvbuf");
  std::vector<TypedBuf> rblocks, sblocks;
  if (int rc = AlltoallBlocks(recv, n, &rblocks); rc != MPIGPU_SUCCESS) return rc;
  // In place: what goes out is what the receive blocks hold now, packed before any arrives.
  if (IsInPlace(send.buf)) {
    std::vector<size_t> off(n + 1, 0);
    for (int r = 0; r < n; ++r) off[r + 1] = off[r] + rblocks[r].desc.total_bytes;
    unsigned char* staged = s.Buffer(off[n]);
    sblocks.resize(n);
    for (int r = 0; r < n; ++r) {
      if (r != me)
        if (int rc = PackToHost(rblocks[r], staged + off[r]); rc != MPIGPU_SUCCESS) return rc;
      sblocks[r] = HostBytes(staged + off[r], rblocks[r].desc.total_bytes);
    }
  } else {
    if (int rc = AlltoallBlocks(send, n, &sblocks); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = LocalCopy(sblocks[me], rblocks[me]); rc != MPIGPU_SUCCESS) return rc;
  }
  for (int k = 1; k < n; ++k) {
    const int dst = (me + k) % n, src = (me - k + n) % n;
    s.Recv(rblocks[src], src, kTagAlltoall);
    s.Send(sblocks[dst], dst, kTagAlltoall);
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
using mpigpu::api::AlltoallSide;

extern "C" int MPIGPU_Alltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                               MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                               int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm) {
  AlltoallSide sd, rv;
  sd.buf = sendbuf, sd.bt = sendbuftype, sd.count = sendcount, sd.type = sendtype;
  rv.buf = recvbuf, rv.bt = recvbuftype, rv.count = recvcount, rv.type = recvtype;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoall", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildAlltoall(s, sd, rv);
                }));
}

extern "C" int MPIGPU_Ialltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                                int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                MPIGPU_Request* request) {
  AlltoallSide sd, rv;
  sd.buf = sendbuf, sd.bt = sendbuftype, sd.count = sendcount, sd.type = sendtype;
  rv.buf = recvbuf, rv.bt = recvbuftype, rv.count = recvcount, rv.type = recvtype;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Ialltoall", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildAlltoall(s, sd, rv);
                }));
}

extern "C" int MPIGPU_Alltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                const int sendcounts[], const int sdispls[],
                                MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                                const int recvcounts[], const int rdispls[],
                                MPIGPU_Datatype recvtype, MPIGPU_Comm comm) {
  AlltoallSide sd, rv;
  sd.buf = sendbuf, sd.bt = sendbuftype, sd.counts = sendcounts, sd.displs = sdispls;
  sd.type = sendtype;
  rv.buf = recvbuf, rv.bt = recvbuftype, rv.counts = recvcounts, rv.displs = rdispls;
  rv.type = recvtype;
  sd.vform = rv.vform = true;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoallv", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildAlltoall(s, sd, rv);
                }));
}

extern "C" int MPIGPU_Ialltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                 const int sendcounts[], const int sdispls[],
                                 MPIGPU_Datatype sendtype, void* recvbuf,
                                 MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                 const int rdispls[], MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                 MPIGPU_Request* request) {
  AlltoallSide sd, rv;
  sd.buf = sendbuf, sd.bt = sendbuftype, sd.counts = sendcounts, sd.displs = sdispls;
  sd.type = sendtype;
  rv.buf = recvbuf, rv.bt = recvbuftype, rv.counts = recvcounts, rv.displs = rdispls;
  rv.type = recvtype;
  sd.vform = rv.vform = true;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Ialltoallv", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildAlltoall(s, sd, rv);
                }));
}

extern "C" int MPIGPU_Alltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                const int sendcounts[], const int sdispls[],
                                const MPIGPU_Datatype sendtypes[], void* recvbuf,
                                MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                const int rdispls[], const MPIGPU_Datatype recvtypes[],
                                MPIGPU_Comm comm) {
  AlltoallSide sd, rv;
  sd.buf = sendbuf, sd.bt = sendbuftype, sd.counts = sendcounts, sd.displs = sdispls;
  sd.types = sendtypes;
  rv.buf = recvbuf, rv.bt = recvbuftype, rv.counts = recvcounts, rv.displs = rdispls;
  rv.types = recvtypes;
  sd.vform = rv.vform = sd.wform = rv.wform = true;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoallw", comm, RunColl(lk, comm, nullptr, false, [&](CollSched& s) {
                  return mpigpu::api::BuildAlltoall(s, sd, rv);
                }));
}

extern "C" int MPIGPU_Ialltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                 const int sendcounts[], const int sdispls[],
                                 const MPIGPU_Datatype sendtypes[], void* recvbuf,
                                 MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                 const int rdispls[], const MPIGPU_Datatype recvtypes[],
                                 MPIGPU_Comm comm, MPIGPU_Request* request) {
  AlltoallSide sd, rv;
  sd.buf = sendbuf, sd.bt = sendbuftype, sd.counts = sendcounts, sd.displs = sdispls;
  sd.types = sendtypes;
  rv.buf = recvbuf, rv.bt = recvbuftype, rv.counts = recvcounts, rv.displs = rdispls;
  rv.types = recvtypes;
  sd.vform = rv.vform = sd.wform = rv.wform = true;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Ialltoallw", comm, RunColl(lk, comm, request, true, [&](CollSched& s) {
                  return mpigpu::api::BuildAlltoall(s, sd, rv);
                }));
}

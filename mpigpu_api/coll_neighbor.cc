// Neighborhood collectives (Neighbor_allgather(v), Neighbor_alltoall(v,w), blocking and
// nonblocking) over a communicator's topology (topo.cc): block k of the send side goes to
// out-neighbour k, block k of the receive side comes from in-neighbour k, all posted in one
// schedule round. PROC_NULL neighbours (a non-periodic Cartesian edge) leave their blocks alone.
//
// Neighbours, as MPI orders them: Cartesian, for each dimension the neighbour at -1 then the one
// at +1 (Cart_shift by 1), both in and out; graph, Graph_neighbors of the rank, both in and out;
// distributed graph, the sources in and the destinations out.
//
// Matching: two edges may join the same pair (a periodic dimension of size 1 or 2, a multigraph).
// Cartesian messages carry their dimension and direction in the tag: what a rank sends to its -1
// neighbour is what that neighbour receives from its +1 side, whatever else the pair exchanges
// (MPICH's ring_neighbor_alltoall). Graph edges between one pair match in list order (messages
// of a pair never overtake each other), as MPI specifies.
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_build.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

// Tags: kTagNeighbor + 2 * (dimension mod kDimTags) + direction (0: towards -1, 1: towards +1),
// below kTagBarrier; dimensions past kDimTags share tags and match in order.
constexpr int kTagNeighbor = 0x20;
constexpr int kDimTags = 64;
static_assert(kTagNeighbor + 2 * kDimTags <= kTagBarrier, "neighbour tags below the barrier's");

struct Edges {
  std::vector<int> in, out;          // comm ranks or PROC_NULL
  std::vector<int> in_tag, out_tag;  // offsets from kTagNeighbor
};

int CartEdges(const Topology& t, int me, Edges* e) {
  const int nd = static_cast<int>(t.dims.size());
  std::vector<int> coords(nd);
  for (int d = nd - 1, r = me; d >= 0; --d) {  // row-major: the last dimension varies fastest
    coords[d] = r % t.dims[d];
    r /= t.dims[d];
  }
  auto rank_at = [&](int d, int step) {
    std::vector<int> c = coords;
    c[d] += step;
    if (c[d] < 0 || c[d] >= t.dims[d]) {
      if (!t.periods[d]) return static_cast<int>(MPIGPU_PROC_NULL);
      c[d] = (c[d] % t.dims[d] + t.dims[d]) % t.dims[d];
    }
    int r = 0;
    for (int k = 0; k < nd; ++k) r = r * t.dims[k] + c[k];
    return r;
  };
  for (int d = 0; d < nd; ++d) {
    const int down = rank_at(d, -1), up = rank_at(d, +1), base = 2 * (d % kDimTags);
    e->in.push_back(down);  // it sent towards its +1
    e->in_tag.push_back(base + 1);
    e->in.push_back(up);  // it sent towards its -1
    e->in_tag.push_back(base);
    e->out.push_back(down);
    e->out_tag.push_back(base);
    e->out.push_back(up);
    e->out_tag.push_back(base + 1);
  }
  return MPIGPU_SUCCESS;
}

int EdgesOf(const CommData& c, Edges* e) {
  const Topology* t = c.topo.get();
  if (c.inter || t == nullptr || t->kind == MPIGPU_UNDEFINED)
    return SetLastError(MPIGPU_ERR_TOPOLOGY,
                        "a neighborhood collective needs a communicator with a topology");
  if (t->kind == MPIGPU_CART) return CartEdges(*t, c.rank, e);
  if (t->kind == MPIGPU_GRAPH) {
    const int begin = c.rank == 0 ? 0 : t->index[c.rank - 1];
    e->in.assign(t->edges.begin() + begin, t->edges.begin() + t->index[c.rank]);
    e->out = e->in;
  } else {
    e->in = t->sources;
    e->out = t->destinations;
  }
  e->in_tag.assign(e->in.size(), 0);
  e->out_tag.assign(e->out.size(), 0);
  return MPIGPU_SUCCESS;
}

using Side = NeighborSide;

int Blocks(const Side& s, size_t n, const char* what, std::vector<TypedBuf>* out) {
  const bool vform = s.vform, wform = s.wform;
  if (IsInPlace(s.buf)) return InPlaceError(what);
  // Arrays of an empty neighbourhood may be null.
  if (n > 0 && vform && (s.counts == nullptr || (s.displs == nullptr && s.wdispls == nullptr)))
    return SetLastError(MPIGPU_ERR_ARG, std::string("null counts or displacements for the ") + what);
  if (n > 0 && wform && s.types == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, std::string("null types array for the ") + what);
  TypedBuf base;
  const MPIGPU_Datatype first = wform ? MPIGPU_BYTE : s.type;
  // The first block (regular form; all of it for `same`) validates count and type.
  if (int rc = UserBuf(s.buf, s.bt, vform ? 0 : s.count, first, &base); rc != MPIGPU_SUCCESS)
    return rc;
  out->resize(n);
  for (size_t k = 0; k < n; ++k) {
    int rc;
    if (s.same) {
      (*out)[k] = base;
      continue;
    }
    if (wform) {
      rc = BlockOfType(base, s.wdispls[k], s.counts[k], s.types[k], &(*out)[k]);
    } else {
      const int cnt = vform ? s.counts[k] : s.count;
      const ptrdiff_t disp = vform ? ptrdiff_t{s.displs[k]} : static_cast<ptrdiff_t>(k) * s.count;
      rc = BlockAt(base, disp * static_cast<ptrdiff_t>(base.desc.extent), cnt, &(*out)[k]);
    }
    if (rc != MPIGPU_SUCCESS)
      return SetLastError(rc, std::string(what) + " block " + std::to_string(k) + ": " +
                                  LastErrorDetail(rc));
  }
  return MPIGPU_SUCCESS;
}

}  // namespace

int BuildNeighbor(CollSched& s, const NeighborSide& send, const NeighborSide& recv) {
  Edges e;
  if (int rc = EdgesOf(*s.comm(), &e); rc != MPIGPU_SUCCESS) return rc;
  std::vector<TypedBuf> sb, rb;
  if (int rc = Blocks(send, e.out.size(), "send buffer", &sb); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = Blocks(recv, e.in.size(), "receive buffer", &rb); rc != MPIGPU_SUCCESS) return rc;
  for (size_t k = 0; k < e.in.size(); ++k)
    if (e.in[k] != MPIGPU_PROC_NULL) s.Recv(rb[k], e.in[k], kTagNeighbor + e.in_tag[k]);
  for (size_t k = 0; k < e.out.size(); ++k)
    if (e.out[k] != MPIGPU_PROC_NULL) s.Send(sb[k], e.out[k], kTagNeighbor + e.out_tag[k]);
  s.NextRound();
  return MPIGPU_SUCCESS;
}

int NeighborDegrees(const CommData& c, int* in, int* out) {
  Edges e;
  if (int rc = EdgesOf(c, &e); rc != MPIGPU_SUCCESS) return rc;
  *in = static_cast<int>(e.in.size());
  *out = static_cast<int>(e.out.size());
  return MPIGPU_SUCCESS;
}

NeighborSide NeighborRegular(const void* buf, MPIGPU_Buftype bt, int count,
                             MPIGPU_Datatype type, bool same) {
  NeighborSide s;
  s.buf = buf;
  s.bt = bt;
  s.count = count;
  s.type = type;
  s.same = same;
  return s;
}

NeighborSide NeighborVForm(const void* buf, MPIGPU_Buftype bt, const int* counts,
                           const int* displs, MPIGPU_Datatype type) {
  NeighborSide s = NeighborRegular(buf, bt, 0, type);
  s.vform = true;
  s.counts = counts;
  s.displs = displs;
  return s;
}

NeighborSide NeighborWForm(const void* buf, MPIGPU_Buftype bt, const int* counts,
                           const MPIGPU_Aint* displs, const MPIGPU_Datatype* types) {
  NeighborSide s = NeighborRegular(buf, bt, 0, MPIGPU_BYTE);
  s.vform = s.wform = true;
  s.counts = counts;
  s.wdispls = displs;
  s.types = types;
  return s;
}

}  // namespace mpigpu::api

using mpigpu::api::CollSched;
using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
using mpigpu::api::RunColl;
namespace api = mpigpu::api;

// Each public call: blocking when request is null (the I-forms pass theirs).
#define MPIGPU_NEIGHBOR_CALL(name, send, recv)                                          \
  Lock lk(GetState().mu);                                                               \
  return Finish(name, comm, RunColl(lk, comm, request, nb,                              \
                                    [&](CollSched& s) { return api::BuildNeighbor(s, send, recv); }))

namespace {

int Allgather(const char* name, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
              MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
              MPIGPU_Datatype recvtype, MPIGPU_Comm comm, MPIGPU_Request* request, bool nb) {
  MPIGPU_NEIGHBOR_CALL(name, api::NeighborRegular(sendbuf, sbt, sendcount, sendtype, true),
                       api::NeighborRegular(recvbuf, rbt, recvcount, recvtype));
}

int Allgatherv(const char* name, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
               MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype rbt,
               const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
               MPIGPU_Comm comm, MPIGPU_Request* request, bool nb) {
  MPIGPU_NEIGHBOR_CALL(name, api::NeighborRegular(sendbuf, sbt, sendcount, sendtype, true),
                       api::NeighborVForm(recvbuf, rbt, recvcounts, displs, recvtype));
}

int Alltoall(const char* name, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
             MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
             MPIGPU_Datatype recvtype, MPIGPU_Comm comm, MPIGPU_Request* request, bool nb) {
  MPIGPU_NEIGHBOR_CALL(name, api::NeighborRegular(sendbuf, sbt, sendcount, sendtype),
                       api::NeighborRegular(recvbuf, rbt, recvcount, recvtype));
}

int Alltoallv(const char* name, const void* sendbuf, MPIGPU_Buftype sbt, const int sendcounts[],
              const int sdispls[], MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype rbt,
              const int recvcounts[], const int rdispls[], MPIGPU_Datatype recvtype,
              MPIGPU_Comm comm, MPIGPU_Request* request, bool nb) {
  MPIGPU_NEIGHBOR_CALL(name, api::NeighborVForm(sendbuf, sbt, sendcounts, sdispls, sendtype),
                       api::NeighborVForm(recvbuf, rbt, recvcounts, rdispls, recvtype));
}

int Alltoallw(const char* name, const void* sendbuf, MPIGPU_Buftype sbt, const int sendcounts[],
              const MPIGPU_Aint sdispls[], const MPIGPU_Datatype sendtypes[], void* recvbuf,
              MPIGPU_Buftype rbt, const int recvcounts[], const MPIGPU_Aint rdispls[],
              const MPIGPU_Datatype recvtypes[], MPIGPU_Comm comm, MPIGPU_Request* request,
              bool nb) {
  MPIGPU_NEIGHBOR_CALL(name, api::NeighborWForm(sendbuf, sbt, sendcounts, sdispls, sendtypes),
                       api::NeighborWForm(recvbuf, rbt, recvcounts, rdispls, recvtypes));
}

}  // namespace

extern "C" int MPIGPU_Neighbor_allgather(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                         int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                         MPIGPU_Buftype recvbuftype, int recvcount,
                                         MPIGPU_Datatype recvtype, MPIGPU_Comm comm) {
  return Allgather("MPIGPU_Neighbor_allgather", sendbuf, sendbuftype, sendcount, sendtype,
                   recvbuf, recvbuftype, recvcount, recvtype, comm, nullptr, false);
}

extern "C" int MPIGPU_Ineighbor_allgather(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                          int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                          MPIGPU_Buftype recvbuftype, int recvcount,
                                          MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                          MPIGPU_Request* request) {
  return Allgather("MPIGPU_Ineighbor_allgather", sendbuf, sendbuftype, sendcount, sendtype,
                   recvbuf, recvbuftype, recvcount, recvtype, comm, request, true);
}

extern "C" int MPIGPU_Neighbor_allgatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                          int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                          MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                          const int displs[], MPIGPU_Datatype recvtype,
                                          MPIGPU_Comm comm) {
  return Allgatherv("MPIGPU_Neighbor_allgatherv", sendbuf, sendbuftype, sendcount, sendtype,
                    recvbuf, recvbuftype, recvcounts, displs, recvtype, comm, nullptr, false);
}

extern "C" int MPIGPU_Ineighbor_allgatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                           int sendcount, MPIGPU_Datatype sendtype,
                                           void* recvbuf, MPIGPU_Buftype recvbuftype,
                                           const int recvcounts[], const int displs[],
                                           MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                           MPIGPU_Request* request) {
  return Allgatherv("MPIGPU_Ineighbor_allgatherv", sendbuf, sendbuftype, sendcount, sendtype,
                    recvbuf, recvbuftype, recvcounts, displs, recvtype, comm, request, true);
}

extern "C" int MPIGPU_Neighbor_alltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                        int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                        MPIGPU_Buftype recvbuftype, int recvcount,
                                        MPIGPU_Datatype recvtype, MPIGPU_Comm comm) {
  return Alltoall("MPIGPU_Neighbor_alltoall", sendbuf, sendbuftype, sendcount, sendtype, recvbuf,
                  recvbuftype, recvcount, recvtype, comm, nullptr, false);
}

extern "C" int MPIGPU_Ineighbor_alltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                         int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                         MPIGPU_Buftype recvbuftype, int recvcount,
                                         MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                         MPIGPU_Request* request) {
  return Alltoall("MPIGPU_Ineighbor_alltoall", sendbuf, sendbuftype, sendcount, sendtype, recvbuf,
                  recvbuftype, recvcount, recvtype, comm, request, true);
}

extern "C" int MPIGPU_Neighbor_alltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                         const int sendcounts[], const int sdispls[],
                                         MPIGPU_Datatype sendtype, void* recvbuf,
                                         MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                         const int rdispls[], MPIGPU_Datatype recvtype,
                                         MPIGPU_Comm comm) {
  return Alltoallv("MPIGPU_Neighbor_alltoallv", sendbuf, sendbuftype, sendcounts, sdispls,
                   sendtype, recvbuf, recvbuftype, recvcounts, rdispls, recvtype, comm, nullptr,
                   false);
}

extern "C" int MPIGPU_Ineighbor_alltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                          const int sendcounts[], const int sdispls[],
                                          MPIGPU_Datatype sendtype, void* recvbuf,
                                          MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                          const int rdispls[], MPIGPU_Datatype recvtype,
                                          MPIGPU_Comm comm, MPIGPU_Request* request) {
  return Alltoallv("MPIGPU_Ineighbor_alltoallv", sendbuf, sendbuftype, sendcounts, sdispls,
                   sendtype, recvbuf, recvbuftype, recvcounts, rdispls, recvtype, comm, request,
                   true);
}

extern "C" int MPIGPU_Neighbor_alltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                         const int sendcounts[], const MPIGPU_Aint sdispls[],
                                         const MPIGPU_Datatype sendtypes[], void* recvbuf,
                                         MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                         const MPIGPU_Aint rdispls[],
                                         const MPIGPU_Datatype recvtypes[], MPIGPU_Comm comm) {
  return Alltoallw("MPIGPU_Neighbor_alltoallw", sendbuf, sendbuftype, sendcounts, sdispls,
                   sendtypes, recvbuf, recvbuftype, recvcounts, rdispls, recvtypes, comm, nullptr,
                   false);
}

extern "C" int MPIGPU_Ineighbor_alltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                          const int sendcounts[], const MPIGPU_Aint sdispls[],
                                          const MPIGPU_Datatype sendtypes[], void* recvbuf,
                                          MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                          const MPIGPU_Aint rdispls[],
                                          const MPIGPU_Datatype recvtypes[], MPIGPU_Comm comm,
                                          MPIGPU_Request* request) {
  return Alltoallw("MPIGPU_Ineighbor_alltoallw", sendbuf, sendbuftype, sendcounts, sdispls,
                   sendtypes, recvbuf, recvbuftype, recvcounts, rdispls, recvtypes, comm, request,
                   true);
}

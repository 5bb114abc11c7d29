// Persistent collectives (MPI 4.0 MPI_<coll>_init): an init call checks the arguments and keeps
// them with the communicator and a tag block; every MPIGPU_Start builds the collective's
// schedule afresh from them (the builders of coll_build.h, which read the send data at build
// time) and runs it as a nonblocking collective of the request. Completion leaves the request
// inactive (CompletePersistent), so Wait/Test keep the user's handle.
//
// Tags: the tag block is drawn once, at init, when every rank draws it in the same order (the
// inits are collective calls, ordered like the others); the starts of different persistent
// collectives may then come in different orders on different ranks without their messages
// meeting. Successive runs of one request reuse its block: a rank starts run k+1 only after
// run k completed there, and messages of one pair and tag never overtake each other, so each
// receive of run k matches run k's message.
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_build.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"
#include "mpigpu_api/ops.h"

namespace mpigpu::api {

// Private duplicates of the derived datatypes a persistent collective was given, and holds on its
// user op: MPI lets the program free its handles once the init call returned (a freed type's
// handle may then name another type), so each run builds from these, let go with the request.
class ArgKeeper {
 public:
  ArgKeeper() = default;
  ArgKeeper(const ArgKeeper&) = delete;
  ArgKeeper& operator=(const ArgKeeper&) = delete;
  ~ArgKeeper() {
    for (MPIGPU_Datatype& d : dups_) (void)MPIGPU_Type_free(&d);
    for (MPIGPU_Op op : ops_) DropUserOp(op);
  }
  void Op(MPIGPU_Op op) {
    KeepUserOp(op);
    ops_.push_back(op);
  }
  // t itself when predefined (or not a valid type: the init's check build reports it).
  MPIGPU_Datatype operator()(MPIGPU_Datatype t) {
    if (IsPredefinedType(t)) return t;
    MPIGPU_Datatype d = MPIGPU_DATATYPE_NULL;
    if (MPIGPU_Type_dup(t, &d) != MPIGPU_SUCCESS) return t;
    dups_.push_back(d);
    return d;
  }
  // A copy of an array of n types, each kept (null for a null array).
  std::shared_ptr<const std::vector<MPIGPU_Datatype>> Array(const MPIGPU_Datatype* a, int n) {
    if (a == nullptr) return nullptr;
    auto v = std::make_shared<std::vector<MPIGPU_Datatype>>(a, a + n);
    for (MPIGPU_Datatype& t : *v) t = (*this)(t);
    return v;
  }

 private:
  std::vector<MPIGPU_Datatype> dups_;
  std::vector<MPIGPU_Op> ops_;  // kept (KeepUserOp)
};

struct PersistentColl {
  CommPtr comm;
  int tag_base = 0;
  ArgKeeper types;                      // the types `build` names (destroyed after it)
  std::function<int(CollSched&)> build;  // owns copies of the arrays it was given
};

int CompletePersistent(ApiRequest* r, MPIGPU_Status* status) {
  int rc = MPIGPU_SUCCESS;
  if (r->sched) {
    rc = CollSchedResult(*r->sched);
    r->sched.reset();  // inactive: the next Start builds a new run
  }
  if (status != MPIGPU_STATUS_IGNORE) {
    EmptyStatus(status, MPIGPU_ANY_SOURCE);
    status->MPIGPU_ERROR = rc;
  }
  return rc;
}

namespace {

// A copy of an array of n entries, or empty for a null one (then its null pointer is kept).
template <class T>
std::shared_ptr<const std::vector<T>> CopyArray(const T* a, int n) {
  if (a == nullptr) return nullptr;
  return std::make_shared<const std::vector<T>>(a, a + n);
}
template <class T>
const T* Data(const std::shared_ptr<const std::vector<T>>& v) {
  return v ? v->data() : nullptr;
}

// The init calls: make(n, keeper) gives the build function for a communicator of n ranks (arrays
// are copied there, derived types kept by `keeper`). Checks by building once, unrun.
template <class Make>
int InitColl(MPIGPU_Comm comm, MPIGPU_Request* request, Make make) {
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  *request = MPIGPU_REQUEST_NULL;
  CommPtr c;
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  auto p = std::make_shared<PersistentColl>();
  p->comm = c;
  p->build = make(c->size(), p->types);
  p->tag_base = NbcTagBase(*c);
  {
    CollSched check(c, p->tag_base);
    if (int rc = p->build(check); rc != MPIGPU_SUCCESS) return rc;
  }
  return NewPersistentRequest(std::move(p), c, request);
}

int DoStart(MPIGPU_Request* request, MPIGPU_Errhandler* h) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  ApiRequest* r = CheckedRequest(*request);
  if (r == nullptr) return MPIGPU_ERR_REQUEST;
  *h = r->comm->errhandler;
  if (!r->persist) return SetLastError(MPIGPU_ERR_REQUEST, "not a persistent request");
  if (r->sched) return SetLastError(MPIGPU_ERR_REQUEST, "the persistent request is already active");
  const PersistentColl& p = *r->persist;
  auto s = std::make_shared<CollSched>(p.comm, p.tag_base);
  if (int rc = p.build(*s); rc != MPIGPU_SUCCESS) return rc;  // stays inactive
  if (CollCheckOn()) AddCollCheck(*s);
  r->sched = s;
  GetState().coll_scheds.push_back(s);
  s->Advance();  // posts the first round now (later ones come with progress)
  return MPIGPU_SUCCESS;
}

// comm's in- and out-degree (0, 0 without a topology: the init's check build says so).
std::pair<int, int> DegreesOf(MPIGPU_Comm comm) {
  CommPtr c;
  int in = 0, out = 0;
  if (CommOf(comm, &c) == MPIGPU_SUCCESS) (void)NeighborDegrees(*c, &in, &out);
  return {in, out};
}

int Finished(const char* fn, MPIGPU_Errhandler h, int rc) {
  if (rc == MPIGPU_SUCCESS) return rc;
  return FinishWith(fn, h == MPIGPU_ERRHANDLER_NULL ? HandlerOf(MPIGPU_COMM_WORLD) : h, rc);
}

}  // namespace
}  // namespace mpigpu::api

using mpigpu::api::CollSched;
using mpigpu::api::CopyArray;
using mpigpu::api::Data;
using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::DegreesOf;
using mpigpu::api::InitColl;
using mpigpu::api::ArgKeeper;
using mpigpu::api::Lock;
using mpigpu::api::AlltoallSide;
namespace api = mpigpu::api;

extern "C" int MPIGPU_Start(MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = MPIGPU_ERRHANDLER_NULL;
  const int rc = api::DoStart(request, &h);
  return api::Finished("MPIGPU_Start", h, rc);
}

extern "C" int MPIGPU_Startall(int count, MPIGPU_Request requests[]) {
  Lock lk(GetState().mu);
  MPIGPU_Errhandler h = MPIGPU_ERRHANDLER_NULL;
  int rc = MPIGPU_SUCCESS;
  if (count < 0) {
    rc = mpigpu::SetLastError(MPIGPU_ERR_COUNT, "count " + std::to_string(count) + " is negative");
  } else if (count > 0 && requests == nullptr) {
    rc = mpigpu::SetLastError(MPIGPU_ERR_ARG, "null request array");
  }
  for (int i = 0; rc == MPIGPU_SUCCESS && i < count; ++i)
    if ((rc = api::DoStart(&requests[i], &h)) != MPIGPU_SUCCESS)
      rc = mpigpu::SetLastError(rc, "request " + std::to_string(i) + " of the array: " +
                                        mpigpu::LastErrorDetail(rc));
  return api::Finished("MPIGPU_Startall", h, rc);
}

extern "C" int MPIGPU_Barrier_init(MPIGPU_Comm comm, MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Barrier_init", comm, InitColl(comm, request, [](int, ArgKeeper&) {
                  return [](CollSched& s) { return api::BuildBarrier(s); };
                }));
}

extern "C" int MPIGPU_Bcast_init(void* buf, MPIGPU_Buftype buftype, int count,
                                 MPIGPU_Datatype datatype, int root, MPIGPU_Comm comm,
                                 MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Bcast_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype kdt = k(datatype);
                  return [=](CollSched& s) {
                    return api::BuildBcast(s, buf, buftype, count, kdt, root);
                  };
                }));
}

extern "C" int MPIGPU_Reduce_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                  MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                                  MPIGPU_Op op, int root, MPIGPU_Comm comm, MPIGPU_Info,
                                  MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Reduce_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype kdt = k(datatype);
                  k.Op(op);
                  return [=](CollSched& s) {
                    return api::BuildReduce(s, sendbuf, sendbuftype, recvbuf, recvbuftype, count,
                                            kdt, op, root, false);
                  };
                }));
}

extern "C" int MPIGPU_Allreduce_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                     void* recvbuf, MPIGPU_Buftype recvbuftype, int count,
                                     MPIGPU_Datatype datatype, MPIGPU_Op op, MPIGPU_Comm comm,
                                     MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Allreduce_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype kdt = k(datatype);
                  k.Op(op);
                  return [=](CollSched& s) {
                    return api::BuildReduce(s, sendbuf, sendbuftype, recvbuf, recvbuftype, count,
                                            kdt, op, 0, true);
                  };
                }));
}

extern "C" int MPIGPU_Gather_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                  MPIGPU_Datatype sendtype, void* recvbuf,
                                  MPIGPU_Buftype recvbuftype, int recvcount,
                                  MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                                  MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Gather_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype);
                  const MPIGPU_Datatype krecv = k(recvtype);
                  return [=](CollSched& s) {
                    return api::BuildGather(s, sendbuf, sendbuftype, sendcount, ksend, recvbuf,
                                            recvbuftype, recvcount, nullptr, nullptr, krecv,
                                            root, false);
                  };
                }));
}

extern "C" int MPIGPU_Gatherv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                   MPIGPU_Datatype sendtype, void* recvbuf,
                                   MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                   const int displs[], MPIGPU_Datatype recvtype, int root,
                                   MPIGPU_Comm comm, MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Gatherv_init", comm, InitColl(comm, request, [=](int n, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype);
                  const MPIGPU_Datatype krecv = k(recvtype);
                  auto counts = CopyArray(recvcounts, n), dis = CopyArray(displs, n);
                  return [=](CollSched& s) {
                    return api::BuildGather(s, sendbuf, sendbuftype, sendcount, ksend, recvbuf,
                                            recvbuftype, 0, Data(counts), Data(dis), krecv,
                                            root, true);
                  };
                }));
}

extern "C" int MPIGPU_Scatter_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                   MPIGPU_Datatype sendtype, void* recvbuf,
                                   MPIGPU_Buftype recvbuftype, int recvcount,
                                   MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                                   MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Scatter_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype);
                  const MPIGPU_Datatype krecv = k(recvtype);
                  return [=](CollSched& s) {
                    return api::BuildScatter(s, sendbuf, sendbuftype, sendcount, nullptr, nullptr,
                                             ksend, recvbuf, recvbuftype, recvcount, krecv,
                                             root, false);
                  };
                }));
}

extern "C" int MPIGPU_Scatterv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                    const int sendcounts[], const int displs[],
                                    MPIGPU_Datatype sendtype, void* recvbuf,
                                    MPIGPU_Buftype recvbuftype, int recvcount,
                                    MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                                    MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Scatterv_init", comm, InitColl(comm, request, [=](int n, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype);
                  const MPIGPU_Datatype krecv = k(recvtype);
                  auto counts = CopyArray(sendcounts, n), dis = CopyArray(displs, n);
                  return [=](CollSched& s) {
                    return api::BuildScatter(s, sendbuf, sendbuftype, 0, Data(counts), Data(dis),
                                             ksend, recvbuf, recvbuftype, recvcount, krecv,
                                             root, true);
                  };
                }));
}

extern "C" int MPIGPU_Allgather_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                     int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                     MPIGPU_Buftype recvbuftype, int recvcount,
                                     MPIGPU_Datatype recvtype, MPIGPU_Comm comm, MPIGPU_Info,
                                     MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Allgather_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype);
                  const MPIGPU_Datatype krecv = k(recvtype);
                  return [=](CollSched& s) {
                    return api::BuildAllgather(s, sendbuf, sendbuftype, sendcount, ksend,
                                               recvbuf, recvbuftype, recvcount, nullptr, nullptr,
                                               krecv, false);
                  };
                }));
}

extern "C" int MPIGPU_Allgatherv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                      int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                      MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                      const int displs[], MPIGPU_Datatype recvtype,
                                      MPIGPU_Comm comm, MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Allgatherv_init", comm, InitColl(comm, request, [=](int n, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype);
                  const MPIGPU_Datatype krecv = k(recvtype);
                  auto counts = CopyArray(recvcounts, n), dis = CopyArray(displs, n);
                  return [=](CollSched& s) {
                    return api::BuildAllgather(s, sendbuf, sendbuftype, sendcount, ksend,
                                               recvbuf, recvbuftype, 0, Data(counts), Data(dis),
                                               krecv, true);
                  };
                }));
}

extern "C" int MPIGPU_Alltoall_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                    int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                    MPIGPU_Buftype recvbuftype, int recvcount,
                                    MPIGPU_Datatype recvtype, MPIGPU_Comm comm, MPIGPU_Info,
                                    MPIGPU_Request* request) {
  AlltoallSide sd, rv;
  sd.buf = sendbuf, sd.bt = sendbuftype, sd.count = sendcount, sd.type = sendtype;
  rv.buf = recvbuf, rv.bt = recvbuftype, rv.count = recvcount, rv.type = recvtype;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoall_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  AlltoallSide ksd = sd, krv = rv;
                  ksd.type = k(sd.type), krv.type = k(rv.type);
                  return [=](CollSched& s) { return api::BuildAlltoall(s, ksd, krv); };
                }));
}

extern "C" int MPIGPU_Alltoallv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                     const int sendcounts[], const int sdispls[],
                                     MPIGPU_Datatype sendtype, void* recvbuf,
                                     MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                     const int rdispls[], MPIGPU_Datatype recvtype,
                                     MPIGPU_Comm comm, MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoallv_init", comm, InitColl(comm, request, [=](int n, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype);
                  const MPIGPU_Datatype krecv = k(recvtype);
                  auto sc = CopyArray(sendcounts, n), sdis = CopyArray(sdispls, n);
                  auto rc = CopyArray(recvcounts, n), rdis = CopyArray(rdispls, n);
                  return [=](CollSched& s) {
                    AlltoallSide sd, rv;
                    sd.buf = sendbuf, sd.bt = sendbuftype, sd.counts = Data(sc);
                    sd.displs = Data(sdis), sd.type = ksend;
                    rv.buf = recvbuf, rv.bt = recvbuftype, rv.counts = Data(rc);
                    rv.displs = Data(rdis), rv.type = krecv;
                    sd.vform = rv.vform = true;
                    return api::BuildAlltoall(s, sd, rv);
                  };
                }));
}

extern "C" int MPIGPU_Alltoallw_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                     const int sendcounts[], const int sdispls[],
                                     const MPIGPU_Datatype sendtypes[], void* recvbuf,
                                     MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                     const int rdispls[], const MPIGPU_Datatype recvtypes[],
                                     MPIGPU_Comm comm, MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Alltoallw_init", comm, InitColl(comm, request, [=](int n, ArgKeeper& k) {
                  auto sc = CopyArray(sendcounts, n), sdis = CopyArray(sdispls, n);
                  auto rc = CopyArray(recvcounts, n), rdis = CopyArray(rdispls, n);
                  auto st = k.Array(sendtypes, n), rt = k.Array(recvtypes, n);
                  return [=](CollSched& s) {
                    AlltoallSide sd, rv;
                    sd.buf = sendbuf, sd.bt = sendbuftype, sd.counts = Data(sc);
                    sd.displs = Data(sdis), sd.types = Data(st);
                    rv.buf = recvbuf, rv.bt = recvbuftype, rv.counts = Data(rc);
                    rv.displs = Data(rdis), rv.types = Data(rt);
                    sd.vform = rv.vform = sd.wform = rv.wform = true;
                    return api::BuildAlltoall(s, sd, rv);
                  };
                }));
}

extern "C" int MPIGPU_Reduce_scatter_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                          void* recvbuf, MPIGPU_Buftype recvbuftype,
                                          const int recvcounts[], MPIGPU_Datatype datatype,
                                          MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Info,
                                          MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  if (recvcounts == nullptr)
    return Finish("MPIGPU_Reduce_scatter_init", comm,
                  mpigpu::SetLastError(MPIGPU_ERR_ARG, "null recvcounts"));
  return Finish("MPIGPU_Reduce_scatter_init", comm,
                InitColl(comm, request, [=](int n, ArgKeeper& k) {
                  const MPIGPU_Datatype kdt = k(datatype);
                  k.Op(op);
                  auto counts = CopyArray(recvcounts, n);
                  return [=](CollSched& s) {
                    return api::BuildReduceScatter(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                   Data(counts), 0, kdt, op);
                  };
                }));
}

extern "C" int MPIGPU_Reduce_scatter_block_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                                void* recvbuf, MPIGPU_Buftype recvbuftype,
                                                int recvcount, MPIGPU_Datatype datatype,
                                                MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Info,
                                                MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Reduce_scatter_block_init", comm,
                InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype kdt = k(datatype);
                  k.Op(op);
                  return [=](CollSched& s) {
                    return api::BuildReduceScatter(s, sendbuf, sendbuftype, recvbuf, recvbuftype,
                                                   nullptr, recvcount, kdt, op);
                  };
                }));
}

extern "C" int MPIGPU_Scan_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                                MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Info,
                                MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Scan_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype kdt = k(datatype);
                  k.Op(op);
                  return [=](CollSched& s) {
                    return api::BuildScan(s, sendbuf, sendbuftype, recvbuf, recvbuftype, count,
                                          kdt, op, true);
                  };
                }));
}

extern "C" int MPIGPU_Exscan_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                  MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                                  MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Info,
                                  MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Exscan_init", comm, InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype kdt = k(datatype);
                  k.Op(op);
                  return [=](CollSched& s) {
                    return api::BuildScan(s, sendbuf, sendbuftype, recvbuf, recvbuftype, count,
                                          kdt, op, false);
                  };
                }));
}

// ---- neighborhood ----

namespace {

// Neighbor_allgather_init (`gather`: the one send block goes to every neighbour) and
// Neighbor_alltoall_init (a send block per neighbour).
int RegularNeighborInit(bool gather, const void* sendbuf, MPIGPU_Buftype sendbuftype,
                        int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                        MPIGPU_Buftype recvbuftype, int recvcount, MPIGPU_Datatype recvtype,
                        MPIGPU_Comm comm, MPIGPU_Request* request) {
  return InitColl(comm, request, [=](int, ArgKeeper& k) {
    const MPIGPU_Datatype ksend = k(sendtype), krecv = k(recvtype);
    return [=](CollSched& s) {
      return api::BuildNeighbor(
          s, api::NeighborRegular(sendbuf, sendbuftype, sendcount, ksend, gather),
          api::NeighborRegular(recvbuf, recvbuftype, recvcount, krecv));
    };
  });
}

}  // namespace

extern "C" int MPIGPU_Neighbor_allgather_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                              int sendcount, MPIGPU_Datatype sendtype,
                                              void* recvbuf, MPIGPU_Buftype recvbuftype,
                                              int recvcount, MPIGPU_Datatype recvtype,
                                              MPIGPU_Comm comm, MPIGPU_Info,
                                              MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Neighbor_allgather_init", comm,
                RegularNeighborInit(true, sendbuf, sendbuftype, sendcount, sendtype, recvbuf,
                                    recvbuftype, recvcount, recvtype, comm, request));
}

extern "C" int MPIGPU_Neighbor_allgatherv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                               int sendcount, MPIGPU_Datatype sendtype,
                                               void* recvbuf, MPIGPU_Buftype recvbuftype,
                                               const int recvcounts[], const int displs[],
                                               MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                               MPIGPU_Info, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Neighbor_allgatherv_init", comm,
                InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype), krecv = k(recvtype);
                  const int in = DegreesOf(comm).first;
                  auto counts = CopyArray(recvcounts, in), dis = CopyArray(displs, in);
                  return [=](CollSched& s) {
                    return api::BuildNeighbor(
                        s, api::NeighborRegular(sendbuf, sendbuftype, sendcount, ksend, true),
                        api::NeighborVForm(recvbuf, recvbuftype, Data(counts), Data(dis), krecv));
                  };
                }));
}

extern "C" int MPIGPU_Neighbor_alltoall_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                             int sendcount, MPIGPU_Datatype sendtype,
                                             void* recvbuf, MPIGPU_Buftype recvbuftype,
                                             int recvcount, MPIGPU_Datatype recvtype,
                                             MPIGPU_Comm comm, MPIGPU_Info,
                                             MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Neighbor_alltoall_init", comm,
                RegularNeighborInit(false, sendbuf, sendbuftype, sendcount, sendtype, recvbuf,
                                    recvbuftype, recvcount, recvtype, comm, request));
}

extern "C" int MPIGPU_Neighbor_alltoallv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                              const int sendcounts[], const int sdispls[],
                                              MPIGPU_Datatype sendtype, void* recvbuf,
                                              MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                              const int rdispls[], MPIGPU_Datatype recvtype,
                                              MPIGPU_Comm comm, MPIGPU_Info,
                                              MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Neighbor_alltoallv_init", comm,
                InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const MPIGPU_Datatype ksend = k(sendtype), krecv = k(recvtype);
                  const auto [in, out] = DegreesOf(comm);
                  auto sc = CopyArray(sendcounts, out), sdis = CopyArray(sdispls, out);
                  auto rc = CopyArray(recvcounts, in), rdis = CopyArray(rdispls, in);
                  return [=](CollSched& s) {
                    return api::BuildNeighbor(
                        s, api::NeighborVForm(sendbuf, sendbuftype, Data(sc), Data(sdis), ksend),
                        api::NeighborVForm(recvbuf, recvbuftype, Data(rc), Data(rdis), krecv));
                  };
                }));
}

extern "C" int MPIGPU_Neighbor_alltoallw_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                              const int sendcounts[], const MPIGPU_Aint sdispls[],
                                              const MPIGPU_Datatype sendtypes[], void* recvbuf,
                                              MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                              const MPIGPU_Aint rdispls[],
                                              const MPIGPU_Datatype recvtypes[],
                                              MPIGPU_Comm comm, MPIGPU_Info,
                                              MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Neighbor_alltoallw_init", comm,
                InitColl(comm, request, [=](int, ArgKeeper& k) {
                  const auto [in, out] = DegreesOf(comm);
                  auto sc = CopyArray(sendcounts, out), rc = CopyArray(recvcounts, in);
                  auto sdis = CopyArray(sdispls, out), rdis = CopyArray(rdispls, in);
                  auto st = k.Array(sendtypes, out), rt = k.Array(recvtypes, in);
                  return [=](CollSched& s) {
                    return api::BuildNeighbor(
                        s, api::NeighborWForm(sendbuf, sendbuftype, Data(sc), Data(sdis), Data(st)),
                        api::NeighborWForm(recvbuf, recvbuftype, Data(rc), Data(rdis), Data(rt)));
                  };
                }));
}

// The MPI interface's persistent collectives (MPI 4.0 MPI_<coll>_init), thin over the core's
// (mpigpu_api/coll_persistent.cc): the layer's request holds the core's persistent request
// (Request::pcore); MPI_Start/Startall start it (mpi_p2p.cc StartPersistent) and the layer's
// completion calls treat it as any persistent request (inactive after completion). The info
// argument is accepted and ignored (the core has no hints to take).
#include "mpi/mpi_internal.h"

namespace {

using mpigpu::mpi::BufType;
using mpigpu::mpi::Done;
using mpigpu::mpi::Request;

// Makes an inactive persistent MPI request around the core request that init(&pcore) makes.
template <class Init>
int InitColl(const char* fn, MPI_Comm comm, MPI_Request* request, Init&& init) {
  if (request == nullptr)
    return mpigpu::mpi::FailWith(fn, comm, MPI_ERR_ARG, "null request pointer");
  *request = MPI_REQUEST_NULL;
  MPIGPU_Request core = MPIGPU_REQUEST_NULL;
  if (int rc = init(&core); rc != MPI_SUCCESS) return Done(fn, comm, rc);
  Request* r = nullptr;
  *request = mpigpu::mpi::NewRequest(&r);
  r->comm = comm;
  r->persistent = true;
  r->pcoll = true;
  r->pcore = core;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Barrier_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Barrier_init(comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Barrier_init)

extern "C" int PMPI_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root,
                               MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Bcast_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Bcast_init(buffer, BufType(buffer), count, datatype, root, comm,
                             MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Bcast_init)

extern "C" int PMPI_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Gather_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Gather_init(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                              BufType(recvbuf), recvcount, recvtype, root, comm,
                              MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Gather_init)

extern "C" int PMPI_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request) {
  return InitColl("MPI_Gatherv_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Gatherv_init(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                               BufType(recvbuf), recvcounts, displs, recvtype, root, comm,
                               MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Gatherv_init)

extern "C" int PMPI_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Scatter_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Scatter_init(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                               BufType(recvbuf), recvcount, recvtype, root, comm,
                               MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Scatter_init)

extern "C" int PMPI_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                                  MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  return InitColl("MPI_Scatterv_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Scatterv_init(sendbuf, BufType(sendbuf), sendcounts, displs, sendtype, recvbuf,
                                BufType(recvbuf), recvcount, recvtype, root, comm,
                                MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Scatterv_init)

extern "C" int PMPI_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Allgather_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Allgather_init(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                 BufType(recvbuf), recvcount, recvtype, comm, MPIGPU_INFO_NULL,
                                 core);
  });
}
MPIGPU_MPI_ALIAS(Allgather_init)

extern "C" int PMPI_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request* request) {
  return InitColl("MPI_Allgatherv_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Allgatherv_init(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                  BufType(recvbuf), recvcounts, displs, recvtype, comm,
                                  MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Allgatherv_init)

extern "C" int PMPI_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Alltoall_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Alltoall_init(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                BufType(recvbuf), recvcount, recvtype, comm, MPIGPU_INFO_NULL,
                                core);
  });
}
MPIGPU_MPI_ALIAS(Alltoall_init)

extern "C" int PMPI_Alltoallv_init(const void* sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  return InitColl("MPI_Alltoallv_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Alltoallv_init(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtype,
                                 recvbuf, BufType(recvbuf), recvcounts, rdispls, recvtype, comm,
                                 MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Alltoallv_init)

extern "C" int PMPI_Alltoallw_init(const void* sendbuf, const int sendcounts[],
                                   const int sdispls[], const MPI_Datatype sendtypes[],
                                   void* recvbuf, const int recvcounts[], const int rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  return InitColl("MPI_Alltoallw_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Alltoallw_init(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtypes,
                                 recvbuf, BufType(recvbuf), recvcounts, rdispls, recvtypes, comm,
                                 MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Alltoallw_init)

extern "C" int PMPI_Reduce_init(const void* sendbuf, void* recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Reduce_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Reduce_init(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count,
                              datatype, op, root, comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Reduce_init)

extern "C" int PMPI_Allreduce_init(const void* sendbuf, void* recvbuf, int count,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Allreduce_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Allreduce_init(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count,
                                 datatype, op, comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Allreduce_init)

extern "C" int PMPI_Reduce_scatter_init(const void* sendbuf, void* recvbuf,
                                        const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Reduce_scatter_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Reduce_scatter_init(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf),
                                      recvcounts, datatype, op, comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Reduce_scatter_init)

extern "C" int PMPI_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                              MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Reduce_scatter_block_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Reduce_scatter_block_init(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf),
                                            recvcount, datatype, op, comm, MPIGPU_INFO_NULL,
                                            core);
  });
}
MPIGPU_MPI_ALIAS(Reduce_scatter_block_init)

extern "C" int PMPI_Scan_init(const void* sendbuf, void* recvbuf, int count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                              MPI_Request* request) {
  return InitColl("MPI_Scan_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Scan_init(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count,
                            datatype, op, comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Scan_init)

extern "C" int PMPI_Exscan_init(const void* sendbuf, void* recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                MPI_Request* request) {
  return InitColl("MPI_Exscan_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Exscan_init(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count,
                              datatype, op, comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Exscan_init)

extern "C" int PMPI_Neighbor_allgather_init(const void* sendbuf, int sendcount,
                                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                            MPI_Request* request) {
  return InitColl("MPI_Neighbor_allgather_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Neighbor_allgather_init(sendbuf, BufType(sendbuf), sendcount, sendtype,
                                          recvbuf, BufType(recvbuf), recvcount, recvtype, comm,
                                          MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Neighbor_allgather_init)

extern "C" int PMPI_Neighbor_allgatherv_init(const void* sendbuf, int sendcount,
                                             MPI_Datatype sendtype, void* recvbuf,
                                             const int recvcounts[], const int displs[],
                                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                             MPI_Request* request) {
  return InitColl("MPI_Neighbor_allgatherv_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Neighbor_allgatherv_init(sendbuf, BufType(sendbuf), sendcount, sendtype,
                                           recvbuf, BufType(recvbuf), recvcounts, displs,
                                           recvtype, comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Neighbor_allgatherv_init)

extern "C" int PMPI_Neighbor_alltoall_init(const void* sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                           MPI_Request* request) {
  return InitColl("MPI_Neighbor_alltoall_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Neighbor_alltoall_init(sendbuf, BufType(sendbuf), sendcount, sendtype,
                                         recvbuf, BufType(recvbuf), recvcount, recvtype, comm,
                                         MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Neighbor_alltoall_init)

extern "C" int PMPI_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[],
                                            const int sdispls[], MPI_Datatype sendtype,
                                            void* recvbuf, const int recvcounts[],
                                            const int rdispls[], MPI_Datatype recvtype,
                                            MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Neighbor_alltoallv_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Neighbor_alltoallv_init(sendbuf, BufType(sendbuf), sendcounts, sdispls,
                                          sendtype, recvbuf, BufType(recvbuf), recvcounts,
                                          rdispls, recvtype, comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Neighbor_alltoallv_init)

extern "C" int PMPI_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                            const MPI_Aint sdispls[],
                                            const MPI_Datatype sendtypes[], void* recvbuf,
                                            const int recvcounts[], const MPI_Aint rdispls[],
                                            const MPI_Datatype recvtypes[], MPI_Comm comm,
                                            MPI_Info info, MPI_Request* request) {
  return InitColl("MPI_Neighbor_alltoallw_init", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Neighbor_alltoallw_init(sendbuf, BufType(sendbuf), sendcounts, sdispls,
                                          sendtypes, recvbuf, BufType(recvbuf), recvcounts,
                                          rdispls, recvtypes, comm, MPIGPU_INFO_NULL, core);
  });
}
MPIGPU_MPI_ALIAS(Neighbor_alltoallw_init)

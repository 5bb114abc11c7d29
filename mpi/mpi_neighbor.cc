// The MPI interface's neighborhood collectives, thin over the core's (mpigpu_api/
// coll_neighbor.cc): buffers located by BufType, errors through the communicator's handler, the
// nonblocking forms' core request wrapped in one of this layer's.
#include "mpi/mpi_internal.h"

namespace {

using mpigpu::mpi::BufType;
using mpigpu::mpi::Done;
using mpigpu::mpi::StartCoreRequest;

}  // namespace

extern "C" int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm) {
  return Done("MPI_Neighbor_allgather", comm,
              MPIGPU_Neighbor_allgather(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                        BufType(recvbuf), recvcount, recvtype, comm));
}
MPIGPU_MPI_ALIAS(Neighbor_allgather)

extern "C" int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void* recvbuf, const int recvcounts[], const int displs[],
                                        MPI_Datatype recvtype, MPI_Comm comm) {
  return Done("MPI_Neighbor_allgatherv", comm,
              MPIGPU_Neighbor_allgatherv(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                         BufType(recvbuf), recvcounts, displs, recvtype, comm));
}
MPIGPU_MPI_ALIAS(Neighbor_allgatherv)

extern "C" int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                      MPI_Comm comm) {
  return Done("MPI_Neighbor_alltoall", comm,
              MPIGPU_Neighbor_alltoall(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                       BufType(recvbuf), recvcount, recvtype, comm));
}
MPIGPU_MPI_ALIAS(Neighbor_alltoall)

extern "C" int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                       const int recvcounts[], const int rdispls[],
                                       MPI_Datatype recvtype, MPI_Comm comm) {
  return Done("MPI_Neighbor_alltoallv", comm,
              MPIGPU_Neighbor_alltoallv(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtype,
                                        recvbuf, BufType(recvbuf), recvcounts, rdispls, recvtype,
                                        comm));
}
MPIGPU_MPI_ALIAS(Neighbor_alltoallv)

extern "C" int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                       const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                       void* recvbuf, const int recvcounts[],
                                       const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                       MPI_Comm comm) {
  return Done("MPI_Neighbor_alltoallw", comm,
              MPIGPU_Neighbor_alltoallw(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtypes,
                                        recvbuf, BufType(recvbuf), recvcounts, rdispls,
                                        recvtypes, comm));
}
MPIGPU_MPI_ALIAS(Neighbor_alltoallw)

extern "C" int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Ineighbor_allgather", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ineighbor_allgather(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                      BufType(recvbuf), recvcount, recvtype, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ineighbor_allgather)

extern "C" int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void* recvbuf,
                                         const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm,
                                         MPI_Request* request) {
  return StartCoreRequest("MPI_Ineighbor_allgatherv", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ineighbor_allgatherv(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                       BufType(recvbuf), recvcounts, displs, recvtype, comm,
                                       core);
  });
}
MPIGPU_MPI_ALIAS(Ineighbor_allgatherv)

extern "C" int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Ineighbor_alltoall", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ineighbor_alltoall(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                     BufType(recvbuf), recvcount, recvtype, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ineighbor_alltoall)

extern "C" int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                        const int recvcounts[], const int rdispls[],
                                        MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request* request) {
  return StartCoreRequest("MPI_Ineighbor_alltoallv", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ineighbor_alltoallv(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtype,
                                      recvbuf, BufType(recvbuf), recvcounts, rdispls, recvtype,
                                      comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ineighbor_alltoallv)

extern "C" int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void* recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Ineighbor_alltoallw", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ineighbor_alltoallw(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtypes,
                                      recvbuf, BufType(recvbuf), recvcounts, rdispls, recvtypes,
                                      comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ineighbor_alltoallw)

// The MPI interface's collectives and reduction operations, thin over the core's
// (mpigpu_api/coll*.cc): each buffer's location found by BufType (MPI_IN_PLACE is host and
// ignored by the core), errors through the communicator's handler. The nonblocking forms wrap
// the core's request in one of this layer's.
#include "mpi/mpi_internal.h"

namespace {

using mpigpu::mpi::BufType;
using mpigpu::mpi::Done;
using mpigpu::mpi::StartCoreRequest;

}  // namespace

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  return Done("MPI_Barrier", comm, MPIGPU_Barrier(comm));
}
MPIGPU_MPI_ALIAS(Barrier)

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return Done("MPI_Bcast", comm,
              MPIGPU_Bcast(buffer, BufType(buffer), count, datatype, root, comm));
}
MPIGPU_MPI_ALIAS(Bcast)

extern "C" int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return Done("MPI_Gather", comm,
              MPIGPU_Gather(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                            BufType(recvbuf), recvcount, recvtype, root, comm));
}
MPIGPU_MPI_ALIAS(Gather)

extern "C" int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return Done("MPI_Gatherv", comm,
              MPIGPU_Gatherv(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                             BufType(recvbuf), recvcounts, displs, recvtype, root, comm));
}
MPIGPU_MPI_ALIAS(Gatherv)

extern "C" int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm) {
  return Done("MPI_Scatter", comm,
              MPIGPU_Scatter(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                             BufType(recvbuf), recvcount, recvtype, root, comm));
}
MPIGPU_MPI_ALIAS(Scatter)

extern "C" int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return Done("MPI_Scatterv", comm,
              MPIGPU_Scatterv(sendbuf, BufType(sendbuf), sendcounts, displs, sendtype, recvbuf,
                              BufType(recvbuf), recvcount, recvtype, root, comm));
}
MPIGPU_MPI_ALIAS(Scatterv)

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return Done("MPI_Allgather", comm,
              MPIGPU_Allgather(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                               BufType(recvbuf), recvcount, recvtype, comm));
}
MPIGPU_MPI_ALIAS(Allgather)

extern "C" int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm) {
  return Done("MPI_Allgatherv", comm,
              MPIGPU_Allgatherv(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                                BufType(recvbuf), recvcounts, displs, recvtype, comm));
}
MPIGPU_MPI_ALIAS(Allgatherv)

extern "C" int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return Done("MPI_Alltoall", comm,
              MPIGPU_Alltoall(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                              BufType(recvbuf), recvcount, recvtype, comm));
}
MPIGPU_MPI_ALIAS(Alltoall)

extern "C" int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return Done("MPI_Alltoallv", comm,
              MPIGPU_Alltoallv(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtype, recvbuf,
                               BufType(recvbuf), recvcounts, rdispls, recvtype, comm));
}
MPIGPU_MPI_ALIAS(Alltoallv)

extern "C" int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                              const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return Done("MPI_Alltoallw", comm,
              MPIGPU_Alltoallw(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtypes, recvbuf,
                               BufType(recvbuf), recvcounts, rdispls, recvtypes, comm));
}
MPIGPU_MPI_ALIAS(Alltoallw)

extern "C" int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, int root, MPI_Comm comm) {
  return Done("MPI_Reduce", comm,
              MPIGPU_Reduce(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count, datatype,
                            op, root, comm));
}
MPIGPU_MPI_ALIAS(Reduce)

extern "C" int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                              MPI_Op op, MPI_Comm comm) {
  return Done("MPI_Allreduce", comm,
              MPIGPU_Allreduce(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count,
                               datatype, op, comm));
}
MPIGPU_MPI_ALIAS(Allreduce)

extern "C" int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op) {
  return Done(
      "MPI_Reduce_local", MPI_COMM_WORLD,
      MPIGPU_Reduce_local(inbuf, BufType(inbuf), inoutbuf, BufType(inoutbuf), count, datatype, op));
}
MPIGPU_MPI_ALIAS(Reduce_local)

extern "C" int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return Done("MPI_Reduce_scatter", comm,
              MPIGPU_Reduce_scatter(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf),
                                    recvcounts, datatype, op, comm));
}
MPIGPU_MPI_ALIAS(Reduce_scatter)

extern "C" int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return Done("MPI_Reduce_scatter_block", comm,
              MPIGPU_Reduce_scatter_block(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf),
                                          recvcount, datatype, op, comm));
}
MPIGPU_MPI_ALIAS(Reduce_scatter_block)

extern "C" int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm) {
  return Done(
      "MPI_Scan", comm,
      MPIGPU_Scan(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count, datatype, op, comm));
}
MPIGPU_MPI_ALIAS(Scan)

extern "C" int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm) {
  return Done("MPI_Exscan", comm,
              MPIGPU_Exscan(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count, datatype,
                            op, comm));
}
MPIGPU_MPI_ALIAS(Exscan)

extern "C" int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  return Done("MPI_Op_create", MPI_COMM_WORLD, MPIGPU_Op_create(user_fn, commute, op));
}
MPIGPU_MPI_ALIAS(Op_create)

extern "C" int PMPI_Op_free(MPI_Op* op) {
  return Done("MPI_Op_free", MPI_COMM_WORLD, MPIGPU_Op_free(op));
}
MPIGPU_MPI_ALIAS(Op_free)

extern "C" int PMPI_Op_commutative(MPI_Op op, int* commute) {
  return Done("MPI_Op_commutative", MPI_COMM_WORLD, MPIGPU_Op_commutative(op, commute));
}
MPIGPU_MPI_ALIAS(Op_commutative)

extern "C" int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Ibarrier", comm, request,
                          [&](MPIGPU_Request* core) { return MPIGPU_Ibarrier(comm, core); });
}
MPIGPU_MPI_ALIAS(Ibarrier)

extern "C" int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Request* request) {
  return StartCoreRequest("MPI_Ibcast", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ibcast(buffer, BufType(buffer), count, datatype, root, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ibcast)

extern "C" int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Igather", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Igather(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf, BufType(recvbuf),
                          recvcount, recvtype, root, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Igather)

extern "C" int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Igatherv", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Igatherv(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                           BufType(recvbuf), recvcounts, displs, recvtype, root, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Igatherv)

extern "C" int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Iscatter", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Iscatter(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                           BufType(recvbuf), recvcount, recvtype, root, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Iscatter)

extern "C" int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request) {
  return StartCoreRequest("MPI_Iscatterv", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Iscatterv(sendbuf, BufType(sendbuf), sendcounts, displs, sendtype, recvbuf,
                            BufType(recvbuf), recvcount, recvtype, root, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Iscatterv)

extern "C" int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return StartCoreRequest("MPI_Iallgather", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Iallgather(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                             BufType(recvbuf), recvcount, recvtype, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Iallgather)

extern "C" int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Iallgatherv", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Iallgatherv(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                              BufType(recvbuf), recvcounts, displs, recvtype, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Iallgatherv)

extern "C" int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request* request) {
  return StartCoreRequest("MPI_Ialltoall", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ialltoall(sendbuf, BufType(sendbuf), sendcount, sendtype, recvbuf,
                            BufType(recvbuf), recvcount, recvtype, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ialltoall)

extern "C" int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request* request) {
  return StartCoreRequest("MPI_Ialltoallv", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ialltoallv(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtype, recvbuf,
                             BufType(recvbuf), recvcounts, rdispls, recvtype, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ialltoallv)

extern "C" int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm,
                               MPI_Request* request) {
  return StartCoreRequest("MPI_Ialltoallw", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ialltoallw(sendbuf, BufType(sendbuf), sendcounts, sdispls, sendtypes, recvbuf,
                             BufType(recvbuf), recvcounts, rdispls, recvtypes, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ialltoallw)

extern "C" int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Ireduce", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ireduce(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count, datatype, op,
                          root, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ireduce)

extern "C" int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Iallreduce", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Iallreduce(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count, datatype,
                             op, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Iallreduce)

extern "C" int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Request* request) {
  return StartCoreRequest("MPI_Ireduce_scatter", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ireduce_scatter(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), recvcounts,
                                  datatype, op, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ireduce_scatter)

extern "C" int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                          MPI_Request* request) {
  return StartCoreRequest("MPI_Ireduce_scatter_block", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Ireduce_scatter_block(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf),
                                        recvcount, datatype, op, comm, core);
  });
}
MPIGPU_MPI_ALIAS(Ireduce_scatter_block)

extern "C" int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Iscan", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Iscan(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count, datatype, op,
                        comm, core);
  });
}
MPIGPU_MPI_ALIAS(Iscan)

extern "C" int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return StartCoreRequest("MPI_Iexscan", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Iexscan(sendbuf, BufType(sendbuf), recvbuf, BufType(recvbuf), count, datatype, op,
                          comm, core);
  });
}
MPIGPU_MPI_ALIAS(Iexscan)

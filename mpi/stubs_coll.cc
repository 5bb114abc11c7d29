// Placeholders for the coll calls (Barrier, Bcast, Reduce, Allreduce map to the core) of mpi.h that are not written yet: each returns
// MPI_ERR_UNSUPPORTED_OPERATION naming itself (through the communicator's error handler).
// The area's owner replaces this file with the real calls.
#include "mpi/mpi_internal.h"

extern "C" int PMPI_Barrier(MPI_Comm comm) {
  return mpigpu::mpi::Done("MPI_Barrier", comm, MPIGPU_Barrier(comm));
}
MPIGPU_MPI_ALIAS(Barrier)

extern "C" int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return mpigpu::mpi::Done("MPI_Bcast", comm,
                          MPIGPU_Bcast(buffer, mpigpu::mpi::BufType(buffer), count, datatype, root, comm));
}
MPIGPU_MPI_ALIAS(Bcast)

extern "C" int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  (void)root;
  return mpigpu::mpi::Unsupported("MPI_Gather", comm);
}
MPIGPU_MPI_ALIAS(Gather)

extern "C" int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcounts;
  (void)displs;
  (void)recvtype;
  (void)root;
  return mpigpu::mpi::Unsupported("MPI_Gatherv", comm);
}
MPIGPU_MPI_ALIAS(Gatherv)

extern "C" int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  (void)root;
  return mpigpu::mpi::Unsupported("MPI_Scatter", comm);
}
MPIGPU_MPI_ALIAS(Scatter)

extern "C" int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcounts;
  (void)displs;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  (void)root;
  return mpigpu::mpi::Unsupported("MPI_Scatterv", comm);
}
MPIGPU_MPI_ALIAS(Scatterv)

extern "C" int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  return mpigpu::mpi::Unsupported("MPI_Allgather", comm);
}
MPIGPU_MPI_ALIAS(Allgather)

extern "C" int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcounts;
  (void)displs;
  (void)recvtype;
  return mpigpu::mpi::Unsupported("MPI_Allgatherv", comm);
}
MPIGPU_MPI_ALIAS(Allgatherv)

extern "C" int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  return mpigpu::mpi::Unsupported("MPI_Alltoall", comm);
}
MPIGPU_MPI_ALIAS(Alltoall)

extern "C" int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcounts;
  (void)sdispls;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcounts;
  (void)rdispls;
  (void)recvtype;
  return mpigpu::mpi::Unsupported("MPI_Alltoallv", comm);
}
MPIGPU_MPI_ALIAS(Alltoallv)

extern "C" int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  (void)sendbuf;
  (void)sendcounts;
  (void)sdispls;
  (void)sendtypes;
  (void)recvbuf;
  (void)recvcounts;
  (void)rdispls;
  (void)recvtypes;
  return mpigpu::mpi::Unsupported("MPI_Alltoallw", comm);
}
MPIGPU_MPI_ALIAS(Alltoallw)

extern "C" int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return mpigpu::mpi::Done("MPI_Reduce", comm,
                          MPIGPU_Reduce(sendbuf, mpigpu::mpi::BufType(sendbuf), recvbuf, mpigpu::mpi::BufType(recvbuf), count,
                                        datatype, op, root, comm));
}
MPIGPU_MPI_ALIAS(Reduce)

extern "C" int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return mpigpu::mpi::Done("MPI_Allreduce", comm,
                          MPIGPU_Allreduce(sendbuf, mpigpu::mpi::BufType(sendbuf), recvbuf, mpigpu::mpi::BufType(recvbuf), count,
                                           datatype, op, comm));
}
MPIGPU_MPI_ALIAS(Allreduce)

extern "C" int PMPI_Reduce_local(const void* inbuf, void* inoutbuf, int count, MPI_Datatype datatype, MPI_Op op) {
  (void)inbuf;
  (void)inoutbuf;
  (void)count;
  (void)datatype;
  (void)op;
  return mpigpu::mpi::Unsupported("MPI_Reduce_local", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Reduce_local)

extern "C" int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  (void)sendbuf;
  (void)recvbuf;
  (void)recvcounts;
  (void)datatype;
  (void)op;
  return mpigpu::mpi::Unsupported("MPI_Reduce_scatter", comm);
}
MPIGPU_MPI_ALIAS(Reduce_scatter)

extern "C" int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  (void)sendbuf;
  (void)recvbuf;
  (void)recvcount;
  (void)datatype;
  (void)op;
  return mpigpu::mpi::Unsupported("MPI_Reduce_scatter_block", comm);
}
MPIGPU_MPI_ALIAS(Reduce_scatter_block)

extern "C" int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  (void)sendbuf;
  (void)recvbuf;
  (void)count;
  (void)datatype;
  (void)op;
  return mpigpu::mpi::Unsupported("MPI_Scan", comm);
}
MPIGPU_MPI_ALIAS(Scan)

extern "C" int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  (void)sendbuf;
  (void)recvbuf;
  (void)count;
  (void)datatype;
  (void)op;
  return mpigpu::mpi::Unsupported("MPI_Exscan", comm);
}
MPIGPU_MPI_ALIAS(Exscan)

extern "C" int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  (void)user_fn;
  (void)commute;
  (void)op;
  return mpigpu::mpi::Unsupported("MPI_Op_create", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Op_create)

extern "C" int PMPI_Op_free(MPI_Op* op) {
  (void)op;
  return mpigpu::mpi::Unsupported("MPI_Op_free", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Op_free)

extern "C" int PMPI_Op_commutative(MPI_Op op, int* commute) {
  (void)op;
  (void)commute;
  return mpigpu::mpi::Unsupported("MPI_Op_commutative", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Op_commutative)

extern "C" int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Ibarrier", comm);
}
MPIGPU_MPI_ALIAS(Ibarrier)

extern "C" int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request* request) {
  return mpigpu::mpi::Unsupported("MPI_Ibcast", comm);
}
MPIGPU_MPI_ALIAS(Ibcast)

extern "C" int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  (void)root;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Igather", comm);
}
MPIGPU_MPI_ALIAS(Igather)

extern "C" int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcounts;
  (void)displs;
  (void)recvtype;
  (void)root;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Igatherv", comm);
}
MPIGPU_MPI_ALIAS(Igatherv)

extern "C" int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  (void)root;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Iscatter", comm);
}
MPIGPU_MPI_ALIAS(Iscatter)

extern "C" int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcounts;
  (void)displs;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  (void)root;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Iscatterv", comm);
}
MPIGPU_MPI_ALIAS(Iscatterv)

extern "C" int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Iallgather", comm);
}
MPIGPU_MPI_ALIAS(Iallgather)

extern "C" int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcounts;
  (void)displs;
  (void)recvtype;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Iallgatherv", comm);
}
MPIGPU_MPI_ALIAS(Iallgatherv)

extern "C" int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcount;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcount;
  (void)recvtype;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Ialltoall", comm);
}
MPIGPU_MPI_ALIAS(Ialltoall)

extern "C" int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcounts;
  (void)sdispls;
  (void)sendtype;
  (void)recvbuf;
  (void)recvcounts;
  (void)rdispls;
  (void)recvtype;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Ialltoallv", comm);
}
MPIGPU_MPI_ALIAS(Ialltoallv)

extern "C" int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)sendcounts;
  (void)sdispls;
  (void)sendtypes;
  (void)recvbuf;
  (void)recvcounts;
  (void)rdispls;
  (void)recvtypes;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Ialltoallw", comm);
}
MPIGPU_MPI_ALIAS(Ialltoallw)

extern "C" int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)recvbuf;
  (void)count;
  (void)datatype;
  (void)op;
  (void)root;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Ireduce", comm);
}
MPIGPU_MPI_ALIAS(Ireduce)

extern "C" int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)recvbuf;
  (void)count;
  (void)datatype;
  (void)op;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Iallreduce", comm);
}
MPIGPU_MPI_ALIAS(Iallreduce)

extern "C" int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)recvbuf;
  (void)recvcounts;
  (void)datatype;
  (void)op;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Ireduce_scatter", comm);
}
MPIGPU_MPI_ALIAS(Ireduce_scatter)

extern "C" int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)recvbuf;
  (void)recvcount;
  (void)datatype;
  (void)op;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Ireduce_scatter_block", comm);
}
MPIGPU_MPI_ALIAS(Ireduce_scatter_block)

extern "C" int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)recvbuf;
  (void)count;
  (void)datatype;
  (void)op;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Iscan", comm);
}
MPIGPU_MPI_ALIAS(Iscan)

extern "C" int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  (void)sendbuf;
  (void)recvbuf;
  (void)count;
  (void)datatype;
  (void)op;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Iexscan", comm);
}
MPIGPU_MPI_ALIAS(Iexscan)

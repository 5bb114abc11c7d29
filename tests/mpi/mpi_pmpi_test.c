/* The profiling interface: this program defines MPI_Send and MPI_Recv itself, counts the calls
 * and forwards them to PMPI_Send/PMPI_Recv; the library's MPI_Send (a weak alias) gives way. */
#include "mpi_test.h"

static int sends = 0, recvs = 0;

int MPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
             MPI_Comm comm) {
  ++sends;
  return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  ++recvs;
  return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
}

int main(int argc, char** argv) {
  int rank, v = 5;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
    CHECK_OK(MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
    CHECK(sends == 2 && recvs == 0);
  } else if (rank == 1) {
    CHECK_OK(MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(PMPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(sends == 0 && recvs == 1 && v == 5);
  }
  return mt_finish();
}

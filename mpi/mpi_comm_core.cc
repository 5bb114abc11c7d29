// The communicator calls the core has had from the start: rank, size, dup, split, free (new
// communicators inherit their parent's error handler in the core), and handle conversions.
#include "mpi/mpi_internal.h"

using mpigpu::mpi::Done;

extern "C" int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  return Done("MPI_Comm_rank", comm, MPIGPU_Comm_rank(comm, rank));
}
MPIGPU_MPI_ALIAS(Comm_rank)

extern "C" int PMPI_Comm_size(MPI_Comm comm, int* size) {
  return Done("MPI_Comm_size", comm, MPIGPU_Comm_size(comm, size));
}
MPIGPU_MPI_ALIAS(Comm_size)

extern "C" int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return Done("MPI_Comm_dup", comm, MPIGPU_Comm_dup(comm, newcomm));
}
MPIGPU_MPI_ALIAS(Comm_dup)

extern "C" int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  if (color < 0 && color != MPI_UNDEFINED)
    return mpigpu::mpi::FailWith("MPI_Comm_split", comm, MPI_ERR_ARG, "negative color");
  return Done("MPI_Comm_split", comm, MPIGPU_Comm_split(comm, color, key, newcomm));
}
MPIGPU_MPI_ALIAS(Comm_split)

extern "C" int PMPI_Comm_free(MPI_Comm* comm) {
  const MPI_Comm c = comm ? *comm : MPI_COMM_NULL;
  return Done("MPI_Comm_free", c, MPIGPU_Comm_free(comm));
}
MPIGPU_MPI_ALIAS(Comm_free)

extern "C" MPI_Fint PMPI_Comm_c2f(MPI_Comm comm) { return comm; }
MPIGPU_MPI_ALIAS(Comm_c2f)
extern "C" MPI_Comm PMPI_Comm_f2c(MPI_Fint comm) { return comm; }
MPIGPU_MPI_ALIAS(Comm_f2c)
extern "C" MPI_Fint PMPI_Errhandler_c2f(MPI_Errhandler errhandler) { return errhandler; }
MPIGPU_MPI_ALIAS(Errhandler_c2f)
extern "C" MPI_Errhandler PMPI_Errhandler_f2c(MPI_Fint errhandler) { return errhandler; }
MPIGPU_MPI_ALIAS(Errhandler_f2c)

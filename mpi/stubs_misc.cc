// Placeholders for the misc calls of mpi.h that are not written yet: each returns
// MPI_ERR_UNSUPPORTED_OPERATION naming itself (through the communicator's error handler).
// The area's owner replaces this file with the real calls.
#include "mpi/mpi_internal.h"

extern "C" int PMPI_File_create_errhandler(MPI_File_errhandler_function* function, MPI_Errhandler* errhandler) {
  (void)function;
  (void)errhandler;
  return mpigpu::mpi::Unsupported("MPI_File_create_errhandler", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(File_create_errhandler)

extern "C" int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler) {
  (void)file;
  (void)errhandler;
  return mpigpu::mpi::Unsupported("MPI_File_set_errhandler", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(File_set_errhandler)

extern "C" int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler* errhandler) {
  (void)file;
  (void)errhandler;
  return mpigpu::mpi::Unsupported("MPI_File_get_errhandler", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(File_get_errhandler)

extern "C" int PMPI_File_call_errhandler(MPI_File file, int errorcode) {
  (void)file;
  (void)errorcode;
  return mpigpu::mpi::Unsupported("MPI_File_call_errhandler", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(File_call_errhandler)


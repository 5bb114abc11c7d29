// Placeholders for the misc calls of mpi.h that are not written yet: each returns
// MPI_ERR_UNSUPPORTED_OPERATION naming itself (through the communicator's error handler).
// The area's owner replaces this file with the real calls.
#include "mpi/mpi_internal.h"

extern "C" int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* function, MPI_Errhandler* errhandler) {
  (void)function;
  (void)errhandler;
  return mpigpu::mpi::Unsupported("MPI_Win_create_errhandler", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Win_create_errhandler)

extern "C" int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  (void)win;
  (void)errhandler;
  return mpigpu::mpi::Unsupported("MPI_Win_set_errhandler", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Win_set_errhandler)

extern "C" int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  (void)win;
  (void)errorcode;
  return mpigpu::mpi::Unsupported("MPI_Win_call_errhandler", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Win_call_errhandler)

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

extern "C" int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn, MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request) {
  (void)query_fn;
  (void)free_fn;
  (void)cancel_fn;
  (void)extra_state;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Grequest_start", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Grequest_start)

extern "C" int PMPI_Grequest_complete(MPI_Request request) {
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Grequest_complete", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Grequest_complete)

extern "C" int PMPI_Info_create(MPI_Info* info) {
  (void)info;
  return mpigpu::mpi::Unsupported("MPI_Info_create", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_create)

extern "C" int PMPI_Info_free(MPI_Info* info) {
  (void)info;
  return mpigpu::mpi::Unsupported("MPI_Info_free", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_free)

extern "C" int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  (void)info;
  (void)key;
  (void)value;
  return mpigpu::mpi::Unsupported("MPI_Info_set", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_set)

extern "C" int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  (void)info;
  (void)key;
  (void)valuelen;
  (void)value;
  (void)flag;
  return mpigpu::mpi::Unsupported("MPI_Info_get", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_get)

extern "C" int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  (void)info;
  (void)nkeys;
  return mpigpu::mpi::Unsupported("MPI_Info_get_nkeys", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_get_nkeys)

extern "C" int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  (void)info;
  (void)n;
  (void)key;
  return mpigpu::mpi::Unsupported("MPI_Info_get_nthkey", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_get_nthkey)

extern "C" int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  (void)info;
  (void)key;
  (void)valuelen;
  (void)flag;
  return mpigpu::mpi::Unsupported("MPI_Info_get_valuelen", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_get_valuelen)

extern "C" int PMPI_Info_delete(MPI_Info info, const char* key) {
  (void)info;
  (void)key;
  return mpigpu::mpi::Unsupported("MPI_Info_delete", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_delete)

extern "C" int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  (void)info;
  (void)newinfo;
  return mpigpu::mpi::Unsupported("MPI_Info_dup", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Info_dup)

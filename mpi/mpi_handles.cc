// Handle conversions (C handles are the Fortran integers already), address arithmetic and the
// predefined attribute-copy callbacks.
#include <cstdint>

#include "mpi/mpi_internal.h"

extern "C" MPI_Fint PMPI_Type_c2f(MPI_Datatype datatype) { return datatype; }
MPIGPU_MPI_ALIAS(Type_c2f)
extern "C" MPI_Datatype PMPI_Type_f2c(MPI_Fint datatype) { return datatype; }
MPIGPU_MPI_ALIAS(Type_f2c)
extern "C" MPI_Fint PMPI_Group_c2f(MPI_Group group) { return group; }
MPIGPU_MPI_ALIAS(Group_c2f)
extern "C" MPI_Group PMPI_Group_f2c(MPI_Fint group) { return group; }
MPIGPU_MPI_ALIAS(Group_f2c)
extern "C" MPI_Fint PMPI_Op_c2f(MPI_Op op) { return op; }
MPIGPU_MPI_ALIAS(Op_c2f)
extern "C" MPI_Op PMPI_Op_f2c(MPI_Fint op) { return op; }
MPIGPU_MPI_ALIAS(Op_f2c)
extern "C" MPI_Fint PMPI_Info_c2f(MPI_Info info) { return info; }
MPIGPU_MPI_ALIAS(Info_c2f)
extern "C" MPI_Info PMPI_Info_f2c(MPI_Fint info) { return info; }
MPIGPU_MPI_ALIAS(Info_f2c)

// Unsigned arithmetic: addresses may wrap past the signed range without undefined behaviour.
extern "C" MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(base) + static_cast<uintptr_t>(disp));
}
MPIGPU_MPI_ALIAS(Aint_add)
extern "C" MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<uintptr_t>(addr1) - static_cast<uintptr_t>(addr2));
}
MPIGPU_MPI_ALIAS(Aint_diff)

extern "C" int PMPI_Get_address(const void* location, MPI_Aint* address) {
  if (address == nullptr)
    return mpigpu::mpi::FailWith("MPI_Get_address", MPI_COMM_WORLD, MPI_ERR_ARG, "null address");
  *address = static_cast<MPI_Aint>(reinterpret_cast<uintptr_t>(location));
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Get_address)
extern "C" int PMPI_Address(void* location, MPI_Aint* address) {
  return PMPI_Get_address(location, address);
}
MPIGPU_MPI_ALIAS(Address)

// MPI_COMM_DUP_FN and its kin: the copy gets the same attribute value.
namespace {
int DupFn(void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}
}  // namespace
extern "C" int MPIGPU_MPI_comm_dup_fn(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  return DupFn(in, out, flag);
}
extern "C" int MPIGPU_MPI_type_dup_fn(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  return DupFn(in, out, flag);
}
extern "C" int MPIGPU_MPI_win_dup_fn(MPI_Win, int, void*, void* in, void* out, int* flag) {
  return DupFn(in, out, flag);
}

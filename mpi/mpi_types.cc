// The MPI datatype calls: thin over the core's MPIGPU_Type_*, Pack/Unpack (buffer locations
// found by mpi_buf's lookup) and Get_elements. Errors go to MPI_COMM_WORLD's handler (a type
// has no communicator), Pack/Unpack's to their communicator's.
#include <cstring>
#include <string>

#include "mpi/mpi_internal.h"

using mpigpu::mpi::Done;

namespace {

// Predefined types are named as MPI names them ("MPI_INT", not the core's "MPIGPU_INT").
std::string MpiName(const char* core) {
  static const char kCore[] = "MPIGPU_";
  if (std::strncmp(core, kCore, sizeof(kCore) - 1) == 0) return std::string("MPI_") + (core + 7);
  return core;
}

}  // namespace

#define MPIGPU_TYPES_CALL(name, params, args)                         \
  extern "C" int PMPI_##name params {                                 \
    return Done("MPI_" #name, MPI_COMM_WORLD, MPIGPU_##name args);    \
  }                                                                   \
  MPIGPU_MPI_ALIAS(name)

MPIGPU_TYPES_CALL(Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype),
                  (count, oldtype, newtype))
MPIGPU_TYPES_CALL(Type_vector,
                  (int count, int blocklength, int stride, MPI_Datatype oldtype,
                   MPI_Datatype* newtype),
                  (count, blocklength, stride, oldtype, newtype))
MPIGPU_TYPES_CALL(Type_create_hvector,
                  (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                   MPI_Datatype* newtype),
                  (count, blocklength, stride, oldtype, newtype))
MPIGPU_TYPES_CALL(Type_indexed,
                  (int count, const int array_of_blocklengths[],
                   const int array_of_displacements[], MPI_Datatype oldtype,
                   MPI_Datatype* newtype),
                  (count, array_of_blocklengths, array_of_displacements, oldtype, newtype))
MPIGPU_TYPES_CALL(Type_create_hindexed,
                  (int count, const int array_of_blocklengths[],
                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                   MPI_Datatype* newtype),
                  (count, array_of_blocklengths, array_of_displacements, oldtype, newtype))
MPIGPU_TYPES_CALL(Type_create_indexed_block,
                  (int count, int blocklength, const int array_of_displacements[],
                   MPI_Datatype oldtype, MPI_Datatype* newtype),
                  (count, blocklength, array_of_displacements, oldtype, newtype))
MPIGPU_TYPES_CALL(Type_create_hindexed_block,
                  (int count, int blocklength, const MPI_Aint array_of_displacements[],
                   MPI_Datatype oldtype, MPI_Datatype* newtype),
                  (count, blocklength, array_of_displacements, oldtype, newtype))
extern "C" int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                                       const MPI_Aint array_of_displacements[],
                                       const MPI_Datatype array_of_types[],
                                       MPI_Datatype* newtype) {
  return Done("MPI_Type_create_struct", MPI_COMM_WORLD,
              mpigpu::mpi::StructWithMarkers(count, array_of_blocklengths,
                                             array_of_displacements, array_of_types, newtype));
}
MPIGPU_MPI_ALIAS(Type_create_struct)
MPIGPU_TYPES_CALL(Type_create_subarray,
                  (int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                   const int array_of_starts[], int order, MPI_Datatype oldtype,
                   MPI_Datatype* newtype),
                  (ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype,
                   newtype))
MPIGPU_TYPES_CALL(Type_create_darray,
                  (int size, int rank, int ndims, const int array_of_gsizes[],
                   const int array_of_distribs[], const int array_of_dargs[],
                   const int array_of_psizes[], int order, MPI_Datatype oldtype,
                   MPI_Datatype* newtype),
                  (size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                   array_of_psizes, order, oldtype, newtype))
MPIGPU_TYPES_CALL(Type_create_resized,
                  (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype),
                  (oldtype, lb, extent, newtype))
MPIGPU_TYPES_CALL(Type_commit, (MPI_Datatype * datatype), (datatype))

// Type_dup and Type_free run the attribute callbacks (the core's datatype library sits below its
// attributes, so the two are joined here): a failing copy callback fails the dup and the copy
// goes away; a failing delete callback fails the free and the type stays.
extern "C" int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int rc = MPIGPU_Type_dup(oldtype, newtype); rc != MPI_SUCCESS)
    return Done("MPI_Type_dup", MPI_COMM_WORLD, rc);
  if (int rc = MPIGPU_Type_copy_attrs_(oldtype, *newtype); rc != MPI_SUCCESS) {
    (void)MPIGPU_Type_delete_attrs_(*newtype);  // those copied before the failing one
    (void)MPIGPU_Type_free(newtype);
    *newtype = MPI_DATATYPE_NULL;
    return Done("MPI_Type_dup", MPI_COMM_WORLD, rc);
  }
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Type_dup)

extern "C" int PMPI_Type_free(MPI_Datatype* datatype) {
  // A bad or predefined handle has no attributes: Type_free gives its error.
  if (datatype != nullptr)
    if (int rc = MPIGPU_Type_delete_attrs_(*datatype); rc != MPI_SUCCESS)
      return Done("MPI_Type_free", MPI_COMM_WORLD, rc);
  return Done("MPI_Type_free", MPI_COMM_WORLD, MPIGPU_Type_free(datatype));
}
MPIGPU_MPI_ALIAS(Type_free)
MPIGPU_TYPES_CALL(Type_size, (MPI_Datatype datatype, int* size), (datatype, size))
MPIGPU_TYPES_CALL(Type_size_x, (MPI_Datatype datatype, MPI_Count* size), (datatype, size))
MPIGPU_TYPES_CALL(Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent),
                  (datatype, lb, extent))
MPIGPU_TYPES_CALL(Type_get_extent_x, (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent),
                  (datatype, lb, extent))
MPIGPU_TYPES_CALL(Type_get_true_extent,
                  (MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent),
                  (datatype, true_lb, true_extent))
MPIGPU_TYPES_CALL(Type_get_true_extent_x,
                  (MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent),
                  (datatype, true_lb, true_extent))
MPIGPU_TYPES_CALL(Type_get_envelope,
                  (MPI_Datatype datatype, int* num_integers, int* num_addresses,
                   int* num_datatypes, int* combiner),
                  (datatype, num_integers, num_addresses, num_datatypes, combiner))
MPIGPU_TYPES_CALL(Type_get_contents,
                  (MPI_Datatype datatype, int max_integers, int max_addresses,
                   int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                   MPI_Datatype array_of_datatypes[]),
                  (datatype, max_integers, max_addresses, max_datatypes, array_of_integers,
                   array_of_addresses, array_of_datatypes))
MPIGPU_TYPES_CALL(Type_set_name, (MPI_Datatype datatype, const char* type_name),
                  (datatype, type_name))
MPIGPU_TYPES_CALL(Type_match_size, (int typeclass, int size, MPI_Datatype* datatype),
                  (typeclass, size, datatype))

extern "C" int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  char core[MPI_MAX_OBJECT_NAME];
  int len = 0;
  if (type_name == nullptr || resultlen == nullptr)
    return mpigpu::mpi::FailWith("MPI_Type_get_name", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "null name or resultlen");
  if (const char* marker = mpigpu::mpi::MarkerName(datatype)) {
    std::strcpy(type_name, marker);
    *resultlen = static_cast<int>(std::strlen(marker));
    return MPI_SUCCESS;
  }
  if (int rc = MPIGPU_Type_get_name(datatype, core, &len); rc != MPI_SUCCESS)
    return Done("MPI_Type_get_name", MPI_COMM_WORLD, rc);
  const std::string name = MpiName(core).substr(0, MPI_MAX_OBJECT_NAME - 1);
  std::memcpy(type_name, name.c_str(), name.size() + 1);
  *resultlen = static_cast<int>(name.size());
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Type_get_name)

// MPI-1 names removed in MPI-3, still called by old codes (MPICH keeps them).
extern "C" int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride,
                                 MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return Done("MPI_Type_hvector", MPI_COMM_WORLD,
              MPIGPU_Type_create_hvector(count, blocklength, stride, oldtype, newtype));
}
MPIGPU_MPI_ALIAS(Type_hvector)
extern "C" int PMPI_Type_hindexed(int count, const int array_of_blocklengths[],
                                  const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype* newtype) {
  return Done("MPI_Type_hindexed", MPI_COMM_WORLD,
              MPIGPU_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements,
                                          oldtype, newtype));
}
MPIGPU_MPI_ALIAS(Type_hindexed)
extern "C" int PMPI_Type_struct(int count, const int array_of_blocklengths[],
                                const MPI_Aint array_of_displacements[],
                                const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  return Done("MPI_Type_struct", MPI_COMM_WORLD,
              mpigpu::mpi::StructWithMarkers(count, array_of_blocklengths,
                                             array_of_displacements, array_of_types, newtype));
}
MPIGPU_MPI_ALIAS(Type_struct)
extern "C" int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  MPI_Aint lb = 0;
  return Done("MPI_Type_extent", MPI_COMM_WORLD, MPIGPU_Type_get_extent(datatype, &lb, extent));
}
MPIGPU_MPI_ALIAS(Type_extent)
extern "C" int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint extent = 0;
  return Done("MPI_Type_lb", MPI_COMM_WORLD,
              MPIGPU_Type_get_extent(datatype, displacement, &extent));
}
MPIGPU_MPI_ALIAS(Type_lb)
extern "C" int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint lb = 0, extent = 0;
  if (displacement == nullptr)
    return mpigpu::mpi::FailWith("MPI_Type_ub", MPI_COMM_WORLD, MPI_ERR_ARG, "null displacement");
  const int rc = MPIGPU_Type_get_extent(datatype, &lb, &extent);
  if (rc == MPI_SUCCESS) *displacement = lb + extent;
  return Done("MPI_Type_ub", MPI_COMM_WORLD, rc);
}
MPIGPU_MPI_ALIAS(Type_ub)

// ---- Pack / Unpack: buffers where they are (device memory included) ----

extern "C" int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                         int outsize, int* position, MPI_Comm comm) {
  using mpigpu::mpi::BufType;
  return Done("MPI_Pack", comm,
              MPIGPU_Pack(inbuf, BufType(inbuf), incount, datatype, outbuf, BufType(outbuf),
                          outsize, position, comm));
}
MPIGPU_MPI_ALIAS(Pack)

extern "C" int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf,
                           int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  using mpigpu::mpi::BufType;
  return Done("MPI_Unpack", comm,
              MPIGPU_Unpack(inbuf, BufType(inbuf), insize, position, outbuf, BufType(outbuf),
                            outcount, datatype, comm));
}
MPIGPU_MPI_ALIAS(Unpack)

MPIGPU_TYPES_CALL(Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size),
                  (incount, datatype, comm, size))

// ---- external32 (host buffers) ----

extern "C" int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount,
                                  MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
                                  MPI_Aint* position) {
  using mpigpu::mpi::BufType;
  return Done("MPI_Pack_external", MPI_COMM_WORLD,
              MPIGPU_Pack_external(datarep, inbuf, BufType(inbuf), incount, datatype, outbuf,
                                   BufType(outbuf), outsize, position));
}
MPIGPU_MPI_ALIAS(Pack_external)
extern "C" int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                                    MPI_Aint* position, void* outbuf, int outcount,
                                    MPI_Datatype datatype) {
  using mpigpu::mpi::BufType;
  return Done("MPI_Unpack_external", MPI_COMM_WORLD,
              MPIGPU_Unpack_external(datarep, inbuf, BufType(inbuf), insize, position, outbuf,
                                     BufType(outbuf), outcount, datatype));
}
MPIGPU_MPI_ALIAS(Unpack_external)
MPIGPU_TYPES_CALL(Pack_external_size,
                  (const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size),
                  (datarep, incount, datatype, size))

// Attributes on datatypes: the core's (attr.cc). MPI_TYPE_DUP_FN is this layer's function, the
// same as the core's; MPI_TYPE_NULL_COPY_FN and _DELETE_FN are null, which the core takes.
MPIGPU_TYPES_CALL(Type_create_keyval,
                  (MPI_Type_copy_attr_function * type_copy_attr_fn,
                   MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                   void* extra_state),
                  (type_copy_attr_fn, type_delete_attr_fn, type_keyval, extra_state))
MPIGPU_TYPES_CALL(Type_free_keyval, (int* type_keyval), (type_keyval))
MPIGPU_TYPES_CALL(Type_set_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val),
                  (datatype, type_keyval, attribute_val))
MPIGPU_TYPES_CALL(Type_get_attr,
                  (MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag),
                  (datatype, type_keyval, attribute_val, flag))
MPIGPU_TYPES_CALL(Type_delete_attr, (MPI_Datatype datatype, int type_keyval),
                  (datatype, type_keyval))

// Placeholders for the types calls (the first few map to the core calls that exist) of mpi.h that are not written yet: each returns
// MPI_ERR_UNSUPPORTED_OPERATION naming itself (through the communicator's error handler).
// The area's owner replaces this file with the real calls.
#include "mpi/mpi_internal.h"

extern "C" int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return mpigpu::mpi::Done("MPI_Type_contiguous", MPI_COMM_WORLD, MPIGPU_Type_contiguous(count, oldtype, newtype));
}
MPIGPU_MPI_ALIAS(Type_contiguous)

extern "C" int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  return mpigpu::mpi::Done("MPI_Type_vector", MPI_COMM_WORLD,
                          MPIGPU_Type_vector(count, blocklength, stride, oldtype, newtype));
}
MPIGPU_MPI_ALIAS(Type_vector)

extern "C" int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)count;
  (void)blocklength;
  (void)stride;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_hvector", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_hvector)

extern "C" int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)count;
  (void)blocklength;
  (void)stride;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_create_hvector", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_hvector)

extern "C" int PMPI_Type_indexed(int count, const int array_of_blocklengths[], const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)count;
  (void)array_of_blocklengths;
  (void)array_of_displacements;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_indexed", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_indexed)

extern "C" int PMPI_Type_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)count;
  (void)array_of_blocklengths;
  (void)array_of_displacements;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_hindexed", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_hindexed)

extern "C" int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)count;
  (void)array_of_blocklengths;
  (void)array_of_displacements;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_create_hindexed", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_hindexed)

extern "C" int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)count;
  (void)blocklength;
  (void)array_of_displacements;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_create_indexed_block", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_indexed_block)

extern "C" int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint array_of_displacements[], MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)count;
  (void)blocklength;
  (void)array_of_displacements;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_create_hindexed_block", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_hindexed_block)

extern "C" int PMPI_Type_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  (void)count;
  (void)array_of_blocklengths;
  (void)array_of_displacements;
  (void)array_of_types;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_struct", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_struct)

extern "C" int PMPI_Type_create_struct(int count, const int array_of_blocklengths[], const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[], MPI_Datatype* newtype) {
  (void)count;
  (void)array_of_blocklengths;
  (void)array_of_displacements;
  (void)array_of_types;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_create_struct", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_struct)

extern "C" int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[], const int array_of_starts[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)ndims;
  (void)array_of_sizes;
  (void)array_of_subsizes;
  (void)array_of_starts;
  (void)order;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_create_subarray", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_subarray)

extern "C" int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)size;
  (void)rank;
  (void)ndims;
  (void)array_of_gsizes;
  (void)array_of_distribs;
  (void)array_of_dargs;
  (void)array_of_psizes;
  (void)order;
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_create_darray", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_darray)

extern "C" int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* newtype) {
  (void)oldtype;
  (void)lb;
  (void)extent;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_create_resized", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_resized)

extern "C" int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  (void)oldtype;
  (void)newtype;
  return mpigpu::mpi::Unsupported("MPI_Type_dup", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_dup)

extern "C" int PMPI_Type_commit(MPI_Datatype* datatype) {
  return mpigpu::mpi::Done("MPI_Type_commit", MPI_COMM_WORLD, MPIGPU_Type_commit(datatype));
}
MPIGPU_MPI_ALIAS(Type_commit)

extern "C" int PMPI_Type_free(MPI_Datatype* datatype) {
  return mpigpu::mpi::Done("MPI_Type_free", MPI_COMM_WORLD, MPIGPU_Type_free(datatype));
}
MPIGPU_MPI_ALIAS(Type_free)

extern "C" int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  return mpigpu::mpi::Done("MPI_Type_size", MPI_COMM_WORLD, MPIGPU_Type_size(datatype, size));
}
MPIGPU_MPI_ALIAS(Type_size)

extern "C" int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  (void)datatype;
  (void)size;
  return mpigpu::mpi::Unsupported("MPI_Type_size_x", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_size_x)

extern "C" int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  return mpigpu::mpi::Done("MPI_Type_get_extent", MPI_COMM_WORLD, MPIGPU_Type_get_extent(datatype, lb, extent));
}
MPIGPU_MPI_ALIAS(Type_get_extent)

extern "C" int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  (void)datatype;
  (void)lb;
  (void)extent;
  return mpigpu::mpi::Unsupported("MPI_Type_get_extent_x", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_get_extent_x)

extern "C" int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  (void)datatype;
  (void)true_lb;
  (void)true_extent;
  return mpigpu::mpi::Unsupported("MPI_Type_get_true_extent", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_get_true_extent)

extern "C" int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  (void)datatype;
  (void)true_lb;
  (void)true_extent;
  return mpigpu::mpi::Unsupported("MPI_Type_get_true_extent_x", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_get_true_extent_x)

extern "C" int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  (void)datatype;
  (void)extent;
  return mpigpu::mpi::Unsupported("MPI_Type_extent", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_extent)

extern "C" int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  (void)datatype;
  (void)displacement;
  return mpigpu::mpi::Unsupported("MPI_Type_lb", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_lb)

extern "C" int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  (void)datatype;
  (void)displacement;
  return mpigpu::mpi::Unsupported("MPI_Type_ub", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_ub)

extern "C" int PMPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses, int* num_datatypes, int* combiner) {
  (void)datatype;
  (void)num_integers;
  (void)num_addresses;
  (void)num_datatypes;
  (void)combiner;
  return mpigpu::mpi::Unsupported("MPI_Type_get_envelope", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_get_envelope)

extern "C" int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[]) {
  (void)datatype;
  (void)max_integers;
  (void)max_addresses;
  (void)max_datatypes;
  (void)array_of_integers;
  (void)array_of_addresses;
  (void)array_of_datatypes;
  return mpigpu::mpi::Unsupported("MPI_Type_get_contents", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_get_contents)

extern "C" int PMPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  (void)datatype;
  (void)type_name;
  return mpigpu::mpi::Unsupported("MPI_Type_set_name", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_set_name)

extern "C" int PMPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  (void)datatype;
  (void)type_name;
  (void)resultlen;
  return mpigpu::mpi::Unsupported("MPI_Type_get_name", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_get_name)

extern "C" int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  (void)typeclass;
  (void)size;
  (void)datatype;
  return mpigpu::mpi::Unsupported("MPI_Type_match_size", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_match_size)

extern "C" int PMPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn, MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval, void* extra_state) {
  (void)type_copy_attr_fn;
  (void)type_delete_attr_fn;
  (void)type_keyval;
  (void)extra_state;
  return mpigpu::mpi::Unsupported("MPI_Type_create_keyval", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_create_keyval)

extern "C" int PMPI_Type_free_keyval(int* type_keyval) {
  (void)type_keyval;
  return mpigpu::mpi::Unsupported("MPI_Type_free_keyval", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_free_keyval)

extern "C" int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  (void)datatype;
  (void)type_keyval;
  (void)attribute_val;
  return mpigpu::mpi::Unsupported("MPI_Type_set_attr", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_set_attr)

extern "C" int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  (void)datatype;
  (void)type_keyval;
  (void)attribute_val;
  (void)flag;
  return mpigpu::mpi::Unsupported("MPI_Type_get_attr", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_get_attr)

extern "C" int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  (void)datatype;
  (void)type_keyval;
  return mpigpu::mpi::Unsupported("MPI_Type_delete_attr", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Type_delete_attr)

extern "C" int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize, int* position, MPI_Comm comm) {
  (void)inbuf;
  (void)incount;
  (void)datatype;
  (void)outbuf;
  (void)outsize;
  (void)position;
  return mpigpu::mpi::Unsupported("MPI_Pack", comm);
}
MPIGPU_MPI_ALIAS(Pack)

extern "C" int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount, MPI_Datatype datatype, MPI_Comm comm) {
  (void)inbuf;
  (void)insize;
  (void)position;
  (void)outbuf;
  (void)outcount;
  (void)datatype;
  return mpigpu::mpi::Unsupported("MPI_Unpack", comm);
}
MPIGPU_MPI_ALIAS(Unpack)

extern "C" int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  (void)incount;
  (void)datatype;
  (void)size;
  return mpigpu::mpi::Unsupported("MPI_Pack_size", comm);
}
MPIGPU_MPI_ALIAS(Pack_size)

extern "C" int PMPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
  (void)datarep;
  (void)inbuf;
  (void)incount;
  (void)datatype;
  (void)outbuf;
  (void)outsize;
  (void)position;
  return mpigpu::mpi::Unsupported("MPI_Pack_external", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Pack_external)

extern "C" int PMPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize, MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype) {
  (void)datarep;
  (void)inbuf;
  (void)insize;
  (void)position;
  (void)outbuf;
  (void)outcount;
  (void)datatype;
  return mpigpu::mpi::Unsupported("MPI_Unpack_external", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Unpack_external)

extern "C" int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype, MPI_Aint* size) {
  (void)datarep;
  (void)incount;
  (void)datatype;
  (void)size;
  return mpigpu::mpi::Unsupported("MPI_Pack_external_size", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Pack_external_size)

// Placeholders for the comm calls of mpi.h that are not written yet: each returns
// MPI_ERR_UNSUPPORTED_OPERATION naming itself (through the communicator's error handler).
// The area's owner replaces this file with the real calls.
#include "mpi/mpi_internal.h"

extern "C" int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  (void)info;
  (void)newcomm;
  return mpigpu::mpi::Unsupported("MPI_Comm_dup_with_info", comm);
}
MPIGPU_MPI_ALIAS(Comm_dup_with_info)

extern "C" int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  (void)newcomm;
  (void)request;
  return mpigpu::mpi::Unsupported("MPI_Comm_idup", comm);
}
MPIGPU_MPI_ALIAS(Comm_idup)

extern "C" int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  (void)split_type;
  (void)key;
  (void)info;
  (void)newcomm;
  return mpigpu::mpi::Unsupported("MPI_Comm_split_type", comm);
}
MPIGPU_MPI_ALIAS(Comm_split_type)

extern "C" int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  (void)group;
  (void)newcomm;
  return mpigpu::mpi::Unsupported("MPI_Comm_create", comm);
}
MPIGPU_MPI_ALIAS(Comm_create)

extern "C" int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  (void)group;
  (void)tag;
  (void)newcomm;
  return mpigpu::mpi::Unsupported("MPI_Comm_create_group", comm);
}
MPIGPU_MPI_ALIAS(Comm_create_group)

extern "C" int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  (void)comm1;
  (void)comm2;
  (void)result;
  return mpigpu::mpi::Unsupported("MPI_Comm_compare", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Comm_compare)

extern "C" int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  (void)group;
  return mpigpu::mpi::Unsupported("MPI_Comm_group", comm);
}
MPIGPU_MPI_ALIAS(Comm_group)

extern "C" int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  (void)flag;
  return mpigpu::mpi::Unsupported("MPI_Comm_test_inter", comm);
}
MPIGPU_MPI_ALIAS(Comm_test_inter)

extern "C" int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  (void)size;
  return mpigpu::mpi::Unsupported("MPI_Comm_remote_size", comm);
}
MPIGPU_MPI_ALIAS(Comm_remote_size)

extern "C" int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  (void)group;
  return mpigpu::mpi::Unsupported("MPI_Comm_remote_group", comm);
}
MPIGPU_MPI_ALIAS(Comm_remote_group)

extern "C" int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag, MPI_Comm* newintercomm) {
  (void)local_leader;
  (void)peer_comm;
  (void)remote_leader;
  (void)tag;
  (void)newintercomm;
  return mpigpu::mpi::Unsupported("MPI_Intercomm_create", local_comm);
}
MPIGPU_MPI_ALIAS(Intercomm_create)

extern "C" int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  (void)high;
  (void)newintracomm;
  return mpigpu::mpi::Unsupported("MPI_Intercomm_merge", intercomm);
}
MPIGPU_MPI_ALIAS(Intercomm_merge)

extern "C" int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  (void)comm_name;
  return mpigpu::mpi::Unsupported("MPI_Comm_set_name", comm);
}
MPIGPU_MPI_ALIAS(Comm_set_name)

extern "C" int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  (void)comm_name;
  (void)resultlen;
  return mpigpu::mpi::Unsupported("MPI_Comm_get_name", comm);
}
MPIGPU_MPI_ALIAS(Comm_get_name)

extern "C" int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  (void)info;
  return mpigpu::mpi::Unsupported("MPI_Comm_set_info", comm);
}
MPIGPU_MPI_ALIAS(Comm_set_info)

extern "C" int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  (void)info_used;
  return mpigpu::mpi::Unsupported("MPI_Comm_get_info", comm);
}
MPIGPU_MPI_ALIAS(Comm_get_info)

extern "C" int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn, MPI_Comm_delete_attr_function* comm_delete_attr_fn, int* comm_keyval, void* extra_state) {
  (void)comm_copy_attr_fn;
  (void)comm_delete_attr_fn;
  (void)comm_keyval;
  (void)extra_state;
  return mpigpu::mpi::Unsupported("MPI_Comm_create_keyval", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Comm_create_keyval)

extern "C" int PMPI_Comm_free_keyval(int* comm_keyval) {
  (void)comm_keyval;
  return mpigpu::mpi::Unsupported("MPI_Comm_free_keyval", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Comm_free_keyval)

extern "C" int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  (void)comm_keyval;
  (void)attribute_val;
  return mpigpu::mpi::Unsupported("MPI_Comm_set_attr", comm);
}
MPIGPU_MPI_ALIAS(Comm_set_attr)

extern "C" int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  (void)comm_keyval;
  (void)attribute_val;
  (void)flag;
  return mpigpu::mpi::Unsupported("MPI_Comm_get_attr", comm);
}
MPIGPU_MPI_ALIAS(Comm_get_attr)

extern "C" int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  (void)comm_keyval;
  return mpigpu::mpi::Unsupported("MPI_Comm_delete_attr", comm);
}
MPIGPU_MPI_ALIAS(Comm_delete_attr)

extern "C" int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval, void* extra_state) {
  (void)copy_fn;
  (void)delete_fn;
  (void)keyval;
  (void)extra_state;
  return mpigpu::mpi::Unsupported("MPI_Keyval_create", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Keyval_create)

extern "C" int PMPI_Keyval_free(int* keyval) {
  (void)keyval;
  return mpigpu::mpi::Unsupported("MPI_Keyval_free", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Keyval_free)

extern "C" int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  (void)keyval;
  (void)attribute_val;
  return mpigpu::mpi::Unsupported("MPI_Attr_put", comm);
}
MPIGPU_MPI_ALIAS(Attr_put)

extern "C" int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  (void)keyval;
  (void)attribute_val;
  (void)flag;
  return mpigpu::mpi::Unsupported("MPI_Attr_get", comm);
}
MPIGPU_MPI_ALIAS(Attr_get)

extern "C" int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  (void)keyval;
  return mpigpu::mpi::Unsupported("MPI_Attr_delete", comm);
}
MPIGPU_MPI_ALIAS(Attr_delete)

extern "C" int PMPI_Group_size(MPI_Group group, int* size) {
  (void)group;
  (void)size;
  return mpigpu::mpi::Unsupported("MPI_Group_size", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_size)

extern "C" int PMPI_Group_rank(MPI_Group group, int* rank) {
  (void)group;
  (void)rank;
  return mpigpu::mpi::Unsupported("MPI_Group_rank", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_rank)

extern "C" int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]) {
  (void)group1;
  (void)n;
  (void)ranks1;
  (void)group2;
  (void)ranks2;
  return mpigpu::mpi::Unsupported("MPI_Group_translate_ranks", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_translate_ranks)

extern "C" int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  (void)group1;
  (void)group2;
  (void)result;
  return mpigpu::mpi::Unsupported("MPI_Group_compare", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_compare)

extern "C" int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  (void)group1;
  (void)group2;
  (void)newgroup;
  return mpigpu::mpi::Unsupported("MPI_Group_union", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_union)

extern "C" int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  (void)group1;
  (void)group2;
  (void)newgroup;
  return mpigpu::mpi::Unsupported("MPI_Group_intersection", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_intersection)

extern "C" int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  (void)group1;
  (void)group2;
  (void)newgroup;
  return mpigpu::mpi::Unsupported("MPI_Group_difference", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_difference)

extern "C" int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  (void)group;
  (void)n;
  (void)ranks;
  (void)newgroup;
  return mpigpu::mpi::Unsupported("MPI_Group_incl", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_incl)

extern "C" int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  (void)group;
  (void)n;
  (void)ranks;
  (void)newgroup;
  return mpigpu::mpi::Unsupported("MPI_Group_excl", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_excl)

extern "C" int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  (void)group;
  (void)n;
  (void)ranges;
  (void)newgroup;
  return mpigpu::mpi::Unsupported("MPI_Group_range_incl", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_range_incl)

extern "C" int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  (void)group;
  (void)n;
  (void)ranges;
  (void)newgroup;
  return mpigpu::mpi::Unsupported("MPI_Group_range_excl", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_range_excl)

extern "C" int PMPI_Group_free(MPI_Group* group) {
  (void)group;
  return mpigpu::mpi::Unsupported("MPI_Group_free", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Group_free)

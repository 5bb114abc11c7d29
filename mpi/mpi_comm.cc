// The MPI calls of communicators, groups, attributes and intercommunicators: thin over the
// core's (mpigpu_api/comm.cc, group.cc, attr.cc, intercomm.cc). What this layer adds: MPI's
// predefined attribute keys (MPI_TAG_UB, ...) mapped to the core's, MPI_LASTUSEDCODE from this
// layer's added error codes, the MPI-1 attribute calls (Keyval_create, Attr_put, ...), and
// requests for Comm_idup. Info hints are accepted and ignored (MPI allows it).
#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {
int LastUsedCode();  // mpi_errors.cc
namespace {

// MPI's predefined keys (MPICH's values, which programs may print) as the core's.
int CoreKey(int keyval) {
  switch (keyval) {
    case MPI_TAG_UB: return MPIGPU_KEYVAL_TAG_UB;
    case MPI_HOST: return MPIGPU_KEYVAL_HOST;
    case MPI_IO: return MPIGPU_KEYVAL_IO;
    case MPI_WTIME_IS_GLOBAL: return MPIGPU_KEYVAL_WTIME_IS_GLOBAL;
    case MPI_UNIVERSE_SIZE: return MPIGPU_KEYVAL_UNIVERSE_SIZE;
    case MPI_APPNUM: return MPIGPU_KEYVAL_APPNUM;
    case MPI_LASTUSEDCODE: return MPIGPU_KEYVAL_LASTUSEDCODE;
    default: return keyval;
  }
}

int GetAttr(const char* fn, MPI_Comm comm, int keyval, void* value, int* flag) {
  if (keyval == MPI_LASTUSEDCODE && value != nullptr && flag != nullptr) {
    // The core does not know this layer's added codes.
    int size = 0;
    if (int rc = MPIGPU_Comm_size(comm, &size); rc != MPI_SUCCESS) return Done(fn, comm, rc);
    static int last;
    last = LastUsedCode();
    *static_cast<void**>(value) = &last;
    *flag = 1;
    return MPI_SUCCESS;
  }
  return Done(fn, comm, MPIGPU_Comm_get_attr(comm, CoreKey(keyval), value, flag));
}

}  // namespace
}  // namespace mpigpu::mpi

using mpigpu::mpi::Done;

// ---- communicators ----

extern "C" int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  (void)info;  // hints are ignored
  return Done("MPI_Comm_dup_with_info", comm, MPIGPU_Comm_dup(comm, newcomm));
}
MPIGPU_MPI_ALIAS(Comm_dup_with_info)

// Nonblocking (the core's request completes when the new communicator is registered).
extern "C" int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  return mpigpu::mpi::StartCoreRequest("MPI_Comm_idup", comm, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Comm_idup(comm, newcomm, core);
  });
}
MPIGPU_MPI_ALIAS(Comm_idup)

extern "C" int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                                        MPI_Request* request) {
  (void)info;  // hints are ignored
  return PMPI_Comm_idup(comm, newcomm, request);
}
MPIGPU_MPI_ALIAS(Comm_idup_with_info)

extern "C" int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                    MPI_Comm* newcomm) {
  return Done("MPI_Comm_split_type", comm,
              MPIGPU_Comm_split_type(comm, split_type, key, info, newcomm));
}
MPIGPU_MPI_ALIAS(Comm_split_type)

extern "C" int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return Done("MPI_Comm_create", comm, MPIGPU_Comm_create(comm, group, newcomm));
}
MPIGPU_MPI_ALIAS(Comm_create)

extern "C" int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return Done("MPI_Comm_create_group", comm, MPIGPU_Comm_create_group(comm, group, tag, newcomm));
}
MPIGPU_MPI_ALIAS(Comm_create_group)

extern "C" int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  return Done("MPI_Comm_compare", comm1, MPIGPU_Comm_compare(comm1, comm2, result));
}
MPIGPU_MPI_ALIAS(Comm_compare)

extern "C" int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  return Done("MPI_Comm_group", comm, MPIGPU_Comm_group(comm, group));
}
MPIGPU_MPI_ALIAS(Comm_group)

extern "C" int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  return Done("MPI_Comm_test_inter", comm, MPIGPU_Comm_test_inter(comm, flag));
}
MPIGPU_MPI_ALIAS(Comm_test_inter)

extern "C" int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  return Done("MPI_Comm_remote_size", comm, MPIGPU_Comm_remote_size(comm, size));
}
MPIGPU_MPI_ALIAS(Comm_remote_size)

extern "C" int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  return Done("MPI_Comm_remote_group", comm, MPIGPU_Comm_remote_group(comm, group));
}
MPIGPU_MPI_ALIAS(Comm_remote_group)

extern "C" int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                     int remote_leader, int tag, MPI_Comm* newintercomm) {
  return Done("MPI_Intercomm_create", local_comm,
              MPIGPU_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag,
                                      newintercomm));
}
MPIGPU_MPI_ALIAS(Intercomm_create)

extern "C" int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return Done("MPI_Intercomm_merge", intercomm,
              MPIGPU_Intercomm_merge(intercomm, high, newintracomm));
}
MPIGPU_MPI_ALIAS(Intercomm_merge)

extern "C" int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  return Done("MPI_Comm_set_name", comm, MPIGPU_Comm_set_name(comm, comm_name));
}
MPIGPU_MPI_ALIAS(Comm_set_name)

extern "C" int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  return Done("MPI_Comm_get_name", comm, MPIGPU_Comm_get_name(comm, comm_name, resultlen));
}
MPIGPU_MPI_ALIAS(Comm_get_name)

// Hints are ignored (MPI allows it): setting checks the communicator only.
extern "C" int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  (void)info;
  int flag = 0;
  return Done("MPI_Comm_set_info", comm, MPIGPU_Comm_test_inter(comm, &flag));
}
MPIGPU_MPI_ALIAS(Comm_set_info)

// No hint is in use: a new empty info object.
extern "C" int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  int flag = 0;
  if (int rc = MPIGPU_Comm_test_inter(comm, &flag); rc != MPI_SUCCESS)
    return Done("MPI_Comm_get_info", comm, rc);
  return PMPI_Info_create(info_used);
}
MPIGPU_MPI_ALIAS(Comm_get_info)

// ---- attributes ----

extern "C" int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                                       MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                                       int* comm_keyval, void* extra_state) {
  // MPI_COMM_DUP_FN is this layer's function, the same as the core's.
  return Done("MPI_Comm_create_keyval", MPI_COMM_WORLD,
              MPIGPU_Comm_create_keyval(comm_copy_attr_fn, comm_delete_attr_fn, comm_keyval,
                                        extra_state));
}
MPIGPU_MPI_ALIAS(Comm_create_keyval)

extern "C" int PMPI_Comm_free_keyval(int* comm_keyval) {
  return Done("MPI_Comm_free_keyval", MPI_COMM_WORLD, MPIGPU_Comm_free_keyval(comm_keyval));
}
MPIGPU_MPI_ALIAS(Comm_free_keyval)

extern "C" int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  return Done("MPI_Comm_set_attr", comm,
              MPIGPU_Comm_set_attr(comm, mpigpu::mpi::CoreKey(comm_keyval), attribute_val));
}
MPIGPU_MPI_ALIAS(Comm_set_attr)

extern "C" int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return mpigpu::mpi::GetAttr("MPI_Comm_get_attr", comm, comm_keyval, attribute_val, flag);
}
MPIGPU_MPI_ALIAS(Comm_get_attr)

extern "C" int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  return Done("MPI_Comm_delete_attr", comm,
              MPIGPU_Comm_delete_attr(comm, mpigpu::mpi::CoreKey(comm_keyval)));
}
MPIGPU_MPI_ALIAS(Comm_delete_attr)

// The MPI-1 names of the same calls (C: the same callback types).
extern "C" int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn,
                                  int* keyval, void* extra_state) {
  return Done("MPI_Keyval_create", MPI_COMM_WORLD,
              MPIGPU_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state));
}
MPIGPU_MPI_ALIAS(Keyval_create)

extern "C" int PMPI_Keyval_free(int* keyval) {
  return Done("MPI_Keyval_free", MPI_COMM_WORLD, MPIGPU_Comm_free_keyval(keyval));
}
MPIGPU_MPI_ALIAS(Keyval_free)

extern "C" int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return Done("MPI_Attr_put", comm,
              MPIGPU_Comm_set_attr(comm, mpigpu::mpi::CoreKey(keyval), attribute_val));
}
MPIGPU_MPI_ALIAS(Attr_put)

extern "C" int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return mpigpu::mpi::GetAttr("MPI_Attr_get", comm, keyval, attribute_val, flag);
}
MPIGPU_MPI_ALIAS(Attr_get)

extern "C" int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  return Done("MPI_Attr_delete", comm,
              MPIGPU_Comm_delete_attr(comm, mpigpu::mpi::CoreKey(keyval)));
}
MPIGPU_MPI_ALIAS(Attr_delete)

// ---- groups (no communicator: errors go to MPI_COMM_WORLD's handler) ----

#define GROUP_CALL(name, call) return Done("MPI_" name, MPI_COMM_WORLD, (call))

extern "C" int PMPI_Group_size(MPI_Group group, int* size) {
  GROUP_CALL("Group_size", MPIGPU_Group_size(group, size));
}
MPIGPU_MPI_ALIAS(Group_size)

extern "C" int PMPI_Group_rank(MPI_Group group, int* rank) {
  GROUP_CALL("Group_rank", MPIGPU_Group_rank(group, rank));
}
MPIGPU_MPI_ALIAS(Group_rank)

extern "C" int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                                          MPI_Group group2, int ranks2[]) {
  GROUP_CALL("Group_translate_ranks",
             MPIGPU_Group_translate_ranks(group1, n, ranks1, group2, ranks2));
}
MPIGPU_MPI_ALIAS(Group_translate_ranks)

extern "C" int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  GROUP_CALL("Group_compare", MPIGPU_Group_compare(group1, group2, result));
}
MPIGPU_MPI_ALIAS(Group_compare)

extern "C" int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  GROUP_CALL("Group_union", MPIGPU_Group_union(group1, group2, newgroup));
}
MPIGPU_MPI_ALIAS(Group_union)

extern "C" int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  GROUP_CALL("Group_intersection", MPIGPU_Group_intersection(group1, group2, newgroup));
}
MPIGPU_MPI_ALIAS(Group_intersection)

extern "C" int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  GROUP_CALL("Group_difference", MPIGPU_Group_difference(group1, group2, newgroup));
}
MPIGPU_MPI_ALIAS(Group_difference)

extern "C" int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  GROUP_CALL("Group_incl", MPIGPU_Group_incl(group, n, ranks, newgroup));
}
MPIGPU_MPI_ALIAS(Group_incl)

extern "C" int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  GROUP_CALL("Group_excl", MPIGPU_Group_excl(group, n, ranks, newgroup));
}
MPIGPU_MPI_ALIAS(Group_excl)

extern "C" int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3],
                                     MPI_Group* newgroup) {
  GROUP_CALL("Group_range_incl", MPIGPU_Group_range_incl(group, n, ranges, newgroup));
}
MPIGPU_MPI_ALIAS(Group_range_incl)

extern "C" int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3],
                                     MPI_Group* newgroup) {
  GROUP_CALL("Group_range_excl", MPIGPU_Group_range_excl(group, n, ranges, newgroup));
}
MPIGPU_MPI_ALIAS(Group_range_excl)

extern "C" int PMPI_Group_free(MPI_Group* group) {
  GROUP_CALL("Group_free", MPIGPU_Group_free(group));
}
MPIGPU_MPI_ALIAS(Group_free)

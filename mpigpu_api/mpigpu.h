/* mpigpu.h: the public C API of mpigpu, a GPU-aware MPI-like message layer.
 *
 * Usable from C (C89 and later) and C++. Every call returns an error code (MPIGPU_SUCCESS or an
 * MPIGPU_ERR_* class) except MPIGPU_Wtime. Every buffer argument travels with a buffer-type tag
 * (MPIGPU_BUF_HOST, MPIGPU_BUF_GPU, MPIGPU_BUF_GPU_DEVICE(n)) that says where the memory lives,
 * so no call has to ask the CUDA driver about a pointer.
 *
 * Errors: the default handler of every communicator is MPIGPU_ERRORS_ARE_FATAL (print the error
 * and abort the job); MPIGPU_Comm_set_errhandler(comm, MPIGPU_ERRORS_RETURN) makes calls on that
 * communicator return the code instead. Error codes are equal to their error classes;
 * MPIGPU_Error_string adds the detail of the calling thread's latest failure of that class.
 *
 * Thread support: calls may come from several threads of one process. */
#ifndef MPIGPU_MPIGPU_H_
#define MPIGPU_MPIGPU_H_

#include <stddef.h> /* size_t, ptrdiff_t */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- handles ---- */

typedef int MPIGPU_Comm;
typedef int MPIGPU_Datatype;
typedef int MPIGPU_Op;
/* A request handle is an opaque value, not a pointer to memory: copy it, compare it with
 * MPIGPU_REQUEST_NULL, never dereference it. It names its request from the call that starts it
 * (Isend, Irecv) until the call that completes or frees it (Wait, Test, Waitall, Waitany,
 * Testall, Request_free); from then on that handle, and every copy of it, is stale. Every call
 * given a stale or forged handle returns MPIGPU_ERR_REQUEST and touches no request, even when
 * mpigpu has reused the request's internal object for a newer request. (Threads that wait on
 * copies of one handle at once: one completes the request, the others get ERR_REQUEST.) */
typedef struct mpigpu_request* MPIGPU_Request;
typedef int MPIGPU_Errhandler;
typedef int MPIGPU_Buftype;
typedef int MPIGPU_Group;
/* Info objects are not implemented: calls that take one accept MPIGPU_INFO_NULL (or any value,
 * which is ignored). */
typedef int MPIGPU_Info;
/* Byte displacements and extents (as MPI_Aint): signed, as wide as a pointer. */
typedef ptrdiff_t MPIGPU_Aint;
/* Large counts and byte sizes (as MPI_Count). (__extension__: the header stays C89-clean.) */
#if defined(__GNUC__)
__extension__ typedef long long MPIGPU_Count;
#else
typedef long long MPIGPU_Count;
#endif

#define MPIGPU_COMM_WORLD ((MPIGPU_Comm)0)
#define MPIGPU_COMM_SELF ((MPIGPU_Comm)1)
#define MPIGPU_COMM_NULL ((MPIGPU_Comm)-1)
#define MPIGPU_REQUEST_NULL ((MPIGPU_Request)0)
#define MPIGPU_DATATYPE_NULL ((MPIGPU_Datatype)-1)
#define MPIGPU_OP_NULL ((MPIGPU_Op)-1)
#define MPIGPU_ERRHANDLER_NULL ((MPIGPU_Errhandler)-1)
#define MPIGPU_ERRORS_ARE_FATAL ((MPIGPU_Errhandler)0)
#define MPIGPU_ERRORS_RETURN ((MPIGPU_Errhandler)1)
#define MPIGPU_GROUP_NULL ((MPIGPU_Group)-1)
#define MPIGPU_GROUP_EMPTY ((MPIGPU_Group)0)
#define MPIGPU_INFO_NULL ((MPIGPU_Info)-1)

/* ---- buffer-type tags ---- */

/* Host memory (pageable or pinned). */
#define MPIGPU_BUF_HOST ((MPIGPU_Buftype)0)
/* Device memory of the calling thread's current CUDA device (cudaGetDevice at the call). */
#define MPIGPU_BUF_GPU ((MPIGPU_Buftype)1)
/* Device memory of CUDA device n (0 <= n < MPIGPU_BUF_MAX_DEVICES), named explicitly. */
#define MPIGPU_BUF_GPU_DEVICE(n) ((MPIGPU_Buftype)(0x100 + (n)))
#define MPIGPU_BUF_MAX_DEVICES 256
/* Nonzero when t is one of the tags above. */
#define MPIGPU_BUFTYPE_IS_VALID(t)                      \
  ((t) == MPIGPU_BUF_HOST || (t) == MPIGPU_BUF_GPU ||   \
   ((t) >= 0x100 && (t) < 0x100 + MPIGPU_BUF_MAX_DEVICES))
/* Nonzero when t names device memory (either GPU form). */
#define MPIGPU_BUFTYPE_IS_GPU(t) (MPIGPU_BUFTYPE_IS_VALID(t) && (t) != MPIGPU_BUF_HOST)

/* ---- special values ---- */

#define MPIGPU_ANY_SOURCE (-2)
#define MPIGPU_ANY_TAG (-1)
#define MPIGPU_PROC_NULL (-3)
/* The root argument of a rooted collective on an intercommunicator at the root itself. */
#define MPIGPU_ROOT (-4)
/* Largest user tag: valid tags are 0..MPIGPU_TAG_UB. */
#define MPIGPU_TAG_UB ((1 << 30) - 1)
#define MPIGPU_UNDEFINED (-32766)
#define MPIGPU_SUCCESS 0
#define MPIGPU_MAX_ERROR_STRING 512

/* Status of a completed receive (or probe). Fields after MPIGPU_ERROR are private: read them
 * through MPIGPU_Get_count. */
typedef struct {
  int MPIGPU_SOURCE;
  int MPIGPU_TAG;
  int MPIGPU_ERROR;
  /* private: */
  size_t count_bytes;
  int cancelled;
} MPIGPU_Status;

#define MPIGPU_STATUS_IGNORE ((MPIGPU_Status*)0)
#define MPIGPU_STATUSES_IGNORE ((MPIGPU_Status*)0)

/* ---- error classes (codes are equal to classes) ---- */

#define MPIGPU_ERR_RANK 1            /* rank out of range for the communicator */
#define MPIGPU_ERR_COUNT 2           /* negative or too large count */
#define MPIGPU_ERR_TAG 3             /* tag outside 0..MPIGPU_TAG_UB (or a misplaced wildcard) */
#define MPIGPU_ERR_TYPE 4            /* bad, freed or uncommitted datatype */
#define MPIGPU_ERR_BUFFER 5          /* bad buffer pointer or buffer-type tag */
#define MPIGPU_ERR_COMM 6            /* bad or freed communicator */
#define MPIGPU_ERR_REQUEST 7         /* bad request handle */
#define MPIGPU_ERR_TRUNCATE 8        /* message longer than the receive buffer */
#define MPIGPU_ERR_PROC_FAILED 9     /* a peer process died */
#define MPIGPU_ERR_NO_GPU 10         /* device memory named but no usable CUDA device */
#define MPIGPU_ERR_INTERN 11         /* internal error (a bug) or resources exhausted */
#define MPIGPU_ERR_OTHER 12          /* failure of CUDA, the OS or a timeout */
#define MPIGPU_ERR_ARG 13            /* some other argument is invalid */
#define MPIGPU_ERR_OP 14             /* bad reduction operation (or op not defined for the type) */
#define MPIGPU_ERR_NOT_INITIALIZED 15 /* called before MPIGPU_Init or after MPIGPU_Finalize */
/* The classes below exist for the MPI interface (mpi.h names them MPI_ERR_*). */
#define MPIGPU_ERR_ROOT 16           /* invalid root rank */
#define MPIGPU_ERR_GROUP 17          /* invalid group */
#define MPIGPU_ERR_TOPOLOGY 18       /* invalid or missing topology */
#define MPIGPU_ERR_DIMS 19           /* invalid dimensions */
#define MPIGPU_ERR_UNKNOWN 20        /* unknown error */
#define MPIGPU_ERR_IN_STATUS 21      /* see the MPIGPU_ERROR field of each status */
#define MPIGPU_ERR_PENDING 22        /* request still pending (not failed) */
#define MPIGPU_ERR_KEYVAL 23         /* invalid attribute key */
#define MPIGPU_ERR_INFO 24           /* invalid info object */
#define MPIGPU_ERR_INFO_KEY 25       /* info key too long or empty */
#define MPIGPU_ERR_INFO_VALUE 26     /* info value too long or empty */
#define MPIGPU_ERR_INFO_NOKEY 27     /* no such info key */
#define MPIGPU_ERR_NO_MEM 28         /* out of memory */
#define MPIGPU_ERR_UNSUPPORTED_OPERATION 29 /* not supported by mpigpu */
/* One-sided communication (windows). */
#define MPIGPU_ERR_WIN 30            /* bad or freed window */
#define MPIGPU_ERR_RMA_RANGE 31      /* target displacement and size outside the window */
#define MPIGPU_ERR_RMA_SYNC 32       /* call outside its epoch (op without lock, unlock without lock) */
#define MPIGPU_ERR_RMA_CONFLICT 33   /* conflicting epochs or accesses */
#define MPIGPU_ERR_RMA_ATTACH 34     /* attach/detach refused (overlap, not attached, wrong flavor) */
#define MPIGPU_ERR_RMA_FLAVOR 35     /* call not valid for the window's flavor */
#define MPIGPU_ERR_LOCKTYPE 36       /* lock type neither shared nor exclusive */
#define MPIGPU_ERR_ASSERT 37         /* invalid assertion bits */
#define MPIGPU_ERR_DISP 38           /* invalid displacement unit */
#define MPIGPU_ERR_SIZE 39           /* invalid window size */
#define MPIGPU_ERR_LASTCODE 39       /* largest valid error code */

/* ---- predefined datatypes ---- */

#define MPIGPU_BYTE ((MPIGPU_Datatype)0)
#define MPIGPU_CHAR ((MPIGPU_Datatype)1)
#define MPIGPU_SIGNED_CHAR ((MPIGPU_Datatype)2)
#define MPIGPU_UNSIGNED_CHAR ((MPIGPU_Datatype)3)
#define MPIGPU_SHORT ((MPIGPU_Datatype)4)
#define MPIGPU_UNSIGNED_SHORT ((MPIGPU_Datatype)5)
#define MPIGPU_INT ((MPIGPU_Datatype)6)
#define MPIGPU_UNSIGNED ((MPIGPU_Datatype)7)
#define MPIGPU_LONG ((MPIGPU_Datatype)8)
#define MPIGPU_UNSIGNED_LONG ((MPIGPU_Datatype)9)
#define MPIGPU_LONG_LONG ((MPIGPU_Datatype)10)
#define MPIGPU_UNSIGNED_LONG_LONG ((MPIGPU_Datatype)11)
#define MPIGPU_FLOAT ((MPIGPU_Datatype)12)
#define MPIGPU_DOUBLE ((MPIGPU_Datatype)13)
#define MPIGPU_INT8_T ((MPIGPU_Datatype)14)
#define MPIGPU_INT16_T ((MPIGPU_Datatype)15)
#define MPIGPU_INT32_T ((MPIGPU_Datatype)16)
#define MPIGPU_INT64_T ((MPIGPU_Datatype)17)
#define MPIGPU_UINT8_T ((MPIGPU_Datatype)18)
#define MPIGPU_UINT16_T ((MPIGPU_Datatype)19)
#define MPIGPU_UINT32_T ((MPIGPU_Datatype)20)
#define MPIGPU_UINT64_T ((MPIGPU_Datatype)21)
/* C types beyond the fixed-width ones */
#define MPIGPU_LONG_DOUBLE ((MPIGPU_Datatype)22)
#define MPIGPU_WCHAR ((MPIGPU_Datatype)23)
#define MPIGPU_C_BOOL ((MPIGPU_Datatype)24)
#define MPIGPU_C_FLOAT_COMPLEX ((MPIGPU_Datatype)25)
#define MPIGPU_C_COMPLEX MPIGPU_C_FLOAT_COMPLEX
#define MPIGPU_C_DOUBLE_COMPLEX ((MPIGPU_Datatype)26)
#define MPIGPU_C_LONG_DOUBLE_COMPLEX ((MPIGPU_Datatype)27)
#define MPIGPU_AINT ((MPIGPU_Datatype)28)
#define MPIGPU_OFFSET ((MPIGPU_Datatype)29)
#define MPIGPU_COUNT ((MPIGPU_Datatype)30)
#define MPIGPU_PACKED ((MPIGPU_Datatype)31)
/* value-index pairs for MINLOC/MAXLOC, laid out as the C struct {value; int} (padding
 * included in the extent, not the size; SHORT_INT has a hole between its members) */
#define MPIGPU_FLOAT_INT ((MPIGPU_Datatype)32)
#define MPIGPU_DOUBLE_INT ((MPIGPU_Datatype)33)
#define MPIGPU_LONG_INT ((MPIGPU_Datatype)34)
#define MPIGPU_2INT ((MPIGPU_Datatype)35)
#define MPIGPU_SHORT_INT ((MPIGPU_Datatype)36)
#define MPIGPU_LONG_DOUBLE_INT ((MPIGPU_Datatype)37)
/* C++ types (same layouts as the C ones) */
#define MPIGPU_CXX_BOOL ((MPIGPU_Datatype)38)
#define MPIGPU_CXX_FLOAT_COMPLEX ((MPIGPU_Datatype)39)
#define MPIGPU_CXX_DOUBLE_COMPLEX ((MPIGPU_Datatype)40)
#define MPIGPU_CXX_LONG_DOUBLE_COMPLEX ((MPIGPU_Datatype)41)
/* Fortran types, as their C equivalents (INTEGER = int, REAL = float, LOGICAL = int) */
#define MPIGPU_CHARACTER ((MPIGPU_Datatype)42)
#define MPIGPU_INTEGER ((MPIGPU_Datatype)43)
#define MPIGPU_REAL ((MPIGPU_Datatype)44)
#define MPIGPU_DOUBLE_PRECISION ((MPIGPU_Datatype)45)
#define MPIGPU_LOGICAL ((MPIGPU_Datatype)46)
#define MPIGPU_COMPLEX ((MPIGPU_Datatype)47)
#define MPIGPU_DOUBLE_COMPLEX ((MPIGPU_Datatype)48)
#define MPIGPU_2INTEGER ((MPIGPU_Datatype)49)
#define MPIGPU_2REAL ((MPIGPU_Datatype)50)
#define MPIGPU_2DOUBLE_PRECISION ((MPIGPU_Datatype)51)
#define MPIGPU_INTEGER1 ((MPIGPU_Datatype)52)
#define MPIGPU_INTEGER2 ((MPIGPU_Datatype)53)
#define MPIGPU_INTEGER4 ((MPIGPU_Datatype)54)
#define MPIGPU_INTEGER8 ((MPIGPU_Datatype)55)
#define MPIGPU_REAL4 ((MPIGPU_Datatype)56)
#define MPIGPU_REAL8 ((MPIGPU_Datatype)57)
#define MPIGPU_REAL16 ((MPIGPU_Datatype)58)
#define MPIGPU_COMPLEX8 ((MPIGPU_Datatype)59)
#define MPIGPU_COMPLEX16 ((MPIGPU_Datatype)60)
#define MPIGPU_COMPLEX32 ((MPIGPU_Datatype)61)
#define MPIGPU_INTEGER16 ((MPIGPU_Datatype)62)
/* Handles below this value are predefined; derived types get handles from here up. */
#define MPIGPU_NUM_PREDEFINED_TYPES 63

/* ---- reduction operations ---- */

#define MPIGPU_SUM ((MPIGPU_Op)0)
#define MPIGPU_MIN ((MPIGPU_Op)1)
#define MPIGPU_MAX ((MPIGPU_Op)2)
#define MPIGPU_PROD ((MPIGPU_Op)3)
#define MPIGPU_LAND ((MPIGPU_Op)4)
#define MPIGPU_LOR ((MPIGPU_Op)5)
#define MPIGPU_LXOR ((MPIGPU_Op)6)
#define MPIGPU_BAND ((MPIGPU_Op)7)
#define MPIGPU_BOR ((MPIGPU_Op)8)
#define MPIGPU_BXOR ((MPIGPU_Op)9)
#define MPIGPU_MINLOC ((MPIGPU_Op)10)
#define MPIGPU_MAXLOC ((MPIGPU_Op)11)
/* For one-sided accumulates only: collectives refuse them with MPIGPU_ERR_OP. */
#define MPIGPU_REPLACE ((MPIGPU_Op)12)
#define MPIGPU_NO_OP ((MPIGPU_Op)13)
/* Which op is defined for which type follows MPI: MIN/MAX on integers and floating point;
 * SUM/PROD also on complex; LAND/LOR/LXOR on integers and logicals (C_BOOL, LOGICAL);
 * BAND/BOR/BXOR on integers and BYTE; MINLOC/MAXLOC on the value-index pair types (FLOAT_INT,
 * DOUBLE_INT, LONG_INT, 2INT, SHORT_INT, LONG_DOUBLE_INT, 2INTEGER, 2REAL, 2DOUBLE_PRECISION).
 * MPIGPU_CHAR counts as an integer (as in MPICH). Derived types reduce element-wise over their
 * single predefined type underneath. Another pairing gives MPIGPU_ERR_OP. */

/* A user-defined reduction: inoutvec[i] = invec[i] op inoutvec[i] for i < *len elements of
 * *datatype, in host memory laid out as the datatype describes (device buffers are staged
 * through the host before the function sees them). */
typedef void MPIGPU_User_function(void* invec, void* inoutvec, int* len,
                                  MPIGPU_Datatype* datatype);
/* *op = a new operation calling fn; commute = 0 makes collectives apply it in rank order
 * (x0 op x1 op ... op xn-1), never reordered. Errors: ARG (null fn or op). */
int MPIGPU_Op_create(MPIGPU_User_function* fn, int commute, MPIGPU_Op* op);
/* Frees a user operation and sets *op to MPIGPU_OP_NULL. Errors: OP (predefined, freed or bad
 * handle), ARG. */
int MPIGPU_Op_free(MPIGPU_Op* op);
/* *commute = 1 if op is commutative (every predefined op is). Errors: OP, ARG. */
int MPIGPU_Op_commutative(MPIGPU_Op op, int* commute);

/* ---- environment ---- */

/* Joins the job (started by mpigpurun, or a single rank without it); argc/argv may be NULL.
 * Errors: OTHER (job bootstrap failed), INTERN (calling it twice). */
int MPIGPU_Init(int* argc, char*** argv);
/* Leaves the job after completing pending communication; collective over COMM_WORLD.
 * Errors: NOT_INITIALIZED, PROC_FAILED. */
int MPIGPU_Finalize(void);
/* *flag = 1 once MPIGPU_Init has completed (also after Finalize). Callable at any time. */
int MPIGPU_Initialized(int* flag);
/* *flag = 1 once MPIGPU_Finalize has completed. Callable at any time. */
int MPIGPU_Finalized(int* flag);
/* Ends every process of the job with exit status errorcode (best effort); does not return on
 * success. Errors: NOT_INITIALIZED. */
int MPIGPU_Abort(MPIGPU_Comm comm, int errorcode);
/* Seconds since an arbitrary point in the past (monotonic clock). */
double MPIGPU_Wtime(void);

/* ---- communicators ---- */

/* *rank = this process's rank in comm. Errors: COMM, ARG (null pointer), NOT_INITIALIZED. */
int MPIGPU_Comm_rank(MPIGPU_Comm comm, int* rank);
/* *size = number of processes in comm. Errors: COMM, ARG, NOT_INITIALIZED. */
int MPIGPU_Comm_size(MPIGPU_Comm comm, int* size);
/* New communicator with the same group and a new context; collective. Errors: COMM, ARG. */
int MPIGPU_Comm_dup(MPIGPU_Comm comm, MPIGPU_Comm* newcomm);
/* Splits comm by color (ranks ordered by key, then old rank); color MPIGPU_UNDEFINED gives
 * MPIGPU_COMM_NULL; collective. Errors: COMM, ARG. */
int MPIGPU_Comm_split(MPIGPU_Comm comm, int color, int key, MPIGPU_Comm* newcomm);
/* Frees *comm and sets it to MPIGPU_COMM_NULL; WORLD and SELF cannot be freed. Errors: COMM. */
int MPIGPU_Comm_free(MPIGPU_Comm* comm);
/* Sets comm's error handler (ERRORS_ARE_FATAL or ERRORS_RETURN; values from 2 up are handlers
 * of the MPI interface, which the core treats as ERRORS_RETURN). New communicators inherit their
 * parent's. Errors: COMM, ARG (negative handler). */
int MPIGPU_Comm_set_errhandler(MPIGPU_Comm comm, MPIGPU_Errhandler errhandler);
/* *errhandler = comm's error handler. Errors: COMM, ARG. */
int MPIGPU_Comm_get_errhandler(MPIGPU_Comm comm, MPIGPU_Errhandler* errhandler);

/* ---- comparison results (Group_compare, Comm_compare) ---- */
#define MPIGPU_IDENT 0     /* the same object (comm), or the same members in the same order (group) */
#define MPIGPU_CONGRUENT 1 /* communicators with the same group in the same order */
#define MPIGPU_SIMILAR 2   /* the same members in another order */
#define MPIGPU_UNEQUAL 3

/* ---- groups ----
 * A group is an ordered set of processes; rank i of a group is its i-th member. Groups are local
 * objects (no communication). Results that are empty are MPIGPU_GROUP_EMPTY. Freeing
 * MPIGPU_GROUP_EMPTY is allowed (it stays valid). Common errors: GROUP (null, freed or bad
 * handle), RANK (a rank outside the group, or one named twice), ARG (null pointer, n < 0). */

/* *group = comm's group (its local group for an intercommunicator). Errors: COMM, ARG. */
int MPIGPU_Comm_group(MPIGPU_Comm comm, MPIGPU_Group* group);
/* *size = members of group. */
int MPIGPU_Group_size(MPIGPU_Group group, int* size);
/* *rank = this process's rank in group, or MPIGPU_UNDEFINED if it is not a member. */
int MPIGPU_Group_rank(MPIGPU_Group group, int* rank);
/* ranks2[i] = the rank in group2 of the process with rank ranks1[i] in group1 (MPIGPU_UNDEFINED
 * if it is not in group2; MPIGPU_PROC_NULL stays MPIGPU_PROC_NULL). */
int MPIGPU_Group_translate_ranks(MPIGPU_Group group1, int n, const int ranks1[],
                                 MPIGPU_Group group2, int ranks2[]);
/* *result = MPIGPU_IDENT, MPIGPU_SIMILAR or MPIGPU_UNEQUAL. */
int MPIGPU_Group_compare(MPIGPU_Group group1, MPIGPU_Group group2, int* result);
/* group1's members, then group2's that are not in group1 (each in its group's order). */
int MPIGPU_Group_union(MPIGPU_Group group1, MPIGPU_Group group2, MPIGPU_Group* newgroup);
/* group1's members that are in group2, in group1's order. */
int MPIGPU_Group_intersection(MPIGPU_Group group1, MPIGPU_Group group2, MPIGPU_Group* newgroup);
/* group1's members that are not in group2, in group1's order. */
int MPIGPU_Group_difference(MPIGPU_Group group1, MPIGPU_Group group2, MPIGPU_Group* newgroup);
/* The members with ranks[0..n-1] of group, in that order (ranks distinct). */
int MPIGPU_Group_incl(MPIGPU_Group group, int n, const int ranks[], MPIGPU_Group* newgroup);
/* group without the members ranks[0..n-1] (distinct), in group's order. */
int MPIGPU_Group_excl(MPIGPU_Group group, int n, const int ranks[], MPIGPU_Group* newgroup);
/* Members named by n (first, last, stride) triplets, in triplet order; stride != 0, every rank
 * named once at most. */
int MPIGPU_Group_range_incl(MPIGPU_Group group, int n, int ranges[][3], MPIGPU_Group* newgroup);
/* group without the members the triplets name, in group's order. */
int MPIGPU_Group_range_excl(MPIGPU_Group group, int n, int ranges[][3], MPIGPU_Group* newgroup);
/* Frees *group and sets it to MPIGPU_GROUP_NULL. */
int MPIGPU_Group_free(MPIGPU_Group* group);

/* ---- communicator constructors and queries ---- */

/* Collective over comm: members of group (a subgroup of comm's; each rank may pass a different
 * group as long as the groups are equal or disjoint) get a communicator over it, in group's
 * order; others get MPIGPU_COMM_NULL. Errors: COMM, GROUP (a member outside comm), ARG. */
int MPIGPU_Comm_create(MPIGPU_Comm comm, MPIGPU_Group group, MPIGPU_Comm* newcomm);
/* Collective over group's members only (all of them in comm); tag (>= 0) tells concurrent
 * calls over overlapping groups apart. Errors: COMM, GROUP (caller not in group), TAG, ARG. */
int MPIGPU_Comm_create_group(MPIGPU_Comm comm, MPIGPU_Group group, int tag, MPIGPU_Comm* newcomm);
/* *result = MPIGPU_IDENT (same communicator), CONGRUENT (same group, same order), SIMILAR (same
 * members) or UNEQUAL. */
int MPIGPU_Comm_compare(MPIGPU_Comm comm1, MPIGPU_Comm comm2, int* result);
/* Split by split_type: MPIGPU_COMM_TYPE_SHARED groups the ranks of one node (ordered by key,
 * then rank); MPIGPU_UNDEFINED gives MPIGPU_COMM_NULL. The hardware types give
 * MPIGPU_COMM_NULL (MPI's answer when no resource type is known: mpigpu reads no hardware
 * hints). info is ignored. Collective. Errors: COMM, ARG (unknown split_type). */
#define MPIGPU_COMM_TYPE_SHARED 1
#define MPIGPU_COMM_TYPE_HW_GUIDED 2
#define MPIGPU_COMM_TYPE_HW_UNGUIDED 3
int MPIGPU_Comm_split_type(MPIGPU_Comm comm, int split_type, int key, MPIGPU_Info info,
                           MPIGPU_Comm* newcomm);
/* MPIGPU_Comm_dup, completed before it returns: *request is MPIGPU_REQUEST_NULL. */
int MPIGPU_Comm_idup(MPIGPU_Comm comm, MPIGPU_Comm* newcomm, MPIGPU_Request* request);
/* Names a communicator (for errors and tools); at most MPIGPU_MAX_OBJECT_NAME - 1 characters
 * are kept. WORLD and SELF start as "MPI_COMM_WORLD" and "MPI_COMM_SELF", others as "". */
#define MPIGPU_MAX_OBJECT_NAME 128
int MPIGPU_Comm_set_name(MPIGPU_Comm comm, const char* name);
/* Copies comm's name (NUL-terminated) into name[MPIGPU_MAX_OBJECT_NAME]; *resultlen = length. */
int MPIGPU_Comm_get_name(MPIGPU_Comm comm, char* name, int* resultlen);
/* *flag = 1 for an intercommunicator. */
int MPIGPU_Comm_test_inter(MPIGPU_Comm comm, int* flag);

/* ---- intercommunicators ----
 * Point-to-point calls on an intercommunicator name ranks of the remote group. Collectives on
 * intercommunicators follow MPI: data goes from one group to the other; a rooted one takes
 * MPIGPU_ROOT at the root, MPIGPU_PROC_NULL at the rest of its group and the root's rank in
 * the remote group at the other group; MPIGPU_IN_PLACE is an error (ARG), Scan/Exscan are
 * errors (COMM). */

/* Collective over local_comm (and the remote group's members over theirs): the leaders talk over
 * peer_comm with tag. Errors: COMM, RANK (a leader), TAG, ARG. */
int MPIGPU_Intercomm_create(MPIGPU_Comm local_comm, int local_leader, MPIGPU_Comm peer_comm,
                            int remote_leader, int tag, MPIGPU_Comm* newintercomm);
/* An intracommunicator over both groups: the group that passes high = 0 first (if both pass the
 * same value, the group of the leader with the lower world rank first). Collective. */
int MPIGPU_Intercomm_merge(MPIGPU_Comm intercomm, int high, MPIGPU_Comm* newintracomm);
/* *size = size of the remote group. Errors: COMM (not an intercommunicator), ARG. */
int MPIGPU_Comm_remote_size(MPIGPU_Comm comm, int* size);
/* *group = the remote group. Errors: COMM (not an intercommunicator), ARG. */
int MPIGPU_Comm_remote_group(MPIGPU_Comm comm, MPIGPU_Group* group);

/* ---- attributes ----
 * Keys (keyvals) come from MPIGPU_Comm_create_keyval; a value is a void* stored per
 * communicator. MPIGPU_Comm_dup calls each attribute's copy callback (in the order the
 * attributes were set) and keeps the value it returns when it sets *flag; Comm_free and
 * Comm_delete_attr call the delete callback (Comm_free: in the reverse order of setting), and so
 * does setting a value over an old one. Callbacks run without the library's lock: they may call
 * mpigpu. A callback's nonzero return fails the call with that code. MPIGPU_COMM_SELF's
 * attributes are deleted at the start of MPIGPU_Finalize. */
typedef int MPIGPU_Comm_copy_attr_function(MPIGPU_Comm oldcomm, int comm_keyval,
                                           void* extra_state, void* attribute_val_in,
                                           void* attribute_val_out, int* flag);
typedef int MPIGPU_Comm_delete_attr_function(MPIGPU_Comm comm, int comm_keyval,
                                             void* attribute_val, void* extra_state);
/* Copy callbacks: never copy (NULL_COPY_FN, *flag = 0), or copy the value (DUP_FN). */
int MPIGPU_Comm_null_copy_fn(MPIGPU_Comm oldcomm, int comm_keyval, void* extra_state,
                             void* attribute_val_in, void* attribute_val_out, int* flag);
int MPIGPU_Comm_dup_fn(MPIGPU_Comm oldcomm, int comm_keyval, void* extra_state,
                       void* attribute_val_in, void* attribute_val_out, int* flag);
#define MPIGPU_COMM_NULL_COPY_FN (&MPIGPU_Comm_null_copy_fn)
#define MPIGPU_COMM_DUP_FN (&MPIGPU_Comm_dup_fn)
#define MPIGPU_COMM_NULL_DELETE_FN ((MPIGPU_Comm_delete_attr_function*)0)
#define MPIGPU_KEYVAL_INVALID (-1)
/* Predefined keys, set on MPIGPU_COMM_WORLD (and SELF); their values are int*. TAG_UB: the
 * largest tag; HOST: MPIGPU_PROC_NULL; IO: MPIGPU_ANY_SOURCE (every rank can do I/O);
 * WTIME_IS_GLOBAL: 0; APPNUM: 0; UNIVERSE_SIZE: the job's size. Read-only. */
#define MPIGPU_KEYVAL_TAG_UB 1
#define MPIGPU_KEYVAL_HOST 2
#define MPIGPU_KEYVAL_IO 3
#define MPIGPU_KEYVAL_WTIME_IS_GLOBAL 4
#define MPIGPU_KEYVAL_APPNUM 5
#define MPIGPU_KEYVAL_UNIVERSE_SIZE 6
#define MPIGPU_KEYVAL_LASTUSEDCODE 7
/* Null callbacks are allowed (= NULL_COPY_FN / NULL_DELETE_FN). Errors: ARG. */
int MPIGPU_Comm_create_keyval(MPIGPU_Comm_copy_attr_function* comm_copy_attr_fn,
                              MPIGPU_Comm_delete_attr_function* comm_delete_attr_fn,
                              int* comm_keyval, void* extra_state);
/* Frees the key (attributes set with it stay until deleted) and sets it to KEYVAL_INVALID. A key
 * lives until it is freed and no attribute uses it; freeing a live key again (through a copy of
 * the handle) does nothing. Errors: KEYVAL (predefined, gone or not a communicator key). */
int MPIGPU_Comm_free_keyval(int* comm_keyval);
/* Errors: COMM, KEYVAL (bad key, or a predefined one), the delete callback's code. */
int MPIGPU_Comm_set_attr(MPIGPU_Comm comm, int comm_keyval, void* attribute_val);
/* *flag = 1 and *(void**)attribute_val = the value if set; else *flag = 0. */
int MPIGPU_Comm_get_attr(MPIGPU_Comm comm, int comm_keyval, void* attribute_val, int* flag);
/* Errors: COMM, KEYVAL (bad key, or not set on comm), the delete callback's code. */
int MPIGPU_Comm_delete_attr(MPIGPU_Comm comm, int comm_keyval);

/* Datatype attributes (the same rules). The datatype library sits below the attributes, so
 * MPIGPU_Type_dup and MPIGPU_Type_free do not run callbacks themselves: a caller that uses
 * attributes on types runs MPIGPU_Type_copy_attrs_ after a dup and MPIGPU_Type_delete_attrs_
 * before a free, as the MPI layer's MPI_Type_dup and MPI_Type_free do (mpi/mpi_types.cc). */
typedef int MPIGPU_Type_copy_attr_function(MPIGPU_Datatype oldtype, int type_keyval,
                                           void* extra_state, void* attribute_val_in,
                                           void* attribute_val_out, int* flag);
typedef int MPIGPU_Type_delete_attr_function(MPIGPU_Datatype datatype, int type_keyval,
                                             void* attribute_val, void* extra_state);
int MPIGPU_Type_null_copy_fn(MPIGPU_Datatype oldtype, int type_keyval, void* extra_state,
                             void* attribute_val_in, void* attribute_val_out, int* flag);
int MPIGPU_Type_dup_fn(MPIGPU_Datatype oldtype, int type_keyval, void* extra_state,
                       void* attribute_val_in, void* attribute_val_out, int* flag);
#define MPIGPU_TYPE_NULL_COPY_FN (&MPIGPU_Type_null_copy_fn)
#define MPIGPU_TYPE_DUP_FN (&MPIGPU_Type_dup_fn)
#define MPIGPU_TYPE_NULL_DELETE_FN ((MPIGPU_Type_delete_attr_function*)0)
int MPIGPU_Type_create_keyval(MPIGPU_Type_copy_attr_function* type_copy_attr_fn,
                              MPIGPU_Type_delete_attr_function* type_delete_attr_fn,
                              int* type_keyval, void* extra_state);
int MPIGPU_Type_free_keyval(int* type_keyval);
int MPIGPU_Type_set_attr(MPIGPU_Datatype datatype, int type_keyval, void* attribute_val);
int MPIGPU_Type_get_attr(MPIGPU_Datatype datatype, int type_keyval, void* attribute_val,
                         int* flag);
int MPIGPU_Type_delete_attr(MPIGPU_Datatype datatype, int type_keyval);
/* For the datatype code: runs oldtype's copy callbacks onto newtype (Type_dup), and deletes every
 * attribute of a type being freed (Type_free). Return the first callback error. */
int MPIGPU_Type_copy_attrs_(MPIGPU_Datatype oldtype, MPIGPU_Datatype newtype);
int MPIGPU_Type_delete_attrs_(MPIGPU_Datatype datatype);

/* ---- topologies ----
 * Cartesian and graph topologies on new communicators (reorder is accepted and ignored: rank i
 * of the new communicator is rank i of the old). Ranks beyond the topology's size get
 * MPIGPU_COMM_NULL. MPIGPU_Comm_dup keeps the topology. */
#define MPIGPU_GRAPH 1
#define MPIGPU_CART 2
#define MPIGPU_DIST_GRAPH 3
/* *status = MPIGPU_CART, MPIGPU_GRAPH, MPIGPU_DIST_GRAPH or MPIGPU_UNDEFINED. */
int MPIGPU_Topo_test(MPIGPU_Comm comm, int* status);
/* Collective. Errors: COMM, DIMS/ARG (ndims < 0, a dim < 1, more processes than comm has). */
int MPIGPU_Cart_create(MPIGPU_Comm comm_old, int ndims, const int dims[], const int periods[],
                       int reorder, MPIGPU_Comm* comm_cart);
/* Fills dims[ndims] where 0 with a balanced factorization of nnodes (dims in non-increasing
 * order); nonzero dims are kept. Errors: DIMS (nnodes not divisible by the fixed dims), ARG. */
int MPIGPU_Dims_create(int nnodes, int ndims, int dims[]);
/* Errors for the queries: COMM, TOPOLOGY (no Cartesian topology), ARG. */
int MPIGPU_Cartdim_get(MPIGPU_Comm comm, int* ndims);
int MPIGPU_Cart_get(MPIGPU_Comm comm, int maxdims, int dims[], int periods[], int coords[]);
/* Coordinates outside a periodic dimension wrap; outside a non-periodic one: ARG. */
int MPIGPU_Cart_rank(MPIGPU_Comm comm, const int coords[], int* rank);
int MPIGPU_Cart_coords(MPIGPU_Comm comm, int rank, int maxdims, int coords[]);
/* Neighbours disp steps down (*rank_source) and up (*rank_dest) dimension direction;
 * MPIGPU_PROC_NULL past the edge of a non-periodic dimension. */
int MPIGPU_Cart_shift(MPIGPU_Comm comm, int direction, int disp, int* rank_source,
                      int* rank_dest);
/* Collective: one communicator per slice, keeping the dimensions with remain_dims[i] != 0.
 * Keeping none gives rank 0 a 0-dimensional grid of itself and the others MPIGPU_COMM_NULL. */
int MPIGPU_Cart_sub(MPIGPU_Comm comm, const int remain_dims[], MPIGPU_Comm* newcomm);
/* *newrank = rank (< product of dims), or MPIGPU_UNDEFINED. */
int MPIGPU_Cart_map(MPIGPU_Comm comm, int ndims, const int dims[], const int periods[],
                    int* newrank);
/* Collective. index[i] = neighbours of nodes 0..i together; edges: the neighbour lists.
 * Errors: COMM, ARG (bad index/edges or more nodes than comm has). */
int MPIGPU_Graph_create(MPIGPU_Comm comm_old, int nnodes, const int index[], const int edges[],
                        int reorder, MPIGPU_Comm* comm_graph);
int MPIGPU_Graphdims_get(MPIGPU_Comm comm, int* nnodes, int* nedges);
int MPIGPU_Graph_get(MPIGPU_Comm comm, int maxindex, int maxedges, int index[], int edges[]);
int MPIGPU_Graph_neighbors_count(MPIGPU_Comm comm, int rank, int* nneighbors);
int MPIGPU_Graph_neighbors(MPIGPU_Comm comm, int rank, int maxneighbors, int neighbors[]);
/* *newrank = rank (< nnodes), or MPIGPU_UNDEFINED. */
int MPIGPU_Graph_map(MPIGPU_Comm comm, int nnodes, const int index[], const int edges[],
                     int* newrank);
/* Distributed graphs: the adjacent form (each rank names its own neighbours). Weights may be
 * MPIGPU_UNWEIGHTED (or MPIGPU_WEIGHTS_EMPTY for a zero degree). Collective. */
#define MPIGPU_UNWEIGHTED ((int*)-2)
#define MPIGPU_WEIGHTS_EMPTY ((int*)-3)
int MPIGPU_Dist_graph_create_adjacent(MPIGPU_Comm comm_old, int indegree, const int sources[],
                                      const int sourceweights[], int outdegree,
                                      const int destinations[], const int destweights[],
                                      MPIGPU_Info info, int reorder, MPIGPU_Comm* comm_dist_graph);
/* The general form: n sources, each with degrees[i] destinations; every edge reaches both ends.
 * Collective. */
int MPIGPU_Dist_graph_create(MPIGPU_Comm comm_old, int n, const int sources[],
                             const int degrees[], const int destinations[], const int weights[],
                             MPIGPU_Info info, int reorder, MPIGPU_Comm* comm_dist_graph);
int MPIGPU_Dist_graph_neighbors_count(MPIGPU_Comm comm, int* indegree, int* outdegree,
                                      int* weighted);
int MPIGPU_Dist_graph_neighbors(MPIGPU_Comm comm, int maxindegree, int sources[],
                                int sourceweights[], int maxoutdegree, int destinations[],
                                int destweights[]);

/* ---- point to point ----
 * peer: a rank of comm or MPIGPU_PROC_NULL (the call completes at once); receives also take
 * MPIGPU_ANY_SOURCE. tag: 0..MPIGPU_TAG_UB; receives also take MPIGPU_ANY_TAG.
 * Common errors: COMM, RANK, TAG, COUNT, TYPE, BUFFER (null buffer with count > 0, bad buftype),
 * NO_GPU, PROC_FAILED, OTHER (CUDA/OS failure), NOT_INITIALIZED; receives also TRUNCATE. */

/* Blocking send; returns when buf may be reused. */
int MPIGPU_Send(const void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                int dest, int tag, MPIGPU_Comm comm);
/* Blocking receive; status may be MPIGPU_STATUS_IGNORE. */
int MPIGPU_Recv(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                int source, int tag, MPIGPU_Comm comm, MPIGPU_Status* status);
/* Starts a send; complete *request with Wait/Test. buf must not change until then. */
int MPIGPU_Isend(const void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                 int dest, int tag, MPIGPU_Comm comm, MPIGPU_Request* request);
/* Synchronous send: returns only once the receiver has matched the message (it goes by
 * rendezvous whatever its size). Errors: as Send. */
int MPIGPU_Ssend(const void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                 int dest, int tag, MPIGPU_Comm comm);
/* Starts a synchronous send: *request completes once the receiver has matched it. */
int MPIGPU_Issend(const void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                  int dest, int tag, MPIGPU_Comm comm, MPIGPU_Request* request);
/* Starts a receive; complete *request with Wait/Test. */
int MPIGPU_Irecv(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                 int source, int tag, MPIGPU_Comm comm, MPIGPU_Request* request);
/* Send and receive at once (no deadlock between pairs); buffers must not overlap. */
int MPIGPU_Sendrecv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                    MPIGPU_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                    MPIGPU_Buftype recvbuftype, int recvcount, MPIGPU_Datatype recvtype,
                    int source, int recvtag, MPIGPU_Comm comm, MPIGPU_Status* status);

/* ---- completion ---- */

/* Waits for *request, frees it and sets it to MPIGPU_REQUEST_NULL; a null request returns at
 * once with an empty status. Errors: REQUEST (stale or invalid handle), the operation's own
 * error, PROC_FAILED. */
int MPIGPU_Wait(MPIGPU_Request* request, MPIGPU_Status* status);
/* Waits for all count requests; statuses may be MPIGPU_STATUSES_IGNORE. Errors: as Wait, COUNT;
 * each status's MPIGPU_ERROR tells which request failed. The array is checked first: a stale or
 * invalid handle in it (or one handle twice) fails the call with REQUEST, naming its index in
 * the error string, before anything is waited for or completed; every request of the array
 * stays active, and the array and statuses are left as they were. Waitany and Testall check
 * alike. */
int MPIGPU_Waitall(int count, MPIGPU_Request requests[], MPIGPU_Status statuses[]);
/* Waits for one of count requests; *index = its position, or MPIGPU_UNDEFINED if all are null.
 * Errors: as Wait, COUNT. */
int MPIGPU_Waitany(int count, MPIGPU_Request requests[], int* index, MPIGPU_Status* status);
/* *flag = 1 (request freed, status set) if *request completed, else 0; never blocks.
 * Errors: as Wait. */
int MPIGPU_Test(MPIGPU_Request* request, int* flag, MPIGPU_Status* status);
/* *flag = 1 (all freed, statuses set) if every request completed, else 0 (none freed).
 * Errors: as Waitall. */
int MPIGPU_Testall(int count, MPIGPU_Request requests[], int* flag, MPIGPU_Status statuses[]);
/* Blocks until a message matching (source, tag, comm) can be received; fills status without
 * receiving it. Errors: COMM, RANK, TAG, PROC_FAILED. */
int MPIGPU_Probe(int source, int tag, MPIGPU_Comm comm, MPIGPU_Status* status);
/* Probe without blocking: *flag = 1 and status filled if a matching message is there.
 * Errors: as Probe, ARG. */
int MPIGPU_Iprobe(int source, int tag, MPIGPU_Comm comm, int* flag, MPIGPU_Status* status);
/* *count = received elements of datatype in status, or MPIGPU_UNDEFINED if not a whole number.
 * Errors: TYPE, ARG. */
int MPIGPU_Get_count(const MPIGPU_Status* status, MPIGPU_Datatype datatype, int* count);
/* Asks to cancel *request: a receive no message has matched yet completes at once, its status
 * cancelled (MPIGPU_Status's private field; MPI_Test_cancelled reads it). A send asks its
 * receiver to give the message back: if no receive matched it yet it is dropped there and the
 * send completes cancelled (even one that had completed, eager); else it completes normally. The
 * request is not complete until the receiver answered (its progress, within a Wait/Test); a
 * receiver that dies first fails it with PROC_FAILED. A matched receive completes normally.
 * Complete the request with Wait/Test as usual.
 * Errors: REQUEST, ARG, NOT_INITIALIZED. */
int MPIGPU_Cancel(MPIGPU_Request* request);
/* Frees *request (the operation still completes) and sets it to MPIGPU_REQUEST_NULL.
 * Errors: REQUEST (null, stale or invalid handle: freeing a copy of a freed handle is one). */
int MPIGPU_Request_free(MPIGPU_Request* request);

/* ---- collectives (every rank of comm calls them, in the same order) ---- */

/* Waits until every rank of comm has entered. Errors: COMM, PROC_FAILED. */
int MPIGPU_Barrier(MPIGPU_Comm comm);
/* Copies root's buf to every rank's buf. Errors: COMM, RANK (root), COUNT, TYPE, BUFFER,
 * NO_GPU, PROC_FAILED. */
int MPIGPU_Bcast(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                 int root, MPIGPU_Comm comm);
/* Combines every rank's sendbuf element-wise with op into root's recvbuf (recvbuf is used only
 * at root). Errors: as Bcast, OP (bad op, or op not defined for the type). */
int MPIGPU_Reduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                  MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype, MPIGPU_Op op,
                  int root, MPIGPU_Comm comm);
/* Reduce whose result reaches every rank's recvbuf. Errors: as Reduce. */
int MPIGPU_Allreduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                     MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                     MPIGPU_Op op, MPIGPU_Comm comm);
/* In the collectives below, as in MPI: counts and types describe whole buffers per rank
 * (displacements of the v-forms in elements of the type's extent, of Alltoallw in bytes); a
 * receive longer than its send is fine, a shorter one fails with TRUNCATE. MPIGPU_IN_PLACE as
 * sendbuf (its buftype is then ignored) takes this rank's contribution from recvbuf: at the
 * root only for Gather(v) and Reduce, as recvbuf at the root for Scatter(v), on every rank for
 * the all-forms, Reduce_scatter(_block), Scan and Exscan. Ops that are not commutative are
 * applied in rank order. Errors: COMM, RANK (bad root), COUNT, TYPE, BUFFER, NO_GPU, OP,
 * TRUNCATE, ARG (IN_PLACE where MPI forbids it, null count arrays), PROC_FAILED. */
#define MPIGPU_IN_PLACE ((void*)-1)

int MPIGPU_Gather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                  MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                  int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm);
int MPIGPU_Gatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                   MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                   const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
                   int root, MPIGPU_Comm comm);
int MPIGPU_Scatter(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                   MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                   int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm);
int MPIGPU_Scatterv(const void* sendbuf, MPIGPU_Buftype sendbuftype, const int sendcounts[],
                    const int displs[], MPIGPU_Datatype sendtype, void* recvbuf,
                    MPIGPU_Buftype recvbuftype, int recvcount, MPIGPU_Datatype recvtype,
                    int root, MPIGPU_Comm comm);
int MPIGPU_Allgather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                     MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                     int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm);
int MPIGPU_Allgatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                      MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                      const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
                      MPIGPU_Comm comm);
int MPIGPU_Alltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                    MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                    int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm);
int MPIGPU_Alltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype, const int sendcounts[],
                     const int sdispls[], MPIGPU_Datatype sendtype, void* recvbuf,
                     MPIGPU_Buftype recvbuftype, const int recvcounts[], const int rdispls[],
                     MPIGPU_Datatype recvtype, MPIGPU_Comm comm);
int MPIGPU_Alltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype, const int sendcounts[],
                     const int sdispls[], const MPIGPU_Datatype sendtypes[], void* recvbuf,
                     MPIGPU_Buftype recvbuftype, const int recvcounts[], const int rdispls[],
                     const MPIGPU_Datatype recvtypes[], MPIGPU_Comm comm);
/* Reduces count = sum(recvcounts) elements and leaves block r (recvcounts[r] elements, blocks
 * in rank order) in rank r's recvbuf. */
int MPIGPU_Reduce_scatter(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                          MPIGPU_Buftype recvbuftype, const int recvcounts[],
                          MPIGPU_Datatype datatype, MPIGPU_Op op, MPIGPU_Comm comm);
int MPIGPU_Reduce_scatter_block(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                MPIGPU_Buftype recvbuftype, int recvcount,
                                MPIGPU_Datatype datatype, MPIGPU_Op op, MPIGPU_Comm comm);
/* Inclusive prefix reduction: rank r gets x0 op ... op xr. */
int MPIGPU_Scan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype, MPIGPU_Op op,
                MPIGPU_Comm comm);
/* Exclusive prefix reduction: rank r > 0 gets x0 op ... op xr-1; rank 0's recvbuf is left as
 * it was. */
int MPIGPU_Exscan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                  MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype, MPIGPU_Op op,
                  MPIGPU_Comm comm);
/* Nonblocking forms: the same arguments and rules, plus *request, completed by Wait/Test
 * (its status says nothing). Argument errors are returned at once; errors of the transfers at
 * completion. Every progress call of the process advances them (they never block inside the
 * call), several may be in flight on one communicator, and every rank must start a
 * communicator's collectives, blocking or not, in the same order. Buffers belong to the
 * operation until it completes. */
int MPIGPU_Ibarrier(MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Ibcast(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                  int root, MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Ireduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                   MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype, MPIGPU_Op op,
                   int root, MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Iallreduce(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                      MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                      MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Igather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                   MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                   int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                   MPIGPU_Request* request);
int MPIGPU_Igatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                    MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                    const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
                    int root, MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Iscatter(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                    MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                    int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                    MPIGPU_Request* request);
int MPIGPU_Iscatterv(const void* sendbuf, MPIGPU_Buftype sendbuftype, const int sendcounts[],
                     const int displs[], MPIGPU_Datatype sendtype, void* recvbuf,
                     MPIGPU_Buftype recvbuftype, int recvcount, MPIGPU_Datatype recvtype,
                     int root, MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Iallgather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                      MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                      int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                      MPIGPU_Request* request);
int MPIGPU_Iallgatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                       MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                       const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
                       MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Ialltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                     MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                     int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                     MPIGPU_Request* request);
int MPIGPU_Ialltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype, const int sendcounts[],
                      const int sdispls[], MPIGPU_Datatype sendtype, void* recvbuf,
                      MPIGPU_Buftype recvbuftype, const int recvcounts[], const int rdispls[],
                      MPIGPU_Datatype recvtype, MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Ialltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype, const int sendcounts[],
                      const int sdispls[], const MPIGPU_Datatype sendtypes[], void* recvbuf,
                      MPIGPU_Buftype recvbuftype, const int recvcounts[], const int rdispls[],
                      const MPIGPU_Datatype recvtypes[], MPIGPU_Comm comm,
                      MPIGPU_Request* request);
int MPIGPU_Ireduce_scatter(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                           MPIGPU_Buftype recvbuftype, const int recvcounts[],
                           MPIGPU_Datatype datatype, MPIGPU_Op op, MPIGPU_Comm comm,
                           MPIGPU_Request* request);
int MPIGPU_Ireduce_scatter_block(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                                 MPIGPU_Buftype recvbuftype, int recvcount,
                                 MPIGPU_Datatype datatype, MPIGPU_Op op, MPIGPU_Comm comm,
                                 MPIGPU_Request* request);
int MPIGPU_Iscan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                 MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype, MPIGPU_Op op,
                 MPIGPU_Comm comm, MPIGPU_Request* request);
int MPIGPU_Iexscan(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                   MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype, MPIGPU_Op op,
                   MPIGPU_Comm comm, MPIGPU_Request* request);
/* Neighborhood collectives over comm's topology (Cartesian: per dimension the -1 then the +1
 * neighbour; graph: Graph_neighbors; distributed graph: sources in, destinations out). Block k
 * goes to out-neighbour k and comes from in-neighbour k; PROC_NULL neighbours leave their blocks
 * alone. The w forms' displacements are in bytes. Errors: as the collectives above, TOPOLOGY
 * (no topology). */
int MPIGPU_Neighbor_allgather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                              MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                              int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm);
int MPIGPU_Neighbor_allgatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                               MPIGPU_Datatype sendtype, void* recvbuf,
                               MPIGPU_Buftype recvbuftype, const int recvcounts[],
                               const int displs[], MPIGPU_Datatype recvtype, MPIGPU_Comm comm);
int MPIGPU_Neighbor_alltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                             MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                             int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm);
int MPIGPU_Neighbor_alltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                              const int sendcounts[], const int sdispls[],
                              MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                              const int recvcounts[], const int rdispls[],
                              MPIGPU_Datatype recvtype, MPIGPU_Comm comm);
int MPIGPU_Neighbor_alltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                              const int sendcounts[], const MPIGPU_Aint sdispls[],
                              const MPIGPU_Datatype sendtypes[], void* recvbuf,
                              MPIGPU_Buftype recvbuftype, const int recvcounts[],
                              const MPIGPU_Aint rdispls[], const MPIGPU_Datatype recvtypes[],
                              MPIGPU_Comm comm);
int MPIGPU_Ineighbor_allgather(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                               MPIGPU_Datatype sendtype, void* recvbuf,
                               MPIGPU_Buftype recvbuftype, int recvcount,
                               MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                               MPIGPU_Request* request);
int MPIGPU_Ineighbor_allgatherv(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                MPIGPU_Datatype sendtype, void* recvbuf,
                                MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                const int displs[], MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                                MPIGPU_Request* request);
int MPIGPU_Ineighbor_alltoall(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                              MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                              int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                              MPIGPU_Request* request);
int MPIGPU_Ineighbor_alltoallv(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                               const int sendcounts[], const int sdispls[],
                               MPIGPU_Datatype sendtype, void* recvbuf,
                               MPIGPU_Buftype recvbuftype, const int recvcounts[],
                               const int rdispls[], MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                               MPIGPU_Request* request);
int MPIGPU_Ineighbor_alltoallw(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                               const int sendcounts[], const MPIGPU_Aint sdispls[],
                               const MPIGPU_Datatype sendtypes[], void* recvbuf,
                               MPIGPU_Buftype recvbuftype, const int recvcounts[],
                               const MPIGPU_Aint rdispls[], const MPIGPU_Datatype recvtypes[],
                               MPIGPU_Comm comm, MPIGPU_Request* request);
/* Persistent forms (MPI 4.0): the nonblocking forms' arguments, plus an info (ignored), make an
 * inactive persistent *request; every MPIGPU_Start runs the collective once with the buffers'
 * contents of that moment. Completion (Wait/Test/Waitall/Testall/Waitany) leaves the handle
 * valid and the request inactive, ready for the next Start; a completion call on an inactive
 * request returns at once with an empty status, and Waitany skips inactive ones as it does null
 * handles. Request_free frees it, active or not (an active one finishes first, unseen). The
 * init calls are collective (every rank, the same order as every other collective of the
 * communicator), and they check the arguments; the starts of different persistent collectives
 * may come in any order on different ranks. Counts, displacements and types arrays are copied
 * at init. */
int MPIGPU_Barrier_init(MPIGPU_Comm comm, MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Bcast_init(void* buf, MPIGPU_Buftype buftype, int count, MPIGPU_Datatype datatype,
                      int root, MPIGPU_Comm comm, MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Reduce_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                       MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                       MPIGPU_Op op, int root, MPIGPU_Comm comm, MPIGPU_Info info,
                       MPIGPU_Request* request);
int MPIGPU_Allreduce_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                          MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                          MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Info info,
                          MPIGPU_Request* request);
int MPIGPU_Gather_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                       MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                       int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                       MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Gatherv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                        MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                        const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
                        int root, MPIGPU_Comm comm, MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Scatter_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                        MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                        int recvcount, MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm,
                        MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Scatterv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                         const int sendcounts[], const int displs[], MPIGPU_Datatype sendtype,
                         void* recvbuf, MPIGPU_Buftype recvbuftype, int recvcount,
                         MPIGPU_Datatype recvtype, int root, MPIGPU_Comm comm, MPIGPU_Info info,
                         MPIGPU_Request* request);
int MPIGPU_Allgather_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                          MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                          int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                          MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Allgatherv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                           MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                           const int recvcounts[], const int displs[], MPIGPU_Datatype recvtype,
                           MPIGPU_Comm comm, MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Alltoall_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                         MPIGPU_Datatype sendtype, void* recvbuf, MPIGPU_Buftype recvbuftype,
                         int recvcount, MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                         MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Alltoallv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                          const int sendcounts[], const int sdispls[], MPIGPU_Datatype sendtype,
                          void* recvbuf, MPIGPU_Buftype recvbuftype, const int recvcounts[],
                          const int rdispls[], MPIGPU_Datatype recvtype, MPIGPU_Comm comm,
                          MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Alltoallw_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                          const int sendcounts[], const int sdispls[],
                          const MPIGPU_Datatype sendtypes[], void* recvbuf,
                          MPIGPU_Buftype recvbuftype, const int recvcounts[], const int rdispls[],
                          const MPIGPU_Datatype recvtypes[], MPIGPU_Comm comm, MPIGPU_Info info,
                          MPIGPU_Request* request);
int MPIGPU_Reduce_scatter_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                               MPIGPU_Buftype recvbuftype, const int recvcounts[],
                               MPIGPU_Datatype datatype, MPIGPU_Op op, MPIGPU_Comm comm,
                               MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Reduce_scatter_block_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                     void* recvbuf, MPIGPU_Buftype recvbuftype, int recvcount,
                                     MPIGPU_Datatype datatype, MPIGPU_Op op, MPIGPU_Comm comm,
                                     MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Scan_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                     MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                     MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Exscan_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, void* recvbuf,
                       MPIGPU_Buftype recvbuftype, int count, MPIGPU_Datatype datatype,
                       MPIGPU_Op op, MPIGPU_Comm comm, MPIGPU_Info info, MPIGPU_Request* request);
/* Persistent neighborhood collectives: as the blocking ones on comm's topology (arrays of its
 * in- and out-degree, copied at init). */
int MPIGPU_Neighbor_allgather_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                   MPIGPU_Datatype sendtype, void* recvbuf,
                                   MPIGPU_Buftype recvbuftype, int recvcount,
                                   MPIGPU_Datatype recvtype, MPIGPU_Comm comm, MPIGPU_Info info,
                                   MPIGPU_Request* request);
int MPIGPU_Neighbor_allgatherv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                    int sendcount, MPIGPU_Datatype sendtype, void* recvbuf,
                                    MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                    const int displs[], MPIGPU_Datatype recvtype,
                                    MPIGPU_Comm comm, MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Neighbor_alltoall_init(const void* sendbuf, MPIGPU_Buftype sendbuftype, int sendcount,
                                  MPIGPU_Datatype sendtype, void* recvbuf,
                                  MPIGPU_Buftype recvbuftype, int recvcount,
                                  MPIGPU_Datatype recvtype, MPIGPU_Comm comm, MPIGPU_Info info,
                                  MPIGPU_Request* request);
int MPIGPU_Neighbor_alltoallv_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                   const int sendcounts[], const int sdispls[],
                                   MPIGPU_Datatype sendtype, void* recvbuf,
                                   MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                   const int rdispls[], MPIGPU_Datatype recvtype,
                                   MPIGPU_Comm comm, MPIGPU_Info info, MPIGPU_Request* request);
int MPIGPU_Neighbor_alltoallw_init(const void* sendbuf, MPIGPU_Buftype sendbuftype,
                                   const int sendcounts[], const MPIGPU_Aint sdispls[],
                                   const MPIGPU_Datatype sendtypes[], void* recvbuf,
                                   MPIGPU_Buftype recvbuftype, const int recvcounts[],
                                   const MPIGPU_Aint rdispls[],
                                   const MPIGPU_Datatype recvtypes[], MPIGPU_Comm comm,
                                   MPIGPU_Info info, MPIGPU_Request* request);
/* Starts an inactive persistent request (ERR_REQUEST: not persistent, or already active). */
int MPIGPU_Start(MPIGPU_Request* request);
/* Starts each of requests[0..count-1] in order; stops at the first error. */
int MPIGPU_Startall(int count, MPIGPU_Request requests[]);
/* Local: inoutbuf = inbuf op inoutbuf (no communication). Errors: COUNT, TYPE, BUFFER, OP. */
int MPIGPU_Reduce_local(const void* inbuf, MPIGPU_Buftype inbuftype, void* inoutbuf,
                        MPIGPU_Buftype inoutbuftype, int count, MPIGPU_Datatype datatype,
                        MPIGPU_Op op);

/* ---- datatypes ----
 * Derived types must be committed before communication (else ERR_TYPE). Displacements and
 * strides may be negative (a type's data may lie below the buffer pointer); create_resized may
 * even make the extent negative (such a type communicates count 0 or 1 only). A derived type keeps what it was built from: freeing
 * the types it was built from, or freeing it while an operation that uses it is pending, is
 * safe. These calls do not need MPIGPU_Init. Common errors: TYPE (bad, freed or predefined
 * where a derived type is needed), COUNT (negative count or block length), ARG (null pointer,
 * a type whose size or bounds overflow). */

/* get_envelope's combiners (MPI's, numbered as MPICH numbers them). */
#define MPIGPU_COMBINER_NAMED 1
#define MPIGPU_COMBINER_DUP 2
#define MPIGPU_COMBINER_CONTIGUOUS 3
#define MPIGPU_COMBINER_VECTOR 4
#define MPIGPU_COMBINER_HVECTOR 6
#define MPIGPU_COMBINER_INDEXED 7
#define MPIGPU_COMBINER_HINDEXED 9
#define MPIGPU_COMBINER_INDEXED_BLOCK 10
#define MPIGPU_COMBINER_STRUCT 12
#define MPIGPU_COMBINER_SUBARRAY 13
#define MPIGPU_COMBINER_DARRAY 14
#define MPIGPU_COMBINER_RESIZED 18
#define MPIGPU_COMBINER_HINDEXED_BLOCK 19
/* Array orders (subarray, darray) and darray distributions. */
#define MPIGPU_ORDER_C 56
#define MPIGPU_ORDER_FORTRAN 57
#define MPIGPU_DISTRIBUTE_BLOCK 121
#define MPIGPU_DISTRIBUTE_CYCLIC 122
#define MPIGPU_DISTRIBUTE_NONE 123
#define MPIGPU_DISTRIBUTE_DFLT_DARG (-49767)
/* Type_match_size's classes. */
#define MPIGPU_TYPECLASS_REAL 1
#define MPIGPU_TYPECLASS_INTEGER 2
#define MPIGPU_TYPECLASS_COMPLEX 3

/* Constructors (as MPI's): *newtype is a new uncommitted type. */
int MPIGPU_Type_contiguous(int count, MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype);
/* Block starts stride elements (of oldtype's extent) apart; stride may be negative or smaller
 * than blocklength (overlapping blocks: fine for sends). */
int MPIGPU_Type_vector(int count, int blocklength, int stride, MPIGPU_Datatype oldtype,
                       MPIGPU_Datatype* newtype);
int MPIGPU_Type_create_hvector(int count, int blocklength, MPIGPU_Aint stride,
                               MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype);
int MPIGPU_Type_indexed(int count, const int array_of_blocklengths[],
                        const int array_of_displacements[], MPIGPU_Datatype oldtype,
                        MPIGPU_Datatype* newtype);
int MPIGPU_Type_create_hindexed(int count, const int array_of_blocklengths[],
                                const MPIGPU_Aint array_of_displacements[],
                                MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype);
int MPIGPU_Type_create_indexed_block(int count, int blocklength,
                                     const int array_of_displacements[],
                                     MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype);
int MPIGPU_Type_create_hindexed_block(int count, int blocklength,
                                      const MPIGPU_Aint array_of_displacements[],
                                      MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype);
/* The extent is padded to the most-aligned member's alignment (as a C struct), unless a
 * member was resized. */
int MPIGPU_Type_create_struct(int count, const int array_of_blocklengths[],
                              const MPIGPU_Aint array_of_displacements[],
                              const MPIGPU_Datatype array_of_types[], MPIGPU_Datatype* newtype);
/* order: MPIGPU_ORDER_C or MPIGPU_ORDER_FORTRAN. lb 0, extent the whole array. */
int MPIGPU_Type_create_subarray(int ndims, const int array_of_sizes[],
                                const int array_of_subsizes[], const int array_of_starts[],
                                int order, MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype);
/* BLOCK, CYCLIC(darg) and NONE distributions over a psizes process grid (MPI's rules). */
int MPIGPU_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPIGPU_Datatype oldtype,
                              MPIGPU_Datatype* newtype);
int MPIGPU_Type_create_resized(MPIGPU_Datatype oldtype, MPIGPU_Aint lb, MPIGPU_Aint extent,
                               MPIGPU_Datatype* newtype);
int MPIGPU_Type_dup(MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype);
/* Makes *datatype usable in communication (committing twice or a predefined type is fine). */
int MPIGPU_Type_commit(MPIGPU_Datatype* datatype);
/* Frees a derived type and sets *datatype to MPIGPU_DATATYPE_NULL. */
int MPIGPU_Type_free(MPIGPU_Datatype* datatype);

/* Queries. *size = bytes of data in one element (MPIGPU_UNDEFINED if it exceeds INT_MAX). */
int MPIGPU_Type_size(MPIGPU_Datatype datatype, int* size);
int MPIGPU_Type_size_x(MPIGPU_Datatype datatype, MPIGPU_Count* size);
/* MPI's lb and extent (ub - lb), which resizing may set. */
int MPIGPU_Type_get_extent(MPIGPU_Datatype datatype, MPIGPU_Aint* lb, MPIGPU_Aint* extent);
int MPIGPU_Type_get_extent_x(MPIGPU_Datatype datatype, MPIGPU_Count* lb, MPIGPU_Count* extent);
/* The bytes one element actually touches. */
int MPIGPU_Type_get_true_extent(MPIGPU_Datatype datatype, MPIGPU_Aint* true_lb,
                                MPIGPU_Aint* true_extent);
int MPIGPU_Type_get_true_extent_x(MPIGPU_Datatype datatype, MPIGPU_Count* true_lb,
                                  MPIGPU_Count* true_extent);
/* How the type was made (MPIGPU_COMBINER_*) and how many arguments get_contents returns. */
int MPIGPU_Type_get_envelope(MPIGPU_Datatype datatype, int* num_integers, int* num_addresses,
                             int* num_datatypes, int* combiner);
/* The constructor's arguments. Derived types among them are returned as new handles the caller
 * frees. Errors: TYPE (a predefined type), ARG (an array too short). */
int MPIGPU_Type_get_contents(MPIGPU_Datatype datatype, int max_integers, int max_addresses,
                             int max_datatypes, int array_of_integers[],
                             MPIGPU_Aint array_of_addresses[],
                             MPIGPU_Datatype array_of_datatypes[]);
/* Names of at most MPIGPU_MAX_OBJECT_NAME - 1 characters (longer ones are cut); a derived
 * type's is "" until set. */
int MPIGPU_Type_set_name(MPIGPU_Datatype datatype, const char* type_name);
int MPIGPU_Type_get_name(MPIGPU_Datatype datatype, char* type_name, int* resultlen);
/* The predefined type of typeclass (MPIGPU_TYPECLASS_*) and byte size. Errors: ARG (none). */
int MPIGPU_Type_match_size(int typeclass, int size, MPIGPU_Datatype* datatype);
/* Basic elements received (status from a receive of datatype): counts basic elements of a
 * partial element too; MPIGPU_UNDEFINED if the bytes end inside a basic element. */
int MPIGPU_Get_elements(const MPIGPU_Status* status, MPIGPU_Datatype datatype, int* count);
int MPIGPU_Get_elements_x(const MPIGPU_Status* status, MPIGPU_Datatype datatype,
                          MPIGPU_Count* count);
/* *address = location as a byte address (MPI_Get_address). */
int MPIGPU_Get_address(const void* location, MPIGPU_Aint* address);

/* Pack/Unpack (MPI's, with each buffer's type tag): Pack appends incount elements' data at
 * outbuf + *position and advances *position; Unpack reads outcount elements' data from
 * inbuf + *position. comm is not used (any value but MPIGPU_COMM_NULL). Errors: as the
 * constructors', BUFFER (bad tag), TRUNCATE (outsize or insize too small), COMM (COMM_NULL). */
int MPIGPU_Pack(const void* inbuf, MPIGPU_Buftype inbuftype, int incount,
                MPIGPU_Datatype datatype, void* outbuf, MPIGPU_Buftype outbuftype, int outsize,
                int* position, MPIGPU_Comm comm);
int MPIGPU_Unpack(const void* inbuf, MPIGPU_Buftype inbuftype, int insize, int* position,
                  void* outbuf, MPIGPU_Buftype outbuftype, int outcount,
                  MPIGPU_Datatype datatype, MPIGPU_Comm comm);
/* *size = bytes Pack needs for incount elements. */
int MPIGPU_Pack_size(int incount, MPIGPU_Datatype datatype, MPIGPU_Comm comm, int* size);
/* The portable representation (datarep "external32" only; host buffers only): big-endian, MPI's
 * fixed sizes (LONG 4 bytes, WCHAR 2, AINT/OFFSET/COUNT 8); long double travels as its 16
 * bytes reversed, not converted to IEEE quad. Errors: ARG (other datarep), BUFFER (device
 * buffer), TRUNCATE. */
int MPIGPU_Pack_external(const char* datarep, const void* inbuf, MPIGPU_Buftype inbuftype,
                         int incount, MPIGPU_Datatype datatype, void* outbuf,
                         MPIGPU_Buftype outbuftype, MPIGPU_Aint outsize, MPIGPU_Aint* position);
int MPIGPU_Unpack_external(const char* datarep, const void* inbuf, MPIGPU_Buftype inbuftype,
                           MPIGPU_Aint insize, MPIGPU_Aint* position, void* outbuf,
                           MPIGPU_Buftype outbuftype, int outcount, MPIGPU_Datatype datatype);
int MPIGPU_Pack_external_size(const char* datarep, int incount, MPIGPU_Datatype datatype,
                              MPIGPU_Aint* size);

/* ---- memory ----
 * Host memory for messages that meet device buffers. It is pinned (page-locked, registered with
 * every CUDA device) where a CUDA device is usable, so host<->device messages from and to it run
 * at the copy engines' speed; pageable memory goes through the driver's staging buffers instead
 * (about a quarter of that speed on the H200 node). Without a usable device it is ordinary
 * page-aligned memory. Tag it MPIGPU_BUF_HOST. These calls do not need MPIGPU_Init and return
 * their error codes (no error handler applies). */

/* Allocates size bytes (size 0 gives a valid unique pointer); baseptr is the address of a
 * void*, which receives the memory (as with MPI_Alloc_mem). Errors: ARG (null baseptr), OTHER
 * (out of memory). */
int MPIGPU_Alloc_mem(size_t size, void* baseptr);
/* Frees memory from MPIGPU_Alloc_mem; a null base does nothing. Errors: ARG (base did not come
 * from MPIGPU_Alloc_mem, or was freed already), OTHER (CUDA failure). */
int MPIGPU_Free_mem(void* base);

/* ---- errors ---- */

/* Writes the text for errorcode into str (at most MPIGPU_MAX_ERROR_STRING bytes with the NUL)
 * and its length without the NUL into *resultlen. If the calling thread's latest failure had
 * this code, its detail follows. Errors: ARG (unknown code: str then says so; null pointers).
 * Callable at any time. */
int MPIGPU_Error_string(int errorcode, char* str, int* resultlen);
/* *errorclass = the class of errorcode (codes equal classes). Errors: ARG (unknown code).
 * Callable at any time. */
int MPIGPU_Error_class(int errorcode, int* errorclass);

/* ---- one-sided communication (windows) ----
 * A window exposes memory of every member of a communicator (host or device memory, named by
 * its buffer-type tag) to the others' Put, Get and accumulates. Operations travel as active
 * messages on the window's own context: the target applies them whenever it enters mpigpu (any
 * call's progress) or, with MPIGPU_ASYNC_PROGRESS=1, from a progress thread (docs/rma.md says
 * exactly what progress is guaranteed). Displacements count target disp_units (dynamic windows:
 * absolute addresses, unit 1). Accumulates take a predefined op (REPLACE, NO_OP included) on
 * elements of one predefined type; target datatypes may be derived (their layout travels with
 * the operation). Common errors: WIN (bad or freed window), RMA_SYNC (outside an epoch),
 * RMA_RANGE (outside the target's window: checked at the origin, and again at the target, whose
 * refusal the next flush/unlock/fence/complete returns), PROC_FAILED (the target died). */
typedef int MPIGPU_Win;
#define MPIGPU_WIN_NULL ((MPIGPU_Win)0)
/* Flavors (MPIGPU_Win_query) and the memory model. */
#define MPIGPU_WIN_FLAVOR_CREATE 1
#define MPIGPU_WIN_FLAVOR_ALLOCATE 2
#define MPIGPU_WIN_FLAVOR_DYNAMIC 3
#define MPIGPU_WIN_FLAVOR_SHARED 4
#define MPIGPU_WIN_SEPARATE 1
#define MPIGPU_WIN_UNIFIED 2
/* Lock types and assertions (values as MPI's). */
#define MPIGPU_LOCK_EXCLUSIVE 234
#define MPIGPU_LOCK_SHARED 235
#define MPIGPU_MODE_NOCHECK 1024
#define MPIGPU_MODE_NOSTORE 2048
#define MPIGPU_MODE_NOPUT 4096
#define MPIGPU_MODE_NOPRECEDE 8192
#define MPIGPU_MODE_NOSUCCEED 16384

/* Collective over comm: every member exposes [base, base + size) (size in bytes, may differ per
 * member; size 0 exposes nothing). Errors: COMM, SIZE (negative), DISP (disp_unit <= 0), BUFFER. */
int MPIGPU_Win_create(void* base, MPIGPU_Buftype buftype, MPIGPU_Aint size, int disp_unit,
                      MPIGPU_Info info, MPIGPU_Comm comm, MPIGPU_Win* win);
/* As Win_create over new memory: host memory (MPIGPU_BUF_HOST) or cudaMalloc'd device memory
 * (a GPU tag); *(void**)baseptr receives it. Win_free frees it. Errors: as Win_create, NO_MEM. */
int MPIGPU_Win_allocate(MPIGPU_Aint size, int disp_unit, MPIGPU_Buftype buftype, MPIGPU_Info info,
                        MPIGPU_Comm comm, void* baseptr, MPIGPU_Win* win);
/* A window with no memory until Win_attach; displacements are addresses (MPIGPU_Get_address). */
int MPIGPU_Win_create_dynamic(MPIGPU_Info info, MPIGPU_Comm comm, MPIGPU_Win* win);
/* Local: exposes [base, base + size) of a dynamic window / withdraws the region at base.
 * Errors: RMA_FLAVOR (not dynamic), RMA_ATTACH (overlaps an attached region; not attached). */
int MPIGPU_Win_attach(MPIGPU_Win win, void* base, MPIGPU_Buftype buftype, MPIGPU_Aint size);
int MPIGPU_Win_detach(MPIGPU_Win win, const void* base);
/* Collective: completes every operation on the window, then frees it (*win = WIN_NULL).
 * Errors: WIN, RMA_SYNC (a lock or access/exposure epoch still open). */
int MPIGPU_Win_free(MPIGPU_Win* win);
/* The window's base, size (bytes), disp_unit and flavor on this process (any may be NULL). */
int MPIGPU_Win_query(MPIGPU_Win win, void** base, MPIGPU_Aint* size, int* disp_unit, int* flavor);
/* A new group of the window's members. */
int MPIGPU_Win_get_group(MPIGPU_Win win, MPIGPU_Group* group);
int MPIGPU_Win_set_name(MPIGPU_Win win, const char* name);
int MPIGPU_Win_get_name(MPIGPU_Win win, char* name, int* resultlen);
/* A window's error handler (ERRORS_ARE_FATAL by default, as WORLD's; values from 2 up are the
 * MPI interface's, which the core treats as ERRORS_RETURN). */
int MPIGPU_Win_set_errhandler(MPIGPU_Win win, MPIGPU_Errhandler errhandler);
int MPIGPU_Win_get_errhandler(MPIGPU_Win win, MPIGPU_Errhandler* errhandler);

/* Operations. target_rank is a rank of the window's communicator (PROC_NULL: nothing happens). */
int MPIGPU_Put(const void* origin, MPIGPU_Buftype origin_buftype, int origin_count,
               MPIGPU_Datatype origin_type, int target_rank, MPIGPU_Aint target_disp,
               int target_count, MPIGPU_Datatype target_type, MPIGPU_Win win);
int MPIGPU_Get(void* origin, MPIGPU_Buftype origin_buftype, int origin_count,
               MPIGPU_Datatype origin_type, int target_rank, MPIGPU_Aint target_disp,
               int target_count, MPIGPU_Datatype target_type, MPIGPU_Win win);
/* target = target op origin, element-wise, atomic per element with respect to other
 * accumulates; accumulates of one origin to one location are applied in order. */
int MPIGPU_Accumulate(const void* origin, MPIGPU_Buftype origin_buftype, int origin_count,
                      MPIGPU_Datatype origin_type, int target_rank, MPIGPU_Aint target_disp,
                      int target_count, MPIGPU_Datatype target_type, MPIGPU_Op op,
                      MPIGPU_Win win);
/* result = target; target = target op origin (origin ignored for NO_OP), as one atomic step. */
int MPIGPU_Get_accumulate(const void* origin, MPIGPU_Buftype origin_buftype, int origin_count,
                          MPIGPU_Datatype origin_type, void* result, MPIGPU_Buftype result_buftype,
                          int result_count, MPIGPU_Datatype result_type, int target_rank,
                          MPIGPU_Aint target_disp, int target_count, MPIGPU_Datatype target_type,
                          MPIGPU_Op op, MPIGPU_Win win);
int MPIGPU_Fetch_and_op(const void* origin, MPIGPU_Buftype origin_buftype, void* result,
                        MPIGPU_Buftype result_buftype, MPIGPU_Datatype type, int target_rank,
                        MPIGPU_Aint target_disp, MPIGPU_Op op, MPIGPU_Win win);
/* result = target; if target == compare (bytewise), target = origin. */
int MPIGPU_Compare_and_swap(const void* origin, MPIGPU_Buftype origin_buftype, const void* compare,
                            MPIGPU_Buftype compare_buftype, void* result,
                            MPIGPU_Buftype result_buftype, MPIGPU_Datatype type, int target_rank,
                            MPIGPU_Aint target_disp, MPIGPU_Win win);
/* Request forms: the request completes at the origin (origin buffer reusable; Get: data
 * arrived). */
int MPIGPU_Rput(const void* origin, MPIGPU_Buftype origin_buftype, int origin_count,
                MPIGPU_Datatype origin_type, int target_rank, MPIGPU_Aint target_disp,
                int target_count, MPIGPU_Datatype target_type, MPIGPU_Win win,
                MPIGPU_Request* request);
int MPIGPU_Rget(void* origin, MPIGPU_Buftype origin_buftype, int origin_count,
                MPIGPU_Datatype origin_type, int target_rank, MPIGPU_Aint target_disp,
                int target_count, MPIGPU_Datatype target_type, MPIGPU_Win win,
                MPIGPU_Request* request);
int MPIGPU_Raccumulate(const void* origin, MPIGPU_Buftype origin_buftype, int origin_count,
                       MPIGPU_Datatype origin_type, int target_rank, MPIGPU_Aint target_disp,
                       int target_count, MPIGPU_Datatype target_type, MPIGPU_Op op,
                       MPIGPU_Win win, MPIGPU_Request* request);
int MPIGPU_Rget_accumulate(const void* origin, MPIGPU_Buftype origin_buftype, int origin_count,
                           MPIGPU_Datatype origin_type, void* result,
                           MPIGPU_Buftype result_buftype, int result_count,
                           MPIGPU_Datatype result_type, int target_rank, MPIGPU_Aint target_disp,
                           int target_count, MPIGPU_Datatype target_type, MPIGPU_Op op,
                           MPIGPU_Win win, MPIGPU_Request* request);

/* Synchronisation. Fence: collective; ends the previous epoch (every operation complete at
 * every target) and opens the next (unless MODE_NOSUCCEED). Lock/unlock: a passive-target epoch
 * at one target (shared or exclusive, granted by the target's lock manager; MODE_NOCHECK skips
 * the lock); unlock completes every operation at that target. Flush: every operation to the
 * target complete there; flush_local: complete at the origin. PSCW: Win_post exposes to a
 * group, Win_start opens access to a group (waits for their posts), Win_complete ends it,
 * Win_wait / Win_test end the exposure once every origin completed. */
int MPIGPU_Win_fence(int assert_bits, MPIGPU_Win win);
int MPIGPU_Win_lock(int lock_type, int rank, int assert_bits, MPIGPU_Win win);
int MPIGPU_Win_unlock(int rank, MPIGPU_Win win);
int MPIGPU_Win_lock_all(int assert_bits, MPIGPU_Win win);
int MPIGPU_Win_unlock_all(MPIGPU_Win win);
int MPIGPU_Win_flush(int rank, MPIGPU_Win win);
int MPIGPU_Win_flush_all(MPIGPU_Win win);
int MPIGPU_Win_flush_local(int rank, MPIGPU_Win win);
int MPIGPU_Win_flush_local_all(MPIGPU_Win win);
/* Memory barrier between the process's own loads/stores and the window (unified model). */
int MPIGPU_Win_sync(MPIGPU_Win win);
int MPIGPU_Win_post(MPIGPU_Group group, int assert_bits, MPIGPU_Win win);
int MPIGPU_Win_start(MPIGPU_Group group, int assert_bits, MPIGPU_Win win);
int MPIGPU_Win_complete(MPIGPU_Win win);
int MPIGPU_Win_wait(MPIGPU_Win win);
int MPIGPU_Win_test(MPIGPU_Win win, int* flag);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MPIGPU_MPIGPU_H_ */

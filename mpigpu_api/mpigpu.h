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
/* Byte displacements and extents (as MPI_Aint): signed, as wide as a pointer. */
typedef ptrdiff_t MPIGPU_Aint;

#define MPIGPU_COMM_WORLD ((MPIGPU_Comm)0)
#define MPIGPU_COMM_SELF ((MPIGPU_Comm)1)
#define MPIGPU_COMM_NULL ((MPIGPU_Comm)-1)
#define MPIGPU_REQUEST_NULL ((MPIGPU_Request)0)
#define MPIGPU_DATATYPE_NULL ((MPIGPU_Datatype)-1)
#define MPIGPU_OP_NULL ((MPIGPU_Op)-1)
#define MPIGPU_ERRHANDLER_NULL ((MPIGPU_Errhandler)-1)
#define MPIGPU_ERRORS_ARE_FATAL ((MPIGPU_Errhandler)0)
#define MPIGPU_ERRORS_RETURN ((MPIGPU_Errhandler)1)

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
#define MPIGPU_ERR_LASTCODE 29       /* largest valid error code */

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
/* Handles below this value are predefined; derived types get handles from here up. */
#define MPIGPU_NUM_PREDEFINED_TYPES 62

/* ---- reduction operations ---- */

#define MPIGPU_SUM ((MPIGPU_Op)0)
#define MPIGPU_MIN ((MPIGPU_Op)1)
#define MPIGPU_MAX ((MPIGPU_Op)2)
#define MPIGPU_PROD ((MPIGPU_Op)3)

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
 * cancelled (MPIGPU_Status's private field; MPI_Test_cancelled reads it); a send or a matched
 * receive completes normally. Complete the request with Wait/Test as usual.
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

/* ---- datatypes ----
 * Derived types must be committed before communication (else ERR_TYPE). Only non-negative
 * strides are supported, and a vector's blocks must not overlap (stride >= blocklength when
 * count > 1). These calls do not need MPIGPU_Init. */

/* *newtype = count consecutive copies of oldtype. Errors: COUNT (count < 0), TYPE, ARG. */
int MPIGPU_Type_contiguous(int count, MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype);
/* *newtype = count blocks of blocklength oldtype elements, block starts stride elements (of
 * oldtype's extent) apart. Errors: COUNT (count or blocklength < 0), ARG (negative or
 * overlapping stride, null newtype, type too large), TYPE. */
int MPIGPU_Type_vector(int count, int blocklength, int stride, MPIGPU_Datatype oldtype,
                       MPIGPU_Datatype* newtype);
/* Makes *datatype usable in communication (committing twice or a predefined type is fine).
 * Errors: TYPE, ARG. */
int MPIGPU_Type_commit(MPIGPU_Datatype* datatype);
/* Frees a derived type and sets *datatype to MPIGPU_DATATYPE_NULL; types built from it keep
 * working. Errors: TYPE (predefined, freed or bad handle), ARG. */
int MPIGPU_Type_free(MPIGPU_Datatype* datatype);
/* *size = bytes of data in one element of datatype (MPIGPU_UNDEFINED if it exceeds INT_MAX).
 * Errors: TYPE, ARG. */
int MPIGPU_Type_size(MPIGPU_Datatype datatype, int* size);
/* *lb = lower bound (always 0 here), *extent = span in bytes from the first to past the last
 * byte of one element. Errors: TYPE, ARG. */
int MPIGPU_Type_get_extent(MPIGPU_Datatype datatype, MPIGPU_Aint* lb, MPIGPU_Aint* extent);

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

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MPIGPU_MPIGPU_H_ */

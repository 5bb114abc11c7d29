/* mpi.h: the MPI interface of mpigpu (MPI 3.1 names and semantics), thin over mpigpu.h.
 *
 * Usable from C (C99 and later) and C++. Handles are the core's (MPI_Comm is MPIGPU_Comm,
 * MPI_Datatype is MPIGPU_Datatype, ...), error classes are the core's (MPI_ERR_TAG is
 * MPIGPU_ERR_TAG) and MPI_Status has MPIGPU_Status's layout, so values pass between the two
 * interfaces unchanged. Buffers may be host or device memory: each call finds where a buffer
 * lives (CUDA pointer attributes) once, at this boundary.
 *
 * Every MPI_X is a weak alias of PMPI_X (the profiling interface): a program or tool that
 * defines MPI_X itself can call PMPI_X to reach the library.
 *
 * Names the core does not have yet (some datatypes, ops, topology constants) get placeholder
 * handles that every call refuses with a clear error; they pick up the core's values as soon as
 * mpigpu.h defines them. */
#ifndef MPIGPU_MPI_H_
#define MPIGPU_MPI_H_

#include <stddef.h>
#include <stdint.h>

#include "mpigpu.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define MPIGPU_MPI 1

/* ---- handle and scalar types ---- */

typedef MPIGPU_Comm MPI_Comm;
typedef MPIGPU_Datatype MPI_Datatype;
typedef MPIGPU_Op MPI_Op;
typedef int MPI_Group;      /* MPIGPU_Group */
typedef int MPI_Errhandler; /* the core's ERRORS_ARE_FATAL/ERRORS_RETURN, then user handlers */
typedef int MPI_Request;    /* a request of this layer (persistent, buffered, matched...) */
typedef int MPI_Message;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_File;
typedef MPIGPU_Aint MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

/* Same layout as MPIGPU_Status: the three public fields, then private ones. */
typedef struct MPI_Status {
  int MPI_SOURCE;
  int MPI_TAG;
  int MPI_ERROR;
  /* private: */
  size_t count_bytes;
  int cancelled;
} MPI_Status;

#define MPI_STATUS_IGNORE ((MPI_Status*)0)
#define MPI_STATUSES_IGNORE ((MPI_Status*)0)

/* ---- null and predefined handles ---- */

#define MPI_COMM_WORLD ((MPI_Comm)MPIGPU_COMM_WORLD)
#define MPI_COMM_SELF ((MPI_Comm)MPIGPU_COMM_SELF)
#define MPI_COMM_NULL ((MPI_Comm)MPIGPU_COMM_NULL)
#define MPI_DATATYPE_NULL ((MPI_Datatype)MPIGPU_DATATYPE_NULL)
#define MPI_OP_NULL ((MPI_Op)MPIGPU_OP_NULL)
#define MPI_REQUEST_NULL ((MPI_Request)0)
#define MPI_MESSAGE_NULL ((MPI_Message)0)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)-2)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)MPIGPU_ERRHANDLER_NULL)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)MPIGPU_ERRORS_ARE_FATAL)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)MPIGPU_ERRORS_RETURN)
#define MPI_INFO_NULL ((MPI_Info)0)
#define MPI_INFO_ENV ((MPI_Info)1)
#define MPI_WIN_NULL ((MPI_Win)0)
#define MPI_FILE_NULL ((MPI_File)0)
#ifdef MPIGPU_GROUP_NULL
#define MPI_GROUP_NULL ((MPI_Group)MPIGPU_GROUP_NULL)
#else
#define MPI_GROUP_NULL ((MPI_Group)-1)
#endif
#ifdef MPIGPU_GROUP_EMPTY
#define MPI_GROUP_EMPTY ((MPI_Group)MPIGPU_GROUP_EMPTY)
#else
#define MPI_GROUP_EMPTY ((MPI_Group)0)
#endif

/* ---- special values ---- */

#define MPI_ANY_SOURCE MPIGPU_ANY_SOURCE
#define MPI_ANY_TAG MPIGPU_ANY_TAG
#define MPI_PROC_NULL MPIGPU_PROC_NULL
#define MPI_ROOT MPIGPU_ROOT
#define MPI_UNDEFINED MPIGPU_UNDEFINED
#define MPI_KEYVAL_INVALID (-1)
#define MPI_BOTTOM ((void*)0)
#define MPI_IN_PLACE ((void*)-1)
#define MPI_UNWEIGHTED ((int*)-2)
#define MPI_WEIGHTS_EMPTY ((int*)-3)
#define MPI_ARGV_NULL ((char**)0)
#define MPI_ARGVS_NULL ((char***)0)
#define MPI_ERRCODES_IGNORE ((int*)0)
#define MPI_BSEND_OVERHEAD 96

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING MPIGPU_MAX_ERROR_STRING
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128

/* Thread levels. */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* Results of comparisons. */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* Topology kinds. */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3

/* Comm_split_type. */
#define MPI_COMM_TYPE_SHARED 1
#define MPI_COMM_TYPE_HW_GUIDED 2
#define MPI_COMM_TYPE_HW_UNGUIDED 3

/* Attribute keys of communicators (predefined keyvals). */
#define MPI_TAG_UB 0x64400001
#define MPI_HOST 0x64400003
#define MPI_IO 0x64400005
#define MPI_WTIME_IS_GLOBAL 0x64400007
#define MPI_UNIVERSE_SIZE 0x64400009
#define MPI_LASTUSEDCODE 0x6440000b
#define MPI_APPNUM 0x6440000d

/* Datatype combiners (Type_get_envelope). */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_STRUCT_INTEGER 11
#define MPI_COMBINER_STRUCT 12
#define MPI_COMBINER_SUBARRAY 13
#define MPI_COMBINER_DARRAY 14
#define MPI_COMBINER_F90_REAL 15
#define MPI_COMBINER_F90_COMPLEX 16
#define MPI_COMBINER_F90_INTEGER 17
#define MPI_COMBINER_RESIZED 18
#define MPI_COMBINER_HINDEXED_BLOCK 19

/* Subarray / darray orders and distributions. */
#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* Typeclasses (Type_match_size). */
#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

/* ---- error classes: the core's, so codes pass through unchanged ---- */

#define MPI_SUCCESS MPIGPU_SUCCESS
#define MPI_ERR_BUFFER MPIGPU_ERR_BUFFER
#define MPI_ERR_COUNT MPIGPU_ERR_COUNT
#define MPI_ERR_TYPE MPIGPU_ERR_TYPE
#define MPI_ERR_TAG MPIGPU_ERR_TAG
#define MPI_ERR_COMM MPIGPU_ERR_COMM
#define MPI_ERR_RANK MPIGPU_ERR_RANK
#define MPI_ERR_REQUEST MPIGPU_ERR_REQUEST
#define MPI_ERR_TRUNCATE MPIGPU_ERR_TRUNCATE
#define MPI_ERR_PROC_FAILED MPIGPU_ERR_PROC_FAILED
#define MPI_ERR_INTERN MPIGPU_ERR_INTERN
#define MPI_ERR_OTHER MPIGPU_ERR_OTHER
#define MPI_ERR_ARG MPIGPU_ERR_ARG
#define MPI_ERR_OP MPIGPU_ERR_OP
#define MPI_ERR_ROOT MPIGPU_ERR_ROOT
#define MPI_ERR_GROUP MPIGPU_ERR_GROUP
#define MPI_ERR_TOPOLOGY MPIGPU_ERR_TOPOLOGY
#define MPI_ERR_DIMS MPIGPU_ERR_DIMS
#define MPI_ERR_UNKNOWN MPIGPU_ERR_UNKNOWN
#define MPI_ERR_IN_STATUS MPIGPU_ERR_IN_STATUS
#define MPI_ERR_PENDING MPIGPU_ERR_PENDING
#define MPI_ERR_KEYVAL MPIGPU_ERR_KEYVAL
#define MPI_ERR_INFO MPIGPU_ERR_INFO
#define MPI_ERR_INFO_KEY MPIGPU_ERR_INFO_KEY
#define MPI_ERR_INFO_VALUE MPIGPU_ERR_INFO_VALUE
#define MPI_ERR_INFO_NOKEY MPIGPU_ERR_INFO_NOKEY
#define MPI_ERR_NO_MEM MPIGPU_ERR_NO_MEM
#define MPI_ERR_UNSUPPORTED_OPERATION MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_UNSUPPORTED_DATAREP MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_SPAWN MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_PORT MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_SERVICE MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_NAME MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_WIN MPIGPU_ERR_WIN
#define MPI_ERR_BASE MPIGPU_ERR_ARG
#define MPI_ERR_SIZE MPIGPU_ERR_SIZE
#define MPI_ERR_DISP MPIGPU_ERR_DISP
#define MPI_ERR_LOCKTYPE MPIGPU_ERR_LOCKTYPE
#define MPI_ERR_ASSERT MPIGPU_ERR_ASSERT
#define MPI_ERR_RMA_CONFLICT MPIGPU_ERR_RMA_CONFLICT
#define MPI_ERR_RMA_SYNC MPIGPU_ERR_RMA_SYNC
#define MPI_ERR_RMA_RANGE MPIGPU_ERR_RMA_RANGE
#define MPI_ERR_RMA_ATTACH MPIGPU_ERR_RMA_ATTACH
#define MPI_ERR_RMA_SHARED MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_RMA_FLAVOR MPIGPU_ERR_RMA_FLAVOR
#define MPI_ERR_FILE MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_NOT_SAME MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_AMODE MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_NO_SUCH_FILE MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_FILE_EXISTS MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_BAD_FILE MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_ACCESS MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_NO_SPACE MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_QUOTA MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_READ_ONLY MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_FILE_IN_USE MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_DUP_DATAREP MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_CONVERSION MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_IO MPIGPU_ERR_UNSUPPORTED_OPERATION
#define MPI_ERR_REVOKED MPIGPU_ERR_PROC_FAILED
#define MPI_ERR_PROC_FAILED_PENDING MPIGPU_ERR_PROC_FAILED
/* Classes and codes added with MPI_Add_error_class/code come after this one. */
#define MPI_ERR_LASTCODE MPIGPU_ERR_LASTCODE

/* ---- predefined datatypes ---- */

#define MPI_BYTE MPIGPU_BYTE
#define MPI_CHAR MPIGPU_CHAR
#define MPI_SIGNED_CHAR MPIGPU_SIGNED_CHAR
#define MPI_UNSIGNED_CHAR MPIGPU_UNSIGNED_CHAR
#define MPI_SHORT MPIGPU_SHORT
#define MPI_UNSIGNED_SHORT MPIGPU_UNSIGNED_SHORT
#define MPI_INT MPIGPU_INT
#define MPI_UNSIGNED MPIGPU_UNSIGNED
#define MPI_LONG MPIGPU_LONG
#define MPI_UNSIGNED_LONG MPIGPU_UNSIGNED_LONG
#define MPI_LONG_LONG MPIGPU_LONG_LONG
#define MPI_LONG_LONG_INT MPIGPU_LONG_LONG
#define MPI_UNSIGNED_LONG_LONG MPIGPU_UNSIGNED_LONG_LONG
#define MPI_FLOAT MPIGPU_FLOAT
#define MPI_DOUBLE MPIGPU_DOUBLE
#define MPI_INT8_T MPIGPU_INT8_T
#define MPI_INT16_T MPIGPU_INT16_T
#define MPI_INT32_T MPIGPU_INT32_T
#define MPI_INT64_T MPIGPU_INT64_T
#define MPI_UINT8_T MPIGPU_UINT8_T
#define MPI_UINT16_T MPIGPU_UINT16_T
#define MPI_UINT32_T MPIGPU_UINT32_T
#define MPI_UINT64_T MPIGPU_UINT64_T

/* Types the core may not have yet: each is the core's handle once mpigpu.h defines it, else a
 * distinct placeholder (below -100) that every call refuses with MPI_ERR_TYPE. */
#define MPIGPU_MPI_PENDING_TYPE(n) ((MPI_Datatype)(-100 - (n)))
#ifdef MPIGPU_WCHAR
#define MPI_WCHAR MPIGPU_WCHAR
#else
#define MPI_WCHAR MPIGPU_MPI_PENDING_TYPE(1)
#endif
#ifdef MPIGPU_LONG_DOUBLE
#define MPI_LONG_DOUBLE MPIGPU_LONG_DOUBLE
#else
#define MPI_LONG_DOUBLE MPIGPU_MPI_PENDING_TYPE(2)
#endif
#ifdef MPIGPU_PACKED
#define MPI_PACKED MPIGPU_PACKED
#else
#define MPI_PACKED MPIGPU_MPI_PENDING_TYPE(3)
#endif
#ifdef MPIGPU_C_BOOL
#define MPI_C_BOOL MPIGPU_C_BOOL
#else
#define MPI_C_BOOL MPIGPU_MPI_PENDING_TYPE(4)
#endif
#ifdef MPIGPU_AINT
#define MPI_AINT MPIGPU_AINT
#else
#define MPI_AINT MPIGPU_MPI_PENDING_TYPE(5)
#endif
#ifdef MPIGPU_OFFSET
#define MPI_OFFSET MPIGPU_OFFSET
#else
#define MPI_OFFSET MPIGPU_MPI_PENDING_TYPE(6)
#endif
#ifdef MPIGPU_COUNT
#define MPI_COUNT MPIGPU_COUNT
#else
#define MPI_COUNT MPIGPU_MPI_PENDING_TYPE(7)
#endif
#ifdef MPIGPU_FLOAT_INT
#define MPI_FLOAT_INT MPIGPU_FLOAT_INT
#else
#define MPI_FLOAT_INT MPIGPU_MPI_PENDING_TYPE(8)
#endif
#ifdef MPIGPU_DOUBLE_INT
#define MPI_DOUBLE_INT MPIGPU_DOUBLE_INT
#else
#define MPI_DOUBLE_INT MPIGPU_MPI_PENDING_TYPE(9)
#endif
#ifdef MPIGPU_LONG_INT
#define MPI_LONG_INT MPIGPU_LONG_INT
#else
#define MPI_LONG_INT MPIGPU_MPI_PENDING_TYPE(10)
#endif
#ifdef MPIGPU_2INT
#define MPI_2INT MPIGPU_2INT
#else
#define MPI_2INT MPIGPU_MPI_PENDING_TYPE(11)
#endif
#ifdef MPIGPU_SHORT_INT
#define MPI_SHORT_INT MPIGPU_SHORT_INT
#else
#define MPI_SHORT_INT MPIGPU_MPI_PENDING_TYPE(12)
#endif
#ifdef MPIGPU_LONG_DOUBLE_INT
#define MPI_LONG_DOUBLE_INT MPIGPU_LONG_DOUBLE_INT
#else
#define MPI_LONG_DOUBLE_INT MPIGPU_MPI_PENDING_TYPE(13)
#endif
#ifdef MPIGPU_C_COMPLEX
#define MPI_C_COMPLEX MPIGPU_C_COMPLEX
#else
#define MPI_C_COMPLEX MPIGPU_MPI_PENDING_TYPE(14)
#endif
#ifdef MPIGPU_C_FLOAT_COMPLEX
#define MPI_C_FLOAT_COMPLEX MPIGPU_C_FLOAT_COMPLEX
#else
#define MPI_C_FLOAT_COMPLEX MPIGPU_MPI_PENDING_TYPE(15)
#endif
#ifdef MPIGPU_C_DOUBLE_COMPLEX
#define MPI_C_DOUBLE_COMPLEX MPIGPU_C_DOUBLE_COMPLEX
#else
#define MPI_C_DOUBLE_COMPLEX MPIGPU_MPI_PENDING_TYPE(16)
#endif
#ifdef MPIGPU_C_LONG_DOUBLE_COMPLEX
#define MPI_C_LONG_DOUBLE_COMPLEX MPIGPU_C_LONG_DOUBLE_COMPLEX
#else
#define MPI_C_LONG_DOUBLE_COMPLEX MPIGPU_MPI_PENDING_TYPE(17)
#endif
#ifdef MPIGPU_UB
#define MPI_UB MPIGPU_UB
#else
#define MPI_UB MPIGPU_MPI_PENDING_TYPE(18)
#endif
#ifdef MPIGPU_LB
#define MPI_LB MPIGPU_LB
#else
#define MPI_LB MPIGPU_MPI_PENDING_TYPE(19)
#endif
#ifdef MPIGPU_CXX_BOOL
#define MPI_CXX_BOOL MPIGPU_CXX_BOOL
#else
#define MPI_CXX_BOOL MPIGPU_MPI_PENDING_TYPE(20)
#endif
#ifdef MPIGPU_CXX_FLOAT_COMPLEX
#define MPI_CXX_FLOAT_COMPLEX MPIGPU_CXX_FLOAT_COMPLEX
#else
#define MPI_CXX_FLOAT_COMPLEX MPIGPU_MPI_PENDING_TYPE(21)
#endif
#ifdef MPIGPU_CXX_DOUBLE_COMPLEX
#define MPI_CXX_DOUBLE_COMPLEX MPIGPU_CXX_DOUBLE_COMPLEX
#else
#define MPI_CXX_DOUBLE_COMPLEX MPIGPU_MPI_PENDING_TYPE(22)
#endif
#ifdef MPIGPU_CXX_LONG_DOUBLE_COMPLEX
#define MPI_CXX_LONG_DOUBLE_COMPLEX MPIGPU_CXX_LONG_DOUBLE_COMPLEX
#else
#define MPI_CXX_LONG_DOUBLE_COMPLEX MPIGPU_MPI_PENDING_TYPE(23)
#endif

/* Fortran types (for C programs that name them, e.g. Type_match_size or type names). */
#ifdef MPIGPU_CHARACTER
#define MPI_CHARACTER MPIGPU_CHARACTER
#else
#define MPI_CHARACTER MPIGPU_MPI_PENDING_TYPE(24)
#endif
#ifdef MPIGPU_INTEGER
#define MPI_INTEGER MPIGPU_INTEGER
#else
#define MPI_INTEGER MPIGPU_MPI_PENDING_TYPE(25)
#endif
#ifdef MPIGPU_REAL
#define MPI_REAL MPIGPU_REAL
#else
#define MPI_REAL MPIGPU_MPI_PENDING_TYPE(26)
#endif
#ifdef MPIGPU_DOUBLE_PRECISION
#define MPI_DOUBLE_PRECISION MPIGPU_DOUBLE_PRECISION
#else
#define MPI_DOUBLE_PRECISION MPIGPU_MPI_PENDING_TYPE(27)
#endif
#ifdef MPIGPU_LOGICAL
#define MPI_LOGICAL MPIGPU_LOGICAL
#else
#define MPI_LOGICAL MPIGPU_MPI_PENDING_TYPE(28)
#endif
#ifdef MPIGPU_COMPLEX
#define MPI_COMPLEX MPIGPU_COMPLEX
#else
#define MPI_COMPLEX MPIGPU_MPI_PENDING_TYPE(29)
#endif
#ifdef MPIGPU_DOUBLE_COMPLEX
#define MPI_DOUBLE_COMPLEX MPIGPU_DOUBLE_COMPLEX
#else
#define MPI_DOUBLE_COMPLEX MPIGPU_MPI_PENDING_TYPE(30)
#endif
#ifdef MPIGPU_2INTEGER
#define MPI_2INTEGER MPIGPU_2INTEGER
#else
#define MPI_2INTEGER MPIGPU_MPI_PENDING_TYPE(31)
#endif
#ifdef MPIGPU_2REAL
#define MPI_2REAL MPIGPU_2REAL
#else
#define MPI_2REAL MPIGPU_MPI_PENDING_TYPE(32)
#endif
#ifdef MPIGPU_2DOUBLE_PRECISION
#define MPI_2DOUBLE_PRECISION MPIGPU_2DOUBLE_PRECISION
#else
#define MPI_2DOUBLE_PRECISION MPIGPU_MPI_PENDING_TYPE(33)
#endif
#ifdef MPIGPU_INTEGER1
#define MPI_INTEGER1 MPIGPU_INTEGER1
#else
#define MPI_INTEGER1 MPIGPU_MPI_PENDING_TYPE(34)
#endif
#ifdef MPIGPU_INTEGER2
#define MPI_INTEGER2 MPIGPU_INTEGER2
#else
#define MPI_INTEGER2 MPIGPU_MPI_PENDING_TYPE(35)
#endif
#ifdef MPIGPU_INTEGER4
#define MPI_INTEGER4 MPIGPU_INTEGER4
#else
#define MPI_INTEGER4 MPIGPU_MPI_PENDING_TYPE(36)
#endif
#ifdef MPIGPU_INTEGER8
#define MPI_INTEGER8 MPIGPU_INTEGER8
#else
#define MPI_INTEGER8 MPIGPU_MPI_PENDING_TYPE(37)
#endif
#ifdef MPIGPU_REAL4
#define MPI_REAL4 MPIGPU_REAL4
#else
#define MPI_REAL4 MPIGPU_MPI_PENDING_TYPE(38)
#endif
#ifdef MPIGPU_REAL8
#define MPI_REAL8 MPIGPU_REAL8
#else
#define MPI_REAL8 MPIGPU_MPI_PENDING_TYPE(39)
#endif
#ifdef MPIGPU_REAL16
#define MPI_REAL16 MPIGPU_REAL16
#else
#define MPI_REAL16 MPIGPU_MPI_PENDING_TYPE(40)
#endif
#ifdef MPIGPU_COMPLEX8
#define MPI_COMPLEX8 MPIGPU_COMPLEX8
#else
#define MPI_COMPLEX8 MPIGPU_MPI_PENDING_TYPE(41)
#endif
#ifdef MPIGPU_COMPLEX16
#define MPI_COMPLEX16 MPIGPU_COMPLEX16
#else
#define MPI_COMPLEX16 MPIGPU_MPI_PENDING_TYPE(42)
#endif
#ifdef MPIGPU_COMPLEX32
#define MPI_COMPLEX32 MPIGPU_COMPLEX32
#else
#define MPI_COMPLEX32 MPIGPU_MPI_PENDING_TYPE(43)
#endif
#ifdef MPIGPU_INTEGER16
#define MPI_INTEGER16 MPIGPU_INTEGER16
#endif
#ifdef MPIGPU_2FLOAT
#define MPI_2FLOAT MPIGPU_2FLOAT
#else
#define MPI_2FLOAT MPIGPU_MPI_PENDING_TYPE(44)
#endif
#ifdef MPIGPU_2DOUBLE
#define MPI_2DOUBLE MPIGPU_2DOUBLE
#else
#define MPI_2DOUBLE MPIGPU_MPI_PENDING_TYPE(45)
#endif

/* ---- reduction operations ---- */

#define MPI_SUM MPIGPU_SUM
#define MPI_MIN MPIGPU_MIN
#define MPI_MAX MPIGPU_MAX
#define MPI_PROD MPIGPU_PROD
/* Ops the core may not have yet: a placeholder (below -100) refused with MPI_ERR_OP until it does. */
#define MPIGPU_MPI_PENDING_OP(n) ((MPI_Op)(-100 - (n)))
#ifdef MPIGPU_LAND
#define MPI_LAND MPIGPU_LAND
#else
#define MPI_LAND MPIGPU_MPI_PENDING_OP(1)
#endif
#ifdef MPIGPU_LOR
#define MPI_LOR MPIGPU_LOR
#else
#define MPI_LOR MPIGPU_MPI_PENDING_OP(2)
#endif
#ifdef MPIGPU_LXOR
#define MPI_LXOR MPIGPU_LXOR
#else
#define MPI_LXOR MPIGPU_MPI_PENDING_OP(3)
#endif
#ifdef MPIGPU_BAND
#define MPI_BAND MPIGPU_BAND
#else
#define MPI_BAND MPIGPU_MPI_PENDING_OP(4)
#endif
#ifdef MPIGPU_BOR
#define MPI_BOR MPIGPU_BOR
#else
#define MPI_BOR MPIGPU_MPI_PENDING_OP(5)
#endif
#ifdef MPIGPU_BXOR
#define MPI_BXOR MPIGPU_BXOR
#else
#define MPI_BXOR MPIGPU_MPI_PENDING_OP(6)
#endif
#ifdef MPIGPU_MINLOC
#define MPI_MINLOC MPIGPU_MINLOC
#else
#define MPI_MINLOC MPIGPU_MPI_PENDING_OP(7)
#endif
#ifdef MPIGPU_MAXLOC
#define MPI_MAXLOC MPIGPU_MAXLOC
#else
#define MPI_MAXLOC MPIGPU_MPI_PENDING_OP(8)
#endif
#ifdef MPIGPU_REPLACE
#define MPI_REPLACE MPIGPU_REPLACE
#else
#define MPI_REPLACE MPIGPU_MPI_PENDING_OP(9)
#endif
#ifdef MPIGPU_NO_OP
#define MPI_NO_OP MPIGPU_NO_OP
#else
#define MPI_NO_OP MPIGPU_MPI_PENDING_OP(10)
#endif

/* ---- callback types ---- */

typedef void MPI_User_function(void* invec, void* inoutvec, int* len, MPI_Datatype* datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm* comm, int* errcode, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef void MPI_Win_errhandler_function(MPI_Win* win, int* errcode, ...);
typedef void MPI_File_errhandler_function(MPI_File* file, int* errcode, ...);
typedef void MPI_Handler_function(MPI_Comm* comm, int* errcode, ...);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void* extra_state,
                                        void* attribute_val_in, void* attribute_val_out,
                                        int* flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void* attribute_val,
                                          void* extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void* extra_state,
                                        void* attribute_val_in, void* attribute_val_out,
                                        int* flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void* attribute_val, void* extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void* extra_state,
                                       void* attribute_val_in, void* attribute_val_out, int* flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void* attribute_val,
                                         void* extra_state);
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void* extra_state,
                              void* attribute_val_in, void* attribute_val_out, int* flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void* attribute_val,
                                void* extra_state);
typedef int MPI_Grequest_query_function(void* extra_state, MPI_Status* status);
typedef int MPI_Grequest_free_function(void* extra_state);
typedef int MPI_Grequest_cancel_function(void* extra_state, int complete);

/* Predefined attribute callbacks (functions of this library; MPI_NULL_* are null pointers). */
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function*)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function*)0)
#define MPI_COMM_DUP_FN MPIGPU_MPI_comm_dup_fn
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function*)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function*)0)
#define MPI_TYPE_DUP_FN MPIGPU_MPI_type_dup_fn
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function*)0)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function*)0)
#define MPI_WIN_DUP_FN MPIGPU_MPI_win_dup_fn
#define MPI_NULL_COPY_FN ((MPI_Copy_function*)0)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function*)0)
#define MPI_DUP_FN MPIGPU_MPI_comm_dup_fn
int MPIGPU_MPI_comm_dup_fn(MPI_Comm oldcomm, int keyval, void* extra_state,
                           void* attribute_val_in, void* attribute_val_out, int* flag);
int MPIGPU_MPI_type_dup_fn(MPI_Datatype oldtype, int keyval, void* extra_state,
                           void* attribute_val_in, void* attribute_val_out, int* flag);
int MPIGPU_MPI_win_dup_fn(MPI_Win oldwin, int keyval, void* extra_state, void* attribute_val_in,
                          void* attribute_val_out, int* flag);

/* ---- functions ----
 * MPIGPU_MPI_FN(ret, Name, (params)) declares MPI_Name and PMPI_Name with one parameter list. */
#define MPIGPU_MPI_FN(ret, name, params) ret MPI_##name params; ret PMPI_##name params;

/* environment */
MPIGPU_MPI_FN(int, Init, (int* argc, char*** argv))
MPIGPU_MPI_FN(int, Init_thread, (int* argc, char*** argv, int required, int* provided))
MPIGPU_MPI_FN(int, Query_thread, (int* provided))
MPIGPU_MPI_FN(int, Is_thread_main, (int* flag))
MPIGPU_MPI_FN(int, Initialized, (int* flag))
MPIGPU_MPI_FN(int, Finalize, (void))
MPIGPU_MPI_FN(int, Finalized, (int* flag))
MPIGPU_MPI_FN(int, Abort, (MPI_Comm comm, int errorcode))
MPIGPU_MPI_FN(double, Wtime, (void))
MPIGPU_MPI_FN(double, Wtick, (void))
MPIGPU_MPI_FN(int, Get_processor_name, (char* name, int* resultlen))
MPIGPU_MPI_FN(int, Get_version, (int* version, int* subversion))
MPIGPU_MPI_FN(int, Get_library_version, (char* version, int* resultlen))
MPIGPU_MPI_FN(int, Pcontrol, (const int level, ...))
MPIGPU_MPI_FN(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void* baseptr))
MPIGPU_MPI_FN(int, Free_mem, (void* base))

/* errors and error handlers */
MPIGPU_MPI_FN(int, Error_string, (int errorcode, char* string, int* resultlen))
MPIGPU_MPI_FN(int, Error_class, (int errorcode, int* errorclass))
MPIGPU_MPI_FN(int, Add_error_class, (int* errorclass))
MPIGPU_MPI_FN(int, Add_error_code, (int errorclass, int* errorcode))
MPIGPU_MPI_FN(int, Add_error_string, (int errorcode, const char* string))
MPIGPU_MPI_FN(int, Comm_create_errhandler,
              (MPI_Comm_errhandler_function* function, MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler))
MPIGPU_MPI_FN(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
MPIGPU_MPI_FN(int, Errhandler_create, (MPI_Handler_function* function, MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler))
MPIGPU_MPI_FN(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, Errhandler_free, (MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, Win_create_errhandler,
              (MPI_Win_errhandler_function* function, MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
MPIGPU_MPI_FN(int, Win_call_errhandler, (MPI_Win win, int errorcode))
MPIGPU_MPI_FN(int, File_create_errhandler,
              (MPI_File_errhandler_function* function, MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler))
MPIGPU_MPI_FN(int, File_get_errhandler, (MPI_File file, MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, File_call_errhandler, (MPI_File file, int errorcode))

/* point to point */
MPIGPU_MPI_FN(int, Send, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm))
MPIGPU_MPI_FN(int, Ssend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm))
MPIGPU_MPI_FN(int, Rsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm))
MPIGPU_MPI_FN(int, Bsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm))
MPIGPU_MPI_FN(int, Recv, (void* buf, int count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Status* status))
MPIGPU_MPI_FN(int, Isend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Issend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Irsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Ibsend, (const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                            MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Irecv, (void* buf, int count, MPI_Datatype datatype, int source, int tag,
                           MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Sendrecv,
              (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
               MPI_Comm comm, MPI_Status* status))
MPIGPU_MPI_FN(int, Sendrecv_replace,
              (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
               int recvtag, MPI_Comm comm, MPI_Status* status))
/* MPI 4.0's nonblocking Sendrecv forms. */
MPIGPU_MPI_FN(int, Isendrecv,
              (const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
               void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
               MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Isendrecv_replace,
              (void* buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
               int recvtag, MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Buffer_attach, (void* buffer, int size))
MPIGPU_MPI_FN(int, Buffer_detach, (void* buffer_addr, int* size))
MPIGPU_MPI_FN(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status* status))
MPIGPU_MPI_FN(int, Iprobe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status))
MPIGPU_MPI_FN(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message* message,
                            MPI_Status* status))
MPIGPU_MPI_FN(int, Improbe, (int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                             MPI_Status* status))
MPIGPU_MPI_FN(int, Mrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                           MPI_Status* status))
MPIGPU_MPI_FN(int, Imrecv, (void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                            MPI_Request* request))
MPIGPU_MPI_FN(int, Send_init, (const void* buf, int count, MPI_Datatype datatype, int dest,
                               int tag, MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Ssend_init, (const void* buf, int count, MPI_Datatype datatype, int dest,
                                int tag, MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Rsend_init, (const void* buf, int count, MPI_Datatype datatype, int dest,
                                int tag, MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Bsend_init, (const void* buf, int count, MPI_Datatype datatype, int dest,
                                int tag, MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Recv_init, (void* buf, int count, MPI_Datatype datatype, int source, int tag,
                               MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Start, (MPI_Request* request))
MPIGPU_MPI_FN(int, Startall, (int count, MPI_Request requests[]))

/* requests and statuses */
MPIGPU_MPI_FN(int, Wait, (MPI_Request* request, MPI_Status* status))
MPIGPU_MPI_FN(int, Test, (MPI_Request* request, int* flag, MPI_Status* status))
MPIGPU_MPI_FN(int, Waitany, (int count, MPI_Request requests[], int* index, MPI_Status* status))
MPIGPU_MPI_FN(int, Testany, (int count, MPI_Request requests[], int* index, int* flag,
                             MPI_Status* status))
MPIGPU_MPI_FN(int, Waitall, (int count, MPI_Request requests[], MPI_Status statuses[]))
MPIGPU_MPI_FN(int, Testall, (int count, MPI_Request requests[], int* flag, MPI_Status statuses[]))
MPIGPU_MPI_FN(int, Waitsome, (int incount, MPI_Request requests[], int* outcount, int indices[],
                              MPI_Status statuses[]))
MPIGPU_MPI_FN(int, Testsome, (int incount, MPI_Request requests[], int* outcount, int indices[],
                              MPI_Status statuses[]))
MPIGPU_MPI_FN(int, Cancel, (MPI_Request* request))
MPIGPU_MPI_FN(int, Test_cancelled, (const MPI_Status* status, int* flag))
MPIGPU_MPI_FN(int, Request_free, (MPI_Request* request))
MPIGPU_MPI_FN(int, Request_get_status, (MPI_Request request, int* flag, MPI_Status* status))
MPIGPU_MPI_FN(int, Get_count, (const MPI_Status* status, MPI_Datatype datatype, int* count))
MPIGPU_MPI_FN(int, Get_elements, (const MPI_Status* status, MPI_Datatype datatype, int* count))
MPIGPU_MPI_FN(int, Get_elements_x, (const MPI_Status* status, MPI_Datatype datatype,
                                    MPI_Count* count))
MPIGPU_MPI_FN(int, Status_set_elements, (MPI_Status* status, MPI_Datatype datatype, int count))
MPIGPU_MPI_FN(int, Status_set_elements_x, (MPI_Status* status, MPI_Datatype datatype,
                                           MPI_Count count))
MPIGPU_MPI_FN(int, Status_set_cancelled, (MPI_Status* status, int flag))
MPIGPU_MPI_FN(int, Grequest_start,
              (MPI_Grequest_query_function* query_fn, MPI_Grequest_free_function* free_fn,
               MPI_Grequest_cancel_function* cancel_fn, void* extra_state, MPI_Request* request))
MPIGPU_MPI_FN(int, Grequest_complete, (MPI_Request request))

/* datatypes (mpi-types) */
MPIGPU_MPI_FN(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype oldtype,
                                 MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_hvector, (int count, int blocklength, MPI_Aint stride,
                                  MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride,
                                         MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_indexed, (int count, const int array_of_blocklengths[],
                                  const int array_of_displacements[], MPI_Datatype oldtype,
                                  MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_hindexed, (int count, const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                   MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_create_hindexed, (int count, const int array_of_blocklengths[],
                                          const MPI_Aint array_of_displacements[],
                                          MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_create_indexed_block, (int count, int blocklength,
                                               const int array_of_displacements[],
                                               MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_create_hindexed_block, (int count, int blocklength,
                                                const MPI_Aint array_of_displacements[],
                                                MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_struct, (int count, const int array_of_blocklengths[],
                                 const MPI_Aint array_of_displacements[],
                                 const MPI_Datatype array_of_types[], MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_create_struct, (int count, const int array_of_blocklengths[],
                                        const MPI_Aint array_of_displacements[],
                                        const MPI_Datatype array_of_types[],
                                        MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_create_subarray, (int ndims, const int array_of_sizes[],
                                          const int array_of_subsizes[],
                                          const int array_of_starts[], int order,
                                          MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_create_darray, (int size, int rank, int ndims, const int array_of_gsizes[],
                                        const int array_of_distribs[],
                                        const int array_of_dargs[], const int array_of_psizes[],
                                        int order, MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_create_resized, (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                                         MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype* newtype))
MPIGPU_MPI_FN(int, Type_commit, (MPI_Datatype* datatype))
MPIGPU_MPI_FN(int, Type_free, (MPI_Datatype* datatype))
MPIGPU_MPI_FN(int, Type_size, (MPI_Datatype datatype, int* size))
MPIGPU_MPI_FN(int, Type_size_x, (MPI_Datatype datatype, MPI_Count* size))
MPIGPU_MPI_FN(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent))
MPIGPU_MPI_FN(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent))
MPIGPU_MPI_FN(int, Type_get_true_extent, (MPI_Datatype datatype, MPI_Aint* true_lb,
                                          MPI_Aint* true_extent))
MPIGPU_MPI_FN(int, Type_get_true_extent_x, (MPI_Datatype datatype, MPI_Count* true_lb,
                                            MPI_Count* true_extent))
MPIGPU_MPI_FN(int, Type_extent, (MPI_Datatype datatype, MPI_Aint* extent))
MPIGPU_MPI_FN(int, Type_lb, (MPI_Datatype datatype, MPI_Aint* displacement))
MPIGPU_MPI_FN(int, Type_ub, (MPI_Datatype datatype, MPI_Aint* displacement))
MPIGPU_MPI_FN(int, Type_get_envelope, (MPI_Datatype datatype, int* num_integers,
                                       int* num_addresses, int* num_datatypes, int* combiner))
MPIGPU_MPI_FN(int, Type_get_contents, (MPI_Datatype datatype, int max_integers,
                                       int max_addresses, int max_datatypes,
                                       int array_of_integers[], MPI_Aint array_of_addresses[],
                                       MPI_Datatype array_of_datatypes[]))
MPIGPU_MPI_FN(int, Type_set_name, (MPI_Datatype datatype, const char* type_name))
MPIGPU_MPI_FN(int, Type_get_name, (MPI_Datatype datatype, char* type_name, int* resultlen))
MPIGPU_MPI_FN(int, Type_match_size, (int typeclass, int size, MPI_Datatype* datatype))
MPIGPU_MPI_FN(int, Type_create_keyval, (MPI_Type_copy_attr_function* type_copy_attr_fn,
                                        MPI_Type_delete_attr_function* type_delete_attr_fn,
                                        int* type_keyval, void* extra_state))
MPIGPU_MPI_FN(int, Type_free_keyval, (int* type_keyval))
MPIGPU_MPI_FN(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val))
MPIGPU_MPI_FN(int, Type_get_attr, (MPI_Datatype datatype, int type_keyval, void* attribute_val,
                                   int* flag))
MPIGPU_MPI_FN(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval))
MPIGPU_MPI_FN(int, Get_address, (const void* location, MPI_Aint* address))
MPIGPU_MPI_FN(int, Address, (void* location, MPI_Aint* address))
MPIGPU_MPI_FN(int, Pack, (const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf,
                          int outsize, int* position, MPI_Comm comm))
MPIGPU_MPI_FN(int, Unpack, (const void* inbuf, int insize, int* position, void* outbuf,
                            int outcount, MPI_Datatype datatype, MPI_Comm comm))
MPIGPU_MPI_FN(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int* size))
MPIGPU_MPI_FN(int, Pack_external, (const char datarep[], const void* inbuf, int incount,
                                   MPI_Datatype datatype, void* outbuf, MPI_Aint outsize,
                                   MPI_Aint* position))
MPIGPU_MPI_FN(int, Unpack_external, (const char datarep[], const void* inbuf, MPI_Aint insize,
                                     MPI_Aint* position, void* outbuf, int outcount,
                                     MPI_Datatype datatype))
MPIGPU_MPI_FN(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype datatype,
                                        MPI_Aint* size))
MPIGPU_MPI_FN(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
MPIGPU_MPI_FN(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))

/* collectives (mpi-coll) */
MPIGPU_MPI_FN(int, Barrier, (MPI_Comm comm))
MPIGPU_MPI_FN(int, Bcast, (void* buffer, int count, MPI_Datatype datatype, int root,
                           MPI_Comm comm))
MPIGPU_MPI_FN(int, Gather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm))
MPIGPU_MPI_FN(int, Gatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm))
MPIGPU_MPI_FN(int, Scatter, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm))
MPIGPU_MPI_FN(int, Scatterv, (const void* sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void* recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm))
MPIGPU_MPI_FN(int, Allgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm))
MPIGPU_MPI_FN(int, Allgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm))
MPIGPU_MPI_FN(int, Alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
MPIGPU_MPI_FN(int, Alltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
MPIGPU_MPI_FN(int, Alltoallw, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void* recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm))
MPIGPU_MPI_FN(int, Reduce, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm))
MPIGPU_MPI_FN(int, Allreduce, (const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPIGPU_MPI_FN(int, Reduce_local, (const void* inbuf, void* inoutbuf, int count,
                                  MPI_Datatype datatype, MPI_Op op))
MPIGPU_MPI_FN(int, Reduce_scatter, (const void* sendbuf, void* recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPIGPU_MPI_FN(int, Reduce_scatter_block, (const void* sendbuf, void* recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
MPIGPU_MPI_FN(int, Scan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm))
MPIGPU_MPI_FN(int, Exscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm))
MPIGPU_MPI_FN(int, Op_create, (MPI_User_function* user_fn, int commute, MPI_Op* op))
MPIGPU_MPI_FN(int, Op_free, (MPI_Op* op))
MPIGPU_MPI_FN(int, Op_commutative, (MPI_Op op, int* commute))
MPIGPU_MPI_FN(int, Ibarrier, (MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Ibcast, (void* buffer, int count, MPI_Datatype datatype, int root,
                            MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Igather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Igatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, int root, MPI_Comm comm,
                              MPI_Request* request))
MPIGPU_MPI_FN(int, Iscatter, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Iscatterv, (const void* sendbuf, const int sendcounts[], const int displs[],
                               MPI_Datatype sendtype, void* recvbuf, int recvcount,
                               MPI_Datatype recvtype, int root, MPI_Comm comm,
                               MPI_Request* request))
MPIGPU_MPI_FN(int, Iallgather, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Iallgatherv, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Ialltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                               void* recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Ialltoallv, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                MPI_Request* request))
MPIGPU_MPI_FN(int, Ialltoallw, (const void* sendbuf, const int sendcounts[], const int sdispls[],
                                const MPI_Datatype sendtypes[], void* recvbuf,
                                const int recvcounts[], const int rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm,
                                MPI_Request* request))
MPIGPU_MPI_FN(int, Ireduce, (const void* sendbuf, void* recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                             MPI_Request* request))
MPIGPU_MPI_FN(int, Iallreduce, (const void* sendbuf, void* recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                MPI_Request* request))
MPIGPU_MPI_FN(int, Ireduce_scatter, (const void* sendbuf, void* recvbuf, const int recvcounts[],
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                     MPI_Request* request))
MPIGPU_MPI_FN(int, Ireduce_scatter_block, (const void* sendbuf, void* recvbuf, int recvcount,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                           MPI_Request* request))
MPIGPU_MPI_FN(int, Iscan, (const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                           MPI_Op op, MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Iexscan, (const void* sendbuf, void* recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                             MPI_Request* request))

/* persistent collectives (MPI 4.0; mpi_coll_persistent.cc). The neighborhood ones return
 * MPI_ERR_UNSUPPORTED_OPERATION (their persistent forms are not written yet). */
MPIGPU_MPI_FN(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Bcast_init, (void* buffer, int count, MPI_Datatype datatype, int root,
                                MPI_Comm comm, MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Gather_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Gatherv_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, const int recvcounts[], const int displs[],
                                  MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request))
MPIGPU_MPI_FN(int, Scatter_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Scatterv_init, (const void* sendbuf, const int sendcounts[],
                                   const int displs[], MPI_Datatype sendtype, void* recvbuf,
                                   int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                   MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Allgather_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Allgatherv_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void* recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request* request))
MPIGPU_MPI_FN(int, Alltoall_init, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Alltoallv_init, (const void* sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void* recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request* request))
MPIGPU_MPI_FN(int, Alltoallw_init, (const void* sendbuf, const int sendcounts[],
                                    const int sdispls[], const MPI_Datatype sendtypes[],
                                    void* recvbuf, const int recvcounts[], const int rdispls[],
                                    const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                    MPI_Request* request))
MPIGPU_MPI_FN(int, Reduce_init, (const void* sendbuf, void* recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Allreduce_init, (const void* sendbuf, void* recvbuf, int count,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Reduce_scatter_init, (const void* sendbuf, void* recvbuf,
                                         const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                                         MPI_Comm comm, MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Reduce_scatter_block_init, (const void* sendbuf, void* recvbuf,
                                               int recvcount, MPI_Datatype datatype, MPI_Op op,
                                               MPI_Comm comm, MPI_Info info,
                                               MPI_Request* request))
MPIGPU_MPI_FN(int, Scan_init, (const void* sendbuf, void* recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                               MPI_Request* request))
MPIGPU_MPI_FN(int, Exscan_init, (const void* sendbuf, void* recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                 MPI_Request* request))
MPIGPU_MPI_FN(int, Neighbor_allgather_init, (const void* sendbuf, int sendcount,
                                             MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                             MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                             MPI_Request* request))
MPIGPU_MPI_FN(int, Neighbor_allgatherv_init, (const void* sendbuf, int sendcount,
                                              MPI_Datatype sendtype, void* recvbuf,
                                              const int recvcounts[], const int displs[],
                                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                              MPI_Request* request))
MPIGPU_MPI_FN(int, Neighbor_alltoall_init, (const void* sendbuf, int sendcount,
                                            MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                            MPI_Request* request))
MPIGPU_MPI_FN(int, Neighbor_alltoallv_init, (const void* sendbuf, const int sendcounts[],
                                             const int sdispls[], MPI_Datatype sendtype,
                                             void* recvbuf, const int recvcounts[],
                                             const int rdispls[], MPI_Datatype recvtype,
                                             MPI_Comm comm, MPI_Info info, MPI_Request* request))
MPIGPU_MPI_FN(int, Neighbor_alltoallw_init, (const void* sendbuf, const int sendcounts[],
                                             const MPI_Aint sdispls[],
                                             const MPI_Datatype sendtypes[], void* recvbuf,
                                             const int recvcounts[], const MPI_Aint rdispls[],
                                             const MPI_Datatype recvtypes[], MPI_Comm comm,
                                             MPI_Info info, MPI_Request* request))

/* communicators (mpi-layer: rank, size, dup, split, free; the rest mpi-comm) */
MPIGPU_MPI_FN(int, Comm_rank, (MPI_Comm comm, int* rank))
MPIGPU_MPI_FN(int, Comm_size, (MPI_Comm comm, int* size))
MPIGPU_MPI_FN(int, Comm_dup, (MPI_Comm comm, MPI_Comm* newcomm))
MPIGPU_MPI_FN(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm* newcomm))
MPIGPU_MPI_FN(int, Comm_free, (MPI_Comm* comm))
MPIGPU_MPI_FN(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm))
MPIGPU_MPI_FN(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                                          MPI_Request* request))
MPIGPU_MPI_FN(int, Comm_idup, (MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request))
MPIGPU_MPI_FN(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info,
                                     MPI_Comm* newcomm))
MPIGPU_MPI_FN(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm))
MPIGPU_MPI_FN(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag,
                                       MPI_Comm* newcomm))
MPIGPU_MPI_FN(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int* result))
MPIGPU_MPI_FN(int, Comm_group, (MPI_Comm comm, MPI_Group* group))
MPIGPU_MPI_FN(int, Comm_test_inter, (MPI_Comm comm, int* flag))
MPIGPU_MPI_FN(int, Comm_remote_size, (MPI_Comm comm, int* size))
MPIGPU_MPI_FN(int, Comm_remote_group, (MPI_Comm comm, MPI_Group* group))
MPIGPU_MPI_FN(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                      int remote_leader, int tag, MPI_Comm* newintercomm))
MPIGPU_MPI_FN(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm* newintracomm))
MPIGPU_MPI_FN(int, Comm_set_name, (MPI_Comm comm, const char* comm_name))
MPIGPU_MPI_FN(int, Comm_get_name, (MPI_Comm comm, char* comm_name, int* resultlen))
MPIGPU_MPI_FN(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
MPIGPU_MPI_FN(int, Comm_get_info, (MPI_Comm comm, MPI_Info* info_used))
MPIGPU_MPI_FN(int, Comm_create_keyval, (MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                                        MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                                        int* comm_keyval, void* extra_state))
MPIGPU_MPI_FN(int, Comm_free_keyval, (int* comm_keyval))
MPIGPU_MPI_FN(int, Comm_set_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val))
MPIGPU_MPI_FN(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void* attribute_val,
                                   int* flag))
MPIGPU_MPI_FN(int, Comm_delete_attr, (MPI_Comm comm, int comm_keyval))
MPIGPU_MPI_FN(int, Keyval_create, (MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn,
                                   int* keyval, void* extra_state))
MPIGPU_MPI_FN(int, Keyval_free, (int* keyval))
MPIGPU_MPI_FN(int, Attr_put, (MPI_Comm comm, int keyval, void* attribute_val))
MPIGPU_MPI_FN(int, Attr_get, (MPI_Comm comm, int keyval, void* attribute_val, int* flag))
MPIGPU_MPI_FN(int, Attr_delete, (MPI_Comm comm, int keyval))

/* groups (mpi-comm) */
MPIGPU_MPI_FN(int, Group_size, (MPI_Group group, int* size))
MPIGPU_MPI_FN(int, Group_rank, (MPI_Group group, int* rank))
MPIGPU_MPI_FN(int, Group_translate_ranks, (MPI_Group group1, int n, const int ranks1[],
                                           MPI_Group group2, int ranks2[]))
MPIGPU_MPI_FN(int, Group_compare, (MPI_Group group1, MPI_Group group2, int* result))
MPIGPU_MPI_FN(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
MPIGPU_MPI_FN(int, Group_intersection, (MPI_Group group1, MPI_Group group2,
                                        MPI_Group* newgroup))
MPIGPU_MPI_FN(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group* newgroup))
MPIGPU_MPI_FN(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup))
MPIGPU_MPI_FN(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group* newgroup))
MPIGPU_MPI_FN(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3],
                                      MPI_Group* newgroup))
MPIGPU_MPI_FN(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3],
                                      MPI_Group* newgroup))
MPIGPU_MPI_FN(int, Group_free, (MPI_Group* group))

/* topologies (mpi-comm) */
MPIGPU_MPI_FN(int, Dims_create, (int nnodes, int ndims, int dims[]))
MPIGPU_MPI_FN(int, Cart_create, (MPI_Comm comm_old, int ndims, const int dims[],
                                 const int periods[], int reorder, MPI_Comm* comm_cart))
MPIGPU_MPI_FN(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
MPIGPU_MPI_FN(int, Cart_rank, (MPI_Comm comm, const int coords[], int* rank))
MPIGPU_MPI_FN(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int* rank_source,
                                int* rank_dest))
MPIGPU_MPI_FN(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm))
MPIGPU_MPI_FN(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[],
                              int coords[]))
MPIGPU_MPI_FN(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[],
                              int* newrank))
MPIGPU_MPI_FN(int, Cartdim_get, (MPI_Comm comm, int* ndims))
MPIGPU_MPI_FN(int, Graph_create, (MPI_Comm comm_old, int nnodes, const int index[],
                                  const int edges[], int reorder, MPI_Comm* comm_graph))
MPIGPU_MPI_FN(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[],
                               int edges[]))
MPIGPU_MPI_FN(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[],
                               int* newrank))
MPIGPU_MPI_FN(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors,
                                     int neighbors[]))
MPIGPU_MPI_FN(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int* nneighbors))
MPIGPU_MPI_FN(int, Graphdims_get, (MPI_Comm comm, int* nnodes, int* nedges))
MPIGPU_MPI_FN(int, Topo_test, (MPI_Comm comm, int* status))
MPIGPU_MPI_FN(int, Dist_graph_create_adjacent,
              (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
               int outdegree, const int destinations[], const int destweights[], MPI_Info info,
               int reorder, MPI_Comm* comm_dist_graph))
MPIGPU_MPI_FN(int, Dist_graph_create, (MPI_Comm comm_old, int n, const int sources[],
                                       const int degrees[], const int destinations[],
                                       const int weights[], MPI_Info info, int reorder,
                                       MPI_Comm* comm_dist_graph))
MPIGPU_MPI_FN(int, Dist_graph_neighbors_count, (MPI_Comm comm, int* indegree, int* outdegree,
                                                int* weighted))
MPIGPU_MPI_FN(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[],
                                          int sourceweights[], int maxoutdegree,
                                          int destinations[], int destweights[]))

/* neighborhood collectives (Cartesian, graph and distributed-graph topologies) */
MPIGPU_MPI_FN(int, Neighbor_allgather, (const void* sendbuf, int sendcount,
                                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                        MPI_Datatype recvtype, MPI_Comm comm))
MPIGPU_MPI_FN(int, Neighbor_allgatherv, (const void* sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void* recvbuf,
                                         const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm))
MPIGPU_MPI_FN(int, Neighbor_alltoall, (const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm))
MPIGPU_MPI_FN(int, Neighbor_alltoallv, (const void* sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype,
                                        void* recvbuf, const int recvcounts[],
                                        const int rdispls[], MPI_Datatype recvtype,
                                        MPI_Comm comm))
MPIGPU_MPI_FN(int, Neighbor_alltoallw, (const void* sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void* recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm comm))
MPIGPU_MPI_FN(int, Ineighbor_allgather, (const void* sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                         MPI_Datatype recvtype, MPI_Comm comm,
                                         MPI_Request* request))
MPIGPU_MPI_FN(int, Ineighbor_allgatherv, (const void* sendbuf, int sendcount,
                                          MPI_Datatype sendtype, void* recvbuf,
                                          const int recvcounts[], const int displs[],
                                          MPI_Datatype recvtype, MPI_Comm comm,
                                          MPI_Request* request))
MPIGPU_MPI_FN(int, Ineighbor_alltoall, (const void* sendbuf, int sendcount,
                                        MPI_Datatype sendtype, void* recvbuf, int recvcount,
                                        MPI_Datatype recvtype, MPI_Comm comm,
                                        MPI_Request* request))
MPIGPU_MPI_FN(int, Ineighbor_alltoallv, (const void* sendbuf, const int sendcounts[],
                                         const int sdispls[], MPI_Datatype sendtype,
                                         void* recvbuf, const int recvcounts[],
                                         const int rdispls[], MPI_Datatype recvtype,
                                         MPI_Comm comm, MPI_Request* request))
MPIGPU_MPI_FN(int, Ineighbor_alltoallw, (const void* sendbuf, const int sendcounts[],
                                         const MPI_Aint sdispls[],
                                         const MPI_Datatype sendtypes[], void* recvbuf,
                                         const int recvcounts[], const MPI_Aint rdispls[],
                                         const MPI_Datatype recvtypes[], MPI_Comm comm,
                                         MPI_Request* request))

/* info objects (only MPI_INFO_NULL / MPI_INFO_ENV are usable: mpigpu takes no hints) */
MPIGPU_MPI_FN(int, Info_create, (MPI_Info* info))
MPIGPU_MPI_FN(int, Info_free, (MPI_Info* info))
MPIGPU_MPI_FN(int, Info_set, (MPI_Info info, const char* key, const char* value))
MPIGPU_MPI_FN(int, Info_get, (MPI_Info info, const char* key, int valuelen, char* value,
                              int* flag))
MPIGPU_MPI_FN(int, Info_get_nkeys, (MPI_Info info, int* nkeys))
MPIGPU_MPI_FN(int, Info_get_nthkey, (MPI_Info info, int n, char* key))
MPIGPU_MPI_FN(int, Info_get_valuelen, (MPI_Info info, const char* key, int* valuelen, int* flag))
MPIGPU_MPI_FN(int, Info_delete, (MPI_Info info, const char* key))
MPIGPU_MPI_FN(int, Info_dup, (MPI_Info info, MPI_Info* newinfo))

/* Fortran handle conversion: handles are ints already. */
MPIGPU_MPI_FN(MPI_Fint, Comm_c2f, (MPI_Comm comm))
MPIGPU_MPI_FN(MPI_Comm, Comm_f2c, (MPI_Fint comm))
MPIGPU_MPI_FN(MPI_Fint, Type_c2f, (MPI_Datatype datatype))
MPIGPU_MPI_FN(MPI_Datatype, Type_f2c, (MPI_Fint datatype))
MPIGPU_MPI_FN(MPI_Fint, Group_c2f, (MPI_Group group))
MPIGPU_MPI_FN(MPI_Group, Group_f2c, (MPI_Fint group))
MPIGPU_MPI_FN(MPI_Fint, Op_c2f, (MPI_Op op))
MPIGPU_MPI_FN(MPI_Op, Op_f2c, (MPI_Fint op))
MPIGPU_MPI_FN(MPI_Fint, Request_c2f, (MPI_Request request))
MPIGPU_MPI_FN(MPI_Request, Request_f2c, (MPI_Fint request))
MPIGPU_MPI_FN(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
MPIGPU_MPI_FN(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
MPIGPU_MPI_FN(MPI_Fint, Info_c2f, (MPI_Info info))
MPIGPU_MPI_FN(MPI_Info, Info_f2c, (MPI_Fint info))
MPIGPU_MPI_FN(MPI_Fint, Message_c2f, (MPI_Message message))
MPIGPU_MPI_FN(MPI_Message, Message_f2c, (MPI_Fint message))

/* ---- one-sided communication (windows; mpi_win.cc) ---- */
#define MPI_WIN_BASE 0x66000001
#define MPI_WIN_SIZE 0x66000003
#define MPI_WIN_DISP_UNIT 0x66000005
#define MPI_WIN_CREATE_FLAVOR 0x66000007
#define MPI_WIN_MODEL 0x66000009
#define MPI_WIN_FLAVOR_CREATE MPIGPU_WIN_FLAVOR_CREATE
#define MPI_WIN_FLAVOR_ALLOCATE MPIGPU_WIN_FLAVOR_ALLOCATE
#define MPI_WIN_FLAVOR_DYNAMIC MPIGPU_WIN_FLAVOR_DYNAMIC
#define MPI_WIN_FLAVOR_SHARED MPIGPU_WIN_FLAVOR_SHARED
#define MPI_WIN_SEPARATE MPIGPU_WIN_SEPARATE
#define MPI_WIN_UNIFIED MPIGPU_WIN_UNIFIED
#define MPI_LOCK_EXCLUSIVE MPIGPU_LOCK_EXCLUSIVE
#define MPI_LOCK_SHARED MPIGPU_LOCK_SHARED
#define MPI_MODE_NOCHECK MPIGPU_MODE_NOCHECK
#define MPI_MODE_NOSTORE MPIGPU_MODE_NOSTORE
#define MPI_MODE_NOPUT MPIGPU_MODE_NOPUT
#define MPI_MODE_NOPRECEDE MPIGPU_MODE_NOPRECEDE
#define MPI_MODE_NOSUCCEED MPIGPU_MODE_NOSUCCEED
MPIGPU_MPI_FN(int, Win_create, (void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                                MPI_Comm comm, MPI_Win* win))
MPIGPU_MPI_FN(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                  void* baseptr, MPI_Win* win))
MPIGPU_MPI_FN(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win* win))
MPIGPU_MPI_FN(int, Win_attach, (MPI_Win win, void* base, MPI_Aint size))
MPIGPU_MPI_FN(int, Win_detach, (MPI_Win win, const void* base))
MPIGPU_MPI_FN(int, Win_free, (MPI_Win* win))
MPIGPU_MPI_FN(int, Win_get_group, (MPI_Win win, MPI_Group* group))
MPIGPU_MPI_FN(int, Win_set_name, (MPI_Win win, const char* win_name))
MPIGPU_MPI_FN(int, Win_get_name, (MPI_Win win, char* win_name, int* resultlen))
MPIGPU_MPI_FN(int, Win_set_info, (MPI_Win win, MPI_Info info))
MPIGPU_MPI_FN(int, Win_get_info, (MPI_Win win, MPI_Info* info_used))
MPIGPU_MPI_FN(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler* errhandler))
MPIGPU_MPI_FN(int, Win_create_keyval, (MPI_Win_copy_attr_function* win_copy_attr_fn,
                                       MPI_Win_delete_attr_function* win_delete_attr_fn,
                                       int* win_keyval, void* extra_state))
MPIGPU_MPI_FN(int, Win_free_keyval, (int* win_keyval))
MPIGPU_MPI_FN(int, Win_set_attr, (MPI_Win win, int win_keyval, void* attribute_val))
MPIGPU_MPI_FN(int, Win_get_attr, (MPI_Win win, int win_keyval, void* attribute_val, int* flag))
MPIGPU_MPI_FN(int, Win_delete_attr, (MPI_Win win, int win_keyval))
MPIGPU_MPI_FN(int, Put, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Win win))
MPIGPU_MPI_FN(int, Get, (void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Win win))
MPIGPU_MPI_FN(int, Accumulate, (const void* origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MPIGPU_MPI_FN(int, Get_accumulate, (const void* origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, void* result_addr,
                                    int result_count, MPI_Datatype result_datatype,
                                    int target_rank, MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
MPIGPU_MPI_FN(int, Fetch_and_op, (const void* origin_addr, void* result_addr,
                                  MPI_Datatype datatype, int target_rank, MPI_Aint target_disp,
                                  MPI_Op op, MPI_Win win))
MPIGPU_MPI_FN(int, Compare_and_swap, (const void* origin_addr, const void* compare_addr,
                                      void* result_addr, MPI_Datatype datatype, int target_rank,
                                      MPI_Aint target_disp, MPI_Win win))
MPIGPU_MPI_FN(int, Rput, (const void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, int target_count,
                          MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request))
MPIGPU_MPI_FN(int, Rget, (void* origin_addr, int origin_count, MPI_Datatype origin_datatype,
                          int target_rank, MPI_Aint target_disp, int target_count,
                          MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request))
MPIGPU_MPI_FN(int, Raccumulate, (const void* origin_addr, int origin_count,
                                 MPI_Datatype origin_datatype, int target_rank,
                                 MPI_Aint target_disp, int target_count,
                                 MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                 MPI_Request* request))
MPIGPU_MPI_FN(int, Rget_accumulate, (const void* origin_addr, int origin_count,
                                     MPI_Datatype origin_datatype, void* result_addr,
                                     int result_count, MPI_Datatype result_datatype,
                                     int target_rank, MPI_Aint target_disp, int target_count,
                                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                     MPI_Request* request))
MPIGPU_MPI_FN(int, Win_fence, (int assert_bits, MPI_Win win))
MPIGPU_MPI_FN(int, Win_lock, (int lock_type, int rank, int assert_bits, MPI_Win win))
MPIGPU_MPI_FN(int, Win_unlock, (int rank, MPI_Win win))
MPIGPU_MPI_FN(int, Win_lock_all, (int assert_bits, MPI_Win win))
MPIGPU_MPI_FN(int, Win_unlock_all, (MPI_Win win))
MPIGPU_MPI_FN(int, Win_flush, (int rank, MPI_Win win))
MPIGPU_MPI_FN(int, Win_flush_all, (MPI_Win win))
MPIGPU_MPI_FN(int, Win_flush_local, (int rank, MPI_Win win))
MPIGPU_MPI_FN(int, Win_flush_local_all, (MPI_Win win))
MPIGPU_MPI_FN(int, Win_sync, (MPI_Win win))
MPIGPU_MPI_FN(int, Win_post, (MPI_Group group, int assert_bits, MPI_Win win))
MPIGPU_MPI_FN(int, Win_start, (MPI_Group group, int assert_bits, MPI_Win win))
MPIGPU_MPI_FN(int, Win_complete, (MPI_Win win))
MPIGPU_MPI_FN(int, Win_wait, (MPI_Win win))
MPIGPU_MPI_FN(int, Win_test, (MPI_Win win, int* flag))

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MPIGPU_MPI_H_ */

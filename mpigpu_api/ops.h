// Reduction operations: the predefined ops on host memory for every type MPI defines them for
// (MPI's type classes decide which op is valid for which type), and the registry of user ops
// (MPIGPU_Op_create).
#pragma once

#include <cstddef>

#include "mpigpu_api/mpigpu.h"

namespace mpigpu {

// Predefined ops are 0..kNumPredefinedOps-1 (REPLACE and NO_OP among them, for RMA only);
// user ops get handles from kFirstUserOp up, never reused after Op_free (a stale handle stays
// invalid).
constexpr int kNumPredefinedOps = 14;
constexpr MPIGPU_Op kFirstUserOp = 64;

inline bool IsPredefinedOp(MPIGPU_Op op) { return op >= 0 && op < kNumPredefinedOps; }
// A predefined op or a live user op.
bool IsValidOp(MPIGPU_Op op);
// "MPIGPU_SUM", "user op", or "invalid".
const char* OpName(MPIGPU_Op op);
// Predefined ops are; a user op as created; false for invalid handles.
bool IsCommutativeOp(MPIGPU_Op op);

// MPIGPU_SUCCESS if the predefined `op` is defined on elements of the predefined `basic_type`
// in a collective; else MPIGPU_ERR_OP (REPLACE/NO_OP, or a pairing MPI does not define, e.g.
// BAND on FLOAT) or MPIGPU_ERR_TYPE (not a predefined type), detail recorded.
int CheckOpForType(MPIGPU_Op op, MPIGPU_Datatype basic_type);
// Bytes of one packed element of `basic_type` as ApplyOp steps through it: sizeof its C type,
// or of value plus index for the pair types; 0 for types no op is defined on.
size_t OpElementBytes(MPIGPU_Datatype basic_type);

// inout[i] = inout[i] op in[i] for i < count packed elements (OpElementBytes each) of the
// predefined `basic_type`, for a predefined `op` (all of which are commutative). Buffers need
// no alignment. Integer SUM/PROD wrap around on overflow; MIN/MAX of floating-point NaN follow
// `<`; logical ops give 0 or 1; MINLOC/MAXLOC keep the smaller index on equal values.
// Errors: as CheckOpForType, MPIGPU_ERR_BUFFER (null buffer with count > 0).
int ApplyOp(MPIGPU_Op op, MPIGPU_Datatype basic_type, void* inout, const void* in,
            size_t count);

// The registry of user ops; thread-safe.
struct UserOp {
  MPIGPU_User_function* fn = nullptr;
  bool commute = true;
  int keeps = 0;       // holders that still run it (persistent reductions: KeepUserOp)
  bool freed = false;  // Op_free'd while kept: it lives on until the last holder lets go
};
// *out = the live user op `op`; false if `op` is none.
bool LookupUserOp(MPIGPU_Op op, UserOp* out);
// Errors: ARG (null fn or out).
int CreateUserOp(MPIGPU_User_function* fn, bool commute, MPIGPU_Op* out);
// Errors: ARG (null op), OP (predefined, freed or bad handle).
int FreeUserOp(MPIGPU_Op* op);
// A holder that runs `op` later (a persistent reduction) keeps it alive through Op_free, as MPI
// asks; each KeepUserOp (no-op for a predefined or invalid op) is paired with a DropUserOp.
void KeepUserOp(MPIGPU_Op op);
void DropUserOp(MPIGPU_Op op);

}  // namespace mpigpu

// Reduction operations on host memory, for every predefined type.
#pragma once

#include <cstddef>

#include "mpigpu_api/mpigpu.h"

namespace mpigpu {

bool IsValidOp(MPIGPU_Op op);
// "MPIGPU_SUM"; "invalid" for anything else.
const char* OpName(MPIGPU_Op op);

// inout[i] = inout[i] op in[i] for i < count, on host memory, elements of the predefined
// `basic_type` (a derived type's TypeDesc::basic_type after packing). Buffers need no alignment.
// Integer SUM/PROD wrap around on overflow; MIN/MAX of floating-point NaN follow `<`. BYTE and
// the char types are reduced as unsigned char / char.
// Errors: MPIGPU_ERR_OP (bad op), MPIGPU_ERR_TYPE (not a predefined type, e.g. a derived one),
// MPIGPU_ERR_BUFFER (null buffer with count > 0).
int ApplyOp(MPIGPU_Op op, MPIGPU_Datatype basic_type, void* inout, const void* in,
            size_t count);

}  // namespace mpigpu

// The packer: moves a range of a typed buffer's packed stream (pipeline/type_pieces.h) between
// the buffer and contiguous memory, host or device, complete on return. The one place bytes of
// a datatype's pieces are copied: the datatypes' Pack/Unpack (mpigpu_api/datatype.h) and the
// API's staging of buffers the transport cannot describe as one Layout both call it.
//
// Not a twin of CopyPacked (pipeline/layout.h): that one moves a regular vector Layout (one
// piece) asynchronously on a pipeline's CopyEngine, a ring unit's copies marked and polled
// later; this one walks a type's many pieces and finishes before it returns.
#pragma once

#include <cstddef>

#include "memcopy/memloc.h"
#include "memcopy/status.h"
#include "pipeline/layout.h"
#include "pipeline/type_pieces.h"

namespace mpigpu {

// Copies packed bytes [packed_offset, packed_offset + bytes) between `user` (at user_loc, laid
// out as `shape`) and `plain` (at plain_loc, holding exactly that range), in the direction
// `dir`. Host on both sides: memcpy per block (blocks are typically small, and the
// streaming-store path of HostCopy pays off only for large runs, which the transport copies
// itself). A device on either side: one Copy2D per piece on that device's legacy default
// stream, then one synchronisation of that stream. `user` may be null (MPI_BOTTOM) when the
// shape's offsets are absolute addresses; callers refuse a null `user` otherwise. Errors:
// kInvalidArg (range past total_bytes, null `plain` with bytes > 0), a failed copy's.
Status PackPieces(PackDir dir, const TypeShape& shape, void* user, MemLoc user_loc,
                  size_t packed_offset, size_t bytes, void* plain, MemLoc plain_loc);

}  // namespace mpigpu

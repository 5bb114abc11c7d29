// Layout: a user buffer seen as a packed byte stream, and the copy of a range of that stream
// between the user buffer and a plain contiguous buffer (a ring unit).
//
// A layout is contiguous (`bytes` in a row) or a vector: `count` blocks of `block` bytes whose
// starts are `stride` bytes apart (a column of a halo exchange). The packed stream is the blocks
// one after another: stream byte p lives at user + (p / block) * stride + p % block.
#pragma once

#include <cstddef>

#include "memcopy/memloc.h"
#include "memcopy/status.h"
#include "pipeline/copy_engine.h"

namespace mpigpu {

struct Layout {
  size_t count = 0;   // blocks
  size_t block = 0;   // bytes per block
  size_t stride = 0;  // bytes from one block's start to the next (>= block when count > 1)

  static Layout Contiguous(size_t bytes) { return Layout{1, bytes, bytes}; }
  static Layout Vector(size_t count, size_t block, size_t stride) {
    return Layout{count, block, stride};
  }
  // Bytes of the packed stream.
  size_t packed_bytes() const { return count * block; }
  // True when the stream is one run of bytes in the user buffer.
  bool contiguous() const { return count <= 1 || stride == block; }
  // Bytes the user buffer spans from its start (0 for an empty layout).
  size_t extent() const { return count == 0 || block == 0 ? 0 : (count - 1) * stride + block; }
  // kInvalidArg for overlapping blocks (stride < block with count > 1) or sizes that overflow.
  Status Validate() const;
};

enum class PackDir {
  kPack,    // user buffer -> plain buffer (the sender filling a unit)
  kUnpack,  // plain buffer -> user buffer (the receiver draining a unit)
};

// Issues, on `engine`, the copies that move packed-stream bytes [off, off + len) between `user`
// (laid out as `layout`) and `plain` (len contiguous bytes), in the direction `dir`. The fewest
// copies: one for a contiguous layout; else a partial head block, one strided copy (Issue2D) for
// the whole blocks in the middle, and a partial tail block. Does not Mark. kInvalidArg when the
// range is outside the stream or the layout is invalid.
// Not a twin of PackPieces (pipeline/pack.h): a Layout is one regular piece, so this is the
// walker's one-piece case with nothing to walk; it stays apart because a pipeline issues a ring
// unit's copies on its own CopyEngine, asynchronously (Mark, Poll), where PackPieces walks a
// datatype's many pieces and completes on return.
Status CopyPacked(CopyEngine& engine, PackDir dir, void* user, MemLoc user_loc,
                  const Layout& layout, size_t off, size_t len, void* plain, MemLoc plain_loc);

}  // namespace mpigpu

#include "pipeline/layout.h"

#include <string>

namespace mpigpu {

Status Layout::Validate() const {
  size_t packed, span;
  if (__builtin_mul_overflow(count, block, &packed) ||
      (count > 1 && (__builtin_mul_overflow(count - 1, stride, &span) ||
                     __builtin_add_overflow(span, block, &span))))
    return Status(Err::kInvalidArg, "layout: count " + std::to_string(count) + " x block " +
                                        std::to_string(block) + " (stride " +
                                        std::to_string(stride) + ") overflows");
  if (count > 1 && stride < block)
    return Status(Err::kInvalidArg, "layout: stride " + std::to_string(stride) +
                                        " is smaller than the block " + std::to_string(block));
  return Status::Ok();
}

Status CopyPacked(CopyEngine& engine, PackDir dir, void* user, MemLoc user_loc,
                  const Layout& layout, size_t off, size_t len, void* plain, MemLoc plain_loc) {
  MPIGPU_RETURN_IF_ERROR(layout.Validate());
  size_t packed = layout.packed_bytes();
  if (off > packed || len > packed - off)
    return Status(Err::kInvalidArg, "packed copy: range [" + std::to_string(off) + ", +" +
                                        std::to_string(len) + ") outside a stream of " +
                                        std::to_string(packed) + " bytes");
  if (len == 0) return Status::Ok();
  auto* u = static_cast<char*>(user);
  auto* p = static_cast<char*>(plain);
  // One copy of `n` bytes between user address `ua` and plain address `pa`.
  auto copy = [&](char* ua, char* pa, size_t n) {
    return dir == PackDir::kPack ? engine.Issue(pa, plain_loc, ua, user_loc, n)
                                 : engine.Issue(ua, user_loc, pa, plain_loc, n);
  };
  if (layout.contiguous()) return copy(u + off, p, len);

  const size_t block = layout.block, stride = layout.stride;
  size_t b = off / block;   // block holding the range's first byte
  size_t in = off % block;  // offset inside that block
  if (in != 0) {            // head: the rest of a block the range starts inside
    size_t n = block - in < len ? block - in : len;
    MPIGPU_RETURN_IF_ERROR(copy(u + b * stride + in, p, n));
    p += n;
    len -= n;
    ++b;
  }
  size_t whole = len / block;
  if (whole > 0) {  // the whole blocks: one strided copy
    char* ua = u + b * stride;
    MPIGPU_RETURN_IF_ERROR(
        dir == PackDir::kPack
            ? engine.Issue2D(p, plain_loc, block, ua, user_loc, stride, block, whole)
            : engine.Issue2D(ua, user_loc, stride, p, plain_loc, block, block, whole));
    p += whole * block;
    len -= whole * block;
    b += whole;
  }
  if (len > 0) MPIGPU_RETURN_IF_ERROR(copy(u + b * stride, p, len));  // tail: a partial block
  return Status::Ok();
}

}  // namespace mpigpu

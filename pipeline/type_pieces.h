// A typed buffer as regular pieces: the piece (a Copy2D's shape), the shape of count elements of
// one type (one element's pieces repeated extent apart), the merging that builds a type's pieces
// from another's, and the walker over the pieces that hold a range of the packed stream. The
// datatypes above (mpigpu_api/datatype.h) describe their buffers this way; pipeline/pack.h moves
// the bytes.
#pragma once

#include <cstddef>
#include <functional>
#include <type_traits>
#include <vector>

#include "memcopy/status.h"

namespace mpigpu {

// nblocks blocks of block_bytes each; the first starts at `offset` (signed: a type's data may lie
// below its buffer pointer), block starts are stride_bytes apart (increasing addresses). Canonical form (every piece handed out is canonical): block_bytes > 0,
// nblocks >= 1; nblocks == 1 exactly when the piece is one dense run, and then stride_bytes ==
// block_bytes; otherwise stride_bytes > block_bytes (blocks never overlap or touch).
// This is the shape of one Copy2D(pitch = stride_bytes, width = block_bytes, height = nblocks).
struct TypePiece {
  ptrdiff_t offset = 0;
  size_t block_bytes = 0;
  size_t stride_bytes = 0;
  size_t nblocks = 0;

  size_t bytes() const { return block_bytes * nblocks; }
  friend bool operator==(const TypePiece& a, const TypePiece& b) {
    return a.offset == b.offset && a.block_bytes == b.block_bytes &&
           a.stride_bytes == b.stride_bytes && a.nblocks == b.nblocks;
  }
};

// One element's pieces made on demand, for a type whose list would be too long to keep (a
// datatype built from many pieces, repeated many times): Emit calls add(piece) for each piece
// of one element placed at `base`, in type-map order (pieces need not be canonical or merged;
// the walker merges), and returns false as soon as add does.
class ElementSource {
 public:
  virtual ~ElementSource() = default;
  virtual bool Emit(ptrdiff_t base, const std::function<bool(const TypePiece&)>& add) const = 0;
};

// A buffer of whole elements of one type, as the walker needs it: a view, made on the spot from
// the owner's description (the datatypes' TypeDesc::shape()), which owns the piece list.
struct TypeShape {
  size_t size = 0;         // bytes of data in one element
  size_t extent = 0;       // bytes between consecutive elements
  size_t total_bytes = 0;  // bytes of the packed stream (elements * size)
  bool contiguous = true;  // the data is the single dense run [0, total_bytes)
  // One element's pieces, offsets from its start, in packed order; not read when contiguous.
  // Null for a type with too many pieces to list: `source` makes them then.
  const std::vector<TypePiece>* type_pieces = nullptr;
  const ElementSource* source = nullptr;
};

// Collects pieces in type-map order into a merged canonical list of at most `max_pieces`.
class PieceListBuilder {
 public:
  explicit PieceListBuilder(size_t max_pieces);
  ~PieceListBuilder();
  // False once the list passed max_pieces (the builder is then useless).
  bool Add(const TypePiece& piece);
  // Adds ncopies copies of `pieces` placed `extent` apart, the first at `base`.
  bool AddCopies(const std::vector<TypePiece>& pieces, ptrdiff_t base, size_t extent,
                 size_t ncopies);
  // The list; false if it passed max_pieces.
  bool Finish(std::vector<TypePiece>* out);

 private:
  struct Impl;
  Impl* impl_;
};

// *out = merged pieces of ncopies copies of `pieces` placed `extent` apart. False (*out
// unusable) if the result, or the work to build it, passes `max_pieces`.
bool ReplicatePieces(const std::vector<TypePiece>& pieces, size_t extent, size_t ncopies,
                     size_t max_pieces, std::vector<TypePiece>* out);

// Visits the parts of the buffer that hold packed bytes [packed_offset, packed_offset + bytes),
// in packed order, as canonical pieces merged where regular: visit(ctx, piece, packed_pos) with
// piece.offset counted from the buffer's start and packed_pos the packed offset of the piece's
// first byte; it returns false to stop. Cost: O(pieces visited), so one ring unit of a long
// message is cheap. kInvalidArg if the range passes total_bytes.
using PieceVisitor = bool (*)(void* ctx, const TypePiece& piece, size_t packed_pos);
Status VisitPieces(const TypeShape& shape, size_t packed_offset, size_t bytes, PieceVisitor visit,
                   void* ctx);

// VisitPieces with fn(const TypePiece& piece, size_t packed_pos) -> bool.
template <class Fn>
Status WalkPieces(const TypeShape& shape, size_t packed_offset, size_t bytes, Fn&& fn) {
  auto thunk = [](void* ctx, const TypePiece& piece, size_t packed_pos) -> bool {
    return (*static_cast<std::remove_reference_t<Fn>*>(ctx))(piece, packed_pos);
  };
  return VisitPieces(shape, packed_offset, bytes, thunk, &fn);
}

}  // namespace mpigpu

#include "pipeline/type_pieces.h"

#include <algorithm>
#include <string>
#include <utility>

namespace mpigpu {
namespace {

// A canonical piece (see TypePiece) for nblocks blocks of `block` bytes, `stride` apart.
TypePiece MakePiece(ptrdiff_t offset, size_t block, size_t stride, size_t nblocks) {
  if (nblocks == 1 || stride == block) {
    return TypePiece{offset, block * nblocks, block * nblocks, 1};
  }
  return TypePiece{offset, block, stride, nblocks};
}

// Extends *p by q (which follows p in packed order) if q continues p's pattern: q dense and
// adjacent to a dense p, or q's blocks the same size as p's and at the same regular stride.
bool TryMerge(TypePiece* p, const TypePiece& q) {
  if (p->nblocks == 1 && q.nblocks == 1 &&
      q.offset == p->offset + static_cast<ptrdiff_t>(p->block_bytes)) {
    p->block_bytes += q.block_bytes;
    p->stride_bytes = p->block_bytes;
    return true;
  }
  if (p->block_bytes != q.block_bytes || q.offset <= p->offset) return false;
  const size_t stride = p->nblocks > 1   ? p->stride_bytes
                        : q.nblocks > 1 ? q.stride_bytes
                                        : static_cast<size_t>(q.offset - p->offset);
  if (stride <= p->block_bytes) return false;
  if (q.nblocks > 1 && q.stride_bytes != stride) return false;
  if (q.offset != p->offset + static_cast<ptrdiff_t>(p->nblocks * stride)) return false;
  p->stride_bytes = stride;
  p->nblocks += q.nblocks;
  return true;
}

// Takes pieces in packed order, merges neighbours, hands finished pieces to sink(piece) (which
// returns false to stop). Add/Finish return false once the sink stopped.
template <class Sink>
class PieceMerger {
 public:
  explicit PieceMerger(Sink sink) : sink_(std::move(sink)) {}

  bool Add(TypePiece q) {
    if (q.block_bytes == 0 || q.nblocks == 0) return true;  // no data
    if (q.nblocks == 1 || q.stride_bytes == q.block_bytes) q = MakePiece(q.offset, q.block_bytes, q.block_bytes, q.nblocks);
    if (has_pending_ && TryMerge(&pending_, q)) return true;
    if (has_pending_ && !sink_(pending_)) return false;
    pending_ = q;
    has_pending_ = true;
    return true;
  }
  bool Finish() {
    if (!has_pending_) return true;
    has_pending_ = false;
    return sink_(pending_);
  }

 private:
  Sink sink_;
  TypePiece pending_;
  bool has_pending_ = false;
};

// Copies of `pieces` placed `extent` apart collapse into one piece: a single dense piece
// (copies become blocks of a strided piece) or a single strided piece whose pattern runs on.
// (Copies closer than a block overlap: they stay separate pieces.)
bool HasClosedForm(const std::vector<TypePiece>& pieces, size_t extent) {
  return pieces.size() == 1 &&
         ((pieces[0].nblocks == 1 && extent >= pieces[0].block_bytes) ||
          (pieces[0].nblocks > 1 && pieces[0].stride_bytes * pieces[0].nblocks == extent));
}

// Feeds copies first..first+ncopies-1 of `pieces` (copy k at origin + k * extent) to the merger.
template <class Merger>
bool AddCopies(const std::vector<TypePiece>& pieces, ptrdiff_t origin, size_t extent,
               size_t first, size_t ncopies, Merger* merger) {
  if (ncopies == 0 || pieces.empty()) return true;
  const ptrdiff_t base = origin + static_cast<ptrdiff_t>(first * extent);
  if (HasClosedForm(pieces, extent)) {
    const TypePiece& p = pieces[0];
    if (p.nblocks == 1) {
      return merger->Add(MakePiece(base + p.offset, p.block_bytes, extent, ncopies));
    }
    return merger->Add(
        MakePiece(base + p.offset, p.block_bytes, p.stride_bytes, p.nblocks * ncopies));
  }
  for (size_t k = 0; k < ncopies; ++k) {
    for (const TypePiece& q : pieces) {
      TypePiece shifted = q;
      shifted.offset += base + static_cast<ptrdiff_t>(k * extent);
      if (!merger->Add(shifted)) return false;
    }
  }
  return true;
}

// Visits the part of piece p, whose packed bytes are [pos, pos + p.bytes()), that falls in
// [begin, end): a partial first block, the whole blocks, a partial last block.
bool VisitClipped(const TypePiece& p, size_t pos, size_t begin, size_t end, PieceVisitor visit,
                  void* ctx) {
  const size_t lo = std::max(begin, pos) - pos;
  const size_t hi = std::min(end, pos + p.bytes()) - pos;
  if (lo >= hi) return true;
  if (lo == 0 && hi == p.bytes()) return visit(ctx, p, pos);
  const size_t b = p.block_bytes;
  auto block_at = [&](size_t i) { return p.offset + static_cast<ptrdiff_t>(i * p.stride_bytes); };
  size_t first = lo / b;
  const size_t head_skip = lo % b;
  const size_t last = (hi - 1) / b;
  const size_t tail_len = (hi - 1) % b + 1;  // bytes of the last block inside the range
  if (first == last) {
    const size_t len = tail_len - head_skip;
    return visit(ctx, MakePiece(block_at(first) + head_skip, len, len, 1), pos + lo);
  }
  if (head_skip != 0) {
    const size_t len = b - head_skip;
    if (!visit(ctx, MakePiece(block_at(first) + head_skip, len, len, 1), pos + lo)) return false;
    ++first;
  }
  const size_t full_end = tail_len == b ? last + 1 : last;  // whole blocks are [first, full_end)
  if (first < full_end &&
      !visit(ctx, MakePiece(block_at(first), b, p.stride_bytes, full_end - first),
             pos + first * b)) {
    return false;
  }
  if (tail_len != b) {
    return visit(ctx, MakePiece(block_at(last), tail_len, tail_len, 1), pos + last * b);
  }
  return true;
}

}  // namespace

bool ReplicatePieces(const std::vector<TypePiece>& pieces, size_t extent, size_t ncopies,
                     size_t max_pieces, std::vector<TypePiece>* out) {
  out->clear();
  if (!HasClosedForm(pieces, extent) && pieces.size() > 1 &&
      ncopies > 4 * max_pieces / pieces.size()) {
    return false;
  }
  auto sink = [out, max_pieces](const TypePiece& p) {
    out->push_back(p);
    return out->size() <= max_pieces;
  };
  PieceMerger<decltype(sink)> merger(sink);
  return AddCopies(pieces, 0, extent, 0, ncopies, &merger) && merger.Finish();
}

namespace {
using ListSink = std::function<bool(const TypePiece&)>;
}  // namespace

struct PieceListBuilder::Impl {
  explicit Impl(size_t max) : max_pieces(max), merger(ListSink([this](const TypePiece& p) {
                                  list.push_back(p);
                                  return list.size() <= max_pieces;
                                })) {}
  size_t max_pieces;
  std::vector<TypePiece> list;
  PieceMerger<ListSink> merger;
  bool ok = true;
};

PieceListBuilder::PieceListBuilder(size_t max_pieces) : impl_(new Impl(max_pieces)) {}
PieceListBuilder::~PieceListBuilder() { delete impl_; }

bool PieceListBuilder::Add(const TypePiece& piece) {
  return impl_->ok = impl_->ok && impl_->merger.Add(piece);
}

bool PieceListBuilder::AddCopies(const std::vector<TypePiece>& pieces, ptrdiff_t base,
                                 size_t extent, size_t ncopies) {
  if (!impl_->ok) return false;
  // Bound the work as well as the result: copies that never merge add pieces one by one.
  if (!HasClosedForm(pieces, extent) && pieces.size() > 1 &&
      ncopies > 4 * impl_->max_pieces / pieces.size())
    return impl_->ok = false;
  return impl_->ok = mpigpu::AddCopies(pieces, base, extent, 0, ncopies, &impl_->merger);
}

bool PieceListBuilder::Finish(std::vector<TypePiece>* out) {
  if (!(impl_->ok = impl_->ok && impl_->merger.Finish())) return false;
  *out = std::move(impl_->list);
  return true;
}

Status VisitPieces(const TypeShape& desc, size_t packed_offset, size_t bytes, PieceVisitor visit,
                   void* ctx) {
  if (bytes > desc.total_bytes || packed_offset > desc.total_bytes - bytes) {
    return Status(Err::kInvalidArg, "packed range [" + std::to_string(packed_offset) + ", +" +
                                        std::to_string(bytes) + ") passes the " +
                                        std::to_string(desc.total_bytes) + "-byte buffer");
  }
  if (bytes == 0) return Status::Ok();
  if (desc.contiguous) {
    visit(ctx, MakePiece(static_cast<ptrdiff_t>(packed_offset), bytes, bytes, 1), packed_offset);
    return Status::Ok();
  }
  // Only the elements that hold the range are generated.
  const size_t end = packed_offset + bytes;
  const size_t first = packed_offset / desc.size;
  const size_t last = (end - 1) / desc.size;
  size_t pos = first * desc.size;  // packed offset of the next piece from the merger
  auto sink = [&](const TypePiece& p) {
    const size_t piece_pos = pos;
    pos += p.bytes();
    return VisitClipped(p, piece_pos, packed_offset, end, visit, ctx) && pos < end;
  };
  PieceMerger<decltype(sink)> merger(sink);
  if (desc.type_pieces != nullptr) {
    if (AddCopies(*desc.type_pieces, 0, desc.extent, first, last - first + 1, &merger))
      merger.Finish();
    return Status::Ok();
  }
  if (desc.source == nullptr) return Status(Err::kInvalidArg, "typed buffer without pieces");
  const std::function<bool(const TypePiece&)> add = [&](const TypePiece& p) {
    return merger.Add(p);
  };
  for (size_t k = first; k <= last; ++k) {
    if (!desc.source->Emit(static_cast<ptrdiff_t>(k * desc.extent), add)) return Status::Ok();
  }
  merger.Finish();
  return Status::Ok();
}

}  // namespace mpigpu

// A derived type's definition (TypeTree) at work: BuildType computes the type's size, bounds,
// basic type and piece list from it, Emit makes the pieces of a type too large to list, and
// CountBasicElements walks it for MPIGPU_Get_elements.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/datatype.h"
#include "mpigpu_api/datatype_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu {
namespace {

// Checked signed arithmetic for bounds: false on overflow.
bool SMul(ptrdiff_t a, ptrdiff_t b, ptrdiff_t* out) { return !__builtin_mul_overflow(a, b, out); }
bool SAdd(ptrdiff_t a, ptrdiff_t b, ptrdiff_t* out) { return !__builtin_add_overflow(a, b, out); }

}  // namespace

// ---- TypeTree ----

bool TypeTree::Emit(ptrdiff_t base, const std::function<bool(const TypePiece&)>& add) const {
  return ForEachBlock([&](ptrdiff_t disp, size_t count, const TypeInfo& c) {
    for (size_t j = 0; j < count; ++j) {
      const ptrdiff_t at = base + disp + static_cast<ptrdiff_t>(j) * c.extent;
      if (c.pieces) {
        for (TypePiece p : *c.pieces) {
          p.offset += at;
          if (!add(p)) return false;
        }
      } else if (!c.tree->Emit(at, add)) {
        return false;
      }
    }
    return true;
  });
}

// ---- building a type from its blocks ----

int BuildType(const char* fn, std::shared_ptr<TypeTree> tree, bool is_struct,
              const ResizedBounds* resized, std::shared_ptr<const TypeInfo>* out) {
  auto info = std::make_shared<TypeInfo>();
  TypeInfo& t = *info;
  bool any_block = false, any_data = false, mixed = false, overflow = false;
  ptrdiff_t lb = 0, ub = 0, tlb = 0, tub = 0;
  size_t size = 0, nelem = 0;
  t.basic_type = MPIGPU_DATATYPE_NULL;
  auto account = [&](ptrdiff_t disp, size_t count, const TypeInfo& c) {
    if (count == 0) return true;  // an empty block neither aligns nor bounds the type
    t.align = std::max(t.align, c.align);
    t.explicit_bounds = t.explicit_bounds || c.explicit_bounds;
    // Copy j spans [disp + c.lb + j * ext, + c.extent); the extremes are at the first and the
    // last copy whatever the sign of the child's extent (a resized one may be negative).
    ptrdiff_t span, blb, bub, btlb, btub, l0, l1, u0, u1, t0, t1, e0, e1;
    size_t bytes, elems;
    if (count > static_cast<size_t>(PTRDIFF_MAX) ||
        !SMul(static_cast<ptrdiff_t>(count - 1), c.extent, &span) || !SAdd(disp, c.lb, &l0) ||
        !SAdd(l0, span, &l1) || !SAdd(l0, c.extent, &u0) || !SAdd(l1, c.extent, &u1) ||
        !SAdd(disp, c.true_lb, &t0) || !SAdd(t0, span, &t1) || !SAdd(t0, c.true_extent, &e0) ||
        !SAdd(t1, c.true_extent, &e1) ||
        !MulFits(count, c.size, &bytes) || __builtin_add_overflow(size, bytes, &size) ||
        !MulFits(count, c.num_elements, &elems) || __builtin_add_overflow(nelem, elems, &nelem)) {
      overflow = true;
      return false;
    }
    blb = std::min(l0, l1);
    bub = std::max(u0, u1);
    btlb = std::min(t0, t1);
    btub = std::max(e0, e1);
    lb = any_block ? std::min(lb, blb) : blb;
    ub = any_block ? std::max(ub, bub) : bub;
    any_block = true;
    if (c.size > 0) {
      tlb = any_data ? std::min(tlb, btlb) : btlb;
      tub = any_data ? std::max(tub, btub) : btub;
      if (any_data && t.basic_type != c.basic_type) mixed = true;
      t.basic_type = c.basic_type;
      any_data = true;
    }
    return true;
  };
  if (tree->regular) {
    // Bounds from the first and last blocks (strides are regular); sizes by multiplication.
    const TypeInfo& c = *tree->children[0];
    const size_t n = tree->reg_blocks;
    ptrdiff_t last = 0;
    if (n > 0) {
      overflow = n - 1 > static_cast<size_t>(PTRDIFF_MAX) ||
                 !SMul(static_cast<ptrdiff_t>(n - 1), tree->reg_stride, &last);
      if (!overflow) account(0, tree->reg_len, c);
      if (!overflow && n > 1) account(last, tree->reg_len, c);
    } else {
      account(0, 0, c);
    }
    size_t elems = 0;
    overflow = overflow || !MulFits(n, tree->reg_len, &elems) ||
               !MulFits(elems, c.size, &size) || !MulFits(elems, c.num_elements, &nelem);
  } else {
    tree->ForEachBlock(account);
  }
  if (overflow || size > static_cast<size_t>(PTRDIFF_MAX)) {
    return SetLastError(MPIGPU_ERR_ARG, std::string(fn) + ": the type's size or bounds overflow");
  }
  if (mixed) t.basic_type = MPIGPU_DATATYPE_NULL;
  t.size = size;
  t.num_elements = nelem;
  t.true_lb = tlb;
  if (!SAdd(tub, -tlb, &t.true_extent) || !SAdd(ub, -lb, &t.extent)) {
    return SetLastError(MPIGPU_ERR_ARG, std::string(fn) + ": the type's bounds overflow");
  }
  t.lb = lb;
  // A struct's extent is padded to its most-aligned member, as the C compiler pads the struct
  // it describes (unless some member fixes its bounds by resizing).
  if (is_struct && !t.explicit_bounds && t.align > 1) {
    const ptrdiff_t a = static_cast<ptrdiff_t>(t.align);
    t.extent = (t.extent + a - 1) / a * a;
  }
  if (resized != nullptr) {
    t.lb = resized->lb;
    t.extent = resized->extent;
    if (resized->marks_explicit) t.explicit_bounds = true;
  }
  // The piece list, unless it grows past the limit (the tree makes the pieces then).
  PieceListBuilder builder(kMaxTypePieces);
  bool listed = true;
  if (tree->regular) {
    const TypeInfo& c = *tree->children[0];
    std::vector<TypePiece> block;
    PieceListBuilder one(kMaxTypePieces);
    listed = c.pieces && c.extent >= 0 &&
             one.AddCopies(*c.pieces, 0, static_cast<size_t>(c.extent),
                                       tree->reg_len) && one.Finish(&block);
    if (listed && block.empty()) {
      // no data
    } else if (listed && tree->reg_stride >= 0) {
      listed = builder.AddCopies(block, 0, static_cast<size_t>(tree->reg_stride),
                                 tree->reg_blocks);
    } else {
      for (size_t i = 0; listed && i < tree->reg_blocks; ++i)
        listed = builder.AddCopies(block, static_cast<ptrdiff_t>(i) * tree->reg_stride, 0, 1);
    }
  } else {
    listed = tree->ForEachBlock([&](ptrdiff_t disp, size_t count, const TypeInfo& c) {
      return c.pieces != nullptr && c.extent >= 0 &&
             builder.AddCopies(*c.pieces, disp, static_cast<size_t>(c.extent), count);
    });
  }
  auto list = std::make_shared<std::vector<TypePiece>>();
  if (listed && builder.Finish(list.get())) t.pieces = std::move(list);
  t.tree = std::move(tree);
  *out = std::move(info);
  return MPIGPU_SUCCESS;
}

// ---- MPIGPU_Get_elements ----

namespace {

// Basic elements in the first `bytes` bytes of one element of `t` (bytes < t.size), walking
// its type map; *rest = bytes left inside a basic element (nonzero: not a whole number).
size_t CountPartial(const TypeInfo& t, size_t bytes, size_t* rest) {
  if (t.predefined) {
    PairLayout pair;
    if (PredefinedPairLayout(t.basic_type, &pair) && bytes >= pair.packed_index_offset) {
      *rest = bytes - pair.packed_index_offset;
      return 1;
    }
    *rest = bytes;
    return 0;
  }
  size_t n = 0;
  t.tree->ForEachBlock([&](ptrdiff_t, size_t count, const TypeInfo& c) {
    if (c.size == 0) return true;
    const size_t whole = std::min(count, bytes / c.size);
    n += whole * c.num_elements;
    bytes -= whole * c.size;
    if (whole < count) {  // the bytes end inside this block
      n += CountPartial(c, bytes, &bytes);
      return false;
    }
    return true;
  });
  *rest = bytes;
  return n;
}

}  // namespace

long long CountBasicElements(const TypeInfo& type, size_t bytes) {
  if (type.size == 0) return bytes == 0 ? 0 : -1;
  const size_t whole = bytes / type.size;
  size_t rest = 0;
  const size_t part = CountPartial(type, bytes % type.size, &rest);
  if (rest != 0) return -1;
  return static_cast<long long>(whole * type.num_elements + part);
}

}  // namespace mpigpu

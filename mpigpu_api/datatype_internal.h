// The datatypes' inside, shared by the registry (datatype.cc), the constructors
// (datatype_ctors.cc), the queries (datatype_query.cc) and the walks of a definition
// (datatype_tree.cc): a derived type's definition and the one routine that computes a type from
// it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/datatype.h"

namespace mpigpu {

// A derived type's definition: what MPIGPU_Type_get_envelope/get_contents report (the
// constructor and its arguments), and its layout: blocks of consecutive elements of child types
// (each block `count` elements of children[child] from byte `disp`), in type-map order. The
// children are the registry's shared entries, so freeing a handle never breaks a type built
// from it. A vector-like layout is kept `regular` (no per-block list).
struct TypeTree final : ElementSource {
  int combiner = MPIGPU_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPIGPU_Aint> aints;
  std::vector<MPIGPU_Datatype> type_handles;             // as the caller named them
  std::vector<std::shared_ptr<const TypeInfo>> types;     // the same types' entries

  struct Block {
    ptrdiff_t disp = 0;
    size_t count = 0;
    size_t child = 0;
  };
  std::vector<std::shared_ptr<const TypeInfo>> children;
  std::vector<Block> blocks;
  // regular: reg_blocks blocks of reg_len elements of children[0], block i at i * reg_stride.
  bool regular = false;
  size_t reg_blocks = 0;
  size_t reg_len = 0;
  ptrdiff_t reg_stride = 0;

  // fn(disp, count, child) for each block in order; false from fn stops (and is returned).
  template <class Fn>
  bool ForEachBlock(Fn&& fn) const {
    if (regular) {
      for (size_t i = 0; i < reg_blocks; ++i) {
        if (!fn(static_cast<ptrdiff_t>(i) * reg_stride, reg_len, *children[0])) return false;
      }
      return true;
    }
    for (const Block& b : blocks) {
      if (!fn(b.disp, b.count, *children[b.child])) return false;
    }
    return true;
  }

  bool Emit(ptrdiff_t base, const std::function<bool(const TypePiece&)>& add) const override;
};

// Bounds set by create_resized.
struct ResizedBounds {
  ptrdiff_t lb = 0;
  ptrdiff_t extent = 0;
  bool marks_explicit = true;  // false: keeps the child's explicit_bounds (dup)
};

// a * b into *out; false when it overflows or passes PTRDIFF_MAX (sizes and spans of types).
inline bool MulFits(size_t a, size_t b, size_t* out) {
  return !__builtin_mul_overflow(a, b, out) && *out <= static_cast<size_t>(PTRDIFF_MAX);
}

// *out = the type `tree` defines (datatype_tree.cc): size, bounds (create_struct's alignment
// padding when is_struct; `resized` overrides lb and extent), basic type, pieces. Errors: ARG
// (size or bounds overflow).
int BuildType(const char* fn, std::shared_ptr<TypeTree> tree, bool is_struct,
              const ResizedBounds* resized, std::shared_ptr<const TypeInfo>* out);
// A new (uncommitted) handle for `info`.
int RegisterType(std::shared_ptr<const TypeInfo> info, MPIGPU_Datatype* out);
// The registry's commit and free of a derived type's handle (MPIGPU_Type_commit/free).
int CommitRegistered(MPIGPU_Datatype type);
int FreeRegistered(MPIGPU_Datatype type);
// Names (MPIGPU_Type_set_name/get_name); a predefined type's default is TypeName's.
int SetTypeName(MPIGPU_Datatype type, const std::string& name);
int GetTypeName(MPIGPU_Datatype type, std::string* name);

}  // namespace mpigpu

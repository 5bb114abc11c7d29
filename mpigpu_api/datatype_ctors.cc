// MPIGPU_Type_* constructors, commit and free: each constructor checks its arguments, writes
// the type's definition (its envelope and contents, and its layout as blocks of child types)
// and builds it (BuildType).
#include <climits>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/datatype.h"
#include "mpigpu_api/datatype_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu {
namespace {

int TypeErr(int code, const char* fn, const std::string& what) {
  return SetLastError(code, std::string(fn) + ": " + what);
}

// The tree for a constructor `combiner` over the types named `handles` (their shared entries
// in tree->types; uncommitted types may be built on, as MPI allows).
int NewTree(const char* fn, int combiner, const std::vector<MPIGPU_Datatype>& handles,
            std::shared_ptr<TypeTree>* out) {
  auto tree = std::make_shared<TypeTree>();
  tree->combiner = combiner;
  for (MPIGPU_Datatype h : handles) {
    int rc;
    auto info = SharedType(h, &rc);
    if (!info) return rc;
    tree->type_handles.push_back(h);
    tree->types.push_back(std::move(info));
  }
  *out = std::move(tree);
  return MPIGPU_SUCCESS;
  (void)fn;
}

// Builds `tree` and hands out a new handle for it.
int Finish(const char* fn, std::shared_ptr<TypeTree> tree, bool is_struct,
           const ResizedBounds* resized, MPIGPU_Datatype* newtype) {
  std::shared_ptr<const TypeInfo> info;
  if (int rc = BuildType(fn, std::move(tree), is_struct, resized, &info); rc != MPIGPU_SUCCESS)
    return rc;
  return RegisterType(std::move(info), newtype);
}

int CheckCount(const char* fn, const char* what, long long n) {
  if (n < 0) return TypeErr(MPIGPU_ERR_COUNT, fn, std::string(what) + " " + std::to_string(n) + " is negative");
  return MPIGPU_SUCCESS;
}

int CheckArray(const char* fn, const char* what, const void* array, int count) {
  if (count > 0 && array == nullptr)
    return TypeErr(MPIGPU_ERR_ARG, fn, std::string(what) + " is null");
  return MPIGPU_SUCCESS;
}

// Regular layout: nblocks blocks of len elements of children[0], stride bytes apart.
void SetRegular(TypeTree* t, size_t nblocks, size_t len, ptrdiff_t stride) {
  t->children = {t->types[0]};
  t->regular = true;
  t->reg_blocks = nblocks;
  t->reg_len = len;
  t->reg_stride = stride;
}

// Vectors in elements and in bytes.
int MakeVector(const char* fn, int combiner, int count, int blocklength, MPIGPU_Aint stride,
               bool stride_in_bytes, MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  if (newtype == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "newtype is null");
  if (int rc = CheckCount(fn, "count", count); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckCount(fn, "blocklength", blocklength); rc != MPIGPU_SUCCESS) return rc;
  std::shared_ptr<TypeTree> t;
  if (int rc = NewTree(fn, combiner, {oldtype}, &t); rc != MPIGPU_SUCCESS) return rc;
  ptrdiff_t bytes = stride;
  if (!stride_in_bytes && __builtin_mul_overflow(stride, t->types[0]->extent, &bytes))
    return TypeErr(MPIGPU_ERR_ARG, fn, "stride in bytes overflows");
  switch (combiner) {
    case MPIGPU_COMBINER_CONTIGUOUS: t->ints = {count}; break;
    case MPIGPU_COMBINER_VECTOR: t->ints = {count, blocklength, static_cast<int>(stride)}; break;
    default: t->ints = {count, blocklength}; t->aints = {stride}; break;
  }
  if (combiner == MPIGPU_COMBINER_CONTIGUOUS)  // one block of count elements
    SetRegular(t.get(), 1, static_cast<size_t>(count), 0);
  else
    SetRegular(t.get(), static_cast<size_t>(count), static_cast<size_t>(blocklength), bytes);
  return Finish(fn, std::move(t), false, nullptr, newtype);
}

// Indexed types: blocks of one old type, displacements in elements or bytes, one block length
// for all (blocklengths null) or one each.
int MakeIndexed(const char* fn, int combiner, int count, const int* blocklengths,
                int blocklength, const int* int_disps, const MPIGPU_Aint* byte_disps,
                MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  if (newtype == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "newtype is null");
  if (int rc = CheckCount(fn, "count", count); rc != MPIGPU_SUCCESS) return rc;
  if (blocklengths == nullptr) {
    if (int rc = CheckCount(fn, "blocklength", blocklength); rc != MPIGPU_SUCCESS) return rc;
  } else if (int rc = CheckArray(fn, "array_of_blocklengths", blocklengths, count);
             rc != MPIGPU_SUCCESS) {
    return rc;
  }
  if (int rc = CheckArray(fn, "array_of_displacements",
                          int_disps ? static_cast<const void*>(int_disps) : byte_disps, count);
      rc != MPIGPU_SUCCESS)
    return rc;
  std::shared_ptr<TypeTree> t;
  if (int rc = NewTree(fn, combiner, {oldtype}, &t); rc != MPIGPU_SUCCESS) return rc;
  const ptrdiff_t extent = t->types[0]->extent;
  t->children = {t->types[0]};
  t->ints.push_back(count);
  if (blocklengths == nullptr) t->ints.push_back(blocklength);
  for (int i = 0; i < count; ++i) {
    const int bl = blocklengths ? blocklengths[i] : blocklength;
    if (blocklengths) {
      if (int rc = CheckCount(fn, "a block length", bl); rc != MPIGPU_SUCCESS) return rc;
      t->ints.push_back(bl);
    }
    ptrdiff_t disp;
    if (int_disps != nullptr) {
      if (__builtin_mul_overflow(static_cast<ptrdiff_t>(int_disps[i]), extent, &disp))
        return TypeErr(MPIGPU_ERR_ARG, fn, "displacement in bytes overflows");
    } else {
      disp = byte_disps[i];
      t->aints.push_back(disp);
    }
    t->blocks.push_back({disp, static_cast<size_t>(bl), 0});
  }
  if (int_disps != nullptr) t->ints.insert(t->ints.end(), int_disps, int_disps + count);
  return Finish(fn, std::move(t), false, nullptr, newtype);
}

// A single block of `child` at `disp` (dup, resized, subarray's final step).
void SetSingle(TypeTree* t, std::shared_ptr<const TypeInfo> child, ptrdiff_t disp) {
  t->children = {std::move(child)};
  t->blocks = {{disp, 1, 0}};
}

// An unregistered step of a composite constructor: count blocks of len `child` elements,
// stride bytes apart.
int Step(const char* fn, std::shared_ptr<const TypeInfo> child, size_t nblocks, size_t len,
         ptrdiff_t stride, std::shared_ptr<const TypeInfo>* out) {
  auto t = std::make_shared<TypeTree>();
  t->combiner = MPIGPU_COMBINER_HVECTOR;
  t->types = {std::move(child)};
  SetRegular(t.get(), nblocks, len, stride);
  return BuildType(fn, std::move(t), false, nullptr, out);
}

// Unregistered: `child` placed at disp with bounds [lb, lb + extent).
int Place(const char* fn, std::shared_ptr<const TypeInfo> child, ptrdiff_t disp, ptrdiff_t lb,
          ptrdiff_t extent, std::shared_ptr<const TypeInfo>* out) {
  auto t = std::make_shared<TypeTree>();
  t->combiner = MPIGPU_COMBINER_RESIZED;
  SetSingle(t.get(), std::move(child), disp);
  const ResizedBounds b{lb, extent, true};
  return BuildType(fn, std::move(t), false, &b, out);
}

bool ValidOrder(int order) { return order == MPIGPU_ORDER_C || order == MPIGPU_ORDER_FORTRAN; }

// ---- darray (MPI-3.1 4.1.4): one dimension at a time, from the fastest ----

// The block of global index range this process owns in one dimension: BLOCK distribution.
int DarrayBlock(const char* fn, int gsize, int darg, int nprocs, int coord,
                std::shared_ptr<const TypeInfo> old, ptrdiff_t orig_extent,
                std::shared_ptr<const TypeInfo>* out, ptrdiff_t* offset) {
  long long blksize = darg == MPIGPU_DISTRIBUTE_DFLT_DARG ? (gsize + nprocs - 1LL) / nprocs : darg;
  if (blksize <= 0 || blksize * nprocs < gsize)
    return TypeErr(MPIGPU_ERR_ARG, fn, "BLOCK darg " + std::to_string(darg) + " too small");
  long long j = gsize - blksize * coord;
  long long mysize = std::min(blksize, std::max(0LL, j));
  *offset = static_cast<ptrdiff_t>(blksize * coord) * orig_extent;
  if (mysize <= 0) *offset = 0;
  (void)orig_extent;
  return Step(fn, std::move(old), 1, static_cast<size_t>(mysize), 0, out);
}

// CYCLIC(darg) distribution in one dimension: this process's blocks, `nprocs * darg` elements
// apart, the last one possibly short.
int DarrayCyclic(const char* fn, int gsize, int darg, int nprocs, int coord,
                 std::shared_ptr<const TypeInfo> old, ptrdiff_t orig_extent,
                 std::shared_ptr<const TypeInfo>* out, ptrdiff_t* offset) {
  const long long blksize = darg == MPIGPU_DISTRIBUTE_DFLT_DARG ? 1 : darg;
  if (blksize <= 0) return TypeErr(MPIGPU_ERR_ARG, fn, "CYCLIC darg must be positive");
  const long long st_index = coord * blksize;
  const long long end_index = gsize - 1;
  long long local = 0;
  if (end_index >= st_index) {
    const long long period = nprocs * blksize;
    local = (end_index - st_index) / period * blksize;
    const long long rem = (end_index - st_index) % period;
    local += std::min(rem + 1, blksize);
  }
  const long long count = local / blksize, rem = local % blksize;
  const ptrdiff_t stride = static_cast<ptrdiff_t>(nprocs * blksize) * old->extent;
  std::shared_ptr<const TypeInfo> full;
  if (int rc = Step(fn, old, static_cast<size_t>(count), static_cast<size_t>(blksize), stride,
                    &full);
      rc != MPIGPU_SUCCESS)
    return rc;
  if (rem != 0) {  // the short last block
    auto t = std::make_shared<TypeTree>();
    t->combiner = MPIGPU_COMBINER_STRUCT;
    t->children = {full, old};
    t->blocks = {{0, 1, 0}, {static_cast<ptrdiff_t>(count) * stride, static_cast<size_t>(rem), 1}};
    if (int rc = BuildType(fn, std::move(t), false, nullptr, &full); rc != MPIGPU_SUCCESS)
      return rc;
  }
  *offset = local == 0 ? 0 : static_cast<ptrdiff_t>(st_index) * orig_extent;
  *out = std::move(full);
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu

using mpigpu::TypeErr;

extern "C" int MPIGPU_Type_contiguous(int count, MPIGPU_Datatype oldtype,
                                      MPIGPU_Datatype* newtype) {
  return mpigpu::MakeVector("MPIGPU_Type_contiguous", MPIGPU_COMBINER_CONTIGUOUS, count, count, 0,
                            true, oldtype, newtype);
}

extern "C" int MPIGPU_Type_vector(int count, int blocklength, int stride,
                                  MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  return mpigpu::MakeVector("MPIGPU_Type_vector", MPIGPU_COMBINER_VECTOR, count, blocklength,
                            stride, false, oldtype, newtype);
}

extern "C" int MPIGPU_Type_create_hvector(int count, int blocklength, MPIGPU_Aint stride,
                                          MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  return mpigpu::MakeVector("MPIGPU_Type_create_hvector", MPIGPU_COMBINER_HVECTOR, count,
                            blocklength, stride, true, oldtype, newtype);
}

extern "C" int MPIGPU_Type_indexed(int count, const int blocklengths[], const int displacements[],
                                   MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  return mpigpu::MakeIndexed("MPIGPU_Type_indexed", MPIGPU_COMBINER_INDEXED, count,
                             blocklengths, 0, displacements, nullptr, oldtype, newtype);
}

extern "C" int MPIGPU_Type_create_hindexed(int count, const int blocklengths[],
                                           const MPIGPU_Aint displacements[],
                                           MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  return mpigpu::MakeIndexed("MPIGPU_Type_create_hindexed", MPIGPU_COMBINER_HINDEXED, count,
                             blocklengths, 0, nullptr, displacements, oldtype, newtype);
}

extern "C" int MPIGPU_Type_create_indexed_block(int count, int blocklength,
                                                const int displacements[],
                                                MPIGPU_Datatype oldtype,
                                                MPIGPU_Datatype* newtype) {
  return mpigpu::MakeIndexed("MPIGPU_Type_create_indexed_block", MPIGPU_COMBINER_INDEXED_BLOCK,
                             count, nullptr, blocklength, displacements, nullptr, oldtype,
                             newtype);
}

extern "C" int MPIGPU_Type_create_hindexed_block(int count, int blocklength,
                                                 const MPIGPU_Aint displacements[],
                                                 MPIGPU_Datatype oldtype,
                                                 MPIGPU_Datatype* newtype) {
  return mpigpu::MakeIndexed("MPIGPU_Type_create_hindexed_block",
                             MPIGPU_COMBINER_HINDEXED_BLOCK, count, nullptr, blocklength,
                             nullptr, displacements, oldtype, newtype);
}

extern "C" int MPIGPU_Type_create_struct(int count, const int blocklengths[],
                                         const MPIGPU_Aint displacements[],
                                         const MPIGPU_Datatype types[],
                                         MPIGPU_Datatype* newtype) {
  const char* fn = "MPIGPU_Type_create_struct";
  if (newtype == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "newtype is null");
  if (int rc = mpigpu::CheckCount(fn, "count", count); rc != MPIGPU_SUCCESS) return rc;
  if (count > 0 && (blocklengths == nullptr || displacements == nullptr || types == nullptr))
    return TypeErr(MPIGPU_ERR_ARG, fn, "null array");
  std::shared_ptr<mpigpu::TypeTree> t;
  if (int rc = mpigpu::NewTree(fn, MPIGPU_COMBINER_STRUCT,
                               std::vector<MPIGPU_Datatype>(types, types + count), &t);
      rc != MPIGPU_SUCCESS)
    return rc;
  t->children = t->types;
  t->ints.push_back(count);
  for (int i = 0; i < count; ++i) {
    if (int rc = mpigpu::CheckCount(fn, "a block length", blocklengths[i]); rc != MPIGPU_SUCCESS)
      return rc;
    t->ints.push_back(blocklengths[i]);
    t->aints.push_back(displacements[i]);
    t->blocks.push_back({displacements[i], static_cast<size_t>(blocklengths[i]),
                         static_cast<size_t>(i)});
  }
  return mpigpu::Finish(fn, std::move(t), true, nullptr, newtype);
}

extern "C" int MPIGPU_Type_create_resized(MPIGPU_Datatype oldtype, MPIGPU_Aint lb,
                                          MPIGPU_Aint extent, MPIGPU_Datatype* newtype) {
  const char* fn = "MPIGPU_Type_create_resized";
  if (newtype == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "newtype is null");
  std::shared_ptr<mpigpu::TypeTree> t;
  if (int rc = mpigpu::NewTree(fn, MPIGPU_COMBINER_RESIZED, {oldtype}, &t); rc != MPIGPU_SUCCESS)
    return rc;
  t->aints = {lb, extent};
  mpigpu::SetSingle(t.get(), t->types[0], 0);
  const mpigpu::ResizedBounds b{lb, extent, true};
  return mpigpu::Finish(fn, std::move(t), false, &b, newtype);
}

extern "C" int MPIGPU_Type_dup(MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  const char* fn = "MPIGPU_Type_dup";
  if (newtype == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "newtype is null");
  std::shared_ptr<mpigpu::TypeTree> t;
  if (int rc = mpigpu::NewTree(fn, MPIGPU_COMBINER_DUP, {oldtype}, &t); rc != MPIGPU_SUCCESS)
    return rc;
  const mpigpu::TypeInfo& old = *t->types[0];
  mpigpu::SetSingle(t.get(), t->types[0], 0);
  // MPI: the copy is committed when the original is (predefined types always are).
  mpigpu::TypeInfo probe;
  const bool committed = mpigpu::LookupType(oldtype, &probe) == MPIGPU_SUCCESS && probe.committed;
  // The same bounds, and as (not) resized as the original.
  const mpigpu::ResizedBounds b{old.lb, old.extent, old.explicit_bounds};
  int rc = mpigpu::Finish(fn, std::move(t), false, &b, newtype);
  if (rc == MPIGPU_SUCCESS && committed) rc = MPIGPU_Type_commit(newtype);
  return rc;
}

extern "C" int MPIGPU_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                                           const int starts[], int order,
                                           MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  const char* fn = "MPIGPU_Type_create_subarray";
  if (newtype == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "newtype is null");
  if (ndims <= 0) return TypeErr(MPIGPU_ERR_ARG, fn, "ndims " + std::to_string(ndims) + " < 1");
  if (sizes == nullptr || subsizes == nullptr || starts == nullptr)
    return TypeErr(MPIGPU_ERR_ARG, fn, "null array");
  if (!mpigpu::ValidOrder(order)) return TypeErr(MPIGPU_ERR_ARG, fn, "bad order");
  for (int d = 0; d < ndims; ++d) {
    if (sizes[d] <= 0 || subsizes[d] < 0 || subsizes[d] > sizes[d] || starts[d] < 0 ||
        starts[d] > sizes[d] - subsizes[d])
      return TypeErr(MPIGPU_ERR_ARG, fn,
                 "dimension " + std::to_string(d) + ": size " + std::to_string(sizes[d]) +
                     ", subsize " + std::to_string(subsizes[d]) + ", start " +
                     std::to_string(starts[d]) + " do not fit");
  }
  std::shared_ptr<mpigpu::TypeTree> t;
  if (int rc = mpigpu::NewTree(fn, MPIGPU_COMBINER_SUBARRAY, {oldtype}, &t); rc != MPIGPU_SUCCESS)
    return rc;
  t->ints.push_back(ndims);
  for (const int* a : {sizes, subsizes, starts}) t->ints.insert(t->ints.end(), a, a + ndims);
  t->ints.push_back(order);
  // Dimensions from the fastest-varying: the last in C order, the first in Fortran order.
  std::shared_ptr<const mpigpu::TypeInfo> cur = t->types[0];
  const ptrdiff_t ext = cur->extent;
  ptrdiff_t stride = ext, disp = 0;
  bool overflow = false;
  for (int k = 0; k < ndims; ++k) {
    const int d = order == MPIGPU_ORDER_C ? ndims - 1 - k : k;
    if (int rc = mpigpu::Step(fn, cur, static_cast<size_t>(subsizes[d]), 1, stride, &cur);
        rc != MPIGPU_SUCCESS)
      return rc;
    ptrdiff_t off;
    overflow |= __builtin_mul_overflow(static_cast<ptrdiff_t>(starts[d]), stride, &off) ||
                __builtin_add_overflow(disp, off, &disp) ||
                __builtin_mul_overflow(stride, static_cast<ptrdiff_t>(sizes[d]), &stride);
  }
  if (overflow) return TypeErr(MPIGPU_ERR_ARG, fn, "the array's size in bytes overflows");
  mpigpu::SetSingle(t.get(), cur, disp);
  const mpigpu::ResizedBounds b{0, stride, true};  // lb 0, extent the whole array
  return mpigpu::Finish(fn, std::move(t), false, &b, newtype);
}

extern "C" int MPIGPU_Type_create_darray(int size, int rank, int ndims, const int gsizes[],
                                         const int distribs[], const int dargs[],
                                         const int psizes[], int order,
                                         MPIGPU_Datatype oldtype, MPIGPU_Datatype* newtype) {
  const char* fn = "MPIGPU_Type_create_darray";
  if (newtype == nullptr) return TypeErr(MPIGPU_ERR_ARG, fn, "newtype is null");
  if (ndims <= 0 || size <= 0 || rank < 0 || rank >= size)
    return TypeErr(MPIGPU_ERR_ARG, fn, "bad ndims, size or rank");
  if (!gsizes || !distribs || !dargs || !psizes) return TypeErr(MPIGPU_ERR_ARG, fn, "null array");
  if (!mpigpu::ValidOrder(order)) return TypeErr(MPIGPU_ERR_ARG, fn, "bad order");
  long long procs = 1;
  for (int d = 0; d < ndims; ++d) {
    if (gsizes[d] <= 0 || psizes[d] <= 0) return TypeErr(MPIGPU_ERR_ARG, fn, "bad gsize or psize");
    if (distribs[d] != MPIGPU_DISTRIBUTE_BLOCK && distribs[d] != MPIGPU_DISTRIBUTE_CYCLIC &&
        distribs[d] != MPIGPU_DISTRIBUTE_NONE)
      return TypeErr(MPIGPU_ERR_ARG, fn, "bad distribution");
    if (distribs[d] == MPIGPU_DISTRIBUTE_NONE && psizes[d] != 1)
      return TypeErr(MPIGPU_ERR_ARG, fn, "DISTRIBUTE_NONE needs psize 1");
    procs *= psizes[d];
  }
  if (procs != size) return TypeErr(MPIGPU_ERR_ARG, fn, "psizes do not multiply to size");
  std::shared_ptr<mpigpu::TypeTree> t;
  if (int rc = mpigpu::NewTree(fn, MPIGPU_COMBINER_DARRAY, {oldtype}, &t); rc != MPIGPU_SUCCESS)
    return rc;
  t->ints = {size, rank, ndims};
  for (const int* a : {gsizes, distribs, dargs, psizes}) t->ints.insert(t->ints.end(), a, a + ndims);
  t->ints.push_back(order);
  // This process's coordinates in the grid (row-major ranks, as MPI specifies).
  std::vector<int> coords(ndims);
  for (int d = 0, r = rank, left = size; d < ndims; ++d) {
    left /= psizes[d];
    coords[d] = r / left;
    r %= left;
  }
  std::shared_ptr<const mpigpu::TypeInfo> cur = t->types[0];
  const ptrdiff_t orig = cur->extent;
  ptrdiff_t stride = orig, disp = 0;
  for (int k = 0; k < ndims; ++k) {
    const int d = order == MPIGPU_ORDER_C ? ndims - 1 - k : k;
    // Each step's element is the previous step resized to the faster dimensions' full span.
    std::shared_ptr<const mpigpu::TypeInfo> elem = cur;
    if (k > 0) {
      if (int rc = mpigpu::Place(fn, cur, 0, 0, stride, &elem); rc != MPIGPU_SUCCESS) return rc;
    }
    ptrdiff_t off = 0;
    int rc;
    if (distribs[d] == MPIGPU_DISTRIBUTE_CYCLIC)
      rc = mpigpu::DarrayCyclic(fn, gsizes[d], dargs[d], psizes[d], coords[d], elem, stride, &cur, &off);
    else
      rc = mpigpu::DarrayBlock(fn, gsizes[d], distribs[d] == MPIGPU_DISTRIBUTE_NONE
                                                  ? MPIGPU_DISTRIBUTE_DFLT_DARG : dargs[d],
                               psizes[d], coords[d], elem, stride, &cur, &off);
    if (rc != MPIGPU_SUCCESS) return rc;
    disp += off;
    stride *= gsizes[d];
  }
  mpigpu::SetSingle(t.get(), cur, disp);
  const mpigpu::ResizedBounds b{0, stride, true};  // lb 0, extent the whole global array
  return mpigpu::Finish(fn, std::move(t), false, &b, newtype);
}

// ---- commit and free ----

extern "C" int MPIGPU_Type_commit(MPIGPU_Datatype* datatype) {
  if (datatype == nullptr) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Type_commit: datatype is null");
  }
  if (mpigpu::IsPredefinedType(*datatype)) return MPIGPU_SUCCESS;
  return mpigpu::CommitRegistered(*datatype);
}

extern "C" int MPIGPU_Type_free(MPIGPU_Datatype* datatype) {
  if (datatype == nullptr) {
    return mpigpu::SetLastError(MPIGPU_ERR_ARG, "MPIGPU_Type_free: datatype is null");
  }
  if (mpigpu::IsPredefinedType(*datatype)) {
    return mpigpu::SetLastError(MPIGPU_ERR_TYPE, std::string("cannot free predefined type ") +
                                                     mpigpu::TypeName(*datatype));
  }
  if (int rc = mpigpu::FreeRegistered(*datatype); rc != MPIGPU_SUCCESS) return rc;
  *datatype = MPIGPU_DATATYPE_NULL;
  return MPIGPU_SUCCESS;
}

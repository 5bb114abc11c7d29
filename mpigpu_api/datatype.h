// Datatypes: the registry behind MPIGPU_Type_* and the flattened description of a typed buffer
// that the transport moves (its pieces, pipeline/type_pieces.h; its packer, pipeline/pack.h).
//
// A type is described by its size (bytes of data), its extent (span of one element; the lower
// bound is always 0 because only non-negative strides are accepted) and a flattened list of
// regular pieces relative to the element's start. Derived types are contiguous or vector types
// built over any type; each keeps its own flattened copy, so freeing the type it was built from
// does not affect it. Every derived type has exactly one predefined "basic" type underneath
// (the only constructors are contiguous and vector), which reductions and the "whole elements
// per ring unit" rule use.
//
// Handles: predefined types are 0..MPIGPU_NUM_PREDEFINED_TYPES-1 (never freed); derived types
// get the next handles, and a freed handle is reused by a later type. The registry has no fixed
// capacity. All functions are thread-safe; describing a predefined type takes no lock.
#pragma once

#include <cstddef>
#include <complex>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "memcopy/status.h"
#include "mpigpu_api/mpigpu.h"
#include "pipeline/type_pieces.h"

namespace mpigpu {
// The C layouts of MPI's value-index pair types (MPI_FLOAT_INT ...): struct {value; index}.
template <class V, class I = int>
struct ValueIndex {
  V value;
  I index;
};
using FloatInt = ValueIndex<float>;
using DoubleInt = ValueIndex<double>;
using LongInt = ValueIndex<long>;
using IntInt = ValueIndex<int>;
using ShortInt = ValueIndex<short>;
using LongDoubleInt = ValueIndex<long double>;
using FloatFloat = ValueIndex<float, float>;     // Fortran 2REAL
using DoubleDouble = ValueIndex<double, double>; // Fortran 2DOUBLE_PRECISION
}  // namespace mpigpu

// X(handle, C type) for every predefined type, in handle order. The C type gives the extent
// (sizeof) and, for ValueIndex pairs, the layout of the two members.
#define MPIGPU_FOR_EACH_PREDEFINED_TYPE(X)                       \
  X(MPIGPU_BYTE, unsigned char)                                  \
  X(MPIGPU_CHAR, char)                                           \
  X(MPIGPU_SIGNED_CHAR, signed char)                             \
  X(MPIGPU_UNSIGNED_CHAR, unsigned char)                         \
  X(MPIGPU_SHORT, short)                                         \
  X(MPIGPU_UNSIGNED_SHORT, unsigned short)                       \
  X(MPIGPU_INT, int)                                             \
  X(MPIGPU_UNSIGNED, unsigned)                                   \
  X(MPIGPU_LONG, long)                                           \
  X(MPIGPU_UNSIGNED_LONG, unsigned long)                         \
  X(MPIGPU_LONG_LONG, long long)                                 \
  X(MPIGPU_UNSIGNED_LONG_LONG, unsigned long long)               \
  X(MPIGPU_FLOAT, float)                                         \
  X(MPIGPU_DOUBLE, double)                                       \
  X(MPIGPU_INT8_T, int8_t)                                       \
  X(MPIGPU_INT16_T, int16_t)                                     \
  X(MPIGPU_INT32_T, int32_t)                                     \
  X(MPIGPU_INT64_T, int64_t)                                     \
  X(MPIGPU_UINT8_T, uint8_t)                                     \
  X(MPIGPU_UINT16_T, uint16_t)                                   \
  X(MPIGPU_UINT32_T, uint32_t)                                   \
  X(MPIGPU_UINT64_T, uint64_t)                                   \
  X(MPIGPU_LONG_DOUBLE, long double)                             \
  X(MPIGPU_WCHAR, wchar_t)                                       \
  X(MPIGPU_C_BOOL, bool)                                         \
  X(MPIGPU_C_FLOAT_COMPLEX, std::complex<float>)                 \
  X(MPIGPU_C_DOUBLE_COMPLEX, std::complex<double>)               \
  X(MPIGPU_C_LONG_DOUBLE_COMPLEX, std::complex<long double>)     \
  X(MPIGPU_AINT, MPIGPU_Aint)                                    \
  X(MPIGPU_OFFSET, long long)                                    \
  X(MPIGPU_COUNT, long long)                                     \
  X(MPIGPU_PACKED, unsigned char)                                \
  X(MPIGPU_FLOAT_INT, mpigpu::FloatInt)                          \
  X(MPIGPU_DOUBLE_INT, mpigpu::DoubleInt)                        \
  X(MPIGPU_LONG_INT, mpigpu::LongInt)                            \
  X(MPIGPU_2INT, mpigpu::IntInt)                                 \
  X(MPIGPU_SHORT_INT, mpigpu::ShortInt)                          \
  X(MPIGPU_LONG_DOUBLE_INT, mpigpu::LongDoubleInt)               \
  X(MPIGPU_CXX_BOOL, bool)                                       \
  X(MPIGPU_CXX_FLOAT_COMPLEX, std::complex<float>)               \
  X(MPIGPU_CXX_DOUBLE_COMPLEX, std::complex<double>)             \
  X(MPIGPU_CXX_LONG_DOUBLE_COMPLEX, std::complex<long double>)   \
  X(MPIGPU_CHARACTER, char)                                      \
  X(MPIGPU_INTEGER, int)                                         \
  X(MPIGPU_REAL, float)                                          \
  X(MPIGPU_DOUBLE_PRECISION, double)                             \
  X(MPIGPU_LOGICAL, int)                                         \
  X(MPIGPU_COMPLEX, std::complex<float>)                         \
  X(MPIGPU_DOUBLE_COMPLEX, std::complex<double>)                 \
  X(MPIGPU_2INTEGER, mpigpu::IntInt)                             \
  X(MPIGPU_2REAL, mpigpu::FloatFloat)                            \
  X(MPIGPU_2DOUBLE_PRECISION, mpigpu::DoubleDouble)              \
  X(MPIGPU_INTEGER1, int8_t)                                     \
  X(MPIGPU_INTEGER2, int16_t)                                    \
  X(MPIGPU_INTEGER4, int32_t)                                    \
  X(MPIGPU_INTEGER8, int64_t)                                    \
  X(MPIGPU_REAL4, float)                                         \
  X(MPIGPU_REAL8, double)                                        \
  X(MPIGPU_REAL16, long double)                                  \
  X(MPIGPU_COMPLEX8, std::complex<float>)                        \
  X(MPIGPU_COMPLEX16, std::complex<double>)                      \
  X(MPIGPU_COMPLEX32, std::complex<long double>)               \
  X(MPIGPU_INTEGER16, __int128)

namespace mpigpu {

// What a predefined type holds, for reductions (which ops apply, how to combine).
enum class TypeKind : uint8_t {
  kByte,         // BYTE, PACKED: raw bytes
  kChar,         // CHAR, WCHAR, CHARACTER: characters
  kSignedInt,    // signed integers (incl. SIGNED_CHAR, AINT, OFFSET, COUNT)
  kUnsignedInt,  // unsigned integers (incl. UNSIGNED_CHAR)
  kFloat,        // float, double, long double
  kComplex,      // std::complex<float/double/long double>
  kLogical,      // C_BOOL, CXX_BOOL (bool), Fortran LOGICAL (int)
  kPair,         // ValueIndex pairs: see PairLayout
};

// A pair type's members: value (a predefined type) at offset 0, index at `index_offset` in
// memory (the C struct) and right after the value in the packed stream (MPI's type map has no
// padding: packed size = value size + index size).
struct PairLayout {
  MPIGPU_Datatype value_type = MPIGPU_DATATYPE_NULL;
  MPIGPU_Datatype index_type = MPIGPU_DATATYPE_NULL;
  size_t index_offset = 0;         // offsetof(struct, index)
  size_t packed_index_offset = 0;  // size of the value
};


// Upper bound on the listed pieces of one derived type. A type with more keeps no list: its
// pieces are made from its definition (TypeTree) whenever a buffer of it is packed.
constexpr size_t kMaxTypePieces = size_t{1} << 20;

struct TypeTree;  // a derived type's definition (datatype_internal.h)

// What the registry knows about one type. Immutable once made (types built from it share it).
struct TypeInfo {
  bool predefined = false;
  bool committed = false;  // (a copy's: LookupType fills it in)
  size_t size = 0;         // bytes of data in one element
  // MPI's bounds of one element: lb (may be negative) and extent = ub - lb (negative only when
  // resized so); element k of a buffer starts k * extent after the buffer pointer.
  ptrdiff_t lb = 0;
  ptrdiff_t extent = 0;
  // The bytes actually touched: [true_lb, true_lb + true_extent) from the element's start.
  ptrdiff_t true_lb = 0;
  ptrdiff_t true_extent = 0;
  size_t align = 1;              // largest alignment of a basic type inside (struct padding)
  bool explicit_bounds = false;  // resized somewhere inside: create_struct adds no padding
  // The predefined type of every basic element, or MPIGPU_DATATYPE_NULL when they differ.
  MPIGPU_Datatype basic_type = MPIGPU_DATATYPE_NULL;
  size_t num_elements = 0;  // basic elements in one element (a pair type counts 2)
  // Pieces of one element, offsets from its start (possibly negative), in type-map order.
  // Null for a derived type of more than kMaxTypePieces pieces: `tree` makes them.
  std::shared_ptr<const std::vector<TypePiece>> pieces;
  std::shared_ptr<const TypeTree> tree;  // null for predefined types
};

// A (count x type) buffer as the transport sees it. Cheap to copy (shares the piece list).
struct TypeDesc {
  MPIGPU_Datatype type = MPIGPU_DATATYPE_NULL;
  MPIGPU_Datatype basic_type = MPIGPU_DATATYPE_NULL;
  size_t count = 0;
  size_t size = 0;         // bytes of data in one element of `type`
  size_t extent = 0;       // bytes between consecutive elements of `type`
  size_t total_bytes = 0;  // count * size: the packed (wire) length
  size_t base_size = 0;    // bytes of one basic_type element (1 for mixed types)
  bool contiguous = true;  // the data is the single dense run [0, total_bytes) from the pointer
  ptrdiff_t true_lb = 0;   // where an element's first data byte lies from its start
  // One element's pieces; null when contiguous (nothing reads them then, and a predefined
  // type's description, made for every small message, has no reference to count), and for a
  // type too complex to list, whose `source` makes them. Both keep the type's definition alive
  // for as long as the description lives, whatever happens to its handle.
  std::shared_ptr<const std::vector<TypePiece>> type_pieces;
  std::shared_ptr<const ElementSource> source;

  // The packer's view of it (pipeline/type_pieces.h), valid while this description lives.
  TypeShape shape() const {
    return {size, extent, total_bytes, contiguous, type_pieces.get(), source.get()};
  }
};

// Bytes of data in one element of C type T: sizeof, except for pairs (no padding).
template <class T>
struct CTypeData {
  static constexpr size_t kSize = sizeof(T);
};
template <class V, class I>
struct CTypeData<ValueIndex<V, I>> {
  static constexpr size_t kSize = sizeof(V) + sizeof(I);
};

#define MPIGPU_TYPE_SIZE(handle, ctype) CTypeData<ctype>::kSize,
// Bytes of data in one element of each predefined type (MPI_Type_size), by handle.
inline constexpr size_t kPredefinedTypeSize[] = {MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TYPE_SIZE)};
#undef MPIGPU_TYPE_SIZE
#define MPIGPU_TYPE_EXTENT(handle, ctype) sizeof(ctype),
// sizeof each predefined type's C type (its extent), by handle.
inline constexpr size_t kPredefinedTypeExtent[] = {
    MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_TYPE_EXTENT)};
#undef MPIGPU_TYPE_EXTENT

inline bool IsPredefinedType(MPIGPU_Datatype type) {
  return type >= 0 && type < MPIGPU_NUM_PREDEFINED_TYPES;
}
// Bytes of data in one element of the predefined type; 0 for anything else.
inline size_t PredefinedTypeSize(MPIGPU_Datatype type) {
  return IsPredefinedType(type) ? kPredefinedTypeSize[type] : 0;
}
// sizeof the predefined type's C type; 0 for anything else.
inline size_t PredefinedTypeExtent(MPIGPU_Datatype type) {
  return IsPredefinedType(type) ? kPredefinedTypeExtent[type] : 0;
}
// What a predefined type holds; for other handles kByte (check IsPredefinedType first).
TypeKind PredefinedTypeKind(MPIGPU_Datatype type);
// The members of a pair type (kind kPair); false for every other handle.
bool PredefinedPairLayout(MPIGPU_Datatype type, PairLayout* out);
// "MPIGPU_INT"; "derived" for other handles.
const char* TypeName(MPIGPU_Datatype type);

// Error class (MPIGPU_SUCCESS, or MPIGPU_ERR_TYPE for a bad or freed handle, MPIGPU_ERR_ARG for
// a null out) and *out = the registry's entry. Uncommitted types are reported, not refused.
int LookupType(MPIGPU_Datatype type, TypeInfo* out);
// The same entry shared (no copy); null (error recorded) for a bad or freed handle.
std::shared_ptr<const TypeInfo> SharedType(MPIGPU_Datatype type, int* rc);

// Basic elements in the first `bytes` packed bytes of `count` elements of `type` (MPI_Get_
// elements): MPIGPU_UNDEFINED (as -1) if `bytes` ends inside a basic element.
long long CountBasicElements(const TypeInfo& type, size_t bytes);

// Any type, any count (DescribeForComm without its fast path).
int DescribeAnyForComm(MPIGPU_Datatype type, int count, TypeDesc* out);

// Describes `count` elements of `type` for communication. Errors: MPIGPU_ERR_TYPE (bad, freed
// or uncommitted type), MPIGPU_ERR_COUNT (count < 0, or count * extent overflows), ARG (null out).
// Inline for predefined types, which every small message uses: a table look-up, no registry.
inline int DescribeForComm(MPIGPU_Datatype type, int count, TypeDesc* out) {
  if (!IsPredefinedType(type) || count < 0 || out == nullptr ||
      kPredefinedTypeSize[type] != kPredefinedTypeExtent[type])
    return DescribeAnyForComm(type, count, out);
  // count < 2^31 and sizes <= 32 bytes: count * size cannot overflow.
  const size_t n = static_cast<size_t>(count), size = kPredefinedTypeSize[type];
  out->type = out->basic_type = type;
  out->count = n;
  out->size = out->extent = out->base_size = size;
  out->total_bytes = n * size;
  out->contiguous = true;
  out->true_lb = 0;
  out->type_pieces = nullptr;
  return MPIGPU_SUCCESS;
}

// The error class of a packer's failure (pipeline/pack.h, type_pieces.h: a range past the
// buffer or a null pointer, MPIGPU_ERR_ARG), its message recorded as the detail.
int PackerCode(const Status& st);

// WalkPieces (pipeline/type_pieces.h) over the buffer's packed bytes [packed_offset,
// packed_offset + bytes): fn(const TypePiece& piece, size_t packed_pos), false to stop.
// Returns MPIGPU_ERR_ARG if the range passes total_bytes.
template <class Fn>
int ForEachPiece(const TypeDesc& desc, size_t packed_offset, size_t bytes, Fn&& fn) {
  return PackerCode(WalkPieces(desc.shape(), packed_offset, bytes, std::forward<Fn>(fn)));
}
template <class Fn>
int ForEachPiece(const TypeDesc& desc, Fn&& fn) {
  return ForEachPiece(desc, 0, desc.total_bytes, std::forward<Fn>(fn));
}

// All pieces of the whole buffer (a contiguous buffer: one piece with nblocks = 1; count = 1 of
// a vector: one piece; count > 1 of a vector: count pieces). For tests and small types; the
// transport should visit pieces per unit instead.
std::vector<TypePiece> FlattenPieces(const TypeDesc& desc);

// Host memory only: copies packed bytes [packed_offset, packed_offset + bytes) between the typed
// buffer `buf` and the contiguous `packed` (which holds exactly that range), by PackPieces
// (pipeline/pack.h). Errors: ARG (range past total_bytes, null pointer with bytes > 0).
int Pack(const TypeDesc& desc, const void* buf, size_t packed_offset, size_t bytes,
         void* packed);
int Unpack(const TypeDesc& desc, const void* packed, size_t packed_offset, size_t bytes,
           void* buf);

}  // namespace mpigpu

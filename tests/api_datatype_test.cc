// Datatypes: registry, sizes/extents, flattened pieces (checked byte by byte against a naive
// type-map model), error cases, host pack/unpack.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mpigpu_api/datatype.h"
#include "mpigpu_api/mpigpu.h"

namespace mpigpu {
namespace {

// Naive model: the buffer offset of every data byte of one element, in packed order.
struct Model {
  std::vector<size_t> bytes;
  size_t extent = 0;
};

Model PredefinedModel(MPIGPU_Datatype t) {
  Model m;
  m.extent = PredefinedTypeExtent(t);
  PairLayout pair;
  if (PredefinedPairLayout(t, &pair)) {  // the value, then the index (after any padding)
    for (size_t i = 0; i < pair.packed_index_offset; ++i) m.bytes.push_back(i);
    const size_t isize = PredefinedTypeSize(t) - pair.packed_index_offset;
    for (size_t i = 0; i < isize; ++i) m.bytes.push_back(pair.index_offset + i);
    return m;
  }
  for (size_t i = 0; i < PredefinedTypeSize(t); ++i) m.bytes.push_back(i);
  return m;
}

Model VectorModel(size_t count, size_t blocklength, size_t stride, const Model& old) {
  Model m;
  for (size_t i = 0; i < count; ++i) {
    for (size_t j = 0; j < blocklength; ++j) {
      for (size_t b : old.bytes) m.bytes.push_back((i * stride + j) * old.extent + b);
    }
  }
  m.extent = m.bytes.empty() ? 0 : ((count - 1) * stride + blocklength) * old.extent;
  return m;
}

// The whole (count x type) buffer.
std::vector<size_t> BufferModel(const Model& m, size_t count) {
  std::vector<size_t> out;
  for (size_t k = 0; k < count; ++k) {
    for (size_t b : m.bytes) out.push_back(k * m.extent + b);
  }
  return out;
}

struct Typed {
  MPIGPU_Datatype handle;
  Model model;
};

Typed Predef(MPIGPU_Datatype t) { return {t, PredefinedModel(t)}; }

Typed Vector(int count, int blocklength, int stride, const Typed& old) {
  Typed t;
  EXPECT_EQ(MPIGPU_Type_vector(count, blocklength, stride, old.handle, &t.handle),
            MPIGPU_SUCCESS);
  EXPECT_EQ(MPIGPU_Type_commit(&t.handle), MPIGPU_SUCCESS);
  t.model = VectorModel(count, blocklength, stride, old.model);
  return t;
}

Typed Contiguous(int count, const Typed& old) {
  Typed t;
  EXPECT_EQ(MPIGPU_Type_contiguous(count, old.handle, &t.handle), MPIGPU_SUCCESS);
  EXPECT_EQ(MPIGPU_Type_commit(&t.handle), MPIGPU_SUCCESS);
  t.model = VectorModel(count, 1, 1, old.model);
  return t;
}

TypeDesc Describe(MPIGPU_Datatype t, int count) {
  TypeDesc d;
  EXPECT_EQ(DescribeForComm(t, count, &d), MPIGPU_SUCCESS);
  return d;
}

void ExpectSizeExtent(MPIGPU_Datatype t, int size, MPIGPU_Aint extent) {
  int s = -1;
  MPIGPU_Aint lb = -1, ext = -1;
  ASSERT_EQ(MPIGPU_Type_size(t, &s), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_extent(t, &lb, &ext), MPIGPU_SUCCESS);
  EXPECT_EQ(s, size);
  EXPECT_EQ(lb, 0);
  EXPECT_EQ(ext, extent);
}

// Checks every piece property against the model: canonical form, whole-buffer bytes in order,
// and every sub-range a ring unit could ask for.
void CheckAgainstModel(const Typed& t, int count) {
  SCOPED_TRACE("type " + std::to_string(t.handle) + " count " + std::to_string(count));
  const TypeDesc d = Describe(t.handle, count);
  const std::vector<size_t> want = BufferModel(t.model, count);
  ASSERT_EQ(d.total_bytes, want.size());
  EXPECT_EQ(d.extent, t.model.extent);
  auto expand = [](const TypePiece& p, std::vector<size_t>* out) {
    ASSERT_GE(p.nblocks, 1u);
    ASSERT_GT(p.block_bytes, 0u);
    if (p.nblocks == 1) {
      EXPECT_EQ(p.stride_bytes, p.block_bytes);
    } else {
      EXPECT_GT(p.stride_bytes, p.block_bytes);
    }
    for (size_t i = 0; i < p.nblocks; ++i) {
      for (size_t j = 0; j < p.block_bytes; ++j) out->push_back(p.offset + i * p.stride_bytes + j);
    }
  };
  std::vector<size_t> got;
  for (const TypePiece& p : FlattenPieces(d)) expand(p, &got);
  EXPECT_EQ(got, want);

  const size_t n = want.size();
  for (size_t a = 0; a <= n; ++a) {
    for (size_t len : {size_t{1}, size_t{3}, size_t{8}, size_t{13}, n - a}) {
      if (len > n - a) continue;
      std::vector<size_t> sub;
      size_t expect_pos = a;
      ASSERT_EQ(ForEachPiece(d, a, len,
                             [&](const TypePiece& p, size_t pos) {
                               EXPECT_EQ(pos, expect_pos);
                               expect_pos += p.bytes();
                               expand(p, &sub);
                               return true;
                             }),
                MPIGPU_SUCCESS);
      ASSERT_EQ(sub, std::vector<size_t>(want.begin() + a, want.begin() + a + len))
          << "range " << a << " +" << len;
    }
  }
}

TEST(ApiDatatypeTest, PredefinedSizesAndExtents) {
#define CHECK_PREDEFINED(handle, ctype)                                           \
  ExpectSizeExtent(handle, static_cast<int>(CTypeData<ctype>::kSize), sizeof(ctype)); \
  EXPECT_STREQ(TypeName(handle),                                                  \
               handle == MPIGPU_C_FLOAT_COMPLEX ? "MPIGPU_C_COMPLEX"          \
               : handle == MPIGPU_LONG_LONG     ? "MPIGPU_LONG_LONG_INT"      \
                                                : #handle);
  MPIGPU_FOR_EACH_PREDEFINED_TYPE(CHECK_PREDEFINED)
#undef CHECK_PREDEFINED
  EXPECT_EQ(PredefinedTypeSize(MPIGPU_INT64_T), 8u);
  EXPECT_EQ(PredefinedTypeSize(MPIGPU_DOUBLE), 8u);
  EXPECT_EQ(PredefinedTypeSize(MPIGPU_INT16_T), 2u);
  TypeDesc d = Describe(MPIGPU_FLOAT, 10);
  EXPECT_EQ(d.total_bytes, 40u);
  EXPECT_TRUE(d.contiguous);
  EXPECT_EQ(d.basic_type, MPIGPU_FLOAT);
  EXPECT_EQ(d.base_size, 4u);
  EXPECT_EQ(FlattenPieces(d), (std::vector<TypePiece>{{0, 40, 40, 1}}));
}

// MPI's pair types have the C struct's extent and the members' size (no padding), and move
// exactly the members' bytes: SHORT_INT's hole and DOUBLE_INT's tail padding stay untouched.
TEST(ApiDatatypeTest, PairTypesHaveCLayouts) {
  ExpectSizeExtent(MPIGPU_FLOAT_INT, 8, sizeof(FloatInt));
  ExpectSizeExtent(MPIGPU_DOUBLE_INT, 12, sizeof(DoubleInt));
  ExpectSizeExtent(MPIGPU_LONG_INT, static_cast<int>(sizeof(long) + sizeof(int)), sizeof(LongInt));
  ExpectSizeExtent(MPIGPU_2INT, 8, 8);
  ExpectSizeExtent(MPIGPU_SHORT_INT, 6, sizeof(ShortInt));
  ExpectSizeExtent(MPIGPU_LONG_DOUBLE_INT, static_cast<int>(sizeof(long double) + sizeof(int)),
                   sizeof(LongDoubleInt));
  ExpectSizeExtent(MPIGPU_C_DOUBLE_COMPLEX, 16, 16);
  ExpectSizeExtent(MPIGPU_LONG_DOUBLE, static_cast<int>(sizeof(long double)), sizeof(long double));
  EXPECT_EQ(MPIGPU_C_COMPLEX, MPIGPU_C_FLOAT_COMPLEX);
  PairLayout pair;
  ASSERT_TRUE(PredefinedPairLayout(MPIGPU_SHORT_INT, &pair));
  EXPECT_EQ(pair.value_type, MPIGPU_SHORT);
  EXPECT_EQ(pair.index_type, MPIGPU_INT);
  EXPECT_EQ(pair.index_offset, offsetof(ShortInt, index));
  EXPECT_EQ(pair.packed_index_offset, sizeof(short));
  ASSERT_TRUE(PredefinedPairLayout(MPIGPU_DOUBLE_INT, &pair));
  EXPECT_EQ(pair.value_type, MPIGPU_DOUBLE);
  EXPECT_EQ(pair.index_offset, 8u);
  EXPECT_FALSE(PredefinedPairLayout(MPIGPU_INT, &pair));
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_SHORT_INT), TypeKind::kPair);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_C_DOUBLE_COMPLEX), TypeKind::kComplex);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_C_BOOL), TypeKind::kLogical);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_LOGICAL), TypeKind::kLogical);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_BYTE), TypeKind::kByte);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_PACKED), TypeKind::kByte);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_WCHAR), TypeKind::kChar);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_UNSIGNED_CHAR), TypeKind::kUnsignedInt);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_AINT), TypeKind::kSignedInt);
  EXPECT_EQ(PredefinedTypeKind(MPIGPU_LONG_DOUBLE), TypeKind::kFloat);

  // Three SHORT_INTs packed: 6 bytes each, taken around the 2-byte hole.
  ShortInt in[3], out[3];
  std::memset(in, 0xEE, sizeof(in));
  std::memset(out, 0xAB, sizeof(out));
  for (int i = 0; i < 3; ++i) in[i] = ShortInt{static_cast<short>(10 * i), 100 + i};
  TypeDesc d = Describe(MPIGPU_SHORT_INT, 3);
  ASSERT_EQ(d.total_bytes, 18u);
  EXPECT_FALSE(d.contiguous);
  unsigned char packed[18];
  ASSERT_EQ(Pack(d, in, 0, 18, packed), MPIGPU_SUCCESS);
  for (int i = 0; i < 3; ++i) {
    short v;
    int x;
    std::memcpy(&v, packed + 6 * i, 2);
    std::memcpy(&x, packed + 6 * i + 2, 4);
    EXPECT_EQ(v, 10 * i);
    EXPECT_EQ(x, 100 + i);
  }
  ASSERT_EQ(Unpack(d, packed, 0, 18, out), MPIGPU_SUCCESS);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out[i].value, 10 * i);
    EXPECT_EQ(out[i].index, 100 + i);
    const unsigned char* hole = reinterpret_cast<const unsigned char*>(&out[i]) + 2;
    EXPECT_EQ(hole[0], 0xAB);  // the padding is not data: untouched
    EXPECT_EQ(hole[1], 0xAB);
  }
}

// DescribeForComm answers predefined types inline from the size table; the general path reads
// the registry's entry. Both must describe every predefined type and count alike.
TEST(ApiDatatypeTest, PredefinedFastPathMatchesGeneralPath) {
  for (MPIGPU_Datatype t = 0; t < MPIGPU_NUM_PREDEFINED_TYPES; ++t) {
    for (int count : {0, 1, 7, INT_MAX}) {
      TypeDesc fast, general;
      ASSERT_EQ(DescribeForComm(t, count, &fast), MPIGPU_SUCCESS);
      ASSERT_EQ(DescribeAnyForComm(t, count, &general), MPIGPU_SUCCESS);
      SCOPED_TRACE(std::string(TypeName(t)) + " x " + std::to_string(count));
      EXPECT_EQ(fast.type, general.type);
      EXPECT_EQ(fast.basic_type, general.basic_type);
      EXPECT_EQ(fast.count, general.count);
      EXPECT_EQ(fast.size, general.size);
      EXPECT_EQ(fast.extent, general.extent);
      EXPECT_EQ(fast.total_bytes, general.total_bytes);
      EXPECT_EQ(fast.base_size, general.base_size);
      EXPECT_EQ(fast.contiguous, general.contiguous);
      EXPECT_EQ(fast.type_pieces, general.type_pieces);
      // (SHORT_INT has two pieces per element: INT_MAX elements are too many to list.)
      if (count <= 7) {
        EXPECT_EQ(FlattenPieces(fast), FlattenPieces(general));
      }
    }
  }
  // Errors keep their classes on the inline path's way out.
  TypeDesc d;
  EXPECT_EQ(DescribeForComm(MPIGPU_INT, -1, &d), MPIGPU_ERR_COUNT);
  EXPECT_EQ(DescribeForComm(MPIGPU_INT, 1, nullptr), MPIGPU_ERR_ARG);
  EXPECT_EQ(DescribeForComm(MPIGPU_DATATYPE_NULL, 1, &d), MPIGPU_ERR_TYPE);
}

TEST(ApiDatatypeTest, Contiguous) {
  Typed c = Contiguous(5, Predef(MPIGPU_INT));
  ExpectSizeExtent(c.handle, 20, 20);
  TypeDesc d = Describe(c.handle, 3);
  EXPECT_EQ(d.size, 20u);
  EXPECT_EQ(d.total_bytes, 60u);
  EXPECT_TRUE(d.contiguous);
  EXPECT_EQ(d.basic_type, MPIGPU_INT);
  EXPECT_EQ(d.base_size, sizeof(int));
  EXPECT_EQ(FlattenPieces(d), (std::vector<TypePiece>{{0, 60, 60, 1}}));
  CheckAgainstModel(c, 3);
}

TEST(ApiDatatypeTest, Vector) {
  Typed v = Vector(4, 2, 5, Predef(MPIGPU_DOUBLE));
  ExpectSizeExtent(v.handle, 64, (3 * 5 + 2) * 8);
  // The MPIGPU_Count forms give the same bounds, and refuse a null output.
  MPIGPU_Count lb = -1, extent = -1;
  EXPECT_EQ(MPIGPU_Type_get_extent_x(v.handle, &lb, &extent), MPIGPU_SUCCESS);
  EXPECT_EQ(lb, 0);
  EXPECT_EQ(extent, (3 * 5 + 2) * 8);
  lb = extent = -1;
  EXPECT_EQ(MPIGPU_Type_get_true_extent_x(v.handle, &lb, &extent), MPIGPU_SUCCESS);
  EXPECT_EQ(lb, 0);
  EXPECT_EQ(extent, (3 * 5 + 2) * 8);
  EXPECT_EQ(MPIGPU_Type_get_extent_x(v.handle, nullptr, &extent), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Type_get_true_extent_x(v.handle, &lb, nullptr), MPIGPU_ERR_ARG);
  TypeDesc d1 = Describe(v.handle, 1);
  EXPECT_FALSE(d1.contiguous);
  EXPECT_EQ(d1.basic_type, MPIGPU_DOUBLE);
  EXPECT_EQ(d1.base_size, 8u);
  EXPECT_EQ(FlattenPieces(d1), (std::vector<TypePiece>{{0, 16, 40, 4}}));
  // count > 1 with the standard extent: one piece per element.
  EXPECT_EQ(FlattenPieces(Describe(v.handle, 3)),
            (std::vector<TypePiece>{{0, 16, 40, 4}, {136, 16, 40, 4}, {272, 16, 40, 4}}));
  CheckAgainstModel(v, 1);
  CheckAgainstModel(v, 3);
  // stride == blocklength is contiguous.
  Typed dense = Vector(3, 2, 2, Predef(MPIGPU_INT));
  EXPECT_TRUE(Describe(dense.handle, 2).contiguous);
  EXPECT_EQ(FlattenPieces(Describe(dense.handle, 2)), (std::vector<TypePiece>{{0, 48, 48, 1}}));
}

TEST(ApiDatatypeTest, VectorOfContiguous) {
  Typed c = Contiguous(3, Predef(MPIGPU_INT));
  Typed v = Vector(2, 2, 3, c);
  ExpectSizeExtent(v.handle, 48, (1 * 3 + 2) * 12);
  EXPECT_EQ(FlattenPieces(Describe(v.handle, 1)), (std::vector<TypePiece>{{0, 24, 36, 2}}));
  CheckAgainstModel(v, 1);
  CheckAgainstModel(v, 2);
}

TEST(ApiDatatypeTest, ContiguousOfVector) {
  Typed v = Vector(2, 1, 3, Predef(MPIGPU_INT));
  ExpectSizeExtent(v.handle, 8, 16);
  Typed c = Contiguous(3, v);
  ExpectSizeExtent(c.handle, 24, 48);
  EXPECT_EQ(FlattenPieces(Describe(c.handle, 1)),
            (std::vector<TypePiece>{{0, 4, 12, 2}, {16, 4, 12, 2}, {32, 4, 12, 2}}));
  CheckAgainstModel(c, 1);
  CheckAgainstModel(c, 2);
}

TEST(ApiDatatypeTest, NestedTypesMatchTheModel) {
  Typed i16 = Predef(MPIGPU_INT16_T);
  Typed inner = Vector(2, 1, 2, Predef(MPIGPU_INT));
  std::vector<Typed> types = {
      Vector(3, 1, 1, inner),                        // consecutive vectors
      Vector(3, 1, 2, inner),                        // vectors with gaps between
      Vector(2, 3, 4, inner),                        // blocks of vectors
      Contiguous(2, Vector(3, 2, 4, Contiguous(3, i16))),
      Vector(1, 5, 100, Predef(MPIGPU_CHAR)),        // one block: stride unused
      Vector(4, 1, 1, Vector(1, 2, 9, i16)),         // collapses to dense
      Vector(3, 2, 3, Vector(2, 1, 3, Vector(2, 1, 2, Predef(MPIGPU_UINT8_T)))),
  };
  for (const Typed& t : types) {
    for (int count : {1, 2, 3}) CheckAgainstModel(t, count);
  }
}

TEST(ApiDatatypeTest, ZeroSizedTypes) {
  Typed empty = Contiguous(0, Predef(MPIGPU_INT));
  ExpectSizeExtent(empty.handle, 0, 0);
  Typed no_blocks = Vector(4, 0, 3, Predef(MPIGPU_INT));
  ExpectSizeExtent(no_blocks.handle, 0, 0);
  TypeDesc d = Describe(empty.handle, 5);
  EXPECT_EQ(d.total_bytes, 0u);
  EXPECT_TRUE(FlattenPieces(d).empty());
  EXPECT_EQ(Pack(d, nullptr, 0, 0, nullptr), MPIGPU_SUCCESS);
  EXPECT_TRUE(FlattenPieces(Describe(MPIGPU_INT, 0)).empty());
}

TEST(ApiDatatypeTest, UncommittedTypeIsRefusedForCommunication) {
  MPIGPU_Datatype t;
  ASSERT_EQ(MPIGPU_Type_vector(2, 1, 2, MPIGPU_INT, &t), MPIGPU_SUCCESS);
  TypeDesc d;
  EXPECT_EQ(DescribeForComm(t, 1, &d), MPIGPU_ERR_TYPE);
  // Size and extent work before commit, as in MPI; building from it too.
  ExpectSizeExtent(t, 8, 12);
  MPIGPU_Datatype outer;
  ASSERT_EQ(MPIGPU_Type_contiguous(2, t, &outer), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_commit(&t), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_commit(&t), MPIGPU_SUCCESS);  // twice is fine
  EXPECT_EQ(DescribeForComm(t, 1, &d), MPIGPU_SUCCESS);
  EXPECT_EQ(DescribeForComm(outer, 1, &d), MPIGPU_ERR_TYPE);  // commit is per type
  MPIGPU_Datatype predefined = MPIGPU_INT;
  EXPECT_EQ(MPIGPU_Type_commit(&predefined), MPIGPU_SUCCESS);
}

TEST(ApiDatatypeTest, BadArgumentsGiveErrors) {
  MPIGPU_Datatype t = MPIGPU_INT;
  EXPECT_EQ(MPIGPU_Type_free(&t), MPIGPU_ERR_TYPE);  // predefined
  EXPECT_EQ(t, MPIGPU_INT);
  EXPECT_EQ(MPIGPU_Type_free(nullptr), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Type_commit(nullptr), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Type_contiguous(-1, MPIGPU_INT, &t), MPIGPU_ERR_COUNT);
  EXPECT_EQ(MPIGPU_Type_vector(-1, 1, 1, MPIGPU_INT, &t), MPIGPU_ERR_COUNT);
  EXPECT_EQ(MPIGPU_Type_vector(2, -1, 1, MPIGPU_INT, &t), MPIGPU_ERR_COUNT);
  EXPECT_EQ(MPIGPU_Type_vector(2, 1, 2, MPIGPU_INT, nullptr), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Type_contiguous(2, MPIGPU_INT, nullptr), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Type_vector(INT_MAX, INT_MAX, INT_MAX, MPIGPU_DOUBLE, &t), MPIGPU_ERR_ARG);
  for (MPIGPU_Datatype bad : {MPIGPU_DATATYPE_NULL, -7, 1000000000, INT_MAX}) {
    int size;
    MPIGPU_Aint lb, extent;
    TypeDesc d;
    EXPECT_EQ(MPIGPU_Type_size(bad, &size), MPIGPU_ERR_TYPE) << bad;
    EXPECT_EQ(MPIGPU_Type_get_extent(bad, &lb, &extent), MPIGPU_ERR_TYPE) << bad;
    EXPECT_EQ(MPIGPU_Type_contiguous(1, bad, &t), MPIGPU_ERR_TYPE) << bad;
    EXPECT_EQ(DescribeForComm(bad, 1, &d), MPIGPU_ERR_TYPE) << bad;
    MPIGPU_Datatype copy = bad;
    EXPECT_EQ(MPIGPU_Type_free(&copy), MPIGPU_ERR_TYPE) << bad;
    EXPECT_EQ(MPIGPU_Type_commit(&copy), MPIGPU_ERR_TYPE) << bad;
  }
  MPIGPU_Aint lb;
  EXPECT_EQ(MPIGPU_Type_size(MPIGPU_INT, nullptr), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Type_get_extent(MPIGPU_INT, &lb, nullptr), MPIGPU_ERR_ARG);
  TypeDesc d;
  EXPECT_EQ(DescribeForComm(MPIGPU_INT, -1, &d), MPIGPU_ERR_COUNT);
  EXPECT_EQ(DescribeForComm(MPIGPU_INT, 1, nullptr), MPIGPU_ERR_ARG);
  // A range past the buffer.
  d = Describe(MPIGPU_INT, 4);
  char buf[16] = {}, packed[16];
  EXPECT_EQ(Pack(d, buf, 8, 9, packed), MPIGPU_ERR_ARG);
  EXPECT_EQ(Unpack(d, packed, 17, 0, buf), MPIGPU_ERR_ARG);
  EXPECT_EQ(Pack(d, nullptr, 0, 4, packed), MPIGPU_ERR_ARG);
}

TEST(ApiDatatypeTest, FreedTypesAreRefusedAndDerivedOnesKeepWorking) {
  Typed c = Contiguous(3, Predef(MPIGPU_SHORT));
  Typed v = Vector(2, 1, 2, c);
  MPIGPU_Datatype handle = c.handle;
  ASSERT_EQ(MPIGPU_Type_free(&handle), MPIGPU_SUCCESS);
  EXPECT_EQ(handle, MPIGPU_DATATYPE_NULL);
  MPIGPU_Datatype again = c.handle;
  EXPECT_EQ(MPIGPU_Type_free(&again), MPIGPU_ERR_TYPE);  // double free
  TypeDesc d;
  EXPECT_EQ(DescribeForComm(c.handle, 1, &d), MPIGPU_ERR_TYPE);
  CheckAgainstModel(v, 2);
  MPIGPU_Datatype vh = v.handle;
  ASSERT_EQ(MPIGPU_Type_free(&vh), MPIGPU_SUCCESS);
}

TEST(ApiDatatypeTest, HugeSizesAreReportedUndefined) {
  MPIGPU_Datatype big;
  ASSERT_EQ(MPIGPU_Type_contiguous(INT_MAX, MPIGPU_DOUBLE, &big), MPIGPU_SUCCESS);
  int size = 0;
  ASSERT_EQ(MPIGPU_Type_size(big, &size), MPIGPU_SUCCESS);
  EXPECT_EQ(size, MPIGPU_UNDEFINED);
  MPIGPU_Aint lb, extent;
  ASSERT_EQ(MPIGPU_Type_get_extent(big, &lb, &extent), MPIGPU_SUCCESS);
  EXPECT_EQ(extent, static_cast<MPIGPU_Aint>(INT_MAX) * 8);
  ASSERT_EQ(MPIGPU_Type_commit(&big), MPIGPU_SUCCESS);
  TypeDesc d;
  EXPECT_EQ(DescribeForComm(big, 1000, &d), MPIGPU_SUCCESS);  // 16 TiB: describable
  MPIGPU_Datatype too_big;
  EXPECT_EQ(MPIGPU_Type_contiguous(INT_MAX, big, &too_big), MPIGPU_ERR_ARG);  // > PTRDIFF_MAX
  MPIGPU_Datatype bigger;
  ASSERT_EQ(MPIGPU_Type_contiguous(1 << 20, big, &bigger), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_commit(&bigger), MPIGPU_SUCCESS);
  EXPECT_EQ(DescribeForComm(bigger, INT_MAX, &d), MPIGPU_ERR_COUNT);  // overflows
  ASSERT_EQ(MPIGPU_Type_free(&bigger), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_free(&big), MPIGPU_SUCCESS);
}

// Types of more than kMaxTypePieces pieces keep no list: their pieces come from their
// definition, and the walker's results are the same (checked against the model).
TEST(ApiDatatypeTest, TooManyPiecesComeFromTheDefinition) {
  Typed strided = Vector(2, 1, 2, Predef(MPIGPU_INT));  // one piece, not closed under copies
  Typed many = Contiguous(static_cast<int>(kMaxTypePieces) + 1, strided);
  TypeInfo info;
  ASSERT_EQ(LookupType(many.handle, &info), MPIGPU_SUCCESS);
  EXPECT_EQ(info.pieces, nullptr);
  EXPECT_EQ(info.size, (kMaxTypePieces + 1) * 8);
  const TypeDesc d = Describe(many.handle, 1);
  EXPECT_FALSE(d.contiguous);
  EXPECT_NE(d.source, nullptr);
  std::vector<ptrdiff_t> bytes;
  ASSERT_EQ(ForEachPiece(d, 12, 8, [&](const TypePiece& p, size_t) {
              for (size_t i = 0; i < p.nblocks; ++i)
                for (size_t j = 0; j < p.block_bytes; ++j)
                  bytes.push_back(p.offset + static_cast<ptrdiff_t>(i * p.stride_bytes + j));
              return true;
            }),
            MPIGPU_SUCCESS);
  // Packed bytes 12..19: the ints at 20 (pair 1's second) and 24 (pair 2's first).
  std::vector<ptrdiff_t> want;
  for (ptrdiff_t b = 20; b < 28; ++b) want.push_back(b);
  EXPECT_EQ(bytes, want);
  Typed two_pieces = Contiguous(2, strided);
  MPIGPU_Datatype t;
  ASSERT_EQ(MPIGPU_Type_vector(INT_MAX / 64, 1, 1, two_pieces.handle, &t), MPIGPU_SUCCESS);
  ASSERT_EQ(LookupType(t, &info), MPIGPU_SUCCESS);
  EXPECT_EQ(info.pieces, nullptr);
  ASSERT_EQ(MPIGPU_Type_free(&t), MPIGPU_SUCCESS);
  MPIGPU_Datatype h = many.handle;
  ASSERT_EQ(MPIGPU_Type_free(&h), MPIGPU_SUCCESS);
}

TEST(ApiDatatypeTest, HundredThousandTypesRegisterAndFree) {
  constexpr int kN = 100000;
  std::vector<MPIGPU_Datatype> handles(kN);
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(MPIGPU_Type_contiguous(i % 7 + 1, MPIGPU_INT, &handles[i]), MPIGPU_SUCCESS);
  }
  std::vector<bool> seen;
  MPIGPU_Datatype max_handle = 0;
  for (MPIGPU_Datatype h : handles) {
    ASSERT_GE(h, MPIGPU_NUM_PREDEFINED_TYPES);
    if (static_cast<size_t>(h) >= seen.size()) seen.resize(h + 1);
    ASSERT_FALSE(seen[h]) << "handle " << h << " given twice";
    seen[h] = true;
    max_handle = std::max(max_handle, h);
  }
  int size = 0;
  ASSERT_EQ(MPIGPU_Type_size(handles[kN - 1], &size), MPIGPU_SUCCESS);
  EXPECT_EQ(size, static_cast<int>(((kN - 1) % 7 + 1) * sizeof(int)));
  for (MPIGPU_Datatype& h : handles) ASSERT_EQ(MPIGPU_Type_free(&h), MPIGPU_SUCCESS);
  // Freed handles are reused: a second round needs no new ones.
  for (int i = 0; i < kN; ++i) {
    ASSERT_EQ(MPIGPU_Type_contiguous(2, MPIGPU_INT, &handles[i]), MPIGPU_SUCCESS);
    ASSERT_LE(handles[i], max_handle);
  }
  for (MPIGPU_Datatype& h : handles) ASSERT_EQ(MPIGPU_Type_free(&h), MPIGPU_SUCCESS);
}

TEST(ApiDatatypeTest, ConcurrentCreateDescribeFree) {
  std::vector<std::thread> threads;
  std::vector<int> failures(4, 0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 2000; ++i) {
        MPIGPU_Datatype h;
        TypeDesc d;
        int n = (i + t) % 5 + 1;
        if (MPIGPU_Type_vector(n, 1, 2, MPIGPU_DOUBLE, &h) != MPIGPU_SUCCESS ||
            MPIGPU_Type_commit(&h) != MPIGPU_SUCCESS ||
            DescribeForComm(h, 1, &d) != MPIGPU_SUCCESS || d.total_bytes != n * 8u ||
            MPIGPU_Type_free(&h) != MPIGPU_SUCCESS) {
          ++failures[t];
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST(ApiDatatypeTest, PackUnpackRoundTripIsByteExact) {
  Typed inner = Contiguous(3, Predef(MPIGPU_INT16_T));
  std::vector<Typed> types = {Vector(5, 2, 3, Predef(MPIGPU_DOUBLE)), Vector(3, 2, 4, inner),
                              Contiguous(2, Vector(3, 1, 2, inner))};
  for (const Typed& t : types) {
    for (int count : {1, 4}) {
      SCOPED_TRACE("type " + std::to_string(t.handle) + " count " + std::to_string(count));
      const TypeDesc d = Describe(t.handle, count);
      const std::vector<size_t> map = BufferModel(t.model, count);
      std::vector<uint8_t> buf(count * d.extent);
      for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 7 + 3);
      std::vector<uint8_t> packed(d.total_bytes, 0);
      ASSERT_EQ(Pack(d, buf.data(), 0, d.total_bytes, packed.data()), MPIGPU_SUCCESS);
      for (size_t i = 0; i < map.size(); ++i) ASSERT_EQ(packed[i], buf[map[i]]) << i;
      // Packing unit by unit (odd unit sizes split blocks) gives the same bytes.
      for (size_t unit : {size_t{1}, size_t{5}, size_t{13}}) {
        std::vector<uint8_t> chunked(d.total_bytes, 0);
        for (size_t off = 0; off < d.total_bytes; off += unit) {
          size_t len = std::min(unit, d.total_bytes - off);
          ASSERT_EQ(Pack(d, buf.data(), off, len, chunked.data() + off), MPIGPU_SUCCESS);
        }
        ASSERT_EQ(chunked, packed) << "unit " << unit;
      }
      // Unpack writes exactly the data bytes: the gaps keep their sentinel.
      std::vector<uint8_t> out(buf.size(), 0xEE);
      for (size_t off = 0; off < d.total_bytes; off += 11) {
        size_t len = std::min<size_t>(11, d.total_bytes - off);
        ASSERT_EQ(Unpack(d, packed.data() + off, off, len, out.data()), MPIGPU_SUCCESS);
      }
      std::vector<bool> is_data(buf.size(), false);
      for (size_t b : map) is_data[b] = true;
      for (size_t i = 0; i < buf.size(); ++i) {
        ASSERT_EQ(out[i], is_data[i] ? buf[i] : 0xEE) << "byte " << i;
      }
    }
  }
}

}  // namespace
}  // namespace mpigpu

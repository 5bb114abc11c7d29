// Derived type constructors byte by byte: every constructor (negative displacements and
// strides, overlapping blocks, resized bounds, struct padding, subarray in both orders, darray),
// checked against a type map written out by hand; envelope/contents, names, Get_elements,
// Pack/Unpack with positions, types too complex to list, and sends between ranks with them.
#include <gtest/gtest.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mpigpu_api/datatype.h"
#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu {
namespace {

using testing::RunApiJob;

// One element's data bytes in type-map order (offsets from the element's start), its bounds.
struct Map {
  std::vector<ptrdiff_t> bytes;
  ptrdiff_t lb = 0;
  ptrdiff_t extent = 0;
};

// `n` bytes from `at`.
void AddRun(std::vector<ptrdiff_t>* v, ptrdiff_t at, ptrdiff_t n) {
  for (ptrdiff_t i = 0; i < n; ++i) v->push_back(at + i);
}

MPIGPU_Datatype Committed(MPIGPU_Datatype t) {
  EXPECT_EQ(MPIGPU_Type_commit(&t), MPIGPU_SUCCESS);
  return t;
}

// The map of `count` elements (element k at k * extent).
std::vector<ptrdiff_t> BufferMap(const Map& m, int count) {
  std::vector<ptrdiff_t> out;
  for (int k = 0; k < count; ++k)
    for (ptrdiff_t b : m.bytes) out.push_back(k * m.extent + b);
  return out;
}

// Checks size, bounds, the walker's pieces, Pack (whole and in odd units) and Unpack (writes
// exactly the mapped bytes; skipped for overlapping maps, which only sends may use).
void Check(MPIGPU_Datatype t, const Map& m, int count, bool overlapping = false) {
  SCOPED_TRACE("type " + std::to_string(t) + " x " + std::to_string(count));
  int size = -1;
  MPIGPU_Aint lb = -1, extent = -1;
  ASSERT_EQ(MPIGPU_Type_size(t, &size), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_extent(t, &lb, &extent), MPIGPU_SUCCESS);
  EXPECT_EQ(size, static_cast<int>(m.bytes.size()));
  EXPECT_EQ(lb, m.lb);
  EXPECT_EQ(extent, m.extent);
  const std::vector<ptrdiff_t> map = BufferMap(m, count);
  if (map.empty()) return;
  ptrdiff_t lo = map[0], hi = map[0];
  for (ptrdiff_t b : map) lo = std::min(lo, b), hi = std::max(hi, b);
  // True bounds: the bytes touched.
  MPIGPU_Aint tlb = 0, text = 0;
  ASSERT_EQ(MPIGPU_Type_get_true_extent(t, &tlb, &text), MPIGPU_SUCCESS);
  if (count == 1) {
    EXPECT_EQ(tlb, lo);
    EXPECT_EQ(text, hi - lo + 1);
  }
  // The buffer pointer sits `-lo + 8` bytes into the storage: negative offsets are real.
  std::vector<uint8_t> store(static_cast<size_t>(hi - lo + 17));
  for (size_t i = 0; i < store.size(); ++i) store[i] = static_cast<uint8_t>(i * 13 + 5);
  uint8_t* buf = store.data() + (8 - lo);
  TypeDesc d;
  ASSERT_EQ(DescribeForComm(t, count, &d), MPIGPU_SUCCESS);
  ASSERT_EQ(d.total_bytes, map.size());
  std::vector<ptrdiff_t> walked;
  ASSERT_EQ(ForEachPiece(d,
                         [&](const TypePiece& p, size_t) {
                           EXPECT_GE(p.nblocks, 1u);
                           EXPECT_TRUE(p.nblocks == 1 ? p.stride_bytes == p.block_bytes
                                                      : p.stride_bytes > p.block_bytes);
                           for (size_t i = 0; i < p.nblocks; ++i)
                             AddRun(&walked, p.offset + static_cast<ptrdiff_t>(i * p.stride_bytes),
                                 static_cast<ptrdiff_t>(p.block_bytes));
                           return true;
                         }),
            MPIGPU_SUCCESS);
  ASSERT_EQ(walked, map);
  std::vector<uint8_t> packed(map.size());
  ASSERT_EQ(Pack(d, buf, 0, packed.size(), packed.data()), MPIGPU_SUCCESS);
  for (size_t i = 0; i < map.size(); ++i) ASSERT_EQ(packed[i], buf[map[i]]) << "byte " << i;
  // (Unit by unit only for small maps: a type made from its definition walks a whole element
  // per call.)
  for (size_t unit : {size_t{1}, size_t{5}, size_t{13}}) {
    if (map.size() > 100000) break;
    std::vector<uint8_t> chunked(packed.size());
    for (size_t off = 0; off < packed.size(); off += unit) {
      const size_t len = std::min(unit, packed.size() - off);
      ASSERT_EQ(Pack(d, buf, off, len, chunked.data() + off), MPIGPU_SUCCESS);
    }
    ASSERT_EQ(chunked, packed) << "unit " << unit;
  }
  // The public calls, after 3 bytes already in the packed buffer.
  std::vector<uint8_t> pub(packed.size() + 3, 0);
  int pos = 3;
  ASSERT_EQ(MPIGPU_Pack(buf, MPIGPU_BUF_HOST, count, t, pub.data(), MPIGPU_BUF_HOST,
                        static_cast<int>(pub.size()), &pos, MPIGPU_COMM_WORLD),
            MPIGPU_SUCCESS);
  EXPECT_EQ(pos, static_cast<int>(pub.size()));
  EXPECT_EQ(std::vector<uint8_t>(pub.begin() + 3, pub.end()), packed);
  if (overlapping) return;
  std::vector<uint8_t> out(store.size(), 0xEE);
  uint8_t* obuf = out.data() + (8 - lo);
  pos = 3;
  ASSERT_EQ(MPIGPU_Unpack(pub.data(), MPIGPU_BUF_HOST, static_cast<int>(pub.size()), &pos, obuf,
                          MPIGPU_BUF_HOST, count, t, MPIGPU_COMM_WORLD),
            MPIGPU_SUCCESS);
  EXPECT_EQ(pos, static_cast<int>(pub.size()));
  std::vector<bool> is_data(store.size(), false);
  for (ptrdiff_t b : map) is_data[static_cast<size_t>(b + 8 - lo)] = true;
  for (size_t i = 0; i < store.size(); ++i)
    ASSERT_EQ(out[i], is_data[i] ? store[i] : 0xEE) << "storage byte " << i;
}

void Free(MPIGPU_Datatype t) { ASSERT_EQ(MPIGPU_Type_free(&t), MPIGPU_SUCCESS); }

TEST(DatatypeCtorTest, VectorWithNegativeStride) {
  MPIGPU_Datatype t;
  ASSERT_EQ(MPIGPU_Type_vector(3, 2, -3, MPIGPU_INT, &t), MPIGPU_SUCCESS);
  Map m;
  for (int i = 0; i < 3; ++i) AddRun(&m.bytes, -12 * i, 8);  // blocks at 0, -12, -24
  m.lb = -24;
  m.extent = 32;
  t = Committed(t);
  Check(t, m, 1);
  Check(t, m, 3);
  Free(t);
}

TEST(DatatypeCtorTest, HvectorWithOverlappingBlocksSends) {
  MPIGPU_Datatype t;
  ASSERT_EQ(MPIGPU_Type_create_hvector(3, 2, 4, MPIGPU_INT, &t), MPIGPU_SUCCESS);
  Map m;
  for (int i = 0; i < 3; ++i) AddRun(&m.bytes, 4 * i, 8);
  m.extent = 16;
  t = Committed(t);
  Check(t, m, 2, /*overlapping=*/true);
  Free(t);
}

TEST(DatatypeCtorTest, IndexedOutOfOrderAndNegative) {
  const int bl[3] = {1, 2, 1}, disp[3] = {4, -2, 0};
  MPIGPU_Datatype t;
  ASSERT_EQ(MPIGPU_Type_indexed(3, bl, disp, MPIGPU_SHORT, &t), MPIGPU_SUCCESS);
  Map m;
  AddRun(&m.bytes, 8, 2);
  AddRun(&m.bytes, -4, 4);
  AddRun(&m.bytes, 0, 2);
  m.lb = -4;
  m.extent = 14;
  t = Committed(t);
  Check(t, m, 1);
  Check(t, m, 3);
  Free(t);
}

TEST(DatatypeCtorTest, HindexedAndBlockVariants) {
  const int bl[2] = {1, 1};
  const MPIGPU_Aint hd[2] = {16, -8};
  MPIGPU_Datatype t;
  ASSERT_EQ(MPIGPU_Type_create_hindexed(2, bl, hd, MPIGPU_DOUBLE, &t), MPIGPU_SUCCESS);
  Map m;
  AddRun(&m.bytes, 16, 8);
  AddRun(&m.bytes, -8, 8);
  m.lb = -8;
  m.extent = 32;
  t = Committed(t);
  Check(t, m, 2);
  Free(t);

  const int id[3] = {5, 0, 2};
  ASSERT_EQ(MPIGPU_Type_create_indexed_block(3, 2, id, MPIGPU_CHAR, &t), MPIGPU_SUCCESS);
  Map b;
  AddRun(&b.bytes, 5, 2);
  AddRun(&b.bytes, 0, 2);
  AddRun(&b.bytes, 2, 2);
  b.extent = 7;
  t = Committed(t);
  Check(t, b, 3);
  Free(t);

  const MPIGPU_Aint hb[2] = {-4, 4};
  ASSERT_EQ(MPIGPU_Type_create_hindexed_block(2, 1, hb, MPIGPU_INT, &t), MPIGPU_SUCCESS);
  Map c;
  AddRun(&c.bytes, -4, 4);
  AddRun(&c.bytes, 4, 4);
  c.lb = -4;
  c.extent = 12;
  t = Committed(t);
  Check(t, c, 2);
  Free(t);
}

struct Mixed {
  char c;
  double d;
  short s[2];
};

// A struct of mixed types has the C struct's extent (padded to double's alignment).
MPIGPU_Datatype MixedType() {
  const int bl[3] = {1, 1, 2};
  const MPIGPU_Aint disp[3] = {offsetof(Mixed, c), offsetof(Mixed, d), offsetof(Mixed, s)};
  const MPIGPU_Datatype types[3] = {MPIGPU_CHAR, MPIGPU_DOUBLE, MPIGPU_SHORT};
  MPIGPU_Datatype t = MPIGPU_DATATYPE_NULL;
  EXPECT_EQ(MPIGPU_Type_create_struct(3, bl, disp, types, &t), MPIGPU_SUCCESS);
  return t;
}

Map MixedMap() {
  Map m;
  AddRun(&m.bytes, offsetof(Mixed, c), 1);
  AddRun(&m.bytes, offsetof(Mixed, d), 8);
  AddRun(&m.bytes, offsetof(Mixed, s), 4);
  m.extent = sizeof(Mixed);
  return m;
}

TEST(DatatypeCtorTest, StructOfMixedTypesHasTheCLayout) {
  MPIGPU_Datatype t = Committed(MixedType());
  Check(t, MixedMap(), 1);
  Check(t, MixedMap(), 4);
  TypeInfo info;
  ASSERT_EQ(LookupType(t, &info), MPIGPU_SUCCESS);
  EXPECT_EQ(info.basic_type, MPIGPU_DATATYPE_NULL);  // mixed
  EXPECT_EQ(info.num_elements, 4u);
  // Nested: every second Mixed of an array, twice.
  MPIGPU_Datatype v;
  ASSERT_EQ(MPIGPU_Type_vector(2, 1, 2, t, &v), MPIGPU_SUCCESS);
  Map vm;
  for (ptrdiff_t b : MixedMap().bytes) vm.bytes.push_back(b);
  for (ptrdiff_t b : MixedMap().bytes) vm.bytes.push_back(b + 2 * sizeof(Mixed));
  vm.extent = 3 * sizeof(Mixed);
  Free(t);  // the vector keeps working without it
  v = Committed(v);
  Check(v, vm, 2);
  Free(v);
}

TEST(DatatypeCtorTest, ResizedSetsBoundsAndStepsElements) {
  MPIGPU_Datatype r;
  ASSERT_EQ(MPIGPU_Type_create_resized(MPIGPU_INT, -4, 12, &r), MPIGPU_SUCCESS);
  Map m;
  AddRun(&m.bytes, 0, 4);
  m.lb = -4;
  m.extent = 12;
  r = Committed(r);
  Check(r, m, 3);
  MPIGPU_Aint tlb, text;
  ASSERT_EQ(MPIGPU_Type_get_true_extent(r, &tlb, &text), MPIGPU_SUCCESS);
  EXPECT_EQ(tlb, 0);
  EXPECT_EQ(text, 4);
  // A struct over a resized member takes the member's bounds: no padding added.
  const int bl[2] = {1, 1};
  const MPIGPU_Aint disp[2] = {0, 12};
  const MPIGPU_Datatype types[2] = {r, MPIGPU_CHAR};
  MPIGPU_Datatype s;
  ASSERT_EQ(MPIGPU_Type_create_struct(2, bl, disp, types, &s), MPIGPU_SUCCESS);
  Map sm;
  AddRun(&sm.bytes, 0, 4);
  AddRun(&sm.bytes, 12, 1);
  sm.lb = -4;
  sm.extent = 17;
  s = Committed(s);
  Check(s, sm, 2);
  // A negative extent (MPI allows it): copies run backwards. {(LB,6), 4 bytes at 0, (UB,-3)}
  // three times: lb -12, extent 9, true lb -18, true extent 22 (MPICH's lbub numbers).
  MPIGPU_Datatype four, back, three;
  ASSERT_EQ(MPIGPU_Type_contiguous(4, MPIGPU_BYTE, &four), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_create_resized(four, 6, -9, &back), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_contiguous(3, back, &three), MPIGPU_SUCCESS);
  MPIGPU_Aint l, e;
  ASSERT_EQ(MPIGPU_Type_get_extent(three, &l, &e), MPIGPU_SUCCESS);
  EXPECT_EQ(l, -12);
  EXPECT_EQ(e, 9);
  ASSERT_EQ(MPIGPU_Type_get_true_extent(three, &l, &e), MPIGPU_SUCCESS);
  EXPECT_EQ(l, -18);
  EXPECT_EQ(e, 22);
  Map bm;
  for (int j = 0; j < 3; ++j) AddRun(&bm.bytes, -9 * j, 4);
  bm.lb = -12;
  bm.extent = 9;
  three = Committed(three);
  Check(three, bm, 1);  // packed from the definition: bytes at 0, -9, -18
  back = Committed(back);
  TypeDesc d;
  EXPECT_EQ(DescribeForComm(back, 2, &d), MPIGPU_ERR_TYPE);  // elements would run backwards
  EXPECT_EQ(DescribeForComm(back, 1, &d), MPIGPU_SUCCESS);
  for (MPIGPU_Datatype x : {four, back, three}) Free(x);
  Free(r);
  Free(s);
}

TEST(DatatypeCtorTest, SubarrayInBothOrders) {
  const int sizes[2] = {4, 5}, subsizes[2] = {2, 3}, starts[2] = {1, 1};
  MPIGPU_Datatype c, f;
  ASSERT_EQ(MPIGPU_Type_create_subarray(2, sizes, subsizes, starts, MPIGPU_ORDER_C, MPIGPU_INT,
                                        &c),
            MPIGPU_SUCCESS);
  Map cm;
  for (int r = 1; r <= 2; ++r)
    for (int col = 1; col <= 3; ++col) AddRun(&cm.bytes, (r * 5 + col) * 4, 4);
  cm.extent = 80;
  c = Committed(c);
  Check(c, cm, 2);
  ASSERT_EQ(MPIGPU_Type_create_subarray(2, sizes, subsizes, starts, MPIGPU_ORDER_FORTRAN,
                                        MPIGPU_INT, &f),
            MPIGPU_SUCCESS);
  Map fm;  // dimension 0 varies fastest
  for (int j = 1; j <= 3; ++j)
    for (int i = 1; i <= 2; ++i) AddRun(&fm.bytes, (j * 4 + i) * 4, 4);
  fm.extent = 80;
  f = Committed(f);
  Check(f, fm, 1);
  const int bad_starts[2] = {3, 0};
  MPIGPU_Datatype bad;
  EXPECT_EQ(MPIGPU_Type_create_subarray(2, sizes, subsizes, bad_starts, MPIGPU_ORDER_C,
                                        MPIGPU_INT, &bad),
            MPIGPU_ERR_ARG);
  Free(c);
  Free(f);
}

TEST(DatatypeCtorTest, DarrayBlockAndCyclic) {
  const int gsizes[1] = {10}, block[1] = {MPIGPU_DISTRIBUTE_BLOCK},
            cyclic[1] = {MPIGPU_DISTRIBUTE_CYCLIC}, dflt[1] = {MPIGPU_DISTRIBUTE_DFLT_DARG},
            two[1] = {2}, p3[1] = {3}, p2[1] = {2};
  MPIGPU_Datatype t;
  // BLOCK over 3 processes: blocks of 4; rank 1 has elements 4..7, rank 2 elements 8..9.
  ASSERT_EQ(MPIGPU_Type_create_darray(3, 1, 1, gsizes, block, dflt, p3, MPIGPU_ORDER_C,
                                      MPIGPU_INT, &t),
            MPIGPU_SUCCESS);
  Map b;
  AddRun(&b.bytes, 16, 16);
  b.extent = 40;
  t = Committed(t);
  Check(t, b, 1);
  Free(t);
  ASSERT_EQ(MPIGPU_Type_create_darray(3, 2, 1, gsizes, block, dflt, p3, MPIGPU_ORDER_C,
                                      MPIGPU_INT, &t),
            MPIGPU_SUCCESS);
  Map b2;
  AddRun(&b2.bytes, 32, 8);
  b2.extent = 40;
  t = Committed(t);
  Check(t, b2, 1);
  Free(t);
  // CYCLIC(2) over 2 processes: rank 1 has 2,3, 6,7.
  ASSERT_EQ(MPIGPU_Type_create_darray(2, 1, 1, gsizes, cyclic, two, p2, MPIGPU_ORDER_C,
                                      MPIGPU_INT, &t),
            MPIGPU_SUCCESS);
  Map c;
  AddRun(&c.bytes, 8, 8);
  AddRun(&c.bytes, 24, 8);
  c.extent = 40;
  t = Committed(t);
  Check(t, c, 1);
  Free(t);
  // 2-D, C order: 4x6 over a 2x2 grid of BLOCKs; rank 3 = coords (1,1): rows 2..3, cols 3..5.
  const int g2[2] = {4, 6}, b2d[2] = {MPIGPU_DISTRIBUTE_BLOCK, MPIGPU_DISTRIBUTE_BLOCK},
            d2[2] = {MPIGPU_DISTRIBUTE_DFLT_DARG, MPIGPU_DISTRIBUTE_DFLT_DARG}, ps[2] = {2, 2};
  ASSERT_EQ(MPIGPU_Type_create_darray(4, 3, 2, g2, b2d, d2, ps, MPIGPU_ORDER_C, MPIGPU_INT, &t),
            MPIGPU_SUCCESS);
  Map m2;
  for (int r = 2; r < 4; ++r)
    for (int col = 3; col < 6; ++col) AddRun(&m2.bytes, (r * 6 + col) * 4, 4);
  m2.extent = 96;
  t = Committed(t);
  Check(t, m2, 1);
  Free(t);
}

TEST(DatatypeCtorTest, ZeroCountAndZeroSizeTypes) {
  MPIGPU_Datatype z, s;
  ASSERT_EQ(MPIGPU_Type_contiguous(0, MPIGPU_INT, &z), MPIGPU_SUCCESS);
  z = Committed(z);
  Check(z, Map{}, 5);
  const int bl[2] = {0, 1};
  const MPIGPU_Aint disp[2] = {100, 4};
  const MPIGPU_Datatype types[2] = {MPIGPU_DOUBLE, MPIGPU_INT};
  ASSERT_EQ(MPIGPU_Type_create_struct(2, bl, disp, types, &s), MPIGPU_SUCCESS);
  Map m;  // the empty block neither holds data nor moves the bounds
  AddRun(&m.bytes, 4, 4);
  m.lb = 4;
  m.extent = 4;
  s = Committed(s);
  Check(s, m, 3);
  MPIGPU_Status st{};
  int n = -1;
  ASSERT_EQ(MPIGPU_Get_elements(&st, z, &n), MPIGPU_SUCCESS);
  EXPECT_EQ(n, 0);
  Free(z);
  Free(s);
}

TEST(DatatypeCtorTest, EnvelopeAndContents) {
  int ni, na, nd, comb;
  ASSERT_EQ(MPIGPU_Type_get_envelope(MPIGPU_INT, &ni, &na, &nd, &comb), MPIGPU_SUCCESS);
  EXPECT_EQ(comb, MPIGPU_COMBINER_NAMED);
  MPIGPU_Datatype v, s, d;
  ASSERT_EQ(MPIGPU_Type_vector(3, 2, -4, MPIGPU_DOUBLE, &v), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_envelope(v, &ni, &na, &nd, &comb), MPIGPU_SUCCESS);
  EXPECT_EQ(comb, MPIGPU_COMBINER_VECTOR);
  ASSERT_EQ(ni, 3);
  ASSERT_EQ(na, 0);
  ASSERT_EQ(nd, 1);
  int ints[8];
  MPIGPU_Aint aints[8];
  MPIGPU_Datatype types[8];
  ASSERT_EQ(MPIGPU_Type_get_contents(v, 8, 8, 8, ints, aints, types), MPIGPU_SUCCESS);
  EXPECT_EQ(ints[0], 3);
  EXPECT_EQ(ints[1], 2);
  EXPECT_EQ(ints[2], -4);
  EXPECT_EQ(types[0], MPIGPU_DOUBLE);  // predefined: the same handle
  const int bl[2] = {1, 2};
  const MPIGPU_Aint disp[2] = {0, 64};
  const MPIGPU_Datatype st[2] = {v, MPIGPU_CHAR};
  ASSERT_EQ(MPIGPU_Type_create_struct(2, bl, disp, st, &s), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_envelope(s, &ni, &na, &nd, &comb), MPIGPU_SUCCESS);
  EXPECT_EQ(comb, MPIGPU_COMBINER_STRUCT);
  EXPECT_EQ(ni, 3);
  EXPECT_EQ(na, 2);
  EXPECT_EQ(nd, 2);
  EXPECT_EQ(MPIGPU_Type_get_contents(s, 2, 2, 2, ints, aints, types), MPIGPU_ERR_ARG);
  ASSERT_EQ(MPIGPU_Type_get_contents(s, 3, 2, 2, ints, aints, types), MPIGPU_SUCCESS);
  EXPECT_EQ(ints[1], 1);
  EXPECT_EQ(ints[2], 2);
  EXPECT_EQ(aints[1], 64);
  EXPECT_EQ(types[1], MPIGPU_CHAR);
  // The derived member comes back as a new handle to the same type; the caller frees it.
  EXPECT_NE(types[0], v);
  ASSERT_EQ(MPIGPU_Type_get_envelope(types[0], &ni, &na, &nd, &comb), MPIGPU_SUCCESS);
  EXPECT_EQ(comb, MPIGPU_COMBINER_VECTOR);
  Free(types[0]);
  ASSERT_EQ(MPIGPU_Type_dup(s, &d), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_envelope(d, &ni, &na, &nd, &comb), MPIGPU_SUCCESS);
  EXPECT_EQ(comb, MPIGPU_COMBINER_DUP);
  MPIGPU_Aint lb1, e1, lb2, e2;
  ASSERT_EQ(MPIGPU_Type_get_extent(s, &lb1, &e1), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_extent(d, &lb2, &e2), MPIGPU_SUCCESS);
  EXPECT_EQ(lb1, lb2);
  EXPECT_EQ(e1, e2);
  EXPECT_EQ(MPIGPU_Type_get_contents(MPIGPU_INT, 8, 8, 8, ints, aints, types), MPIGPU_ERR_TYPE);
  Free(v);
  Free(s);
  Free(d);
}

TEST(DatatypeCtorTest, NamesAndMatchSize) {
  char name[MPIGPU_MAX_OBJECT_NAME];
  int len = -1;
  ASSERT_EQ(MPIGPU_Type_get_name(MPIGPU_DOUBLE_INT, name, &len), MPIGPU_SUCCESS);
  EXPECT_STREQ(name, "MPIGPU_DOUBLE_INT");
  MPIGPU_Datatype t;
  ASSERT_EQ(MPIGPU_Type_contiguous(2, MPIGPU_INT, &t), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_name(t, name, &len), MPIGPU_SUCCESS);
  EXPECT_EQ(len, 0);
  ASSERT_EQ(MPIGPU_Type_set_name(t, "pair of ints"), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_name(t, name, &len), MPIGPU_SUCCESS);
  EXPECT_STREQ(name, "pair of ints");
  EXPECT_EQ(len, 12);
  const std::string longname(500, 'x');
  ASSERT_EQ(MPIGPU_Type_set_name(t, longname.c_str()), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_get_name(t, name, &len), MPIGPU_SUCCESS);
  EXPECT_EQ(len, MPIGPU_MAX_OBJECT_NAME - 1);
  Free(t);
  EXPECT_EQ(MPIGPU_Type_get_name(t, name, &len), MPIGPU_ERR_TYPE);
  MPIGPU_Datatype m;
  ASSERT_EQ(MPIGPU_Type_match_size(MPIGPU_TYPECLASS_REAL, 8, &m), MPIGPU_SUCCESS);
  EXPECT_EQ(m, MPIGPU_DOUBLE);
  ASSERT_EQ(MPIGPU_Type_match_size(MPIGPU_TYPECLASS_INTEGER, 4, &m), MPIGPU_SUCCESS);
  EXPECT_EQ(m, MPIGPU_INT);
  ASSERT_EQ(MPIGPU_Type_match_size(MPIGPU_TYPECLASS_COMPLEX, 16, &m), MPIGPU_SUCCESS);
  EXPECT_EQ(m, MPIGPU_C_DOUBLE_COMPLEX);
  EXPECT_EQ(MPIGPU_Type_match_size(MPIGPU_TYPECLASS_INTEGER, 3, &m), MPIGPU_ERR_ARG);
}

MPIGPU_Status Received(size_t bytes) {
  MPIGPU_Status st{};
  st.count_bytes = bytes;
  return st;
}

int Elements(size_t bytes, MPIGPU_Datatype t) {
  MPIGPU_Status st = Received(bytes);
  int n = -2;
  EXPECT_EQ(MPIGPU_Get_elements(&st, t, &n), MPIGPU_SUCCESS);
  return n;
}

TEST(DatatypeCtorTest, GetElementsCountsPartialElements) {
  MPIGPU_Datatype mixed = Committed(MixedType());  // char, double, short, short: 13 bytes
  EXPECT_EQ(Elements(0, mixed), 0);
  EXPECT_EQ(Elements(1, mixed), 1);
  EXPECT_EQ(Elements(9, mixed), 2);
  EXPECT_EQ(Elements(11, mixed), 3);
  EXPECT_EQ(Elements(13, mixed), 4);
  EXPECT_EQ(Elements(13 + 9, mixed), 6);
  EXPECT_EQ(Elements(5, mixed), MPIGPU_UNDEFINED);  // inside the double
  EXPECT_EQ(Elements(12, MPIGPU_DOUBLE_INT), 2);   // a pair counts its two members
  EXPECT_EQ(Elements(8, MPIGPU_DOUBLE_INT), 1);
  EXPECT_EQ(Elements(24 + 8, MPIGPU_DOUBLE_INT), 5);
  EXPECT_EQ(Elements(12, MPIGPU_INT), 3);
  EXPECT_EQ(Elements(13, MPIGPU_INT), MPIGPU_UNDEFINED);
  MPIGPU_Datatype v;  // a vector of 1000 blocks of 3 shorts: 6000 bytes
  ASSERT_EQ(MPIGPU_Type_vector(1000, 3, 5, MPIGPU_SHORT, &v), MPIGPU_SUCCESS);
  EXPECT_EQ(Elements(6000 * 2 + 14, v), 6007);  // two elements and 7 shorts
  MPIGPU_Status st = Received(6000);
  MPIGPU_Count big = -1;
  ASSERT_EQ(MPIGPU_Get_elements_x(&st, v, &big), MPIGPU_SUCCESS);
  EXPECT_EQ(big, 3000);
  Free(mixed);
  Free(v);
}

TEST(DatatypeCtorTest, PackPositionsAndErrors) {
  const int a[3] = {1, 2, 3};
  const double x = 2.5;
  unsigned char buf[20];
  int pos = 0;
  ASSERT_EQ(MPIGPU_Pack(a, MPIGPU_BUF_HOST, 3, MPIGPU_INT, buf, MPIGPU_BUF_HOST, 20, &pos,
                        MPIGPU_COMM_WORLD),
            MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Pack(&x, MPIGPU_BUF_HOST, 1, MPIGPU_DOUBLE, buf, MPIGPU_BUF_HOST, 20, &pos,
                        MPIGPU_COMM_WORLD),
            MPIGPU_SUCCESS);
  EXPECT_EQ(pos, 20);
  EXPECT_EQ(MPIGPU_Pack(a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, buf, MPIGPU_BUF_HOST, 20, &pos,
                        MPIGPU_COMM_WORLD),
            MPIGPU_ERR_TRUNCATE);
  EXPECT_EQ(pos, 20);  // untouched by the failure
  int b[3];
  double y;
  pos = 0;
  ASSERT_EQ(MPIGPU_Unpack(buf, MPIGPU_BUF_HOST, 20, &pos, b, MPIGPU_BUF_HOST, 3, MPIGPU_INT,
                          MPIGPU_COMM_WORLD),
            MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Unpack(buf, MPIGPU_BUF_HOST, 20, &pos, &y, MPIGPU_BUF_HOST, 1, MPIGPU_DOUBLE,
                          MPIGPU_COMM_WORLD),
            MPIGPU_SUCCESS);
  EXPECT_EQ(b[2], 3);
  EXPECT_EQ(y, 2.5);
  EXPECT_EQ(MPIGPU_Unpack(buf, MPIGPU_BUF_HOST, 20, &pos, &y, MPIGPU_BUF_HOST, 1, MPIGPU_DOUBLE,
                          MPIGPU_COMM_WORLD),
            MPIGPU_ERR_TRUNCATE);
  int size = -1;
  ASSERT_EQ(MPIGPU_Pack_size(7, MPIGPU_SHORT_INT, MPIGPU_COMM_WORLD, &size), MPIGPU_SUCCESS);
  EXPECT_EQ(size, 42);
  pos = -1;
  EXPECT_EQ(MPIGPU_Pack(a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, buf, MPIGPU_BUF_HOST, 20, &pos,
                        MPIGPU_COMM_WORLD),
            MPIGPU_ERR_ARG);
  pos = 0;
  EXPECT_EQ(MPIGPU_Pack(a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, buf, 12345, 20, &pos,
                        MPIGPU_COMM_WORLD),
            MPIGPU_ERR_BUFFER);
  EXPECT_EQ(MPIGPU_Pack(a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, buf, MPIGPU_BUF_HOST, 20, &pos,
                        MPIGPU_COMM_NULL),
            MPIGPU_ERR_COMM);
}

// external32: big-endian, MPI's sizes (LONG is 4 bytes), values round-trip through a struct.
TEST(DatatypeCtorTest, External32IsBigEndianWithFixedSizes) {
  MPIGPU_Aint size = -1;
  ASSERT_EQ(MPIGPU_Pack_external_size("external32", 3, MPIGPU_LONG, &size), MPIGPU_SUCCESS);
  EXPECT_EQ(size, 12);
  ASSERT_EQ(MPIGPU_Pack_external_size("external32", 1, MPIGPU_DOUBLE_INT, &size),
            MPIGPU_SUCCESS);
  EXPECT_EQ(size, 12);
  EXPECT_EQ(MPIGPU_Pack_external_size("native", 1, MPIGPU_INT, &size), MPIGPU_ERR_ARG);
  const long l[2] = {-2, 0x01020304};
  unsigned char out[8];
  MPIGPU_Aint pos = 0;
  ASSERT_EQ(MPIGPU_Pack_external("external32", l, MPIGPU_BUF_HOST, 2, MPIGPU_LONG, out,
                                 MPIGPU_BUF_HOST, 8, &pos),
            MPIGPU_SUCCESS);
  EXPECT_EQ(pos, 8);
  const unsigned char want[8] = {0xFF, 0xFF, 0xFF, 0xFE, 1, 2, 3, 4};
  EXPECT_EQ(std::memcmp(out, want, 8), 0);
  MPIGPU_Datatype mixed = Committed(MixedType());
  Mixed in[2] = {{'x', -1.25, {7, -8}}, {'y', 3e100, {-32768, 32767}}};
  std::vector<unsigned char> ext(26);
  pos = 0;
  ASSERT_EQ(MPIGPU_Pack_external("external32", in, MPIGPU_BUF_HOST, 2, mixed, ext.data(),
                                 MPIGPU_BUF_HOST, 26, &pos),
            MPIGPU_SUCCESS);
  EXPECT_EQ(ext[0], 'x');
  EXPECT_EQ(ext[1], 0xBF);  // -1.25 = 0xBFF4000000000000, most significant byte first
  EXPECT_EQ(ext[2], 0xF4);
  Mixed back[2] = {};
  pos = 0;
  ASSERT_EQ(MPIGPU_Unpack_external("external32", ext.data(), MPIGPU_BUF_HOST, 26, &pos, back,
                                   MPIGPU_BUF_HOST, 2, mixed),
            MPIGPU_SUCCESS);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(back[i].c, in[i].c);
    EXPECT_EQ(back[i].d, in[i].d);
    EXPECT_EQ(back[i].s[0], in[i].s[0]);
    EXPECT_EQ(back[i].s[1], in[i].s[1]);
  }
  pos = 20;
  EXPECT_EQ(MPIGPU_Pack_external("external32", in, MPIGPU_BUF_HOST, 1, mixed, ext.data(),
                                 MPIGPU_BUF_HOST, 26, &pos),
            MPIGPU_ERR_TRUNCATE);
  Free(mixed);
}

// A type of more pieces than kMaxTypePieces (a negative-stride vector: no two blocks merge)
// is packed from its definition, byte for byte as listed types are.
TEST(DatatypeCtorTest, TypeTooComplexToListPacksFromItsDefinition) {
  const int n = static_cast<int>(kMaxTypePieces) + 5;
  MPIGPU_Datatype t;
  ASSERT_EQ(MPIGPU_Type_vector(n, 1, -2, MPIGPU_CHAR, &t), MPIGPU_SUCCESS);
  TypeInfo info;
  ASSERT_EQ(LookupType(t, &info), MPIGPU_SUCCESS);
  EXPECT_EQ(info.pieces, nullptr);
  Map m;
  for (int i = 0; i < n; ++i) m.bytes.push_back(-2 * static_cast<ptrdiff_t>(i));
  m.lb = -2 * static_cast<ptrdiff_t>(n - 1);
  m.extent = 2 * static_cast<ptrdiff_t>(n - 1) + 1;
  t = Committed(t);
  Check(t, m, 2);
  Free(t);
}

// ---- sends between ranks ----

// Rank 0 sends derived types (negative lb, struct, subarray, a type too complex to list) and
// rank 1 receives them as other types with the same type signature; the bytes land right.
TEST(DatatypeCtorTest, SendsBetweenRanksWithDerivedTypes) {
  std::string r = RunApiJob(2, [](int rank) {
    // 1. vector with a negative stride -> contiguous ints.
    MPIGPU_Datatype neg;
    API_OK(MPIGPU_Type_vector(100, 1, -3, MPIGPU_INT, &neg));
    API_OK(MPIGPU_Type_commit(&neg));
    // 2. struct Mixed x 50 -> the same struct.
    MPIGPU_Datatype mixed = MixedType();
    API_OK(MPIGPU_Type_commit(&mixed));
    // 3. a 40x30 subarray (rows 5..24, cols 3..17) of doubles in C order -> Fortran order
    // of the transposed array (same elements, same order).
    const int sz[2] = {40, 30}, sub[2] = {20, 15}, st[2] = {5, 3};
    const int szf[2] = {30, 40}, subf[2] = {15, 20}, stf[2] = {3, 5};
    MPIGPU_Datatype c_sub, f_sub;
    API_OK(MPIGPU_Type_create_subarray(2, sz, sub, st, MPIGPU_ORDER_C, MPIGPU_DOUBLE, &c_sub));
    API_OK(MPIGPU_Type_create_subarray(2, szf, subf, stf, MPIGPU_ORDER_FORTRAN, MPIGPU_DOUBLE,
                                       &f_sub));
    API_OK(MPIGPU_Type_commit(&c_sub));
    API_OK(MPIGPU_Type_commit(&f_sub));
    // 4. too complex to list: bytes at 0, -2, -4, ... (rendezvous-sized).
    const int n = static_cast<int>(kMaxTypePieces) + 5;
    MPIGPU_Datatype many;
    API_OK(MPIGPU_Type_vector(n, 1, -2, MPIGPU_CHAR, &many));
    API_OK(MPIGPU_Type_commit(&many));
    std::vector<int> ints(300);
    std::vector<Mixed> ms(50);
    std::vector<double> grid(40 * 30);
    std::vector<char> chars(2 * static_cast<size_t>(n));
    if (rank == 0) {
      for (int i = 0; i < 300; ++i) ints[i] = 1000 + i;
      for (int i = 0; i < 50; ++i) ms[i] = Mixed{static_cast<char>('a' + i % 26), i * 1.5,
                                                {static_cast<short>(i), static_cast<short>(-i)}};
      for (int i = 0; i < 40 * 30; ++i) grid[i] = i;
      for (size_t i = 0; i < chars.size(); ++i) chars[i] = static_cast<char>(i * 7);
      API_OK(MPIGPU_Send(&ints[297], MPIGPU_BUF_HOST, 1, neg, 1, 1, MPIGPU_COMM_WORLD));
      MPIGPU_Type_free(&neg);  // freed while nothing is pending: fine either way
      API_OK(MPIGPU_Send(ms.data(), MPIGPU_BUF_HOST, 50, mixed, 1, 2, MPIGPU_COMM_WORLD));
      API_OK(MPIGPU_Send(grid.data(), MPIGPU_BUF_HOST, 1, c_sub, 1, 3, MPIGPU_COMM_WORLD));
      API_OK(MPIGPU_Send(&chars[chars.size() - 1], MPIGPU_BUF_HOST, 1, many, 1, 4,
                         MPIGPU_COMM_WORLD));
    } else {
      MPIGPU_Status s;
      std::vector<int> got(100, -1);
      API_OK(MPIGPU_Recv(got.data(), MPIGPU_BUF_HOST, 100, MPIGPU_INT, 0, 1, MPIGPU_COMM_WORLD,
                         &s));
      for (int i = 0; i < 100; ++i) RANK_CHECK(got[i] == 1000 + 297 - 3 * i);
      std::vector<Mixed> gm(50);
      std::memset(gm.data(), 0x5A, gm.size() * sizeof(Mixed));
      // A receive still pending when its type's handle is freed completes unharmed.
      MPIGPU_Request req;
      API_OK(MPIGPU_Irecv(gm.data(), MPIGPU_BUF_HOST, 50, mixed, 0, 2, MPIGPU_COMM_WORLD, &req));
      API_OK(MPIGPU_Type_free(&mixed));
      API_OK(MPIGPU_Wait(&req, &s));
      for (int i = 0; i < 50; ++i) {
        RANK_CHECK(gm[i].c == static_cast<char>('a' + i % 26));
        RANK_CHECK(gm[i].d == i * 1.5);
        RANK_CHECK(gm[i].s[0] == i && gm[i].s[1] == -i);
        const unsigned char* pad = reinterpret_cast<const unsigned char*>(&gm[i]) + 1;
        RANK_CHECK(pad[0] == 0x5A);  // padding is not data
      }
      int elems = -1;
      API_OK(MPIGPU_Get_elements(&s, MPIGPU_CHAR, &elems));  // (bytes, as chars)
      RANK_CHECK(elems == 50 * 13);
      std::vector<double> out(40 * 30, -1);  // column-major 30 x 40 view of the same data
      API_OK(MPIGPU_Recv(out.data(), MPIGPU_BUF_HOST, 1, f_sub, 0, 3, MPIGPU_COMM_WORLD, &s));
      for (int row = 0; row < 40; ++row)
        for (int col = 0; col < 30; ++col) {
          const bool in = row >= 5 && row < 25 && col >= 3 && col < 18;
          RANK_CHECK(out[row * 30 + col] == (in ? row * 30.0 + col : -1.0));
        }
      std::vector<char> flat(static_cast<size_t>(n), 0);
      API_OK(MPIGPU_Recv(flat.data(), MPIGPU_BUF_HOST, n, MPIGPU_CHAR, 0, 4, MPIGPU_COMM_WORLD,
                         &s));
      for (int i = 0; i < n; ++i)
        RANK_CHECK(flat[i] == static_cast<char>((chars.size() - 1 - 2 * static_cast<size_t>(i)) * 7));
      MPIGPU_Type_free(&neg);
    }
    if (rank == 0) API_OK(MPIGPU_Type_free(&mixed));
    API_OK(MPIGPU_Type_free(&c_sub));
    API_OK(MPIGPU_Type_free(&f_sub));
    API_OK(MPIGPU_Type_free(&many));
  });
  EXPECT_EQ(r, "");
}

// MPI: a dup is committed exactly when its original is (predefined types always are), so a dup
// of MPIGPU_INT packs at once and a dup of an uncommitted type is refused until committed
// (MPICH's coll/nonblocking2 sends with MPI_Type_dup(MPI_INT) uncommitted).
TEST(DatatypeCtorTest, DupKeepsTheCommittedState) {
  const int a[2] = {7, 8};
  unsigned char buf[16];
  int pos = 0;
  MPIGPU_Datatype d = MPIGPU_DATATYPE_NULL, c = MPIGPU_DATATYPE_NULL, dc = MPIGPU_DATATYPE_NULL;
  ASSERT_EQ(MPIGPU_Type_dup(MPIGPU_INT, &d), MPIGPU_SUCCESS);
  EXPECT_EQ(MPIGPU_Pack(a, MPIGPU_BUF_HOST, 2, d, buf, MPIGPU_BUF_HOST, 16, &pos,
                        MPIGPU_COMM_WORLD),
            MPIGPU_SUCCESS);
  EXPECT_EQ(pos, 8);
  ASSERT_EQ(MPIGPU_Type_contiguous(2, MPIGPU_INT, &c), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_dup(c, &dc), MPIGPU_SUCCESS);
  pos = 0;
  EXPECT_EQ(MPIGPU_Pack(a, MPIGPU_BUF_HOST, 1, dc, buf, MPIGPU_BUF_HOST, 16, &pos,
                        MPIGPU_COMM_WORLD),
            MPIGPU_ERR_TYPE);
  Free(dc);
  ASSERT_EQ(MPIGPU_Type_commit(&c), MPIGPU_SUCCESS);
  ASSERT_EQ(MPIGPU_Type_dup(c, &dc), MPIGPU_SUCCESS);
  EXPECT_EQ(MPIGPU_Pack(a, MPIGPU_BUF_HOST, 1, dc, buf, MPIGPU_BUF_HOST, 16, &pos,
                        MPIGPU_COMM_WORLD),
            MPIGPU_SUCCESS);
  EXPECT_EQ(pos, 8);
  Free(dc);
  Free(c);
  Free(d);
}

}  // namespace
}  // namespace mpigpu

// Every collective of the public API checked in one rank of an n-rank job, on memory of one
// kind (host here; device memory in api_gpu_coll_test): sizes around the eager limit, every
// root, MPIGPU_IN_PLACE where MPI allows it, v-forms with gaps that must stay untouched,
// derived receive types, and reductions with a non-commutative user op (2x2 matrix products,
// which must come out in rank order) on a contiguous and on a strided type.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {

// Memory of one kind: alloc/free, and copies to and from the host.
struct Mem {
  MPIGPU_Buftype bt = MPIGPU_BUF_HOST;
  std::function<void*(size_t)> alloc;
  std::function<void(void*)> free;
  std::function<void(void* dst, const void* host, size_t)> put;
  std::function<void(void* host, const void* src, size_t)> get;
};

inline Mem HostMem() {
  Mem m;
  m.alloc = [](size_t b) { return std::malloc(b ? b : 1); };
  m.free = [](void* p) { std::free(p); };
  m.put = [](void* d, const void* h, size_t b) { std::memcpy(d, h, b); };
  m.get = [](void* h, const void* s, size_t b) { std::memcpy(h, s, b); };
  return m;
}

// A buffer of ints in `m`, filled from / read back into host vectors.
class IntBuf {
 public:
  IntBuf(const Mem& m, const std::vector<int>& init) : m_(m), n_(init.size()) {
    p_ = m_.alloc(n_ * sizeof(int));
    m_.put(p_, init.data(), n_ * sizeof(int));
  }
  IntBuf(const Mem& m, size_t n, int fill) : IntBuf(m, std::vector<int>(n, fill)) {}
  ~IntBuf() { m_.free(p_); }
  IntBuf(const IntBuf&) = delete;
  IntBuf& operator=(const IntBuf&) = delete;
  int* get() const { return static_cast<int*>(p_); }
  std::vector<int> read() const {
    std::vector<int> h(n_);
    m_.get(h.data(), p_, n_ * sizeof(int));
    return h;
  }

 private:
  const Mem& m_;
  size_t n_;
  void* p_;
};

constexpr MPIGPU_Comm kCollWorld = MPIGPU_COMM_WORLD;
constexpr int kGap = -7;  // never a value V() gives

// Rank r's element i.
inline int V(int r, int i) { return r * 1000003 + i * 7 + 1; }
inline std::vector<int> Contrib(int r, int cnt, int plus = 0) {
  std::vector<int> v(cnt);
  for (int i = 0; i < cnt; ++i) v[i] = V(r, i + plus);
  return v;
}

// ---- data movement ----

inline void CheckGatherScatter(int rank, int n, const Mem& m, int cnt) {
  const MPIGPU_Buftype bt = m.bt;
  for (int root = 0; root < n; ++root) {
    for (int in_place = 0; in_place < 2; ++in_place) {
      // Gather.
      IntBuf send(m, Contrib(rank, cnt));
      std::vector<int> init(static_cast<size_t>(n) * cnt, kGap);
      if (in_place && rank == root)
        std::copy_n(Contrib(rank, cnt).begin(), cnt, init.begin() + rank * cnt);
      IntBuf recv(m, init);
      const void* sb = in_place && rank == root ? MPIGPU_IN_PLACE : send.get();
      API_OK(MPIGPU_Gather(sb, bt, cnt, MPIGPU_INT, recv.get(), bt, cnt, MPIGPU_INT, root,
                           kCollWorld));
      if (rank == root) {
        std::vector<int> got = recv.read();
        for (int r = 0; r < n; ++r)
          for (int i = 0; i < cnt; ++i) RANK_CHECK(got[r * cnt + i] == V(r, i));
      }
      // Gatherv: rank r sends cnt + r elements, placed with a gap of 2 between blocks.
      std::vector<int> counts(n), displs(n);
      int total = 0;
      for (int r = 0; r < n; ++r) {
        counts[r] = cnt + r;
        displs[r] = total;
        total += counts[r] + 2;
      }
      IntBuf vsend(m, Contrib(rank, cnt + rank));
      std::vector<int> vinit(total, kGap);
      if (in_place && rank == root)
        std::copy_n(Contrib(rank, cnt + rank).begin(), cnt + rank, vinit.begin() + displs[rank]);
      IntBuf vrecv(m, vinit);
      const void* vsb = in_place && rank == root ? MPIGPU_IN_PLACE : vsend.get();
      API_OK(MPIGPU_Gatherv(vsb, bt, cnt + rank, MPIGPU_INT, vrecv.get(), bt, counts.data(),
                            displs.data(), MPIGPU_INT, root, kCollWorld));
      if (rank == root) {
        std::vector<int> got = vrecv.read();
        for (int r = 0; r < n; ++r) {
          for (int i = 0; i < counts[r]; ++i) RANK_CHECK(got[displs[r] + i] == V(r, i));
          RANK_CHECK(got[displs[r] + counts[r]] == kGap && got[displs[r] + counts[r] + 1] == kGap);
        }
      }
      // Scatter: root holds V(r, i) in block r.
      std::vector<int> all;
      for (int r = 0; r < n; ++r) {
        std::vector<int> c = Contrib(r, cnt);
        all.insert(all.end(), c.begin(), c.end());
      }
      IntBuf ssend(m, rank == root ? all : std::vector<int>(all.size(), kGap));
      IntBuf srecv(m, static_cast<size_t>(cnt), kGap);
      void* rb = in_place && rank == root ? MPIGPU_IN_PLACE : srecv.get();
      API_OK(MPIGPU_Scatter(ssend.get(), bt, cnt, MPIGPU_INT, rb, bt, cnt, MPIGPU_INT, root,
                            kCollWorld));
      if (!(in_place && rank == root)) RANK_CHECK(srecv.read() == Contrib(rank, cnt));
      // Scatterv with the Gatherv layout.
      std::vector<int> vall(total, kGap);
      for (int r = 0; r < n; ++r)
        for (int i = 0; i < counts[r]; ++i) vall[displs[r] + i] = V(r, i);
      IntBuf vssend(m, rank == root ? vall : std::vector<int>(total, kGap));
      IntBuf vsrecv(m, static_cast<size_t>(cnt + rank), kGap);
      void* vrb = in_place && rank == root ? MPIGPU_IN_PLACE : vsrecv.get();
      API_OK(MPIGPU_Scatterv(vssend.get(), bt, counts.data(), displs.data(), MPIGPU_INT, vrb, bt,
                             cnt + rank, MPIGPU_INT, root, kCollWorld));
      if (!(in_place && rank == root)) RANK_CHECK(vsrecv.read() == Contrib(rank, cnt + rank));
    }
  }
}

inline void CheckAllgatherAlltoall(int rank, int n, const Mem& m, int cnt) {
  const MPIGPU_Buftype bt = m.bt;
  for (int in_place = 0; in_place < 2; ++in_place) {
    // Allgather.
    std::vector<int> init(static_cast<size_t>(n) * cnt, kGap);
    if (in_place) std::copy_n(Contrib(rank, cnt).begin(), cnt, init.begin() + rank * cnt);
    IntBuf send(m, Contrib(rank, cnt));
    IntBuf recv(m, init);
    API_OK(MPIGPU_Allgather(in_place ? MPIGPU_IN_PLACE : send.get(), bt, cnt, MPIGPU_INT,
                            recv.get(), bt, cnt, MPIGPU_INT, kCollWorld));
    std::vector<int> got = recv.read();
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < cnt; ++i) RANK_CHECK(got[r * cnt + i] == V(r, i));
    // Allgatherv, blocks in reverse rank order with gaps.
    std::vector<int> counts(n), displs(n);
    int total = 0;
    for (int r = n - 1; r >= 0; --r) {
      counts[r] = cnt + r;
      displs[r] = total;
      total += counts[r] + 1;
    }
    std::vector<int> vinit(total, kGap);
    if (in_place)
      std::copy_n(Contrib(rank, cnt + rank).begin(), cnt + rank, vinit.begin() + displs[rank]);
    IntBuf vsend(m, Contrib(rank, cnt + rank));
    IntBuf vrecv(m, vinit);
    API_OK(MPIGPU_Allgatherv(in_place ? MPIGPU_IN_PLACE : vsend.get(), bt, cnt + rank,
                             MPIGPU_INT, vrecv.get(), bt, counts.data(), displs.data(),
                             MPIGPU_INT, kCollWorld));
    got = vrecv.read();
    for (int r = 0; r < n; ++r) {
      for (int i = 0; i < counts[r]; ++i) RANK_CHECK(got[displs[r] + i] == V(r, i));
      RANK_CHECK(got[displs[r] + counts[r]] == kGap);
    }
    // Alltoall: rank s's block for d holds V(s, d * cnt + i).
    std::vector<int> a2a_send(static_cast<size_t>(n) * cnt);
    for (int d = 0; d < n; ++d)
      for (int i = 0; i < cnt; ++i) a2a_send[d * cnt + i] = V(rank, d * cnt + i);
    IntBuf asend(m, a2a_send);
    IntBuf arecv(m, in_place ? a2a_send : std::vector<int>(a2a_send.size(), kGap));
    API_OK(MPIGPU_Alltoall(in_place ? MPIGPU_IN_PLACE : asend.get(), bt, cnt, MPIGPU_INT,
                           arecv.get(), bt, cnt, MPIGPU_INT, kCollWorld));
    got = arecv.read();
    for (int s = 0; s < n; ++s)
      for (int i = 0; i < cnt; ++i) RANK_CHECK(got[s * cnt + i] == V(s, rank * cnt + i));
    // Alltoallv: s sends cnt + s + d elements to d; blocks in reverse order with a gap of 1.
    auto len = [cnt](int s, int d) { return cnt + s + d; };
    std::vector<int> sc(n), sd(n), rc(n), rd(n);
    int stot = 0, rtot = 0;
    for (int d = n - 1; d >= 0; --d) {
      sc[d] = len(rank, d);
      sd[d] = stot;
      stot += sc[d] + 1;
      rc[d] = len(d, rank);
      rd[d] = rtot;
      rtot += rc[d] + 1;
    }
    std::vector<int> vs(stot, kGap);
    for (int d = 0; d < n; ++d)
      for (int i = 0; i < sc[d]; ++i) vs[sd[d] + i] = V(rank, d * 1000 + i);
    std::vector<int> vr_init(rtot, kGap);
    if (in_place) {
      // In place: send and receive layouts are one; counts must agree pairwise (symmetric).
      for (int d = 0; d < n; ++d)
        for (int i = 0; i < rc[d]; ++i) vr_init[rd[d] + i] = V(rank, d * 1000 + i);
    }
    IntBuf avs(m, vs);
    IntBuf avr(m, vr_init);
    API_OK(MPIGPU_Alltoallv(in_place ? MPIGPU_IN_PLACE : avs.get(), bt, sc.data(), sd.data(),
                            MPIGPU_INT, avr.get(), bt, rc.data(), rd.data(), MPIGPU_INT,
                            kCollWorld));
    got = avr.read();
    for (int s = 0; s < n; ++s) {
      for (int i = 0; i < rc[s]; ++i) RANK_CHECK(got[rd[s] + i] == V(s, rank * 1000 + i));
      RANK_CHECK(got[rd[s] + rc[s]] == kGap);
    }
    // Alltoallw with byte displacements and INT types (the same exchange as Alltoallv).
    std::vector<int> sdb(n), rdb(n);
    std::vector<MPIGPU_Datatype> types(n, MPIGPU_INT);
    for (int d = 0; d < n; ++d) {
      sdb[d] = sd[d] * 4;
      rdb[d] = rd[d] * 4;
    }
    IntBuf wvs(m, vs);
    IntBuf wvr(m, vr_init);
    API_OK(MPIGPU_Alltoallw(in_place ? MPIGPU_IN_PLACE : wvs.get(), bt, sc.data(), sdb.data(),
                            types.data(), wvr.get(), bt, rc.data(), rdb.data(), types.data(),
                            kCollWorld));
    RANK_CHECK(wvr.read() == got);
  }
}

// Derived receive types: block r of a Gather/Allgather lands every other int.
inline void CheckDerivedTypes(int rank, int n, const Mem& m, int k) {
  MPIGPU_Datatype strided;
  API_OK(MPIGPU_Type_vector(k, 1, 2, MPIGPU_INT, &strided));
  API_OK(MPIGPU_Type_commit(&strided));
  const int ext = 2 * k - 1;
  IntBuf send(m, Contrib(rank, k));
  IntBuf recv(m, static_cast<size_t>(n) * ext, kGap);
  API_OK(MPIGPU_Allgather(send.get(), m.bt, k, MPIGPU_INT, recv.get(), m.bt, 1, strided,
                          kCollWorld));
  std::vector<int> got = recv.read();
  for (int r = 0; r < n; ++r)
    for (int j = 0; j < ext; ++j)
      RANK_CHECK(got[r * ext + j] == (j % 2 == 0 ? V(r, j / 2) : kGap));
  // Scatter from the strided layout back to contiguous blocks.
  IntBuf back(m, static_cast<size_t>(k), kGap);
  API_OK(MPIGPU_Scatter(recv.get(), m.bt, 1, strided, back.get(), m.bt, k, MPIGPU_INT, n - 1,
                        kCollWorld));
  RANK_CHECK(back.read() == Contrib(rank, k));
  // Alltoall sending strided blocks, receiving contiguous ones.
  IntBuf a_recv(m, static_cast<size_t>(n) * k, kGap);
  API_OK(MPIGPU_Alltoall(recv.get(), m.bt, 1, strided, a_recv.get(), m.bt, k, MPIGPU_INT,
                         kCollWorld));
  got = a_recv.read();
  for (int s = 0; s < n; ++s)
    for (int i = 0; i < k; ++i) RANK_CHECK(got[s * k + i] == V(rank, i));
  API_OK(MPIGPU_Type_free(&strided));
}

// ---- reductions ----

// 2x2 matrices of uint32 (wrapping): a non-commutative op. io = in * io (in: lower ranks).
inline void MatMul(const uint32_t* a, uint32_t* b, size_t sa, size_t sb) {
  const uint32_t r0 = a[0] * b[0] + a[sa] * b[2 * sb];
  const uint32_t r1 = a[0] * b[sb] + a[sa] * b[3 * sb];
  const uint32_t r2 = a[2 * sa] * b[0] + a[3 * sa] * b[2 * sb];
  const uint32_t r3 = a[2 * sa] * b[sb] + a[3 * sa] * b[3 * sb];
  b[0] = r0, b[sb] = r1, b[2 * sb] = r2, b[3 * sb] = r3;
}
// Contiguous matrices (type: 4 x UNSIGNED).
inline void MatMulFn(void* in, void* io, int* len, MPIGPU_Datatype*) {
  for (int k = 0; k < *len; ++k)
    MatMul(static_cast<uint32_t*>(in) + 4 * k, static_cast<uint32_t*>(io) + 4 * k, 1, 1);
}
// Strided matrices (type: vector(4, 1, 2, UNSIGNED), extent 7 uints).
inline void MatMulStridedFn(void* in, void* io, int* len, MPIGPU_Datatype*) {
  for (int k = 0; k < *len; ++k)
    MatMul(static_cast<uint32_t*>(in) + 7 * k, static_cast<uint32_t*>(io) + 7 * k, 2, 2);
}
inline void Mat(int r, int k, uint32_t* m) {
  m[0] = r + 1 + k, m[1] = 1 + 2 * k, m[2] = 2 + r, m[3] = static_cast<uint32_t>(r * k);
}
// M(lo) * ... * M(hi - 1) for matrix k.
inline std::vector<uint32_t> MatProduct(int lo, int hi, int k) {
  std::vector<uint32_t> acc = {1, 0, 0, 1}, m(4);
  for (int r = lo; r < hi; ++r) {
    Mat(r, k, m.data());
    std::vector<uint32_t> b = m;
    MatMul(acc.data(), b.data(), 1, 1);
    acc = b;
  }
  return acc;
}

inline void CheckReductions(int rank, int n, const Mem& m, int cnt) {
  const MPIGPU_Buftype bt = m.bt;
  auto sum_upto = [&](int hi, int i) {  // sum of V(r, i) for r < hi (wrapping as int does)
    uint32_t s = 0;
    for (int r = 0; r < hi; ++r) s += static_cast<uint32_t>(V(r, i));
    return static_cast<int>(s);
  };
  for (int in_place = 0; in_place < 2; ++in_place) {
    for (int root = 0; root < n; ++root) {
      IntBuf send(m, Contrib(rank, cnt));
      IntBuf recv(m, in_place && rank == root ? Contrib(rank, cnt) : std::vector<int>(cnt, kGap));
      API_OK(MPIGPU_Reduce(in_place && rank == root ? MPIGPU_IN_PLACE : send.get(), bt,
                           recv.get(), bt, cnt, MPIGPU_INT, MPIGPU_SUM, root, kCollWorld));
      if (rank == root) {
        std::vector<int> got = recv.read();
        for (int i = 0; i < cnt; ++i) RANK_CHECK(got[i] == sum_upto(n, i));
      }
    }
    IntBuf send(m, Contrib(rank, cnt));
    IntBuf recv(m, in_place ? Contrib(rank, cnt) : std::vector<int>(cnt, kGap));
    API_OK(MPIGPU_Allreduce(in_place ? MPIGPU_IN_PLACE : send.get(), bt, recv.get(), bt, cnt,
                            MPIGPU_INT, MPIGPU_MAX, kCollWorld));
    std::vector<int> got = recv.read();
    for (int i = 0; i < cnt; ++i) RANK_CHECK(got[i] == V(n - 1, i));
    // Scan / Exscan (rank 0's Exscan result is left alone).
    IntBuf srecv(m, in_place ? Contrib(rank, cnt) : std::vector<int>(cnt, kGap));
    API_OK(MPIGPU_Scan(in_place ? MPIGPU_IN_PLACE : send.get(), bt, srecv.get(), bt, cnt,
                       MPIGPU_INT, MPIGPU_SUM, kCollWorld));
    got = srecv.read();
    for (int i = 0; i < cnt; ++i) RANK_CHECK(got[i] == sum_upto(rank + 1, i));
    IntBuf erecv(m, in_place ? Contrib(rank, cnt) : std::vector<int>(cnt, kGap));
    API_OK(MPIGPU_Exscan(in_place ? MPIGPU_IN_PLACE : send.get(), bt, erecv.get(), bt, cnt,
                         MPIGPU_INT, MPIGPU_SUM, kCollWorld));
    got = erecv.read();
    for (int i = 0; i < cnt; ++i)
      RANK_CHECK(got[i] == (rank == 0 ? (in_place ? V(0, i) : kGap) : sum_upto(rank, i)));
    // Reduce_scatter_block: block r of the sum to rank r.
    const std::vector<int> big = Contrib(rank, n * cnt);
    IntBuf rsb_send(m, big);
    IntBuf rsb_recv(m, in_place ? big : std::vector<int>(cnt, kGap));
    API_OK(MPIGPU_Reduce_scatter_block(in_place ? MPIGPU_IN_PLACE : rsb_send.get(), bt,
                                       rsb_recv.get(), bt, cnt, MPIGPU_INT, MPIGPU_SUM,
                                       kCollWorld));
    got = rsb_recv.read();
    for (int i = 0; i < cnt; ++i) RANK_CHECK(got[i] == sum_upto(n, rank * cnt + i));
    // Reduce_scatter: rank r gets cnt + r elements.
    std::vector<int> counts(n);
    int total = 0, before = 0;
    for (int r = 0; r < n; ++r) {
      counts[r] = cnt + r;
      if (r < rank) before += counts[r];
      total += counts[r];
    }
    const std::vector<int> vbig = Contrib(rank, total);
    IntBuf rs_send(m, vbig);
    IntBuf rs_recv(m, in_place ? vbig : std::vector<int>(counts[rank], kGap));
    API_OK(MPIGPU_Reduce_scatter(in_place ? MPIGPU_IN_PLACE : rs_send.get(), bt, rs_recv.get(),
                                 bt, counts.data(), MPIGPU_INT, MPIGPU_SUM, kCollWorld));
    got = rs_recv.read();
    for (int i = 0; i < counts[rank]; ++i) RANK_CHECK(got[i] == sum_upto(n, before + i));
  }
}

// A non-commutative user op on matrices: Reduce at every root, Allreduce, Scan, Exscan and
// Reduce_local, contiguous and strided.
inline void CheckUserOps(int rank, int n, const Mem& m, int nmat) {
  MPIGPU_Op op, sop;
  API_OK(MPIGPU_Op_create(MatMulFn, 0, &op));
  API_OK(MPIGPU_Op_create(MatMulStridedFn, 0, &sop));
  int commute = -1;
  API_OK(MPIGPU_Op_commutative(op, &commute));
  RANK_CHECK(commute == 0);
  API_OK(MPIGPU_Op_commutative(MPIGPU_SUM, &commute));
  RANK_CHECK(commute == 1);
  MPIGPU_Datatype mat, smat;
  API_OK(MPIGPU_Type_contiguous(4, MPIGPU_UNSIGNED, &mat));
  API_OK(MPIGPU_Type_commit(&mat));
  API_OK(MPIGPU_Type_vector(4, 1, 2, MPIGPU_UNSIGNED, &smat));
  API_OK(MPIGPU_Type_commit(&smat));
  for (int strided = 0; strided < 2; ++strided) {
    const int stride = strided ? 7 : 4, step = strided ? 2 : 1;
    const MPIGPU_Datatype t = strided ? smat : mat;
    const MPIGPU_Op o = strided ? sop : op;
    std::vector<int> mine(static_cast<size_t>(nmat) * stride + 1, kGap);
    for (int k = 0; k < nmat; ++k) {
      uint32_t mm[4];
      Mat(rank, k, mm);
      for (int j = 0; j < 4; ++j) mine[k * stride + j * step] = static_cast<int>(mm[j]);
    }
    auto check = [&](const std::vector<int>& got, int lo, int hi) {
      for (int k = 0; k < nmat; ++k) {
        std::vector<uint32_t> want = MatProduct(lo, hi, k);
        for (int j = 0; j < 4; ++j)
          RANK_CHECK(static_cast<uint32_t>(got[k * stride + j * step]) == want[j]);
        if (strided)
          for (int j = 1; j < 7; j += 2) RANK_CHECK(got[k * stride + j] == kGap);
      }
    };
    IntBuf send(m, mine);
    for (int root = 0; root < n; ++root) {
      IntBuf recv(m, mine.size(), kGap);
      API_OK(MPIGPU_Reduce(send.get(), m.bt, recv.get(), m.bt, nmat, t, o, root, kCollWorld));
      if (rank == root) check(recv.read(), 0, n);
    }
    IntBuf all(m, mine);
    API_OK(MPIGPU_Allreduce(MPIGPU_IN_PLACE, m.bt, all.get(), m.bt, nmat, t, o, kCollWorld));
    check(all.read(), 0, n);
    IntBuf scan(m, mine.size(), kGap);
    API_OK(MPIGPU_Scan(send.get(), m.bt, scan.get(), m.bt, nmat, t, o, kCollWorld));
    check(scan.read(), 0, rank + 1);
    IntBuf ex(m, mine.size(), kGap);
    API_OK(MPIGPU_Exscan(send.get(), m.bt, ex.get(), m.bt, nmat, t, o, kCollWorld));
    if (rank > 0) check(ex.read(), 0, rank);
    // Reduce_local: inout = in op inout, here M(rank + 1) = M(rank) * M(rank + 1) for lo, hi.
    std::vector<int> next(mine.size(), kGap);
    for (int k = 0; k < nmat; ++k) {
      uint32_t mm[4];
      Mat(rank + 1, k, mm);
      for (int j = 0; j < 4; ++j) next[k * stride + j * step] = static_cast<int>(mm[j]);
    }
    IntBuf io(m, next);
    API_OK(MPIGPU_Reduce_local(send.get(), m.bt, io.get(), m.bt, nmat, t, o));
    check(io.read(), rank, rank + 2);
  }
  API_OK(MPIGPU_Type_free(&mat));
  API_OK(MPIGPU_Type_free(&smat));
  API_OK(MPIGPU_Op_free(&op));
  API_OK(MPIGPU_Op_free(&sop));
  RANK_CHECK(op == MPIGPU_OP_NULL);
}

// Nonblocking collectives, many in flight at once on one communicator, advanced while the
// ranks are busy in point-to-point calls (a ring of Sendrecv), then completed together.
inline void CheckNonblocking(int rank, int n, const Mem& m, int cnt) {
  const MPIGPU_Buftype bt = m.bt;
  std::vector<MPIGPU_Request> reqs(12, MPIGPU_REQUEST_NULL);
  API_OK(MPIGPU_Ibarrier(kCollWorld, &reqs[0]));
  IntBuf bc(m, rank == n - 1 ? Contrib(n - 1, cnt) : std::vector<int>(cnt, kGap));
  API_OK(MPIGPU_Ibcast(bc.get(), bt, cnt, MPIGPU_INT, n - 1, kCollWorld, &reqs[1]));
  IntBuf send(m, Contrib(rank, cnt));
  IntBuf ar(m, static_cast<size_t>(cnt), kGap);
  API_OK(MPIGPU_Iallreduce(send.get(), bt, ar.get(), bt, cnt, MPIGPU_INT, MPIGPU_MAX, kCollWorld,
                           &reqs[2]));
  IntBuf ga(m, static_cast<size_t>(n) * cnt, kGap);
  API_OK(MPIGPU_Igather(send.get(), bt, cnt, MPIGPU_INT, ga.get(), bt, cnt, MPIGPU_INT, 0,
                        kCollWorld, &reqs[3]));
  IntBuf ag(m, static_cast<size_t>(n) * cnt, kGap);
  API_OK(MPIGPU_Iallgather(send.get(), bt, cnt, MPIGPU_INT, ag.get(), bt, cnt, MPIGPU_INT,
                           kCollWorld, &reqs[4]));
  std::vector<int> a2a(static_cast<size_t>(n) * cnt);
  for (int d = 0; d < n; ++d)
    for (int i = 0; i < cnt; ++i) a2a[d * cnt + i] = V(rank, d * cnt + i);
  IntBuf as(m, a2a);
  IntBuf at(m, a2a.size(), kGap);
  API_OK(MPIGPU_Ialltoall(as.get(), bt, cnt, MPIGPU_INT, at.get(), bt, cnt, MPIGPU_INT,
                          kCollWorld, &reqs[5]));
  IntBuf sc(m, static_cast<size_t>(cnt), kGap);
  API_OK(MPIGPU_Iscan(send.get(), bt, sc.get(), bt, cnt, MPIGPU_INT, MPIGPU_MAX, kCollWorld,
                      &reqs[6]));
  IntBuf rsb_send(m, Contrib(rank, n * cnt));
  IntBuf rsb(m, static_cast<size_t>(cnt), kGap);
  API_OK(MPIGPU_Ireduce_scatter_block(rsb_send.get(), bt, rsb.get(), bt, cnt, MPIGPU_INT,
                                      MPIGPU_MAX, kCollWorld, &reqs[7]));
  std::vector<int> all;
  for (int r = 0; r < n; ++r) {
    std::vector<int> c = Contrib(r, cnt, 5);
    all.insert(all.end(), c.begin(), c.end());
  }
  IntBuf sc_src(m, rank == 1 % n ? all : std::vector<int>(all.size(), kGap));
  IntBuf sct(m, static_cast<size_t>(cnt), kGap);
  API_OK(MPIGPU_Iscatter(sc_src.get(), bt, cnt, MPIGPU_INT, sct.get(), bt, cnt, MPIGPU_INT,
                         1 % n, kCollWorld, &reqs[8]));
  IntBuf red(m, static_cast<size_t>(cnt), kGap);
  API_OK(MPIGPU_Ireduce(send.get(), bt, red.get(), bt, cnt, MPIGPU_INT, MPIGPU_MIN, n / 2,
                        kCollWorld, &reqs[9]));
  // Busy in point to point meanwhile: a ring of Sendrecv on the user context.
  int token = rank, got = -1;
  API_OK(MPIGPU_Sendrecv(&token, MPIGPU_BUF_HOST, 1, MPIGPU_INT, (rank + 1) % n, 3, &got,
                         MPIGPU_BUF_HOST, 1, MPIGPU_INT, (rank - 1 + n) % n, 3, kCollWorld,
                         MPIGPU_STATUS_IGNORE));
  RANK_CHECK(got == (rank - 1 + n) % n);
  API_OK(MPIGPU_Waitall(static_cast<int>(reqs.size()), reqs.data(), MPIGPU_STATUSES_IGNORE));
  RANK_CHECK(bc.read() == Contrib(n - 1, cnt));
  RANK_CHECK(ar.read() == Contrib(n - 1, cnt));
  std::vector<int> g = ga.read();
  if (rank == 0)
    for (int r = 0; r < n; ++r)
      for (int i = 0; i < cnt; ++i) RANK_CHECK(g[r * cnt + i] == V(r, i));
  g = ag.read();
  for (int r = 0; r < n; ++r)
    for (int i = 0; i < cnt; ++i) RANK_CHECK(g[r * cnt + i] == V(r, i));
  g = at.read();
  for (int s = 0; s < n; ++s)
    for (int i = 0; i < cnt; ++i) RANK_CHECK(g[s * cnt + i] == V(s, rank * cnt + i));
  RANK_CHECK(sc.read() == Contrib(rank, cnt));
  g = rsb.read();
  for (int i = 0; i < cnt; ++i) RANK_CHECK(g[i] == V(n - 1, rank * cnt + i));
  if (rank == n / 2) RANK_CHECK(red.read() == Contrib(0, cnt));
  RANK_CHECK(sct.read() == Contrib(rank, cnt, 5));
}

// Everything above, for counts around the eager limit (64 KiB = 16384 ints).
inline void RunCollSuite(int rank, int n, const Mem& m) {
  for (int cnt : {0, 1, 5, 16385}) {
    CheckGatherScatter(rank, n, m, cnt);
    CheckAllgatherAlltoall(rank, n, m, cnt);
    CheckReductions(rank, n, m, cnt);
    CheckNonblocking(rank, n, m, cnt);
  }
  CheckDerivedTypes(rank, n, m, 3);
  CheckDerivedTypes(rank, n, m, 20000);
  CheckUserOps(rank, n, m, 3);
  CheckUserOps(rank, n, m, 5000);  // 80 KB of contiguous matrices: rendezvous
}

}  // namespace mpigpu::testing

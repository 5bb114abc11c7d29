// Every collective of the public API on an intercommunicator (MPI 3.1 §5.2.2), checked in one
// rank of a job split into a low group (world ranks 0..low-1) and a high group (the rest), on
// memory of one kind (host in api_inter_coll_test, device in api_gpu_coll_test): data goes
// from one group to the other; rooted ones with every root of both groups (MPIGPU_ROOT at the
// root, MPIGPU_PROC_NULL at the rest of its group, whose buffers must stay untouched); v-forms
// with unequal counts and gaps; a non-commutative user op, which must come out in the remote
// group's rank order; blocking and nonblocking forms; and the errors (IN_PLACE, Scan/Exscan,
// bad roots), after which the intercommunicator still works.
#pragma once

#include <cstdint>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/coll_suite.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {

// The blocking call MPIGPU_<name>(args), or MPIGPU_<iname>(args, &req) and a wait.
#define INTER_COLL(nb, name, iname, ...)                \
  do {                                                  \
    if (nb) {                                           \
      MPIGPU_Request _req = MPIGPU_REQUEST_NULL;        \
      API_OK(MPIGPU_##iname(__VA_ARGS__, &_req));       \
      API_OK(MPIGPU_Wait(&_req, MPIGPU_STATUS_IGNORE)); \
    } else {                                            \
      API_OK(MPIGPU_##name(__VA_ARGS__));               \
    }                                                   \
  } while (0)

// One rank's view of the intercommunicator.
struct InterView {
  MPIGPU_Comm comm = MPIGPU_COMM_NULL;
  int group = 0;  // 0: low, 1: high
  int rank = 0;   // local rank
  int size = 0;   // local group size
  int rsize = 0;  // remote group size
  // Value identity of (group, local rank): contributions are V(Id(g, r), i).
  static int Id(int g, int r) { return 100 * g + r + 1; }
  int me() const { return Id(group, rank); }
  int other() const { return 1 - group; }
};

inline InterView MakeInter(int world_rank, int world_size, int low) {
  InterView v;
  v.group = world_rank < low ? 0 : 1;
  MPIGPU_Comm local;
  API_OK(MPIGPU_Comm_split(MPIGPU_COMM_WORLD, v.group, world_rank, &local));
  // Leaders: local rank 0 of each group, world ranks 0 and low.
  API_OK(MPIGPU_Intercomm_create(local, 0, MPIGPU_COMM_WORLD, v.group == 0 ? low : 0, 21, &v.comm));
  API_OK(MPIGPU_Comm_free(&local));
  API_OK(MPIGPU_Comm_rank(v.comm, &v.rank));
  API_OK(MPIGPU_Comm_size(v.comm, &v.size));
  API_OK(MPIGPU_Comm_remote_size(v.comm, &v.rsize));
  RANK_CHECK(v.size == (v.group == 0 ? low : world_size - low));
  RANK_CHECK(v.rsize == world_size - v.size);
  return v;
}

// The root argument of a rooted collective whose root is rank `root` of group `rg`.
inline int RootArg(const InterView& v, int rg, int root) {
  if (v.group != rg) return root;
  return v.rank == root ? MPIGPU_ROOT : MPIGPU_PROC_NULL;
}

inline void CheckInterBarrierBcast(const InterView& v, const Mem& m, int cnt, bool nb) {
  const MPIGPU_Buftype bt = m.bt;
  INTER_COLL(nb, Barrier, Ibarrier, v.comm);
  for (int rg = 0; rg < 2; ++rg) {
    const int gsize = v.group == rg ? v.size : v.rsize;
    for (int root = 0; root < gsize; ++root) {
      const int arg = RootArg(v, rg, root);
      const bool sends = arg == MPIGPU_ROOT;
      IntBuf b(m, sends ? Contrib(v.me(), cnt) : std::vector<int>(cnt, kGap));
      INTER_COLL(nb, Bcast, Ibcast, b.get(), bt, cnt, MPIGPU_INT, arg, v.comm);
      const std::vector<int> got = b.read();
      if (sends) {
        RANK_CHECK(got == Contrib(v.me(), cnt));
      } else if (arg == MPIGPU_PROC_NULL) {
        RANK_CHECK(got == std::vector<int>(cnt, kGap));
      } else {
        RANK_CHECK(got == Contrib(InterView::Id(rg, root), cnt));
      }
    }
  }
}

// n blocks: block k holds cnt (+ k in a v-form) elements after a gap (of k + 1 in a v-form);
// returns the elements spanned.
inline int VLayout(int n, int cnt, bool vform, std::vector<int>* counts, std::vector<int>* displs) {
  counts->resize(n);
  displs->resize(n);
  int total = 0;
  for (int k = 0; k < n; ++k) {
    (*counts)[k] = vform ? cnt + k : cnt;
    (*displs)[k] = total + (vform ? k + 1 : 0);
    total = (*displs)[k] + (*counts)[k];
  }
  return total;
}

// Gather(v) and Scatter(v), in VLayout's blocks (remote rank k's at the root).
inline void CheckInterGatherScatter(const InterView& v, const Mem& m, int cnt, bool nb) {
  const MPIGPU_Buftype bt = m.bt;
  for (int vform = 0; vform < 2; ++vform) {
    for (int rg = 0; rg < 2; ++rg) {
      const int gsize = v.group == rg ? v.size : v.rsize;
      for (int root = 0; root < gsize; ++root) {
        const int arg = RootArg(v, rg, root);
        const int n = v.rsize;  // at the root: the senders
        std::vector<int> counts, displs;
        const int total = VLayout(n, cnt, vform, &counts, &displs);
        const int mine = vform ? cnt + v.rank : cnt;  // at a leaf
        // Gather.
        IntBuf send(m, Contrib(v.me(), mine));
        IntBuf recv(m, static_cast<size_t>(total), kGap);
        if (vform) {
          INTER_COLL(nb, Gatherv, Igatherv, send.get(), bt, mine, MPIGPU_INT, recv.get(), bt, counts.data(),
                     displs.data(), MPIGPU_INT, arg, v.comm);
        } else {
          INTER_COLL(nb, Gather, Igather, send.get(), bt, cnt, MPIGPU_INT, recv.get(), bt, cnt, MPIGPU_INT,
                     arg, v.comm);
        }
        std::vector<int> got = recv.read();
        if (arg == MPIGPU_ROOT) {
          std::vector<int> want(total, kGap);
          for (int k = 0; k < n; ++k) {
            const std::vector<int> c = Contrib(InterView::Id(v.other(), k), counts[k]);
            std::copy(c.begin(), c.end(), want.begin() + displs[k]);
          }
          RANK_CHECK(got == want);
        } else {
          RANK_CHECK(got == std::vector<int>(total, kGap));
        }
        // Scatter: the root's block k is V(root id, displs[k] + i).
        IntBuf whole(m, Contrib(v.me(), total));
        IntBuf part(m, static_cast<size_t>(mine), kGap);
        if (vform) {
          INTER_COLL(nb, Scatterv, Iscatterv, whole.get(), bt, counts.data(), displs.data(), MPIGPU_INT,
                     part.get(), bt, mine, MPIGPU_INT, arg, v.comm);
        } else {
          INTER_COLL(nb, Scatter, Iscatter, whole.get(), bt, cnt, MPIGPU_INT, part.get(), bt, cnt,
                     MPIGPU_INT, arg, v.comm);
        }
        got = part.read();
        if (arg == MPIGPU_ROOT || arg == MPIGPU_PROC_NULL) {
          RANK_CHECK(got == std::vector<int>(mine, kGap));
        } else {
          // Where the root (whose remote group is this one) put this rank's block.
          std::vector<int> rc, rd;
          VLayout(v.size, cnt, vform, &rc, &rd);
          const int start = rd[v.rank];
          RANK_CHECK(got == Contrib(InterView::Id(rg, root), mine, start));
        }
      }
    }
  }
}

// Allgather(v) and Alltoall(v, w).
inline void CheckInterAllgatherAlltoall(const InterView& v, const Mem& m, int cnt, bool nb) {
  const MPIGPU_Buftype bt = m.bt;
  const int n = v.rsize;
  for (int vform = 0; vform < 2; ++vform) {
    // Allgather: remote rank k sends cnt (+ k) elements.
    std::vector<int> counts, displs;
    const int total = VLayout(n, cnt, vform, &counts, &displs);
    const int mine = vform ? cnt + v.rank : cnt;
    IntBuf send(m, Contrib(v.me(), mine));
    IntBuf recv(m, static_cast<size_t>(total), kGap);
    if (vform) {
      INTER_COLL(nb, Allgatherv, Iallgatherv, send.get(), bt, mine, MPIGPU_INT, recv.get(), bt, counts.data(),
                 displs.data(), MPIGPU_INT, v.comm);
    } else {
      INTER_COLL(nb, Allgather, Iallgather, send.get(), bt, cnt, MPIGPU_INT, recv.get(), bt, cnt, MPIGPU_INT,
                 v.comm);
    }
    std::vector<int> want(total, kGap);
    for (int k = 0; k < n; ++k) {
      const std::vector<int> c = Contrib(InterView::Id(v.other(), k), counts[k]);
      std::copy(c.begin(), c.end(), want.begin() + displs[k]);
    }
    RANK_CHECK(recv.read() == want);
  }
  // Alltoall(v, w): sender a sends 1 + a + 2b elements (cnt each in the regular form) to
  // receiver b, values V(sender id, 100 * b + i); a gap of one element between blocks.
  for (int form = 0; form < 3; ++form) {
    auto amount = [&](int a, int b) { return form == 0 ? cnt : 1 + a + 2 * b; };
    std::vector<int> sc(n), sd(n), rc(n), rd(n);
    std::vector<int> sbytes(n), rbytes(n);
    std::vector<MPIGPU_Datatype> types(n, MPIGPU_INT);
    std::vector<int> sendv, recv_want;
    int stotal = 0, rtotal = 0;
    for (int k = 0; k < n; ++k) {
      sc[k] = amount(v.rank, k);
      sd[k] = form == 0 ? k * cnt : stotal + 1;
      stotal = sd[k] + sc[k];
      rc[k] = amount(k, v.rank);
      rd[k] = form == 0 ? k * cnt : rtotal + 1;
      rtotal = rd[k] + rc[k];
      sbytes[k] = sd[k] * static_cast<int>(sizeof(int));
      rbytes[k] = rd[k] * static_cast<int>(sizeof(int));
    }
    sendv.assign(stotal, kGap);
    recv_want.assign(rtotal, kGap);
    for (int k = 0; k < n; ++k) {
      const std::vector<int> out = Contrib(v.me(), sc[k], 100 * k);
      std::copy(out.begin(), out.end(), sendv.begin() + sd[k]);
      const std::vector<int> in = Contrib(InterView::Id(v.other(), k), rc[k], 100 * v.rank);
      std::copy(in.begin(), in.end(), recv_want.begin() + rd[k]);
    }
    IntBuf send(m, sendv);
    IntBuf recv(m, static_cast<size_t>(rtotal), kGap);
    if (form == 0) {
      INTER_COLL(nb, Alltoall, Ialltoall, send.get(), bt, cnt, MPIGPU_INT, recv.get(), bt, cnt, MPIGPU_INT,
                 v.comm);
    } else if (form == 1) {
      INTER_COLL(nb, Alltoallv, Ialltoallv, send.get(), bt, sc.data(), sd.data(), MPIGPU_INT, recv.get(), bt,
                 rc.data(), rd.data(), MPIGPU_INT, v.comm);
    } else {
      INTER_COLL(nb, Alltoallw, Ialltoallw, send.get(), bt, sc.data(), sbytes.data(), types.data(),
                 recv.get(), bt, rc.data(), rbytes.data(), types.data(), v.comm);
    }
    RANK_CHECK(recv.read() == recv_want);
  }
}

// Reduce, Allreduce (SUM, and the non-commutative matrix product in the remote group's rank
// order), Reduce_scatter_block and Reduce_scatter.
inline void CheckInterReductions(const InterView& v, const Mem& m, int cnt, bool nb) {
  const MPIGPU_Buftype bt = m.bt;
  auto sum_of = [&](int g, int gsize, int len) {
    std::vector<int> s(len, 0);
    for (int k = 0; k < gsize; ++k) {
      const std::vector<int> c = Contrib(InterView::Id(g, k), len);
      for (int i = 0; i < len; ++i) s[i] += c[i];
    }
    return s;
  };
  // Reduce with every root of both groups.
  for (int rg = 0; rg < 2; ++rg) {
    const int gsize = v.group == rg ? v.size : v.rsize;
    for (int root = 0; root < gsize; ++root) {
      const int arg = RootArg(v, rg, root);
      IntBuf send(m, Contrib(v.me(), cnt));
      IntBuf recv(m, static_cast<size_t>(cnt), kGap);
      INTER_COLL(nb, Reduce, Ireduce, send.get(), bt, recv.get(), bt, cnt, MPIGPU_INT, MPIGPU_SUM, arg,
                 v.comm);
      if (arg == MPIGPU_ROOT) {
        RANK_CHECK(recv.read() == sum_of(v.other(), v.rsize, cnt));
      } else {
        RANK_CHECK(recv.read() == std::vector<int>(cnt, kGap));
      }
    }
  }
  {
    IntBuf send(m, Contrib(v.me(), cnt));
    IntBuf recv(m, static_cast<size_t>(cnt), kGap);
    INTER_COLL(nb, Allreduce, Iallreduce, send.get(), bt, recv.get(), bt, cnt, MPIGPU_INT, MPIGPU_SUM,
               v.comm);
    RANK_CHECK(recv.read() == sum_of(v.other(), v.rsize, cnt));
  }
  // Non-commutative: group g's rank k contributes Mat(10 * g + k, i) for matrix i.
  {
    constexpr int kMats = 2;
    MPIGPU_Datatype mat;
    API_OK(MPIGPU_Type_contiguous(4, MPIGPU_UNSIGNED, &mat));
    API_OK(MPIGPU_Type_commit(&mat));
    MPIGPU_Op op;
    API_OK(MPIGPU_Op_create(MatMulFn, 0, &op));
    std::vector<uint32_t> mine(4 * kMats);
    for (int i = 0; i < kMats; ++i) Mat(10 * v.group + v.rank, i, mine.data() + 4 * i);
    std::vector<int> as_int(mine.begin(), mine.end());
    IntBuf send(m, as_int);
    IntBuf recv(m, 4 * kMats, 0);
    const int lo = 10 * v.other();
    INTER_COLL(nb, Allreduce, Iallreduce, send.get(), bt, recv.get(), bt, kMats, mat, op, v.comm);
    std::vector<int> got = recv.read();
    for (int i = 0; i < kMats; ++i) {
      const std::vector<uint32_t> want = MatProduct(lo, lo + v.rsize, i);
      for (int j = 0; j < 4; ++j) RANK_CHECK(static_cast<uint32_t>(got[4 * i + j]) == want[j]);
    }
    // Reduce to the low group's rank 0 from the high group.
    const int arg = RootArg(v, 0, 0);
    IntBuf recv2(m, 4 * kMats, 0);
    INTER_COLL(nb, Reduce, Ireduce, send.get(), bt, recv2.get(), bt, kMats, mat, op, arg, v.comm);
    if (arg == MPIGPU_ROOT) {
      got = recv2.read();
      for (int i = 0; i < kMats; ++i) {
        const std::vector<uint32_t> want = MatProduct(10, 10 + v.rsize, i);
        for (int j = 0; j < 4; ++j) RANK_CHECK(static_cast<uint32_t>(got[4 * i + j]) == want[j]);
      }
    }
    API_OK(MPIGPU_Op_free(&op));
    API_OK(MPIGPU_Type_free(&mat));
  }
  // Reduce_scatter_block: recvcount cnt * rsize, so both groups reduce cnt * size * rsize
  // elements; local rank j gets block j of the remote group's sum.
  {
    const int rcount = cnt * v.rsize;
    const int total = rcount * v.size;
    IntBuf send(m, Contrib(v.me(), total));
    IntBuf recv(m, static_cast<size_t>(rcount), kGap);
    INTER_COLL(nb, Reduce_scatter_block, Ireduce_scatter_block, send.get(), bt, recv.get(), bt, rcount, MPIGPU_INT,
               MPIGPU_SUM, v.comm);
    const std::vector<int> s = sum_of(v.other(), v.rsize, total);
    RANK_CHECK(recv.read() ==
               std::vector<int>(s.begin() + v.rank * rcount, s.begin() + (v.rank + 1) * rcount));
  }
  // Reduce_scatter: local rank 0 gets 3 more than the others; the totals (cnt * size * rsize
  // + 3) agree across the groups.
  {
    std::vector<int> counts(v.size, cnt * v.rsize);
    counts[0] += 3;
    int total = 0, start = 0;
    for (int j = 0; j < v.size; ++j) {
      if (j == v.rank) start = total;
      total += counts[j];
    }
    IntBuf send(m, Contrib(v.me(), total));
    IntBuf recv(m, static_cast<size_t>(counts[v.rank]), kGap);
    INTER_COLL(nb, Reduce_scatter, Ireduce_scatter, send.get(), bt, recv.get(), bt, counts.data(), MPIGPU_INT,
               MPIGPU_SUM, v.comm);
    const std::vector<int> s = sum_of(v.other(), v.rsize, total);
    RANK_CHECK(recv.read() ==
               std::vector<int>(s.begin() + start, s.begin() + start + counts[v.rank]));
  }
}

// Errors every rank of both groups makes alike (so nobody waits on a rank that failed), each
// found before anything is sent; the intercommunicator works afterwards.
inline void CheckInterErrors(const InterView& v, const Mem& m) {
  const MPIGPU_Buftype bt = m.bt;
  API_OK(MPIGPU_Comm_set_errhandler(v.comm, MPIGPU_ERRORS_RETURN));
  IntBuf a(m, 8, 1), b(m, 8, 0);
  MPIGPU_Request req = MPIGPU_REQUEST_NULL;
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Allreduce(MPIGPU_IN_PLACE, bt, b.get(), bt, 1, MPIGPU_INT,
                                             MPIGPU_SUM, v.comm));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Iallreduce(MPIGPU_IN_PLACE, bt, b.get(), bt, 1, MPIGPU_INT,
                                              MPIGPU_SUM, v.comm, &req));
  RANK_CHECK(req == MPIGPU_REQUEST_NULL);
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Allgather(MPIGPU_IN_PLACE, bt, 1, MPIGPU_INT, b.get(), bt, 1,
                                             MPIGPU_INT, v.comm));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Alltoall(MPIGPU_IN_PLACE, bt, 1, MPIGPU_INT, b.get(), bt, 1,
                                            MPIGPU_INT, v.comm));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Reduce_scatter_block(MPIGPU_IN_PLACE, bt, b.get(), bt, 1,
                                                        MPIGPU_INT, MPIGPU_SUM, v.comm));
  // IN_PLACE at the root of a Gather (the low group's rank 0; everyone else passes it too).
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Gather(MPIGPU_IN_PLACE, bt, 1, MPIGPU_INT, b.get(), bt, 1,
                                          MPIGPU_INT, RootArg(v, 0, 0), v.comm));
  API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Scan(a.get(), bt, b.get(), bt, 1, MPIGPU_INT, MPIGPU_SUM,
                                         v.comm));
  API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Exscan(a.get(), bt, b.get(), bt, 1, MPIGPU_INT, MPIGPU_SUM,
                                           v.comm));
  API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Iscan(a.get(), bt, b.get(), bt, 1, MPIGPU_INT, MPIGPU_SUM,
                                          v.comm, &req));
  RANK_CHECK(req == MPIGPU_REQUEST_NULL);
  // Roots: a remote rank past the remote group, and a negative one that is neither special.
  API_FAILS(MPIGPU_ERR_ROOT, MPIGPU_Bcast(a.get(), bt, 1, MPIGPU_INT, v.rsize, v.comm));
  API_FAILS(MPIGPU_ERR_ROOT, MPIGPU_Bcast(a.get(), bt, 1, MPIGPU_INT, -5, v.comm));
  API_FAILS(MPIGPU_ERR_ROOT, MPIGPU_Ireduce(a.get(), bt, b.get(), bt, 1, MPIGPU_INT, MPIGPU_SUM,
                                            -7, v.comm, &req));
  RANK_CHECK(req == MPIGPU_REQUEST_NULL);
  // Still usable.
  INTER_COLL(false, Barrier, Ibarrier, v.comm);
  IntBuf one(m, 1, 1), sum(m, 1, 0);
  API_OK(MPIGPU_Allreduce(one.get(), bt, sum.get(), bt, 1, MPIGPU_INT, MPIGPU_SUM, v.comm));
  RANK_CHECK(sum.read()[0] == v.rsize);
}

// The whole suite on `world_size` ranks with `low` of them in the low group; then again on a
// dup of the intercommunicator, with nonblocking collectives overlapping in flight.
inline void RunInterCollSuite(int world_rank, int world_size, int low, const Mem& m) {
  InterView v = MakeInter(world_rank, world_size, low);
  for (int nb = 0; nb < 2; ++nb) {
    for (int cnt : {1, 5000}) {  // below and above the eager limit
      CheckInterBarrierBcast(v, m, cnt, nb);
      CheckInterGatherScatter(v, m, cnt, nb);
      CheckInterAllgatherAlltoall(v, m, cnt, nb);
      CheckInterReductions(v, m, cnt, nb);
    }
  }
  // Several nonblocking collectives in flight at once on a dup.
  InterView d = v;
  API_OK(MPIGPU_Comm_dup(v.comm, &d.comm));
  {
    IntBuf bc(m, d.group == 0 && d.rank == 0 ? Contrib(d.me(), 3) : std::vector<int>(3, kGap));
    IntBuf one(m, 1, d.me()), sum(m, 1, 0);
    MPIGPU_Request reqs[3];
    API_OK(MPIGPU_Ibarrier(d.comm, &reqs[0]));
    API_OK(MPIGPU_Ibcast(bc.get(), m.bt, 3, MPIGPU_INT, RootArg(d, 0, 0), d.comm, &reqs[1]));
    API_OK(MPIGPU_Iallreduce(one.get(), m.bt, sum.get(), m.bt, 1, MPIGPU_INT, MPIGPU_SUM, d.comm,
                             &reqs[2]));
    API_OK(MPIGPU_Waitall(3, reqs, MPIGPU_STATUSES_IGNORE));
    if (d.group == 1) RANK_CHECK(bc.read() == Contrib(InterView::Id(0, 0), 3));
    int want = 0;
    for (int k = 0; k < d.rsize; ++k) want += InterView::Id(d.other(), k);
    RANK_CHECK(sum.read()[0] == want);
  }
  API_OK(MPIGPU_Comm_free(&d.comm));
  CheckInterErrors(v, m);
  API_OK(MPIGPU_Comm_free(&v.comm));
}

}  // namespace mpigpu::testing

// Persistent collectives of the public API (MPIGPU_<coll>_init, Start/Startall) between forked
// ranks: every collective started several times through Startall with new data each run and
// checked against the serial result; the request stays valid and inactive after Wait/Test/
// Waitall; starts of different persistent collectives in different orders on different ranks;
// Waitany skipping inactive requests; Request_free of inactive and active requests; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;
constexpr MPIGPU_Buftype kHost = MPIGPU_BUF_HOST;
constexpr MPIGPU_Info kNoInfo = MPIGPU_INFO_NULL;

// The value rank r contributes at element i in run `run`.
int Val(int run, int r, int i) { return 1000 * run + 10 * r + i; }

// Every collective once per run, all started by one Startall, `runs` times; each run writes
// new send data before the start and checks every result after Waitall.
void EveryCollectiveRestarted(int rank, int n, int runs) {
  const int root = n - 1;
  // Buffers stay put across runs (the requests keep their addresses).
  int bcast = 0;
  std::vector<int> red_in(2), red_out(2), allred_out(2);
  std::vector<int> gat_in(2), gat_out(2 * n), gatv_out(3 * n);
  std::vector<int> sca_in(2 * n), sca_out(2), scav_out(3);
  std::vector<int> ag_out(2 * n), agv_out(3 * n);
  std::vector<int> a2a_in(n), a2a_out(n), a2av_out(n), a2aw_out(n);
  std::vector<int> rs_in(n), rs_out(1), rsb_out(1);
  int scan_in = 0, scan_out = 0, exscan_out = -7;
  // v forms: block r holds 1 element at displacement 3r (gaps stay untouched).
  std::vector<int> ones(n, 1), displs3(n), displs1(n), bytes(n);
  std::vector<MPIGPU_Datatype> ints(n, MPIGPU_INT);
  for (int r = 0; r < n; ++r) {
    displs3[r] = 3 * r;
    displs1[r] = r;
    bytes[r] = r * static_cast<int>(sizeof(int));
  }

  std::vector<MPIGPU_Request> req(17, MPIGPU_REQUEST_NULL);
  API_OK(MPIGPU_Barrier_init(kWorld, kNoInfo, &req[0]));
  API_OK(MPIGPU_Bcast_init(&bcast, kHost, 1, MPIGPU_INT, root, kWorld, kNoInfo, &req[1]));
  API_OK(MPIGPU_Reduce_init(red_in.data(), kHost, red_out.data(), kHost, 2, MPIGPU_INT,
                            MPIGPU_SUM, root, kWorld, kNoInfo, &req[2]));
  API_OK(MPIGPU_Allreduce_init(red_in.data(), kHost, allred_out.data(), kHost, 2, MPIGPU_INT,
                               MPIGPU_MAX, kWorld, kNoInfo, &req[3]));
  API_OK(MPIGPU_Gather_init(gat_in.data(), kHost, 2, MPIGPU_INT, gat_out.data(), kHost, 2,
                            MPIGPU_INT, root, kWorld, kNoInfo, &req[4]));
  API_OK(MPIGPU_Gatherv_init(gat_in.data(), kHost, 1, MPIGPU_INT, gatv_out.data(), kHost,
                             ones.data(), displs3.data(), MPIGPU_INT, root, kWorld, kNoInfo,
                             &req[5]));
  API_OK(MPIGPU_Scatter_init(sca_in.data(), kHost, 2, MPIGPU_INT, sca_out.data(), kHost, 2,
                             MPIGPU_INT, root, kWorld, kNoInfo, &req[6]));
  API_OK(MPIGPU_Scatterv_init(sca_in.data(), kHost, ones.data(), displs1.data(), MPIGPU_INT,
                              scav_out.data(), kHost, 1, MPIGPU_INT, root, kWorld, kNoInfo,
                              &req[7]));
  API_OK(MPIGPU_Allgather_init(gat_in.data(), kHost, 2, MPIGPU_INT, ag_out.data(), kHost, 2,
                               MPIGPU_INT, kWorld, kNoInfo, &req[8]));
  API_OK(MPIGPU_Allgatherv_init(gat_in.data(), kHost, 1, MPIGPU_INT, agv_out.data(), kHost,
                                ones.data(), displs3.data(), MPIGPU_INT, kWorld, kNoInfo,
                                &req[9]));
  API_OK(MPIGPU_Alltoall_init(a2a_in.data(), kHost, 1, MPIGPU_INT, a2a_out.data(), kHost, 1,
                              MPIGPU_INT, kWorld, kNoInfo, &req[10]));
  API_OK(MPIGPU_Alltoallv_init(a2a_in.data(), kHost, ones.data(), displs1.data(), MPIGPU_INT,
                               a2av_out.data(), kHost, ones.data(), displs1.data(), MPIGPU_INT,
                               kWorld, kNoInfo, &req[11]));
  API_OK(MPIGPU_Alltoallw_init(a2a_in.data(), kHost, ones.data(), bytes.data(), ints.data(),
                               a2aw_out.data(), kHost, ones.data(), bytes.data(), ints.data(),
                               kWorld, kNoInfo, &req[12]));
  API_OK(MPIGPU_Reduce_scatter_init(rs_in.data(), kHost, rs_out.data(), kHost, ones.data(),
                                    MPIGPU_INT, MPIGPU_SUM, kWorld, kNoInfo, &req[13]));
  API_OK(MPIGPU_Reduce_scatter_block_init(rs_in.data(), kHost, rsb_out.data(), kHost, 1,
                                          MPIGPU_INT, MPIGPU_MIN, kWorld, kNoInfo, &req[14]));
  API_OK(MPIGPU_Scan_init(&scan_in, kHost, &scan_out, kHost, 1, MPIGPU_INT, MPIGPU_SUM, kWorld,
                          kNoInfo, &req[15]));
  API_OK(MPIGPU_Exscan_init(&scan_in, kHost, &exscan_out, kHost, 1, MPIGPU_INT, MPIGPU_SUM,
                            kWorld, kNoInfo, &req[16]));
  // The init arrays are copied: scribbling over them now must not matter.
  std::vector<int> keep_ones = ones, keep_displs3 = displs3;
  std::fill(ones.begin(), ones.end(), 99);
  std::fill(displs3.begin(), displs3.end(), -5);

  for (int run = 0; run < runs; ++run) {
    bcast = rank == root ? Val(run, root, 0) : -1;
    for (int i = 0; i < 2; ++i) red_in[i] = gat_in[i] = Val(run, rank, i);
    for (int i = 0; i < 2 * n; ++i) sca_in[i] = rank == root ? Val(run, root, i) : -1;
    for (int r = 0; r < n; ++r) a2a_in[r] = rs_in[r] = Val(run, rank, r);
    scan_in = Val(run, rank, 0);
    std::fill(gatv_out.begin(), gatv_out.end(), -1);
    std::fill(agv_out.begin(), agv_out.end(), -1);

    API_OK(MPIGPU_Startall(static_cast<int>(req.size()), req.data()));
    std::vector<MPIGPU_Status> st(req.size());
    API_OK(MPIGPU_Waitall(static_cast<int>(req.size()), req.data(), st.data()));
    for (size_t k = 0; k < req.size(); ++k) {
      RANK_CHECK(req[k] != MPIGPU_REQUEST_NULL);  // persistent: still valid, inactive
      RANK_CHECK(st[k].MPIGPU_ERROR == MPIGPU_SUCCESS);
    }

    RANK_CHECK(bcast == Val(run, root, 0));
    for (int i = 0; i < 2; ++i) {
      int sum = 0;
      for (int r = 0; r < n; ++r) sum += Val(run, r, i);
      if (rank == root) RANK_CHECK(red_out[i] == sum);
      RANK_CHECK(allred_out[i] == Val(run, n - 1, i));
    }
    for (int r = 0; r < n; ++r) {
      for (int i = 0; i < 2; ++i) {
        if (rank == root) RANK_CHECK(gat_out[2 * r + i] == Val(run, r, i));
        RANK_CHECK(ag_out[2 * r + i] == Val(run, r, i));
      }
      if (rank == root) RANK_CHECK(gatv_out[3 * r] == Val(run, r, 0) && gatv_out[3 * r + 1] == -1);
      RANK_CHECK(agv_out[3 * r] == Val(run, r, 0) && agv_out[3 * r + 2] == -1);
      RANK_CHECK(a2a_out[r] == Val(run, r, rank));
      RANK_CHECK(a2av_out[r] == Val(run, r, rank));
      RANK_CHECK(a2aw_out[r] == Val(run, r, rank));
    }
    for (int i = 0; i < 2; ++i) RANK_CHECK(sca_out[i] == Val(run, root, 2 * rank + i));
    RANK_CHECK(scav_out[0] == Val(run, root, rank));
    int col_sum = 0, col_min = Val(run, 0, rank), prefix = 0;
    for (int r = 0; r < n; ++r) col_sum += Val(run, r, rank);
    for (int r = 0; r < n; ++r) col_min = std::min(col_min, Val(run, r, rank));
    RANK_CHECK(rs_out[0] == col_sum);
    RANK_CHECK(rsb_out[0] == col_min);
    for (int r = 0; r < rank; ++r) prefix += Val(run, r, 0);
    RANK_CHECK(scan_out == prefix + Val(run, rank, 0));
    if (rank > 0) RANK_CHECK(exscan_out == prefix);
  }
  (void)keep_ones;
  (void)keep_displs3;
  for (auto& r : req) {
    API_OK(MPIGPU_Request_free(&r));
    RANK_CHECK(r == MPIGPU_REQUEST_NULL);
  }
}

TEST(ApiPersistentCollTest, EveryCollectiveRestartedWithNewData) {
  for (int n : {1, 2, 3, 5}) {
    std::string r = RunApiJob(n, [n](int rank) { EveryCollectiveRestarted(rank, n, 4); });
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

// One request completed by Wait, Test, Waitall and Testall in turn; completion calls on the
// inactive request return at once with an empty status.
TEST(ApiPersistentCollTest, CompletionCallsLeaveItInactiveAndRestartable) {
  std::string r = RunApiJob(3, [](int rank) {
    int in = 0, out = 0;
    MPIGPU_Request req = MPIGPU_REQUEST_NULL;
    API_OK(MPIGPU_Allreduce_init(&in, kHost, &out, kHost, 1, MPIGPU_INT, MPIGPU_SUM, kWorld,
                                 kNoInfo, &req));
    // Inactive from the start: every completion call is done at once.
    MPIGPU_Status st;
    API_OK(MPIGPU_Wait(&req, &st));
    RANK_CHECK(req != MPIGPU_REQUEST_NULL && st.MPIGPU_SOURCE == MPIGPU_ANY_SOURCE);
    int flag = 0;
    API_OK(MPIGPU_Test(&req, &flag, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(flag == 1 && req != MPIGPU_REQUEST_NULL);
    for (int run = 0; run < 8; ++run) {
      in = run * 10 + rank;
      API_OK(MPIGPU_Start(&req));
      switch (run % 4) {
        case 0:
          API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
          break;
        case 1:
          for (flag = 0; !flag;) API_OK(MPIGPU_Test(&req, &flag, MPIGPU_STATUS_IGNORE));
          break;
        case 2:
          API_OK(MPIGPU_Waitall(1, &req, MPIGPU_STATUSES_IGNORE));
          break;
        default:
          for (flag = 0; !flag;) API_OK(MPIGPU_Testall(1, &req, &flag, MPIGPU_STATUSES_IGNORE));
      }
      RANK_CHECK(req != MPIGPU_REQUEST_NULL);
      RANK_CHECK(out == run * 30 + 0 + 1 + 2);
    }
    // Waitany over inactive persistent requests and a null one: nothing to wait for.
    MPIGPU_Request two[2] = {req, MPIGPU_REQUEST_NULL};
    int index = 0;
    API_OK(MPIGPU_Waitany(2, two, &index, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(index == MPIGPU_UNDEFINED && two[0] == req);
    // Waitany with one active: that one completes, and stays valid.
    in = 1;
    API_OK(MPIGPU_Start(&two[0]));
    API_OK(MPIGPU_Waitany(2, two, &index, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(index == 0 && two[0] == req && out == 3);
    API_OK(MPIGPU_Request_free(&req));
    RANK_CHECK(req == MPIGPU_REQUEST_NULL);
  });
  EXPECT_EQ(r, "");
}

// Like MPICH's p_order: two persistent collectives started in different orders on different
// ranks (the inits came in the same order).
TEST(ApiPersistentCollTest, StartsInDifferentOrdersOnDifferentRanks) {
  std::string r = RunApiJob(4, [](int rank) {
    int a = -1, b = -1;
    MPIGPU_Request req[3];
    API_OK(MPIGPU_Bcast_init(&a, kHost, 1, MPIGPU_INT, 0, kWorld, kNoInfo, &req[0]));
    API_OK(MPIGPU_Barrier_init(kWorld, kNoInfo, &req[1]));
    API_OK(MPIGPU_Bcast_init(&b, kHost, 1, MPIGPU_INT, 3, kWorld, kNoInfo, &req[2]));
    for (int run = 0; run < 5; ++run) {
      if (rank == 0) a = 42 + run;
      if (rank == 3) b = 77 + run;
      if (rank % 2 == 0) {
        for (int k = 0; k < 3; ++k) API_OK(MPIGPU_Start(&req[k]));
      } else {
        for (int k = 2; k >= 0; --k) API_OK(MPIGPU_Start(&req[k]));
      }
      API_OK(MPIGPU_Waitall(3, req, MPIGPU_STATUSES_IGNORE));
      RANK_CHECK(a == 42 + run && b == 77 + run);
    }
    for (auto& q : req) API_OK(MPIGPU_Request_free(&q));
  });
  EXPECT_EQ(r, "");
}

// Freeing an active persistent request: it still completes (the peers' runs finish), unseen.
TEST(ApiPersistentCollTest, FreeWhileActiveCompletesOnItsOwn) {
  std::string r = RunApiJob(3, [](int rank) {
    std::vector<int> in(1000, rank + 1), out(1000, 0);
    MPIGPU_Request req;
    API_OK(MPIGPU_Allreduce_init(in.data(), kHost, out.data(), kHost, 1000, MPIGPU_INT,
                                 MPIGPU_SUM, kWorld, kNoInfo, &req));
    API_OK(MPIGPU_Start(&req));
    API_OK(MPIGPU_Request_free(&req));
    RANK_CHECK(req == MPIGPU_REQUEST_NULL);
    // A blocking collective after it: progress completes the freed run first on every rank.
    API_OK(MPIGPU_Barrier(kWorld));
    int one = 1, total = 0;
    API_OK(MPIGPU_Allreduce(&one, kHost, &total, kHost, 1, MPIGPU_INT, MPIGPU_SUM, kWorld));
    RANK_CHECK(total == 3);
    RANK_CHECK(out[0] == 6 && out[999] == 6);
  });
  EXPECT_EQ(r, "");
}

void MaxOfInts(void* in, void* inout, int* len, MPIGPU_Datatype*) {
  for (int i = 0; i < *len; ++i)
    static_cast<int*>(inout)[i] = std::max(static_cast<int*>(inout)[i], static_cast<int*>(in)[i]);
}

// MPI lets the program free a derived datatype or a user op once the init call returned: the
// request keeps its own. A new type made after the free (which may take the freed handle)
// changes nothing: every run still gathers every other int of each rank's send buffer, a strided
// allreduce still adds the right elements, and a freed user op still reduces.
TEST(ApiPersistentCollTest, TypesAndOpsFreedAfterInitStillDescribeTheData) {
  std::string r = RunApiJob(3, [](int rank) {
    const int n = 3, cnt = 4;
    MPIGPU_Datatype every_other, other;
    API_OK(MPIGPU_Type_vector(cnt, 1, 2, MPIGPU_INT, &every_other));
    API_OK(MPIGPU_Type_commit(&every_other));
    std::vector<int> send(2 * cnt), all(n * cnt), red(2 * cnt), mx(2 * cnt);
    MPIGPU_Request q[3];
    MPIGPU_Op maxop;
    API_OK(MPIGPU_Op_create(MaxOfInts, 1, &maxop));
    API_OK(MPIGPU_Allreduce_init(send.data(), kHost, mx.data(), kHost, 2 * cnt, MPIGPU_INT, maxop,
                                 kWorld, kNoInfo, &q[2]));
    API_OK(MPIGPU_Op_free(&maxop));
    API_OK(MPIGPU_Allgather_init(send.data(), kHost, 1, every_other, all.data(), kHost, cnt,
                                 MPIGPU_INT, kWorld, kNoInfo, &q[0]));
    API_OK(MPIGPU_Allreduce_init(send.data(), kHost, red.data(), kHost, 1, every_other,
                                 MPIGPU_SUM, kWorld, kNoInfo, &q[1]));
    API_OK(MPIGPU_Type_free(&every_other));
    API_OK(MPIGPU_Type_contiguous(3, MPIGPU_INT, &other));  // may reuse the freed handle
    API_OK(MPIGPU_Type_commit(&other));
    for (int run = 0; run < 2; ++run) {
      for (int i = 0; i < 2 * cnt; ++i) send[i] = Val(run, rank, i);
      std::fill(all.begin(), all.end(), -1);
      std::fill(red.begin(), red.end(), -1);
      API_OK(MPIGPU_Startall(3, q));
      API_OK(MPIGPU_Waitall(3, q, MPIGPU_STATUSES_IGNORE));
      for (int i = 0; i < 2 * cnt; ++i) RANK_CHECK(mx[i] == Val(run, n - 1, i));
      for (int r = 0; r < n; ++r)
        for (int i = 0; i < cnt; ++i) RANK_CHECK(all[r * cnt + i] == Val(run, r, 2 * i));
      for (int i = 0; i < 2 * cnt; ++i) {
        int sum = 0;
        for (int r = 0; r < n; ++r) sum += Val(run, r, i);
        RANK_CHECK(red[i] == (i % 2 == 0 ? sum : -1));  // the gaps are left alone
      }
    }
    for (auto& x : q) API_OK(MPIGPU_Request_free(&x));
    API_OK(MPIGPU_Type_free(&other));
  });
  EXPECT_EQ(r, "");
}

// The persistent neighborhood collectives on a periodic ring of 3 (neighbours: left, right),
// all five started together, three runs with new data; the arrays given to the init calls are
// overwritten after them (the requests keep copies).
TEST(ApiPersistentCollTest, NeighborhoodCollectivesRestarted) {
  std::string r = RunApiJob(3, [](int rank) {
    const int n = 3, c = 5;
    int dims[1] = {n}, periods[1] = {1};
    MPIGPU_Comm ring;
    API_OK(MPIGPU_Cart_create(kWorld, 1, dims, periods, 0, &ring));
    const int left = (rank + n - 1) % n, right = (rank + 1) % n;
    std::vector<int> mine(c), two(2 * c), a2a(2 * c), ga(2 * c), gv(2 * c + 1), av(2 * c + 1),
        aw(2 * c);
    int counts[2] = {c, c}, gdis[2] = {c + 1, 0}, sdis[2] = {0, c}, rdis[2] = {c + 1, 0};
    MPIGPU_Aint wdis[2] = {0, static_cast<MPIGPU_Aint>(c * sizeof(int))};
    MPIGPU_Datatype types[2] = {MPIGPU_INT, MPIGPU_INT};
    MPIGPU_Request q[5];
    API_OK(MPIGPU_Neighbor_allgather_init(mine.data(), kHost, c, MPIGPU_INT, ga.data(), kHost, c,
                                          MPIGPU_INT, ring, kNoInfo, &q[0]));
    API_OK(MPIGPU_Neighbor_allgatherv_init(mine.data(), kHost, c, MPIGPU_INT, gv.data(), kHost,
                                           counts, gdis, MPIGPU_INT, ring, kNoInfo, &q[1]));
    API_OK(MPIGPU_Neighbor_alltoall_init(two.data(), kHost, c, MPIGPU_INT, a2a.data(), kHost, c,
                                         MPIGPU_INT, ring, kNoInfo, &q[2]));
    API_OK(MPIGPU_Neighbor_alltoallv_init(two.data(), kHost, counts, sdis, MPIGPU_INT, av.data(),
                                          kHost, counts, rdis, MPIGPU_INT, ring, kNoInfo, &q[3]));
    API_OK(MPIGPU_Neighbor_alltoallw_init(two.data(), kHost, counts, wdis, types, aw.data(),
                                          kHost, counts, wdis, types, ring, kNoInfo, &q[4]));
    counts[0] = counts[1] = gdis[0] = rdis[0] = -7;  // the requests hold their own copies
    types[0] = types[1] = MPIGPU_DATATYPE_NULL;
    for (int run = 0; run < 3; ++run) {
      for (int i = 0; i < c; ++i) mine[i] = Val(run, rank, i);
      for (int i = 0; i < 2 * c; ++i) two[i] = Val(run, rank, 50 + i);
      for (auto* v : {&ga, &gv, &a2a, &av, &aw}) std::fill(v->begin(), v->end(), -1);
      API_OK(MPIGPU_Startall(5, q));
      API_OK(MPIGPU_Waitall(5, q, MPIGPU_STATUSES_IGNORE));
      for (int i = 0; i < c; ++i) {
        RANK_CHECK(ga[i] == Val(run, left, i) && ga[c + i] == Val(run, right, i));
        // v form: the left block at c + 1, the right one at 0.
        RANK_CHECK(gv[c + 1 + i] == Val(run, left, i) && gv[i] == Val(run, right, i));
        // Block 0 goes left, block 1 right: from the left its block 1, from the right block 0.
        const int from_left = Val(run, left, 50 + c + i), from_right = Val(run, right, 50 + i);
        RANK_CHECK(a2a[i] == from_left && a2a[c + i] == from_right);
        RANK_CHECK(av[c + 1 + i] == from_left && av[i] == from_right);
        RANK_CHECK(aw[i] == from_left && aw[c + i] == from_right);
      }
      RANK_CHECK(gv[c] == -1 && av[c] == -1);  // the gap stays
    }
    for (auto& x : q) API_OK(MPIGPU_Request_free(&x));
    API_OK(MPIGPU_Comm_free(&ring));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiPersistentCollTest, ErrorsAreClearAndLeaveTheJobInStep) {
  std::string r = RunApiJob(2, [](int rank) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    int a = 0, b = 0;
    MPIGPU_Request req = reinterpret_cast<MPIGPU_Request>(1);
    // Argument errors at init: no request.
    API_FAILS(MPIGPU_ERR_ROOT, MPIGPU_Bcast_init(&a, kHost, 1, MPIGPU_INT, 2, kWorld, kNoInfo,
                                                 &req));
    RANK_CHECK(req == MPIGPU_REQUEST_NULL);
    API_FAILS(MPIGPU_ERR_TYPE, MPIGPU_Bcast_init(&a, kHost, 1, 999, 0, kWorld, kNoInfo, &req));
    API_FAILS(MPIGPU_ERR_OP, MPIGPU_Allreduce_init(&a, kHost, &b, kHost, 1, MPIGPU_INT, 12345,
                                                   kWorld, kNoInfo, &req));
    API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Barrier_init(77, kNoInfo, &req));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Barrier_init(kWorld, kNoInfo, nullptr));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Reduce_scatter_init(&a, kHost, &b, kHost, nullptr,
                                                         MPIGPU_INT, MPIGPU_SUM, kWorld,
                                                         kNoInfo, &req));
    // Start: not persistent, already active, stale, bad array.
    MPIGPU_Request nb;
    API_OK(MPIGPU_Ibarrier(kWorld, &nb));
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Start(&nb));
    API_OK(MPIGPU_Wait(&nb, MPIGPU_STATUS_IGNORE));
    API_OK(MPIGPU_Barrier_init(kWorld, kNoInfo, &req));
    API_OK(MPIGPU_Start(&req));
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Start(&req));
    MPIGPU_Request pair[2] = {req, req};
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Startall(2, pair));  // the first is active
    API_OK(MPIGPU_Wait(&req, MPIGPU_STATUS_IGNORE));
    MPIGPU_Request stale = req;
    API_OK(MPIGPU_Request_free(&req));
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Start(&stale));
    API_FAILS(MPIGPU_ERR_COUNT, MPIGPU_Startall(-1, pair));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Startall(1, nullptr));
    API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Start(nullptr));
    // The job is still in step.
    int one = 1, total = 0;
    API_OK(MPIGPU_Allreduce(&one, kHost, &total, kHost, 1, MPIGPU_INT, MPIGPU_SUM, kWorld));
    RANK_CHECK(total == 2);
    (void)rank;
  });
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

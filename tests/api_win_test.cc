// One-sided communication through mpigpu.h in forked ranks (2, 3 and 4): every operation and
// every synchronisation mode with the bytes checked, sizes around the eager limit (64 KiB) and
// the header message (4 KiB), host windows; the error classes of bad calls; a target that dies
// during a passive epoch.
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "tests/api_test_util.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;
const size_t kSizes[] = {1, 1000, 4056, 4057, 65535, 65536, 65537, 3u << 20};

unsigned char Pat(int rank, size_t i, int round = 0) {
  return static_cast<unsigned char>(rank * 31 + i * 7 + round * 13 + 1);
}

int Size() {
  int n = 0;
  API_OK(MPIGPU_Comm_size(kWorld, &n));
  return n;
}

// Each rank puts into its right neighbour and gets from its left one, fence-separated.
void PutGetFence(int rank) {
  const int n = Size(), right = (rank + 1) % n, left = (rank + n - 1) % n;
  for (size_t s : kSizes) {
    std::vector<unsigned char> mem(s, 0), src(s), back(s, 0);
    for (size_t i = 0; i < s; ++i) src[i] = Pat(rank, i);
    MPIGPU_Win win;
    API_OK(MPIGPU_Win_create(mem.data(), MPIGPU_BUF_HOST, s, 1, MPIGPU_INFO_NULL, kWorld, &win));
    API_OK(MPIGPU_Win_fence(0, win));
    API_OK(MPIGPU_Put(src.data(), MPIGPU_BUF_HOST, static_cast<int>(s), MPIGPU_BYTE, right, 0,
                      static_cast<int>(s), MPIGPU_BYTE, win));
    API_OK(MPIGPU_Win_fence(0, win));
    for (size_t i = 0; i < s; ++i) RANK_CHECK(mem[i] == Pat(left, i));
    API_OK(MPIGPU_Get(back.data(), MPIGPU_BUF_HOST, static_cast<int>(s), MPIGPU_BYTE, left, 0,
                      static_cast<int>(s), MPIGPU_BYTE, win));
    API_OK(MPIGPU_Win_fence(MPIGPU_MODE_NOSUCCEED, win));
    // left's window holds what left-of-left put there.
    for (size_t i = 0; i < s; ++i) RANK_CHECK(back[i] == Pat((left + n - 1) % n, i));
    API_OK(MPIGPU_Win_free(&win));
    RANK_CHECK(win == MPIGPU_WIN_NULL);
  }
}

TEST(ApiWinTest, PutAndGetWithFenceMoveEveryByte) {
  for (int n : {2, 3, 4}) EXPECT_EQ(RunApiJob(n, PutGetFence, 120), "") << n << " ranks";
}

// Exclusive locks exclude: every rank adds 1 to rank 0's counter by get + put under the lock.
TEST(ApiWinTest, ExclusiveLockSerialisesReadModifyWrite) {
  for (int n : {2, 4}) {
    EXPECT_EQ(RunApiJob(n, [](int rank) {
      int64_t* base = nullptr;
      MPIGPU_Win win;
      API_OK(MPIGPU_Win_allocate(sizeof(int64_t), sizeof(int64_t), MPIGPU_BUF_HOST,
                                 MPIGPU_INFO_NULL, kWorld, &base, &win));
      *base = 0;
      API_OK(MPIGPU_Barrier(kWorld));
      for (int k = 0; k < 20; ++k) {
        int64_t v = 0;
        API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_EXCLUSIVE, 0, 0, win));
        API_OK(MPIGPU_Get(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT64_T, 0, 0, 1, MPIGPU_INT64_T, win));
        API_OK(MPIGPU_Win_flush(0, win));
        ++v;
        API_OK(MPIGPU_Put(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT64_T, 0, 0, 1, MPIGPU_INT64_T, win));
        API_OK(MPIGPU_Win_unlock(0, win));
      }
      API_OK(MPIGPU_Barrier(kWorld));
      if (rank == 0) RANK_CHECK(*base == 20 * Size());
      API_OK(MPIGPU_Win_free(&win));
    }), "");
  }
}

// Accumulates from every rank (sizes around the header and eager limits), atomics, and
// Get_accumulate with NO_OP, under shared locks and lock_all.
TEST(ApiWinTest, AccumulatesAndAtomicsCombineEveryRank) {
  for (int n : {2, 3}) {
    EXPECT_EQ(RunApiJob(n, [](int rank) {
      const int np = Size();
      for (int count : {1, 600, 16384, 20000}) {
        std::vector<int32_t> mem(count + 2, 0), src(count);
        for (int i = 0; i < count; ++i) src[i] = i + rank;
        MPIGPU_Win win;
        API_OK(MPIGPU_Win_create(mem.data(), MPIGPU_BUF_HOST, mem.size() * 4, 4, MPIGPU_INFO_NULL,
                                 kWorld, &win));
        API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_SHARED, 0, 0, win));
        API_OK(MPIGPU_Accumulate(src.data(), MPIGPU_BUF_HOST, count, MPIGPU_INT, 0, 2, count,
                                 MPIGPU_INT, MPIGPU_SUM, win));
        int32_t one = 1, old = -1;
        API_OK(MPIGPU_Fetch_and_op(&one, MPIGPU_BUF_HOST, &old, MPIGPU_BUF_HOST, MPIGPU_INT, 0, 0,
                                   MPIGPU_SUM, win));
        API_OK(MPIGPU_Win_unlock(0, win));
        RANK_CHECK(old >= 0 && old < np);
        API_OK(MPIGPU_Barrier(kWorld));
        if (rank == 0) {
          RANK_CHECK(mem[0] == np);
          for (int i = 0; i < count; ++i) RANK_CHECK(mem[2 + i] == np * i + np * (np - 1) / 2);
        }
        API_OK(MPIGPU_Barrier(kWorld));
        // Compare_and_swap: exactly one rank swaps 0 -> rank + 100 into word 1.
        API_OK(MPIGPU_Win_lock_all(0, win));
        int32_t mine = rank + 100, cmp = 0, got = -1;
        API_OK(MPIGPU_Compare_and_swap(&mine, MPIGPU_BUF_HOST, &cmp, MPIGPU_BUF_HOST, &got,
                                       MPIGPU_BUF_HOST, MPIGPU_INT, 0, 1, win));
        API_OK(MPIGPU_Win_flush_all(win));
        int32_t now = -1;
        API_OK(MPIGPU_Get_accumulate(nullptr, MPIGPU_BUF_HOST, 0, MPIGPU_INT, &now,
                                     MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 1, 1, MPIGPU_INT,
                                     MPIGPU_NO_OP, win));
        API_OK(MPIGPU_Win_unlock_all(win));
        RANK_CHECK(now >= 100 && now < 100 + np);
        RANK_CHECK(got == 0 ? now == mine : got == now);
        API_OK(MPIGPU_Barrier(kWorld));
        // REPLACE accumulates of one origin to one location apply in order: the last stays.
        if (rank == 1) {
          API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_EXCLUSIVE, 0, 0, win));
          for (int32_t k = 1; k <= 50; ++k)
            API_OK(MPIGPU_Accumulate(&k, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 0, 1, MPIGPU_INT,
                                     MPIGPU_REPLACE, win));
          API_OK(MPIGPU_Win_unlock(0, win));
        }
        API_OK(MPIGPU_Barrier(kWorld));
        if (rank == 0) RANK_CHECK(mem[0] == 50);
        API_OK(MPIGPU_Win_free(&win));
      }
    }), "") << n << " ranks";
  }
}

// Post/start/complete/wait (and Win_test), request-based operations, flush_local, a derived
// target datatype and a dynamic window.
TEST(ApiWinTest, PscwRequestsDerivedTypesAndDynamicWindows) {
  for (int n : {2, 4}) {
    EXPECT_EQ(RunApiJob(n, [](int rank) {
      const int np = Size();
      const size_t s = 70000;
      std::vector<unsigned char> mem(s * np, 0);
      MPIGPU_Win win;
      API_OK(MPIGPU_Win_create(mem.data(), MPIGPU_BUF_HOST, mem.size(), 1, MPIGPU_INFO_NULL,
                               kWorld, &win));
      MPIGPU_Group world, others, zero;
      API_OK(MPIGPU_Comm_group(kWorld, &world));
      int z = 0;
      API_OK(MPIGPU_Group_excl(world, 1, &z, &others));
      API_OK(MPIGPU_Group_incl(world, 1, &z, &zero));
      std::vector<unsigned char> src(s);
      for (size_t i = 0; i < s; ++i) src[i] = Pat(rank, i, 1);
      if (rank == 0) {
        API_OK(MPIGPU_Win_post(others, 0, win));
        int flag = 0;
        while (!flag) API_OK(MPIGPU_Win_test(win, &flag));
        for (int r = 1; r < np; ++r)
          for (size_t i = 0; i < s; ++i) RANK_CHECK(mem[r * s + i] == Pat(r, i, 1));
      } else {
        API_OK(MPIGPU_Win_start(zero, 0, win));
        MPIGPU_Request q;
        API_OK(MPIGPU_Rput(src.data(), MPIGPU_BUF_HOST, static_cast<int>(s), MPIGPU_BYTE, 0,
                           rank * s, static_cast<int>(s), MPIGPU_BYTE, win, &q));
        API_OK(MPIGPU_Wait(&q, MPIGPU_STATUS_IGNORE));
        API_OK(MPIGPU_Win_complete(win));
      }
      API_OK(MPIGPU_Barrier(kWorld));
      // A vector target type: every other int of rank 0's window, then read back with Rget.
      if (rank == 1) {
        MPIGPU_Datatype vec;
        API_OK(MPIGPU_Type_vector(1000, 1, 2, MPIGPU_INT, &vec));
        API_OK(MPIGPU_Type_commit(&vec));
        std::vector<int32_t> v(1000), back(1000, -1);
        for (int i = 0; i < 1000; ++i) v[i] = 5 * i + 3;
        API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_SHARED, 0, 0, win));
        API_OK(MPIGPU_Put(v.data(), MPIGPU_BUF_HOST, 1000, MPIGPU_INT, 0, 0, 1, vec, win));
        API_OK(MPIGPU_Win_flush(0, win));
        MPIGPU_Request q;
        API_OK(MPIGPU_Rget(back.data(), MPIGPU_BUF_HOST, 1000, MPIGPU_INT, 0, 0, 1, vec, win, &q));
        API_OK(MPIGPU_Win_flush_local(0, win));
        API_OK(MPIGPU_Wait(&q, MPIGPU_STATUS_IGNORE));
        API_OK(MPIGPU_Win_unlock(0, win));
        RANK_CHECK(back == v);
        API_OK(MPIGPU_Type_free(&vec));
      }
      API_OK(MPIGPU_Barrier(kWorld));
      if (rank == 0) {
        const int32_t* w = reinterpret_cast<const int32_t*>(mem.data());
        for (int i = 0; i < 1000; ++i) RANK_CHECK(w[2 * i] == 5 * i + 3);
      }
      API_OK(MPIGPU_Win_free(&win));
      // Dynamic: each rank attaches a buffer and publishes its address.
      MPIGPU_Win dyn;
      API_OK(MPIGPU_Win_create_dynamic(MPIGPU_INFO_NULL, kWorld, &dyn));
      std::vector<int64_t> region(100, rank);
      API_OK(MPIGPU_Win_attach(dyn, region.data(), MPIGPU_BUF_HOST, region.size() * 8));
      MPIGPU_Aint mine = 0;
      API_OK(MPIGPU_Get_address(region.data(), &mine));
      std::vector<MPIGPU_Aint> addrs(np);
      API_OK(MPIGPU_Allgather(&mine, MPIGPU_BUF_HOST, 1, MPIGPU_AINT, addrs.data(), MPIGPU_BUF_HOST,
                              1, MPIGPU_AINT, kWorld));
      const int right = (rank + 1) % np;
      int64_t val = 1000 + rank, got = -1;
      API_OK(MPIGPU_Win_lock_all(0, dyn));
      API_OK(MPIGPU_Put(&val, MPIGPU_BUF_HOST, 1, MPIGPU_INT64_T, right, addrs[right] + 8 * 7, 1,
                        MPIGPU_INT64_T, dyn));
      API_OK(MPIGPU_Win_flush(right, dyn));
      API_OK(MPIGPU_Get(&got, MPIGPU_BUF_HOST, 1, MPIGPU_INT64_T, right, addrs[right] + 8 * 7, 1,
                        MPIGPU_INT64_T, dyn));
      API_OK(MPIGPU_Win_unlock_all(dyn));
      RANK_CHECK(got == val);
      API_OK(MPIGPU_Barrier(kWorld));
      RANK_CHECK(region[7] == 1000 + (rank + np - 1) % np);
      API_OK(MPIGPU_Win_detach(dyn, region.data()));
      API_OK(MPIGPU_Win_free(&dyn));
      for (MPIGPU_Group* g : {&world, &others, &zero}) API_OK(MPIGPU_Group_free(g));
    }), "") << n << " ranks";
  }
}

// Bad calls get their class, and the window stays usable.
TEST(ApiWinTest, BadCallsGetTheirErrorClass) {
  EXPECT_EQ(RunApiJob(2, [](int rank) {
    int32_t mem[4] = {0, 0, 0, 0}, v = 1;
    MPIGPU_Win win;
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    API_FAILS(MPIGPU_ERR_WIN, MPIGPU_Win_fence(0, 12345));
    API_FAILS(MPIGPU_ERR_DISP,
              MPIGPU_Win_create(mem, MPIGPU_BUF_HOST, 16, 0, MPIGPU_INFO_NULL, kWorld, &win));
    API_OK(MPIGPU_Win_create(mem, MPIGPU_BUF_HOST, 16, 4, MPIGPU_INFO_NULL, kWorld, &win));
    API_OK(MPIGPU_Win_set_errhandler(win, MPIGPU_ERRORS_RETURN));
    const int peer = 1 - rank;
    // No epoch yet.
    API_FAILS(MPIGPU_ERR_RMA_SYNC,
              MPIGPU_Put(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, peer, 0, 1, MPIGPU_INT, win));
    API_FAILS(MPIGPU_ERR_RMA_SYNC, MPIGPU_Win_unlock(peer, win));
    API_FAILS(MPIGPU_ERR_RMA_SYNC, MPIGPU_Win_flush(peer, win));
    API_FAILS(MPIGPU_ERR_RMA_SYNC, MPIGPU_Win_complete(win));
    API_FAILS(MPIGPU_ERR_LOCKTYPE, MPIGPU_Win_lock(7, peer, 0, win));
    API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_SHARED, peer, 0, win));
    API_FAILS(MPIGPU_ERR_RMA_SYNC, MPIGPU_Win_lock(MPIGPU_LOCK_SHARED, peer, 0, win));
    // Outside the 16-byte window: displacement 4 units of 4 bytes, or one int past the end.
    API_FAILS(MPIGPU_ERR_RMA_RANGE,
              MPIGPU_Put(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, peer, 4, 1, MPIGPU_INT, win));
    API_FAILS(MPIGPU_ERR_RMA_RANGE,
              MPIGPU_Get(mem, MPIGPU_BUF_HOST, 2, MPIGPU_INT, peer, 3, 2, MPIGPU_INT, win));
    API_FAILS(MPIGPU_ERR_RMA_RANGE,
              MPIGPU_Put(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, peer, -1, 1, MPIGPU_INT, win));
    API_FAILS(MPIGPU_ERR_RANK,
              MPIGPU_Put(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 2, 0, 1, MPIGPU_INT, win));
    API_FAILS(MPIGPU_ERR_OP, MPIGPU_Accumulate(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, peer, 0, 1,
                                               MPIGPU_INT, MPIGPU_OP_NULL, win));
    API_FAILS(MPIGPU_ERR_OP, MPIGPU_Accumulate(&v, MPIGPU_BUF_HOST, 1, MPIGPU_FLOAT, peer, 0, 1,
                                               MPIGPU_FLOAT, MPIGPU_BAND, win));
    API_FAILS(MPIGPU_ERR_RMA_SYNC, MPIGPU_Win_free(&win));  // still locked
    // The window still works.
    API_OK(MPIGPU_Put(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, peer, 3, 1, MPIGPU_INT, win));
    API_OK(MPIGPU_Win_unlock(peer, win));
    API_OK(MPIGPU_Barrier(kWorld));
    RANK_CHECK(mem[3] == 1);
    API_FAILS(MPIGPU_ERR_RMA_FLAVOR, MPIGPU_Win_attach(win, mem, MPIGPU_BUF_HOST, 4));
    API_OK(MPIGPU_Win_free(&win));
    API_FAILS(MPIGPU_ERR_WIN, MPIGPU_Win_free(&win));
    // Dynamic windows check at the target: the flush reports what it refused.
    API_OK(MPIGPU_Win_create_dynamic(MPIGPU_INFO_NULL, kWorld, &win));
    API_OK(MPIGPU_Win_set_errhandler(win, MPIGPU_ERRORS_RETURN));
    API_OK(MPIGPU_Win_attach(win, mem, MPIGPU_BUF_HOST, 16));
    API_FAILS(MPIGPU_ERR_RMA_ATTACH, MPIGPU_Win_attach(win, mem + 1, MPIGPU_BUF_HOST, 4));
    API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_SHARED, peer, 0, win));
    API_OK(MPIGPU_Put(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, peer, 8, 1, MPIGPU_INT, win));
    API_FAILS(MPIGPU_ERR_RMA_RANGE, MPIGPU_Win_flush(peer, win));
    API_OK(MPIGPU_Win_unlock(peer, win));
    API_OK(MPIGPU_Barrier(kWorld));
    API_FAILS(MPIGPU_ERR_RMA_ATTACH, MPIGPU_Win_detach(win, mem + 2));
    API_OK(MPIGPU_Win_detach(win, mem));
    API_OK(MPIGPU_Win_free(&win));
  }), "");
}

// A target that dies while an origin holds its lock: the origin's flush and unlock return
// PROC_FAILED instead of waiting. The target is held outside mpigpu (a blocking read) before the
// origin's put, so nothing but its death can end the flush.
TEST(ApiWinTest, TargetDeathDuringPassiveEpochGivesProcFailed) {
  int ready[2], die[2];
  ASSERT_EQ(pipe(ready), 0);
  ASSERT_EQ(pipe(die), 0);
  std::string r = RunJob(
      2,
      [&](int rank) -> int {
        API_OK(MPIGPU_Init(nullptr, nullptr));
        int32_t mem[4] = {0, 0, 0, 0};
        MPIGPU_Win win;
        API_OK(MPIGPU_Win_create(mem, MPIGPU_BUF_HOST, 16, 4, MPIGPU_INFO_NULL, kWorld, &win));
        API_OK(MPIGPU_Win_set_errhandler(win, MPIGPU_ERRORS_RETURN));
        if (rank == 1) {
          API_OK(MPIGPU_Barrier(kWorld));
          RANK_CHECK(write(ready[1], "r", 1) == 1);  // out of mpigpu from here on
          char c = 0;
          RANK_CHECK(read(die[0], &c, 1) == 1);
          kill(getpid(), SIGKILL);
        }
        API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_EXCLUSIVE, 1, 0, win));
        API_OK(MPIGPU_Barrier(kWorld));
        char c = 0;
        RANK_CHECK(read(ready[0], &c, 1) == 1);
        int32_t v = 7;
        API_OK(MPIGPU_Put(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 0, 1, MPIGPU_INT, win));
        RANK_CHECK(write(die[1], "d", 1) == 1);
        API_FAILS(MPIGPU_ERR_PROC_FAILED, MPIGPU_Win_flush(1, win));
        API_FAILS(MPIGPU_ERR_PROC_FAILED, MPIGPU_Win_unlock(1, win));
        _exit(0);  // the window's collective free needs the dead rank
      },
      30, {1});
  for (int fd : {ready[0], ready[1], die[0], die[1]}) close(fd);
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

// MPIGPU_ASYNC_PROGRESS=1 (set for this test): a target that sits in a blocking read, making
// no mpigpu call, still serves its origins' lock, put, flush and unlock; it wakes only when
// every origin says (through a pipe) that its unlock returned, and the origins start only once
// it said (through another) that it left mpigpu. Without the progress thread the
// origins would wait for the target forever (and the job's timeout would fail the test).
#include <unistd.h>

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "tests/api_test_util.h"

namespace mpigpu::testing {
namespace {

TEST(ApiWinProgressTest, SleepingTargetServesLockPutFlushUnlock) {
  for (int n : {2, 3}) {
    int done[2], out[2];
    ASSERT_EQ(pipe(done), 0);
    ASSERT_EQ(pipe(out), 0);
    std::string r = RunApiJob(n, [&](int rank) {
      const size_t s = 100000;  // past the eager limit: rendezvous through the thread too
      std::vector<unsigned char> mem(s * n, 0);
      MPIGPU_Win win;
      API_OK(MPIGPU_Win_create(mem.data(), MPIGPU_BUF_HOST, mem.size(), 1, MPIGPU_INFO_NULL,
                               MPIGPU_COMM_WORLD, &win));
      API_OK(MPIGPU_Barrier(MPIGPU_COMM_WORLD));
      if (rank == 0) {
        // Out of mpigpu from here until every origin is done: the origins start only now.
        for (int k = 1; k < n; ++k) RANK_CHECK(write(out[1], "o", 1) == 1);
        for (int k = 1; k < n; ++k) {
          char c = 0;
          RANK_CHECK(read(done[0], &c, 1) == 1);
        }
        for (int o = 1; o < n; ++o)
          for (size_t i = 0; i < s; ++i)
            RANK_CHECK(mem[o * s + i] == static_cast<unsigned char>(o + i));
      } else {
        char c = 0;
        RANK_CHECK(read(out[0], &c, 1) == 1);
        std::vector<unsigned char> src(s);
        for (size_t i = 0; i < s; ++i) src[i] = static_cast<unsigned char>(rank + i);
        API_OK(MPIGPU_Win_lock(MPIGPU_LOCK_EXCLUSIVE, 0, 0, win));
        API_OK(MPIGPU_Put(src.data(), MPIGPU_BUF_HOST, static_cast<int>(s), MPIGPU_BYTE, 0,
                          rank * s, static_cast<int>(s), MPIGPU_BYTE, win));
        API_OK(MPIGPU_Win_flush(0, win));
        int64_t one = 1, old = 0;
        API_OK(MPIGPU_Fetch_and_op(&one, MPIGPU_BUF_HOST, &old, MPIGPU_BUF_HOST, MPIGPU_INT64_T,
                                   0, 0, MPIGPU_NO_OP, win));
        API_OK(MPIGPU_Win_unlock(0, win));
        RANK_CHECK(write(done[1], "d", 1) == 1);
      }
      API_OK(MPIGPU_Win_free(&win));
    }, 60);
    for (int fd : {done[0], done[1], out[0], out[1]}) close(fd);
    EXPECT_EQ(r, "") << n << " ranks";
  }
}

}  // namespace
}  // namespace mpigpu::testing

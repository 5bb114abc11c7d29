// Request handles of the public API are generation-checked. mpigpu recycles
// its request objects, so a copy of a handle kept after its request completed can name an object
// that now serves a newer request: every call given such a stale handle, a freed one or a forged
// value must return MPIGPU_ERR_REQUEST and leave every real request alone.
//
// The tests read one detail of the handle encoding (mpigpu_api/api_internal.h): the low 32 bits
// of a handle are its object's slot + 1. They use it only to check that the scenario happened
// (a new request reused the stale handle's object), never to build a handle.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "memcopy/pattern.h"
#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/e2e_util.h"
#include "tests/multiproc.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

uint32_t SlotOf(MPIGPU_Request h) {
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(h)) - 1;
}

MPIGPU_Request Forge(uintptr_t v) { return reinterpret_cast<MPIGPU_Request>(v); }

bool Contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// Every completion call given `h` (not null) fails with ERR_REQUEST, leaves `h` as it was and
// blocks nowhere. The error text says `why`.
void EveryCallRefuses(MPIGPU_Request h, const char* why) {
  const MPIGPU_Request before = h;
  MPIGPU_Status st;
  int flag = 7, index = 7;
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Test(&h, &flag, &st));
  RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), why));
  RANK_CHECK(flag == 0 && h == before);
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Wait(&h, &st));
  RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "MPIGPU_Wait"));
  RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), why));
  RANK_CHECK(h == before);
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Request_free(&h));
  RANK_CHECK(h == before);
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Waitall(1, &h, MPIGPU_STATUSES_IGNORE));
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Testall(1, &h, &flag, MPIGPU_STATUSES_IGNORE));
  RANK_CHECK(flag == 0);
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Waitany(1, &h, &index, &st));
  RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "request 0 of the array"));
  RANK_CHECK(h == before);
}

// The scenario: a copy of a handle kept after MPIGPU_Wait; a new receive reuses the
// request object; the stale copy must not reach the new receive, which later completes with
// the right bytes.
TEST(ApiRequestTest, StaleCopyAfterWaitDoesNotTouchTheReceiveThatReusedItsObject) {
  std::string r = RunApiJob(2, [](int rank) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    constexpr int kN = 64;
    std::vector<int> a(kN), b(kN);
    if (rank == 1) {
      FillPattern(a.data(), sizeof(int) * kN, 1);
      FillPattern(b.data(), sizeof(int) * kN, 2);
      API_OK(MPIGPU_Send(a.data(), MPIGPU_BUF_HOST, kN, MPIGPU_INT, 0, 1, kWorld));
      int go = 0;  // the second message only after rank 0 has tried its stale handle
      API_OK(MPIGPU_Recv(&go, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 9, kWorld, MPIGPU_STATUS_IGNORE));
      API_OK(MPIGPU_Send(b.data(), MPIGPU_BUF_HOST, kN, MPIGPU_INT, 0, 2, kWorld));
      int one = 1, sum = 0;
      API_OK(MPIGPU_Allreduce(&one, MPIGPU_BUF_HOST, &sum, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                              MPIGPU_SUM, kWorld));
      RANK_CHECK(sum == 2);
      return;
    }
    MPIGPU_Request first;
    API_OK(MPIGPU_Irecv(a.data(), MPIGPU_BUF_HOST, kN, MPIGPU_INT, 1, 1, kWorld, &first));
    const MPIGPU_Request copy = first;
    API_OK(MPIGPU_Wait(&first, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(first == MPIGPU_REQUEST_NULL);
    RANK_CHECK(FirstMismatch(a.data(), sizeof(int) * kN, 1) == -1);

    std::fill(b.begin(), b.end(), -1);
    MPIGPU_Request second;
    API_OK(MPIGPU_Irecv(b.data(), MPIGPU_BUF_HOST, kN, MPIGPU_INT, 1, MPIGPU_ANY_TAG, kWorld,
                        &second));
    RANK_CHECK(SlotOf(second) == SlotOf(copy));  // the object was reused...
    RANK_CHECK(second != copy);                  // ...under a new handle
    EveryCallRefuses(copy, "is stale");
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "completed or freed"));

    // The new receive is untouched: still pending, then complete with the second message.
    int flag = 1;
    API_OK(MPIGPU_Test(&second, &flag, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(flag == 0 && second != MPIGPU_REQUEST_NULL);
    RANK_CHECK(b[0] == -1 && b[kN - 1] == -1);
    int go = 1;
    API_OK(MPIGPU_Send(&go, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 9, kWorld));
    MPIGPU_Status st;
    API_OK(MPIGPU_Wait(&second, &st));
    RANK_CHECK(second == MPIGPU_REQUEST_NULL);
    RANK_CHECK(st.MPIGPU_SOURCE == 1 && st.MPIGPU_TAG == 2 && st.MPIGPU_ERROR == MPIGPU_SUCCESS);
    int n = -1;
    API_OK(MPIGPU_Get_count(&st, MPIGPU_INT, &n));
    RANK_CHECK(n == kN);
    RANK_CHECK(FirstMismatch(b.data(), sizeof(int) * kN, 2) == -1);
    // Still refused once the object is free again, and after another reuse by a send.
    EveryCallRefuses(copy, "is stale");
    MPIGPU_Request third;
    API_OK(MPIGPU_Isend(a.data(), MPIGPU_BUF_HOST, kN, MPIGPU_INT, 0, 3, kWorld, &third));
    RANK_CHECK(SlotOf(third) == SlotOf(copy) && third != copy);
    EveryCallRefuses(copy, "is stale");
    API_OK(MPIGPU_Recv(b.data(), MPIGPU_BUF_HOST, kN, MPIGPU_INT, 0, 3, kWorld,
                       MPIGPU_STATUS_IGNORE));
    API_OK(MPIGPU_Wait(&third, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(FirstMismatch(b.data(), sizeof(int) * kN, 1) == -1);
    // Collectives (internal requests on the same objects) still work.
    int one = 1, sum = 0;
    API_OK(MPIGPU_Allreduce(&one, MPIGPU_BUF_HOST, &sum, MPIGPU_BUF_HOST, 1, MPIGPU_INT,
                            MPIGPU_SUM, kWorld));
    RANK_CHECK(sum == 2);
  }, 20);
  EXPECT_EQ(r, "");
}

// The same with the default handler: the stale handle ends the job with a clear message rather
// than completing the other request.
TEST(ApiRequestTest, StaleHandleIsFatalByDefaultWithAClearMessage) {
  const std::string log = TempPath("api_stale_fatal");
  std::string r = RunApiJob(1, [&](int) {
    RedirectStderr(log);
    int v = 5, w = 0;
    MPIGPU_Request q;
    API_OK(MPIGPU_Isend(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 0, kWorld, &q));
    const MPIGPU_Request copy = q;
    API_OK(MPIGPU_Recv(&w, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 0, kWorld, MPIGPU_STATUS_IGNORE));
    API_OK(MPIGPU_Wait(&q, MPIGPU_STATUS_IGNORE));
    API_OK(MPIGPU_Irecv(&w, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 1, kWorld, &q));
    MPIGPU_Request stale = copy;
    MPIGPU_Wait(&stale, MPIGPU_STATUS_IGNORE);
    std::fprintf(stderr, "still running after a fatal error\n");
  }, 20);
  EXPECT_EQ(r, "rank 0 exited 1; ");
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("mpigpu: rank 0: MPIGPU_Wait: invalid request (MPIGPU_ERR_REQUEST): "
                      "request handle 0x"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find(" is stale: its request was completed or freed"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("still running"), std::string::npos) << text;
  std::remove(log.c_str());
}

// MPIGPU_Request_free twice (through a copy) is refused: while the freed request is still in
// flight, and after the object of a freed, completed request serves a new one. The freed
// operations still complete, and so does the new one.
TEST(ApiRequestTest, DoubleRequestFreeIsRefused) {
  std::string r = RunApiJob(2, [](int rank) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    const size_t big = size_t{1} << 20;  // rendezvous: in flight until rank 1 receives
    std::vector<unsigned char> a(big), b(big);
    int small[4] = {1, 2, 3, 4};
    if (rank == 1) {
      int go = 0;
      API_OK(MPIGPU_Recv(&go, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 9, kWorld, MPIGPU_STATUS_IGNORE));
      API_OK(MPIGPU_Recv(a.data(), MPIGPU_BUF_HOST, big, MPIGPU_BYTE, 0, 1, kWorld,
                         MPIGPU_STATUS_IGNORE));
      RANK_CHECK(FirstMismatch(a.data(), big, 1) == -1);
      std::fill(small, small + 4, 0);
      API_OK(MPIGPU_Recv(small, MPIGPU_BUF_HOST, 4, MPIGPU_INT, 0, 4, kWorld,
                         MPIGPU_STATUS_IGNORE));
      RANK_CHECK(small[0] == 1 && small[3] == 4);
      FillPattern(b.data(), big, 2);
      API_OK(MPIGPU_Send(b.data(), MPIGPU_BUF_HOST, big, MPIGPU_BYTE, 0, 2, kWorld));
      return;
    }
    // A send in flight (rank 1 has not posted its receive), freed twice.
    FillPattern(a.data(), big, 1);
    MPIGPU_Request q;
    API_OK(MPIGPU_Isend(a.data(), MPIGPU_BUF_HOST, big, MPIGPU_BYTE, 1, 1, kWorld, &q));
    const MPIGPU_Request copy = q;
    API_OK(MPIGPU_Request_free(&q));
    RANK_CHECK(q == MPIGPU_REQUEST_NULL);
    MPIGPU_Request again = copy;
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Request_free(&again));
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "freed with MPIGPU_Request_free"));
    RANK_CHECK(again == copy);
    EveryCallRefuses(copy, "freed with MPIGPU_Request_free");
    // Freeing the null handle that the first free left is refused too (as in MPI).
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Request_free(&q));
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "MPIGPU_REQUEST_NULL"));
    int go = 1;
    API_OK(MPIGPU_Send(&go, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 9, kWorld));

    // An eager send is complete when it starts: freeing it recycles its object at once, and the
    // next request gets that object.
    MPIGPU_Request e;
    API_OK(MPIGPU_Isend(small, MPIGPU_BUF_HOST, 4, MPIGPU_INT, 1, 4, kWorld, &e));
    const MPIGPU_Request ecopy = e;
    API_OK(MPIGPU_Request_free(&e));
    std::fill(b.begin(), b.end(), 0);
    MPIGPU_Request next;
    API_OK(MPIGPU_Irecv(b.data(), MPIGPU_BUF_HOST, big, MPIGPU_BYTE, 1, 2, kWorld, &next));
    RANK_CHECK(SlotOf(next) == SlotOf(ecopy) && next != ecopy);
    again = ecopy;
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Request_free(&again));
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "is stale"));
    EveryCallRefuses(ecopy, "is stale");
    MPIGPU_Status st;
    API_OK(MPIGPU_Wait(&next, &st));
    RANK_CHECK(st.MPIGPU_SOURCE == 1 && st.MPIGPU_TAG == 2);
    RANK_CHECK(FirstMismatch(b.data(), big, 2) == -1);
    // The first freed send has completed by now (rank 1 received it before it sent).
    EveryCallRefuses(copy, "request handle 0x");
  }, 20);
  EXPECT_EQ(r, "");
}

// Forged values (small integers, pointers, a live handle with its generation or slot changed,
// all bits set) are refused by every call without a crash, and the live request they resemble
// is untouched.
TEST(ApiRequestTest, ForgedHandlesAreRefusedWithoutTouchingLiveRequests) {
  std::string r = RunApiJob(2, [](int rank) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    int v = 0;
    if (rank == 1) {
      API_OK(MPIGPU_Recv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 9, kWorld, MPIGPU_STATUS_IGNORE));
      v = 4242;
      API_OK(MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 1, kWorld));
      return;
    }
    MPIGPU_Request live;
    API_OK(MPIGPU_Irecv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 1, kWorld, &live));
    const uintptr_t h = reinterpret_cast<uintptr_t>(live);
    int local = 0;
    std::vector<int> heap(16);
    const uintptr_t forged[] = {
        1,
        2,
        0x100000001ull,
        0xffffffffull,
        ~uintptr_t{0},
        reinterpret_cast<uintptr_t>(&local),
        reinterpret_cast<uintptr_t>(heap.data()),
        reinterpret_cast<uintptr_t>(&EveryCallRefuses),
        h + (uintptr_t{1} << 32),  // the live request's slot, a later generation
        h - (uintptr_t{1} << 32),  // an earlier one (never handed out)
        h + 1,                     // a slot that does not exist
        h ^ (uintptr_t{1} << 63),
        h & 0xffffffffull,  // the slot alone
    };
    for (uintptr_t f : forged) EveryCallRefuses(Forge(f), "request handle 0x");
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "is not a request of this process"));
    // A live handle next to a forged one in an array: the call fails up front, the live one
    // stays active.
    MPIGPU_Request pair[2] = {live, Forge(h + (uintptr_t{1} << 32))};
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Waitall(2, pair, MPIGPU_STATUSES_IGNORE));
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "request 1 of the array"));
    RANK_CHECK(pair[0] == live);
    // The same handle twice is refused as before.
    MPIGPU_Request twice[2] = {live, live};
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Waitall(2, twice, MPIGPU_STATUSES_IGNORE));
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "appears twice"));
    // The live request completes normally.
    int go = 1;
    API_OK(MPIGPU_Send(&go, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 9, kWorld));
    MPIGPU_Status st;
    API_OK(MPIGPU_Wait(&live, &st));
    RANK_CHECK(v == 4242 && st.MPIGPU_SOURCE == 1 && st.MPIGPU_TAG == 1);
    // MPIGPU_REQUEST_NULL is unchanged: Wait returns at once with an empty status.
    MPIGPU_Request null = MPIGPU_REQUEST_NULL;
    st.MPIGPU_SOURCE = 77;
    API_OK(MPIGPU_Wait(&null, &st));
    RANK_CHECK(st.MPIGPU_SOURCE == MPIGPU_ANY_SOURCE && st.MPIGPU_TAG == MPIGPU_ANY_TAG);
    RANK_CHECK(st.MPIGPU_ERROR == MPIGPU_SUCCESS);
    int n = -1;
    API_OK(MPIGPU_Get_count(&st, MPIGPU_INT, &n));
    RANK_CHECK(n == 0);
    int flag = 0;
    API_OK(MPIGPU_Test(&null, &flag, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(flag == 1);
  }, 20);
  EXPECT_EQ(r, "");
}

// Waitall, Testall and Waitany with one stale handle among good ones: the call fails with
// ERR_REQUEST (naming the stale one's index) before it waits for or completes anything; the
// good requests stay active, the array and statuses unchanged, and a later Waitall of the good
// ones completes them with the right bytes. The stale handle's object serves one of the good
// requests, the case a pointer check would miss.
TEST(ApiRequestTest, WaitallWithOneStaleHandleLeavesTheGoodOnesActive) {
  std::string r = RunApiJob(2, [](int rank) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    constexpr int kMsgs = 3, kN = 32;
    std::vector<std::vector<int>> bufs(kMsgs, std::vector<int>(kN));
    int x = 0;
    if (rank == 1) {
      API_OK(MPIGPU_Send(&x, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 0, kWorld));
      for (int i = 0; i < kMsgs; ++i) {  // eager: they arrive before rank 0 waits
        FillPattern(bufs[i].data(), sizeof(int) * kN, 10 + i);
        API_OK(MPIGPU_Send(bufs[i].data(), MPIGPU_BUF_HOST, kN, MPIGPU_INT, 0, 10 + i, kWorld));
      }
      API_OK(MPIGPU_Barrier(kWorld));
      return;
    }
    MPIGPU_Request old;
    API_OK(MPIGPU_Irecv(&x, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 0, kWorld, &old));
    const MPIGPU_Request stale = old;
    API_OK(MPIGPU_Wait(&old, MPIGPU_STATUS_IGNORE));
    MPIGPU_Request good[kMsgs];
    for (int i = 0; i < kMsgs; ++i) {
      std::fill(bufs[i].begin(), bufs[i].end(), -1);
      API_OK(MPIGPU_Irecv(bufs[i].data(), MPIGPU_BUF_HOST, kN, MPIGPU_INT, 1, 10 + i, kWorld,
                          &good[i]));
    }
    RANK_CHECK(SlotOf(good[0]) == SlotOf(stale) && good[0] != stale);
    API_OK(MPIGPU_Barrier(kWorld));  // rank 1's messages have been sent
    MPIGPU_Request arr[kMsgs + 1] = {good[0], stale, good[1], good[2]};
    MPIGPU_Status sts[kMsgs + 1];
    std::memset(sts, 0x5a, sizeof sts);
    MPIGPU_Status untouched;
    std::memset(&untouched, 0x5a, sizeof untouched);
    auto unchanged = [&] {
      RANK_CHECK(arr[0] == good[0] && arr[1] == stale && arr[2] == good[1] && arr[3] == good[2]);
      for (const MPIGPU_Status& s : sts) RANK_CHECK(std::memcmp(&s, &untouched, sizeof s) == 0);
    };
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Waitall(kMsgs + 1, arr, sts));
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "MPIGPU_Waitall: request 1 of the array"));
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "is stale"));
    unchanged();
    int flag = 7;
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Testall(kMsgs + 1, arr, &flag, sts));
    RANK_CHECK(flag == 0);
    unchanged();
    int index = 7;
    API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Waitany(kMsgs + 1, arr, &index, &sts[0]));
    RANK_CHECK(Contains(ErrorText(MPIGPU_ERR_REQUEST), "request 1 of the array"));
    unchanged();
    // The good handles are still valid (a failed call that had completed them would have made
    // them stale) and complete now.
    MPIGPU_Status st[kMsgs];
    API_OK(MPIGPU_Waitall(kMsgs, good, st));
    for (int i = 0; i < kMsgs; ++i) {
      RANK_CHECK(good[i] == MPIGPU_REQUEST_NULL);
      RANK_CHECK(FirstMismatch(bufs[i].data(), sizeof(int) * kN, 10 + i) == -1);
    }
    EveryCallRefuses(stale, "is stale");
  }, 20);
  EXPECT_EQ(r, "");
}

// Two threads wait on copies of one handle: one completes the request, the other gets
// ERR_REQUEST (the handle went stale while it waited) and does not complete the object a second
// time: two requests posted afterwards get two different objects.
TEST(ApiRequestTest, ConcurrentWaitsOnCopiesOfOneHandle) {
  std::string r = RunApiJob(2, [](int rank) {
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    int v = 0;
    if (rank == 1) {
      API_OK(MPIGPU_Recv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 9, kWorld, MPIGPU_STATUS_IGNORE));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both threads wait
      v = 31;
      API_OK(MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 1, kWorld));
      API_OK(MPIGPU_Barrier(kWorld));
      return;
    }
    MPIGPU_Request q;
    API_OK(MPIGPU_Irecv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 1, kWorld, &q));
    MPIGPU_Request copies[2] = {q, q};
    std::atomic<int> rcs[2] = {{-1}, {-1}};
    std::thread t0([&] { rcs[0] = MPIGPU_Wait(&copies[0], MPIGPU_STATUS_IGNORE); });
    std::thread t1([&] { rcs[1] = MPIGPU_Wait(&copies[1], MPIGPU_STATUS_IGNORE); });
    int go = 1;
    API_OK(MPIGPU_Send(&go, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 9, kWorld));
    t0.join();
    t1.join();
    RANK_CHECK((rcs[0] == MPIGPU_SUCCESS) != (rcs[1] == MPIGPU_SUCCESS));
    RANK_CHECK(rcs[0] == MPIGPU_ERR_REQUEST || rcs[1] == MPIGPU_ERR_REQUEST);
    RANK_CHECK(v == 31);
    API_OK(MPIGPU_Barrier(kWorld));
    MPIGPU_Request x, y;
    int a = 0, b = 0;
    API_OK(MPIGPU_Irecv(&a, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 5, kWorld, &x));
    API_OK(MPIGPU_Irecv(&b, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 6, kWorld, &y));
    RANK_CHECK(SlotOf(x) != SlotOf(y));
    int p = 5, s = 6;
    API_OK(MPIGPU_Send(&p, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 5, kWorld));
    API_OK(MPIGPU_Send(&s, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 6, kWorld));
    MPIGPU_Request both[2] = {x, y};
    API_OK(MPIGPU_Waitall(2, both, MPIGPU_STATUSES_IGNORE));
    RANK_CHECK(a == 5 && b == 6);
  }, 20);
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::testing

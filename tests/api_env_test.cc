// The public API's environment and error handling: every bad input gives its class in
// ERRORS_RETURN mode and sends nothing; the fatal default ends the process with status 1 and a
// message; calls before Init and after Finalize; a one-rank job without the launcher; Finalize
// with requests still pending.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "memcopy/memcopy.h"
#include "mpigpu_api/mpigpu.h"
#include "tests/api_test_util.h"
#include "tests/multiproc.h"
#include "memcopy/pattern.h"

namespace mpigpu::testing {
namespace {

constexpr MPIGPU_Comm kWorld = MPIGPU_COMM_WORLD;

// In a child: behave as a program started without mpigpurun.
void ForgetLauncher() {
  for (const char* v : {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_LOCAL_RANK", "MPIGPU_LOCAL_SIZE",
                        "MPIGPU_JOBID"})
    unsetenv(v);
}

// Rank 0 makes every bad call; none may send anything: the first message rank 1 receives is
// the good one that follows, and nothing else arrives.
void BadCalls() {
  API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
  int v[4] = {1, 2, 3, 4};
  const int tag_ub = MPIGPU_TAG_UB;
  MPIGPU_Request q = MPIGPU_REQUEST_NULL;
  MPIGPU_Status st;
  // rank
  API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 5, 0, kWorld));
  RANK_CHECK(ErrorText(MPIGPU_ERR_RANK).find("MPIGPU_Send: rank 5 is not in communicator of "
                                             "size 2") != std::string::npos);
  API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, -7, 0, kWorld));
  API_FAILS(MPIGPU_ERR_RANK,
            MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, MPIGPU_ANY_SOURCE, 0, kWorld));
  API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Isend(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 2, 0, kWorld, &q));
  RANK_CHECK(q == MPIGPU_REQUEST_NULL);
  API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Recv(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 2, 0, kWorld, &st));
  API_FAILS(MPIGPU_ERR_RANK, MPIGPU_Probe(9, 0, kWorld, &st));
  // count
  API_FAILS(MPIGPU_ERR_COUNT, MPIGPU_Send(v, MPIGPU_BUF_HOST, -1, MPIGPU_INT, 1, 0, kWorld));
  API_FAILS(MPIGPU_ERR_COUNT, MPIGPU_Irecv(v, MPIGPU_BUF_HOST, -3, MPIGPU_INT, 1, 0, kWorld, &q));
  // tag
  API_FAILS(MPIGPU_ERR_TAG,
            MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, tag_ub + 1, kWorld));
  API_FAILS(MPIGPU_ERR_TAG,
            MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, MPIGPU_ANY_TAG, kWorld));
  API_FAILS(MPIGPU_ERR_TAG, MPIGPU_Recv(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, -5, kWorld, &st));
  // datatype: unknown, null, uncommitted, freed
  API_FAILS(MPIGPU_ERR_TYPE, MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, 9999, 1, 0, kWorld));
  API_FAILS(MPIGPU_ERR_TYPE,
            MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, MPIGPU_DATATYPE_NULL, 1, 0, kWorld));
  MPIGPU_Datatype vec, freed;
  API_OK(MPIGPU_Type_vector(2, 1, 2, MPIGPU_INT, &vec));
  API_FAILS(MPIGPU_ERR_TYPE, MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, vec, 1, 0, kWorld));
  API_OK(MPIGPU_Type_contiguous(2, MPIGPU_INT, &freed));
  API_OK(MPIGPU_Type_commit(&freed));
  const MPIGPU_Datatype stale = freed;
  API_OK(MPIGPU_Type_free(&freed));
  API_FAILS(MPIGPU_ERR_TYPE, MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, stale, 1, 0, kWorld));
  // buffer type and pointer
  API_FAILS(MPIGPU_ERR_BUFFER, MPIGPU_Send(v, 7, 1, MPIGPU_INT, 1, 0, kWorld));
  API_FAILS(MPIGPU_ERR_BUFFER, MPIGPU_Send(v, -1, 1, MPIGPU_INT, 1, 0, kWorld));
  API_FAILS(MPIGPU_ERR_BUFFER, MPIGPU_Send(v, MPIGPU_BUF_GPU_DEVICE(MPIGPU_BUF_MAX_DEVICES), 1,
                                           MPIGPU_INT, 1, 0, kWorld));
  API_FAILS(MPIGPU_ERR_BUFFER, MPIGPU_Send(nullptr, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 0, kWorld));
  API_FAILS(MPIGPU_ERR_BUFFER,
            MPIGPU_Recv(nullptr, MPIGPU_BUF_HOST, 2, MPIGPU_INT, 1, 0, kWorld, &st));
  const int ndev = CudaDeviceCount();
  if (ndev == 0) {
    API_FAILS(MPIGPU_ERR_NO_GPU, MPIGPU_Send(v, MPIGPU_BUF_GPU, 1, MPIGPU_INT, 1, 0, kWorld));
    API_FAILS(MPIGPU_ERR_NO_GPU,
              MPIGPU_Send(v, MPIGPU_BUF_GPU_DEVICE(0), 1, MPIGPU_INT, 1, 0, kWorld));
  } else {
    API_FAILS(MPIGPU_ERR_BUFFER,
              MPIGPU_Send(v, MPIGPU_BUF_GPU_DEVICE(ndev), 1, MPIGPU_INT, 1, 0, kWorld));
  }
  // communicator
  API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 0, 12345));
  API_FAILS(MPIGPU_ERR_COMM,
            MPIGPU_Send(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 0, MPIGPU_COMM_NULL));
  API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Barrier(-17));
  int x = 0;
  API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Comm_rank(999, &x));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Comm_size(kWorld, nullptr));
  MPIGPU_Comm world = kWorld;
  API_FAILS(MPIGPU_ERR_COMM, MPIGPU_Comm_free(&world));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Comm_set_errhandler(kWorld, -5));
  // Sendrecv validates both halves before sending anything.
  API_FAILS(MPIGPU_ERR_TAG, MPIGPU_Sendrecv(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 0, v + 1,
                                            MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, -9, kWorld, &st));
  // requests and completion
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Isend(v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 0, kWorld, nullptr));
  MPIGPU_Request bogus = reinterpret_cast<MPIGPU_Request>(v);
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Wait(&bogus, &st));
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Waitall(1, &bogus, MPIGPU_STATUSES_IGNORE));
  API_FAILS(MPIGPU_ERR_COUNT, MPIGPU_Waitall(-1, &bogus, MPIGPU_STATUSES_IGNORE));
  int flag = 0;
  API_FAILS(MPIGPU_ERR_REQUEST, MPIGPU_Test(&bogus, &flag, &st));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Iprobe(1, 0, kWorld, nullptr, &st));
  API_FAILS(MPIGPU_ERR_TYPE, MPIGPU_Get_count(&st, 4242, &x));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Get_count(nullptr, MPIGPU_INT, &x));
  // collectives (argument errors are found before any message moves)
  int out[4];
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Allreduce(v, MPIGPU_BUF_HOST, out, MPIGPU_BUF_HOST, 4,
                                            MPIGPU_INT, 99, kWorld));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Reduce(v, MPIGPU_BUF_HOST, out, MPIGPU_BUF_HOST, 4, MPIGPU_INT,
                                         MPIGPU_OP_NULL, 0, kWorld));
  API_FAILS(MPIGPU_ERR_TYPE, MPIGPU_Allreduce(v, MPIGPU_BUF_HOST, out, MPIGPU_BUF_HOST, 2, 4242,
                                              MPIGPU_SUM, kWorld));
  API_FAILS(MPIGPU_ERR_OP, MPIGPU_Allreduce(v, MPIGPU_BUF_HOST, out, MPIGPU_BUF_HOST, 2,
                                            MPIGPU_FLOAT, MPIGPU_BXOR, kWorld));
  API_FAILS(MPIGPU_ERR_ROOT, MPIGPU_Reduce(v, MPIGPU_BUF_HOST, out, MPIGPU_BUF_HOST, 4,
                                           MPIGPU_INT, MPIGPU_SUM, 2, kWorld));
  API_FAILS(MPIGPU_ERR_ROOT, MPIGPU_Bcast(v, MPIGPU_BUF_HOST, 4, MPIGPU_INT, -1, kWorld));
  API_FAILS(MPIGPU_ERR_COUNT, MPIGPU_Bcast(v, MPIGPU_BUF_HOST, -4, MPIGPU_INT, 0, kWorld));
  API_FAILS(MPIGPU_ERR_BUFFER,
            MPIGPU_Allreduce(v, 3, out, MPIGPU_BUF_HOST, 4, MPIGPU_INT, MPIGPU_SUM, kWorld));
  MPIGPU_Comm nc;
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Comm_split(kWorld, -5, 0, &nc));
  API_FAILS(MPIGPU_ERR_ARG, MPIGPU_Comm_dup(kWorld, nullptr));
}

TEST(ApiEnvTest, BadInputsReturnTheirClassAndSendNothing) {
  std::string r = RunApiJob(2, [](int rank) {
    if (rank == 0) BadCalls();
    int v[4] = {0, 0, 0, 0};
    if (rank == 0) {
      API_OK(MPIGPU_Send(v, MPIGPU_BUF_HOST, 3, MPIGPU_INT, 1, 99, kWorld));
    } else {
      MPIGPU_Status st;
      API_OK(MPIGPU_Recv(v, MPIGPU_BUF_HOST, 4, MPIGPU_INT, MPIGPU_ANY_SOURCE, MPIGPU_ANY_TAG,
                         kWorld, &st));
      RANK_CHECK(st.MPIGPU_TAG == 99 && st.count_bytes == 3 * sizeof(int));
    }
    API_OK(MPIGPU_Barrier(kWorld));
    int flag = 1;
    API_OK(MPIGPU_Iprobe(MPIGPU_ANY_SOURCE, MPIGPU_ANY_TAG, kWorld, &flag, MPIGPU_STATUS_IGNORE));
    RANK_CHECK(flag == 0);
  });
  EXPECT_EQ(r, "");
}

TEST(ApiEnvTest, ErrorsAreFatalByDefault) {
  const std::string log = TempPath("api_fatal");
  std::string r = RunApiJob(1, [&](int) {
    RedirectStderr(log);
    int v = 0;
    MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 5, 0, kWorld);
    std::fprintf(stderr, "still running after a fatal error\n");
  });
  EXPECT_EQ(r, "rank 0 exited 1; ");
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("mpigpu: rank 0: MPIGPU_Send: invalid rank (MPIGPU_ERR_RANK): rank 5 is "
                      "not in communicator of size 1"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("still running"), std::string::npos) << text;
  // A communicator in ERRORS_RETURN mode does not change another one's handler, and a new
  // communicator inherits its parent's.
  r = RunApiJob(1, [&](int) {
    RedirectStderr(log);
    MPIGPU_Comm dup;
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    API_OK(MPIGPU_Comm_dup(kWorld, &dup));
    MPIGPU_Errhandler h = -1;
    API_OK(MPIGPU_Comm_get_errhandler(dup, &h));
    RANK_CHECK(h == MPIGPU_ERRORS_RETURN);
    API_OK(MPIGPU_Comm_set_errhandler(dup, MPIGPU_ERRORS_ARE_FATAL));
    int v = 0;
    API_FAILS(MPIGPU_ERR_TAG, MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, -1, kWorld));
    MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, -1, dup);
    std::fprintf(stderr, "still running after a fatal error\n");
  });
  EXPECT_EQ(r, "rank 0 exited 1; ");
  const std::string text2 = ReadFile(log);
  EXPECT_NE(text2.find("MPIGPU_Send: invalid tag (MPIGPU_ERR_TAG)"), std::string::npos) << text2;
  EXPECT_EQ(text2.find("still running"), std::string::npos) << text2;
  std::remove(log.c_str());
}

TEST(ApiEnvTest, CallsBeforeInitAndAfterFinalize) {
  const std::string log = TempPath("api_before_init");
  // Fatal by default, before Init too.
  std::string r = RunJob(1, [&](int) {
    RedirectStderr(log);
    int rank = 0;
    MPIGPU_Comm_rank(kWorld, &rank);
    return 0;
  });
  EXPECT_EQ(r, "rank 0 exited 1; ");
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("MPIGPU_Comm_rank: mpigpu is not initialized"), std::string::npos) << text;
  EXPECT_NE(text.find("MPIGPU_ERR_NOT_INITIALIZED"), std::string::npos) << text;
  std::remove(log.c_str());

  r = RunJob(1, [](int) {
    ForgetLauncher();
    int flag = -1, v = 0;
    API_OK(MPIGPU_Initialized(&flag));
    RANK_CHECK(flag == 0);
    // WORLD's handler can be chosen before Init.
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED, MPIGPU_Comm_rank(kWorld, &v));
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED,
              MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 0, kWorld));
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED, MPIGPU_Barrier(kWorld));
    MPIGPU_Request q = MPIGPU_REQUEST_NULL;
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED, MPIGPU_Wait(&q, MPIGPU_STATUS_IGNORE));
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED, MPIGPU_Finalize());
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED, MPIGPU_Abort(kWorld, 3));
    API_OK(MPIGPU_Init(nullptr, nullptr));
    API_OK(MPIGPU_Initialized(&flag));
    RANK_CHECK(flag == 1);
    API_FAILS(MPIGPU_ERR_INTERN, MPIGPU_Init(nullptr, nullptr));
    API_OK(MPIGPU_Finalized(&flag));
    RANK_CHECK(flag == 0);
    API_OK(MPIGPU_Finalize());
    API_OK(MPIGPU_Finalized(&flag));
    RANK_CHECK(flag == 1);
    API_OK(MPIGPU_Initialized(&flag));
    RANK_CHECK(flag == 1);
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED,
              MPIGPU_Send(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 0, 0, kWorld));
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED, MPIGPU_Comm_size(kWorld, &v));
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED, MPIGPU_Finalize());
    API_FAILS(MPIGPU_ERR_INTERN, MPIGPU_Init(nullptr, nullptr));
    return 0;
  });
  EXPECT_EQ(r, "");
}

TEST(ApiEnvTest, OneRankJobWithoutLauncher) {
  std::string r = RunJob(1, [](int) {
    ForgetLauncher();
    const double t0 = MPIGPU_Wtime();
    API_OK(MPIGPU_Init(nullptr, nullptr));
    int rank = -1, size = -1;
    API_OK(MPIGPU_Comm_rank(kWorld, &rank));
    API_OK(MPIGPU_Comm_size(kWorld, &size));
    RANK_CHECK(rank == 0 && size == 1);
    API_OK(MPIGPU_Comm_size(MPIGPU_COMM_SELF, &size));
    RANK_CHECK(size == 1);
    // Messages to itself, eager and rendezvous, on WORLD and SELF.
    for (MPIGPU_Comm comm : {kWorld, MPIGPU_COMM_SELF})
      for (size_t n : {size_t{100}, size_t{1} << 20}) {
        std::vector<unsigned char> out(n), in(n, 0);
        FillPattern(out.data(), n, static_cast<uint32_t>(n));
        MPIGPU_Request q;
        API_OK(MPIGPU_Irecv(in.data(), MPIGPU_BUF_HOST, static_cast<int>(n), MPIGPU_BYTE, 0, 1,
                            comm, &q));
        API_OK(MPIGPU_Send(out.data(), MPIGPU_BUF_HOST, static_cast<int>(n), MPIGPU_BYTE, 0, 1,
                           comm));
        API_OK(MPIGPU_Wait(&q, MPIGPU_STATUS_IGNORE));
        RANK_CHECK(FirstMismatch(in.data(), n, static_cast<uint32_t>(n)) == -1);
      }
    int v[3] = {4, 5, 6}, w[3] = {0, 0, 0};
    API_OK(MPIGPU_Barrier(kWorld));
    API_OK(MPIGPU_Bcast(v, MPIGPU_BUF_HOST, 3, MPIGPU_INT, 0, kWorld));
    API_OK(MPIGPU_Allreduce(v, MPIGPU_BUF_HOST, w, MPIGPU_BUF_HOST, 3, MPIGPU_INT, MPIGPU_PROD,
                            MPIGPU_COMM_SELF));
    RANK_CHECK(w[0] == 4 && w[2] == 6);
    RANK_CHECK(MPIGPU_Wtime() >= t0);
    API_OK(MPIGPU_Finalize());
    return 0;
  });
  EXPECT_EQ(r, "");
}

TEST(ApiEnvTest, FinalizeWithPendingRequestsWarnsAndReturns) {
  const std::string log = TempPath("api_pending");
  std::string r = RunJob(2, [&](int rank) {
    setenv("MPIGPU_BOOTSTRAP_TIMEOUT", "3", 1);  // bounds Finalize's wait for the pending work
    API_OK(MPIGPU_Init(nullptr, nullptr));
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    if (rank == 0) {
      RedirectStderr(log);
      static int v = 0;  // outlives the abandoned request
      MPIGPU_Request q;
      API_OK(MPIGPU_Irecv(&v, MPIGPU_BUF_HOST, 1, MPIGPU_INT, 1, 77, kWorld, &q));
    }
    const int rc = MPIGPU_Finalize();
    RANK_CHECK(rc == MPIGPU_SUCCESS || rc == MPIGPU_ERR_OTHER);
    int flag = 0;
    API_OK(MPIGPU_Finalized(&flag));
    RANK_CHECK(flag == 1);
    return 0;
  });
  EXPECT_EQ(r, "");
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("MPIGPU_Finalize: 1 request(s) still pending"), std::string::npos) << text;
  std::remove(log.c_str());
}

// A refused MPIGPU_* value fails MPIGPU_Init itself, with MPIGPU_ERR_ARG and a message
// naming the variable, its value and the allowed range. Before, MPIGPU_LMT_UNITS=1000000 passed
// Init and failed at the first large message, when the pair's ring was made. (The ranks set the
// variables themselves: the configuration is read once per process, after the fork.)
TEST(ApiEnvTest, InitRefusesAnOutOfRangeSetting) {
  std::string r = RunJob(2, [](int) {
    setenv("MPIGPU_LMT_UNITS", "1000000", 1);
    API_OK(MPIGPU_Comm_set_errhandler(kWorld, MPIGPU_ERRORS_RETURN));
    const int rc = MPIGPU_Init(nullptr, nullptr);
    RANK_CHECK(rc == MPIGPU_ERR_ARG);
    const std::string text = ErrorText(rc);
    RANK_CHECK(text.find("MPIGPU_LMT_UNITS='1000000' is out of range (allowed 2..4096)") !=
               std::string::npos);
    int flag = 1;
    API_OK(MPIGPU_Initialized(&flag));
    RANK_CHECK(flag == 0);
    API_FAILS(MPIGPU_ERR_NOT_INITIALIZED, MPIGPU_Barrier(kWorld));
    return 0;
  });
  EXPECT_EQ(r, "");
  // Fatal by default: the process ends with status 1 and says why.
  const std::string log = TempPath("api_bad_config");
  r = RunJob(1, [&](int) {
    RedirectStderr(log);
    setenv("MPIGPU_BOOTSTRAP_TIMEOUT", " -1", 1);
    MPIGPU_Init(nullptr, nullptr);
    std::fprintf(stderr, "still running after a fatal error\n");
    return 0;
  });
  EXPECT_EQ(r, "rank 0 exited 1; ");
  const std::string text = ReadFile(log);
  EXPECT_NE(text.find("MPIGPU_Init: invalid argument (MPIGPU_ERR_ARG)"), std::string::npos) << text;
  EXPECT_NE(text.find("MPIGPU_BOOTSTRAP_TIMEOUT=' -1' is not a number"), std::string::npos) << text;
  EXPECT_NE(text.find("(allowed 1..86400 s)"), std::string::npos) << text;
  EXPECT_EQ(text.find("still running"), std::string::npos) << text;
  std::remove(log.c_str());
}

// MPIGPU_Alloc_mem memory works before Init, carries messages as any host buffer, and
// MPIGPU_Free_mem refuses what it did not hand out.
TEST(ApiEnvTest, AllocMemCarriesMessagesAndFreeMemChecksItsArgument) {
  void* early = nullptr;
  ASSERT_EQ(MPIGPU_Alloc_mem(0, &early), MPIGPU_SUCCESS);
  EXPECT_NE(early, nullptr);
  EXPECT_EQ(MPIGPU_Free_mem(early), MPIGPU_SUCCESS);
  EXPECT_EQ(MPIGPU_Free_mem(early), MPIGPU_ERR_ARG);  // freed already
  int stack = 0;
  EXPECT_EQ(MPIGPU_Free_mem(&stack), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Alloc_mem(16, nullptr), MPIGPU_ERR_ARG);
  EXPECT_EQ(MPIGPU_Free_mem(nullptr), MPIGPU_SUCCESS);
  std::string r = RunApiJob(2, [](int rank) {
    const size_t n = size_t{3} << 20;  // a rendezvous message
    void* buf = nullptr;
    API_OK(MPIGPU_Alloc_mem(n + 1, &buf));
    RANK_CHECK(reinterpret_cast<uintptr_t>(buf) % 4096 == 0);
    unsigned char* p = static_cast<unsigned char*>(buf);
    std::memset(p, 0xEE, n + 1);
    if (rank == 0) {
      FillPattern(p, n, 77);
      API_OK(MPIGPU_Send(p, MPIGPU_BUF_HOST, static_cast<int>(n), MPIGPU_BYTE, 1, 3, kWorld));
    } else {
      API_OK(MPIGPU_Recv(p, MPIGPU_BUF_HOST, static_cast<int>(n), MPIGPU_BYTE, 0, 3, kWorld,
                         MPIGPU_STATUS_IGNORE));
      RANK_CHECK(FirstMismatch(p, n, 77) == -1 && p[n] == 0xEE);
    }
    API_OK(MPIGPU_Free_mem(buf));
  });
  EXPECT_EQ(r, "");
}

TEST(ApiEnvTest, AbortEndsTheProcessWithItsCode) {
  const std::string log = TempPath("api_abort");
  std::string r = RunApiJob(1, [&](int) {
    RedirectStderr(log);
    MPIGPU_Abort(kWorld, 42);
  });
  EXPECT_EQ(r, "rank 0 exited 42; ");
  EXPECT_NE(ReadFile(log).find("MPIGPU_Abort(42) called by rank 0"), std::string::npos);
  std::remove(log.c_str());
}

}  // namespace
}  // namespace mpigpu::testing

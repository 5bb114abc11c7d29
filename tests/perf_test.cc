// perf/: the measuring programs' shared pieces. PERF_API and ApiFailure's text, the launcher's
// environment with its fallbacks, loading NCCL (present or not, the result says which), and a
// cache line's round trip between two CPUs.
#include <sched.h>
#include <stdlib.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <initializer_list>
#include <memory>
#include <string>

#include "mpigpu_api/mpigpu.h"
#include "perf/api_check.h"
#include "perf/cpu_line.h"
#include "perf/launch_env.h"
#include "perf/nccl.h"

namespace mpigpu::perf {
namespace {

Status Call(int rc) {
  PERF_API(rc);
  return Status::Ok();
}

TEST(ApiCheckTest, SuccessPassesAndFailureNamesTheCallAndTheError) {
  EXPECT_TRUE(Call(MPIGPU_SUCCESS).ok());
  const Status st = Call(MPIGPU_ERR_ARG);
  EXPECT_EQ(st.code(), Err::kInternal);
  EXPECT_EQ(st.message(), "rc: " + ApiErrorString(MPIGPU_ERR_ARG));
  EXPECT_FALSE(ApiErrorString(MPIGPU_ERR_ARG).empty());
  EXPECT_EQ(ApiFailure(MPIGPU_ERR_TRUNCATE, "MPIGPU_Recv(x)").message(),
            "MPIGPU_Recv(x): " + ApiErrorString(MPIGPU_ERR_TRUNCATE));
}

// The launcher's variables as given (nullptr: unset), read back through ReadLaunchEnv.
// Order: MPIGPU_RANK, MPIGPU_SIZE, MPIGPU_LOCAL_RANK, MPIGPU_LOCAL_SIZE, LOCAL_RANK.
LaunchEnv ReadWith(std::initializer_list<const char*> values) {
  const char* const names[] = {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_LOCAL_RANK",
                               "MPIGPU_LOCAL_SIZE", "LOCAL_RANK"};
  const char* const* v = values.begin();
  for (const char* name : names) {
    if (*v != nullptr) setenv(name, *v, 1);
    else unsetenv(name);
    ++v;
  }
  const LaunchEnv e = ReadLaunchEnv();
  for (const char* name : names) unsetenv(name);
  return e;
}

// launched, rank, size, local_rank, local_size as one line, for one EXPECT each case.
std::string Text(const LaunchEnv& e) {
  return std::to_string(e.launched) + " " + std::to_string(e.rank) + " " + std::to_string(e.size) +
         " " + std::to_string(e.local_rank) + " " + std::to_string(e.local_size);
}

TEST(LaunchEnvTest, ReadsTheLaunchersVariablesWithTheirFallbacks) {
  // Without a launcher: a one-rank job.
  EXPECT_EQ(Text(ReadWith({nullptr, nullptr, nullptr, nullptr, nullptr})), "0 0 1 0 1");
  // mpigpurun's variables; MPIGPU_LOCAL_RANK comes before LOCAL_RANK.
  EXPECT_EQ(Text(ReadWith({"3", "6", "1", "2", "7"})), "1 3 6 1 2");
  // No MPIGPU_LOCAL_*: LOCAL_RANK, else the rank; the size.
  EXPECT_EQ(Text(ReadWith({"2", "4", nullptr, nullptr, "5"})), "1 2 4 5 4");
  EXPECT_EQ(Text(ReadWith({"2", "4", nullptr, nullptr, nullptr})), "1 2 4 2 4");
  // A value that is not plain digits counts as unset.
  EXPECT_EQ(Text(ReadWith({"2", "4", nullptr, nullptr, "+5"})), "1 2 4 2 4");
}

TEST(NcclTest, LoadsOrSaysWhyAndKeepsNvlsOffUnlessSet) {
  setenv("NCCL_NVLS_ENABLE", "1", 1);
  std::unique_ptr<Nccl> nccl;
  Status st = Nccl::Load(&nccl);
  EXPECT_STREQ(getenv("NCCL_NVLS_ENABLE"), "1");  // the user's setting stays
  unsetenv("NCCL_NVLS_ENABLE");
  st = Nccl::Load(&nccl);
  EXPECT_STREQ(getenv("NCCL_NVLS_ENABLE"), "0");
  if (st.ok()) {
    EXPECT_NE(nccl, nullptr);
  } else {
    EXPECT_EQ(st.code(), Err::kInvalidArg);
    const std::string& m = st.message();
    EXPECT_TRUE(m.rfind("cannot load libnccl.so.2: ", 0) == 0 ||
                m.rfind("libnccl.so.2 lacks ", 0) == 0)
        << m;
  }
}

// Two threads (on CPUs 0 and 1 where this process may use them, else both on CPU 0): a round trip
// takes some time, and a bounded number of trips ends.
TEST(CpuLineTest, TwoThreadsBounceALine) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const int b = CPU_ISSET(0, &allowed) && CPU_ISSET(1, &allowed) ? 1 : 0;
  LineRun run;
  run.warmup = 10;
  run.trips = 2000;
  run.budget_s = 1;
  const double ns = LineRoundTripNs(0, b, run);
  EXPECT_TRUE(std::isfinite(ns) && ns > 0) << ns;
  run.batch = 100;  // the fastest batch's mean
  const double best = LineRoundTripNs(0, b, run);
  EXPECT_TRUE(std::isfinite(best) && best > 0) << best;
}

// An echo that never answers: the pinger gives up at its timeout with NaN and ends the run
// (-1), so that a late echo ends too instead of waiting.
TEST(CpuLineTest, ASilentEchoEndsThePingAtItsTimeout) {
  alignas(64) std::atomic<long> line{0};
  LineRun run;
  run.timeout_s = 0.05;
  EXPECT_TRUE(std::isnan(LinePing(&line, run)));
  EXPECT_EQ(line.load(), -1);
  EXPECT_TRUE(LineEcho(&line, 0.05));  // sees the end at once
  std::atomic<long> quiet{0};
  EXPECT_FALSE(LineEcho(&quiet, 0.05));  // no pinger: the echo's own timeout
}

}  // namespace
}  // namespace mpigpu::perf

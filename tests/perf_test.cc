// perf/: the measuring programs' shared pieces. PERF_API and ApiFailure's text, the launcher's
// environment with its fallbacks, and loading NCCL (present or not, the result says which).
#include <stdlib.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "mpigpu_api/mpigpu.h"
#include "perf/api_check.h"
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

void ClearLaunchVars() {
  for (const char* v : {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_LOCAL_RANK", "MPIGPU_LOCAL_SIZE",
                        "LOCAL_RANK"})
    unsetenv(v);
}

TEST(LaunchEnvTest, WithoutALauncherItIsAOneRankJob) {
  ClearLaunchVars();
  const LaunchEnv e = ReadLaunchEnv();
  EXPECT_FALSE(e.launched);
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.size, 1);
  EXPECT_EQ(e.local_rank, 0);
  EXPECT_EQ(e.local_size, 1);
}

TEST(LaunchEnvTest, ReadsTheLaunchersVariables) {
  ClearLaunchVars();
  setenv("MPIGPU_RANK", "3", 1);
  setenv("MPIGPU_SIZE", "6", 1);
  setenv("MPIGPU_LOCAL_RANK", "1", 1);
  setenv("MPIGPU_LOCAL_SIZE", "2", 1);
  setenv("LOCAL_RANK", "7", 1);  // MPIGPU_LOCAL_RANK comes first
  const LaunchEnv e = ReadLaunchEnv();
  EXPECT_TRUE(e.launched);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.size, 6);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_size, 2);
  ClearLaunchVars();
}

TEST(LaunchEnvTest, LocalNumbersFallBackToLocalRankThenTheJobs) {
  ClearLaunchVars();
  setenv("MPIGPU_RANK", "2", 1);
  setenv("MPIGPU_SIZE", "4", 1);
  setenv("LOCAL_RANK", "5", 1);
  EXPECT_EQ(ReadLaunchEnv().local_rank, 5);
  setenv("LOCAL_RANK", "+5", 1);  // not plain digits: as if unset
  const LaunchEnv e = ReadLaunchEnv();
  EXPECT_EQ(e.local_rank, 2);
  EXPECT_EQ(e.local_size, 4);
  ClearLaunchVars();
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

}  // namespace
}  // namespace mpigpu::perf

// MPIGPU_YIELD: from which polling round a wait gives its CPU away, and the CPUs a job may use.
#include "mpigpu_api/wait_policy.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <cstdlib>

namespace mpigpu::api {
namespace {

TEST(WaitPolicyTest, AutoYieldsEarlyOnlyWhenRanksOutnumberTheJobsCpus) {
  EXPECT_EQ(YieldAfterRounds(YieldMode::kAuto, 4, 2), kRoundsBeforeYield);
  EXPECT_EQ(YieldAfterRounds(YieldMode::kAuto, 2, 2), kRoundsBeforeLateYield);
  EXPECT_EQ(YieldAfterRounds(YieldMode::kAuto, 1, 64), kRoundsBeforeLateYield);
  EXPECT_EQ(YieldAfterRounds(YieldMode::kAuto, 2, 0), kRoundsBeforeYield);  // unknown CPUs
  EXPECT_LT(kRoundsBeforeYield, kRoundsBeforeLateYield);
}

TEST(WaitPolicyTest, OnAndOffOverrideTheCount) {
  EXPECT_EQ(YieldAfterRounds(YieldMode::kOn, 1, 64), kRoundsBeforeYield);
  EXPECT_EQ(YieldAfterRounds(YieldMode::kOff, 64, 1), kNeverYield);
}

TEST(WaitPolicyTest, JobCpusComeFromTheLauncherElseTheAffinityMask) {
  unsetenv("MPIGPU_JOB_CPUS");
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_EQ(JobCpus(), CPU_COUNT(&set));
  setenv("MPIGPU_JOB_CPUS", "3", 1);
  EXPECT_EQ(JobCpus(), 3);
  setenv("MPIGPU_JOB_CPUS", "3x", 1);  // malformed: the mask decides
  EXPECT_EQ(JobCpus(), CPU_COUNT(&set));
  unsetenv("MPIGPU_JOB_CPUS");
}

}  // namespace
}  // namespace mpigpu::api

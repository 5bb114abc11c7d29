// ProcessAlive: the one liveness check (dead peers, a dead creator, stale segments). A zombie,
// which kill(pid, 0) still finds, counts as dead, whatever its command name holds.
#include "memcopy/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace mpigpu {
namespace {

// A child that exits at once, named `name`; returns once it is a zombie (exited, not reaped).
pid_t Zombie(const char* name) {
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_NAME, name);
    _exit(0);
  }
  siginfo_t info{};
  EXPECT_EQ(waitid(P_PID, pid, &info, WEXITED | WNOWAIT), 0);  // exited; left unreaped
  return pid;
}

TEST(ProcessTest, ThisProcessAndInitLive) {
  EXPECT_TRUE(ProcessAlive(getpid()));
  EXPECT_TRUE(ProcessAlive(1));  // alive even where signalling it is not permitted (EPERM)
}

TEST(ProcessTest, NoPidIsDead) {
  EXPECT_FALSE(ProcessAlive(0));
  EXPECT_FALSE(ProcessAlive(-1));
}

TEST(ProcessTest, ZombiesAndReapedChildrenAreDead) {
  for (const char* name : {"zombie", "a b) Z x", ") R ("}) {
    const pid_t pid = Zombie(name);
    ASSERT_GT(pid, 0);
    EXPECT_EQ(kill(pid, 0), 0) << "a zombie still takes signals";
    EXPECT_FALSE(ProcessAlive(pid)) << "zombie named '" << name << "'";
    ASSERT_EQ(waitpid(pid, nullptr, 0), pid);
    EXPECT_FALSE(ProcessAlive(pid)) << "reaped child named '" << name << "'";
  }
}

}  // namespace
}  // namespace mpigpu

// Other processes and users: whether a process still lives (the one answer for every liveness
// check: the engine's dead-peer and creator checks, stale shared memory clean-up), and how a
// message names another user (the owner of a shared-memory name that is not ours).
#pragma once

#include <sys/types.h>

#include <string>

namespace mpigpu {

// False for a pid <= 0, a process that is gone (kill(pid, 0) fails with ESRCH), and a zombie or
// a dying process (state Z or X in /proc/<pid>/stat): kill(pid, 0) succeeds on a zombie that its
// parent (a launcher, a test) has not reaped yet, though it will never run again. True for
// everything else, including another user's process (EPERM) and one whose /proc entry cannot
// be read: when in doubt, alive.
bool ProcessAlive(pid_t pid);

// "user NAME (uid N)", or "uid N" when the user database has no name for it.
std::string OwnerName(uid_t uid);

}  // namespace mpigpu

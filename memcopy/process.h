// Whether another process still lives: the one answer for every liveness check (the engine's
// dead-peer and creator checks, stale shared memory clean-up).
#pragma once

#include <sys/types.h>

namespace mpigpu {

// False for a pid <= 0, a process that is gone (kill(pid, 0) fails with ESRCH), and a zombie or
// a dying process (state Z or X in /proc/<pid>/stat): kill(pid, 0) succeeds on a zombie that its
// parent (a launcher, a test) has not reaped yet, though it will never run again. True for
// everything else, including another user's process (EPERM) and one whose /proc entry cannot
// be read: when in doubt, alive.
bool ProcessAlive(pid_t pid);

}  // namespace mpigpu

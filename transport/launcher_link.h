// The rank's side of its link to mpigpurun: tells the launcher when this rank joined the job and
// when it finalized, and notices when the launcher is gone.
//
// The launcher makes one AF_UNIX SOCK_SEQPACKET socket pair per job. It keeps one end (close on
// exec) and gives the other to every rank, naming it in MPIGPU_LAUNCHER_FD (an internal launcher
// variable, like MPIGPU_RANK). Through that end:
//   - records to the launcher, one datagram each, "J <rank>\n" when MPIGPU_Init joined the job
//     and "F <rank>\n" when MPIGPU_Finalize ended. The launcher reports a rank that exits 0 after
//     "J" without "F" (it left without MPIGPU_Finalize) and fails the job.
//   - liveness: only the launcher holds its end, so when the launcher dies (even by SIGKILL) the
//     ranks' end reports a hang-up. The engine asks on its peer-check cadence and ends the
//     process. This reaches ranks that are not the launcher's children (started through
//     `sh -c`), which the launcher's parent-death signal does not.
// Without the variable, or when it does not name such a socket (a program that closed it, a
// child that kept the variable but not the fd), every function here does nothing. The first call
// reads the variable and sets FD_CLOEXEC on the fd, so programs the rank starts do not inherit it.
//
// A rank on another host than its launcher (mpigpurun --host) cannot inherit a socket: there the
// link is a TCP connection to the launcher's link server, named in MPIGPU_LAUNCHER_ADDR
// ("a.b.c.d:port"), which the first call makes (waiting up to kRemoteLinkConnectS). It opens
// with a RemoteLinkHello that proves the job's secret (MPIGPU_JOB_SECRET), then carries the same
// records as a byte stream; the launcher never writes to it, so the connection becoming readable
// (closed, reset, or keepalives unanswered) means the launcher is gone, and so does a server that
// does not answer the first call within kRemoteLinkConnectS. MPIGPU_LAUNCHER_FD wins where both
// are set.
#pragma once

#include <cstdint>

#include "transport/core/job_secret.h"

namespace mpigpu::transport {

// The environment variable that names the rank's end of the link.
inline constexpr const char* kLauncherFdVariable = "MPIGPU_LAUNCHER_FD";
// The launcher's link server, for ranks on another host.
inline constexpr const char* kLauncherAddrVariable = "MPIGPU_LAUNCHER_ADDR";
inline constexpr double kRemoteLinkConnectS = 10;

// The first bytes on a remote link (the hosts of a job share a byte order).
inline constexpr uint64_t kRemoteLinkMagic = 0x6d70676c6e6b3031ull;  // "mpglnk01"
struct RemoteLinkHello {
  uint64_t magic;
  int32_t rank;
  int32_t size;
  unsigned char secret[kJobSecretBytes];
};

// True when this process was started by a launcher whose end of the link has since closed
// (the launcher died). A poll with no wait: one system call.
bool LauncherGone();

// When LauncherGone(): prints one line naming `rank` to stderr and ends the process (_exit(1),
// after flushing stdio). The launcher is dead: nobody else would end this rank.
void ExitIfLauncherGone(int rank);
// What ExitIfLauncherGone does once it knows: the line, then _exit(1). For other signs of the
// launcher's death (Bootstrap::LauncherGone).
[[noreturn]] void EndBecauseLauncherGone(int rank);

// Records for the launcher (no-ops without one). Joined: at the end of the bootstrap, once the
// rank is in the job. Finalized: at the end of finalize, whatever its result.
void LauncherLinkJoined(int rank);
void LauncherLinkFinalized(int rank);

// For tests: forget what the first call read, so the next call reads MPIGPU_LAUNCHER_FD again.
void ResetLauncherLinkForTest();

}  // namespace mpigpu::transport

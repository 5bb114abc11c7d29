#include "transport/launcher_link.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace mpigpu::transport {
namespace {

struct Link {
  std::mutex mu;
  bool read = false;  // MPIGPU_LAUNCHER_FD was looked at
  int fd = -1;        // the rank's end, or -1 without a launcher
  dev_t dev = 0;      // the socket's identity when first seen: the program may close the fd
  ino_t ino = 0;      // and reuse its number for a socket of its own
};

Link& TheLink() {
  static Link* link = new Link();  // never destroyed: usable from exit paths
  return *link;
}

// A whole decimal fd number in [0, 2^20), else -1.
int ParseFd(const char* text) {
  if (text == nullptr || *text == '\0') return -1;
  long v = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
    if (v >= (1 << 20)) return -1;
  }
  return static_cast<int>(v);
}

// True when fd is an AF_UNIX SOCK_SEQPACKET socket: what the launcher hands out. Anything else
// (a file the program opened on a number it found free) is never written to.
bool IsLinkSocket(int fd) {
  int type = 0, domain = 0;
  socklen_t len = sizeof(type);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) return false;
  len = sizeof(domain);
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 || domain != AF_UNIX) return false;
  return true;
}

// The link's fd (-1: none), reading the variable on the first call. Later calls check that the
// number still names the same socket (a program may close it and reuse the number): if not, the
// link is gone for good and nothing is read from or written to that number again.
int LinkFd() {
  Link& link = TheLink();
  std::lock_guard<std::mutex> lock(link.mu);
  struct stat st;
  if (!link.read) {
    link.read = true;
    const int fd = ParseFd(std::getenv(kLauncherFdVariable));
    if (fd >= 0 && IsLinkSocket(fd) && fstat(fd, &st) == 0) {
      link.fd = fd;
      link.dev = st.st_dev;
      link.ino = st.st_ino;
      int flags = fcntl(fd, F_GETFD);
      if (flags >= 0) (void)fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
  } else if (link.fd >= 0 &&
             (fstat(link.fd, &st) != 0 || st.st_dev != link.dev || st.st_ino != link.ino)) {
    link.fd = -1;
  }
  return link.fd;
}

void Send(char kind, int rank) {
  const int fd = LinkFd();
  if (fd < 0) return;
  char record[32];
  const int n = std::snprintf(record, sizeof record, "%c %d\n", kind, rank);
  if (n <= 0) return;
  // One datagram per record. Blocks while the launcher's queue is full (it drains it as it
  // runs); fails at once, without SIGPIPE, when the launcher is gone.
  ssize_t w;
  do {
    w = send(fd, record, static_cast<size_t>(n), MSG_NOSIGNAL);
  } while (w < 0 && errno == EINTR);
}

}  // namespace

bool LauncherGone() {
  const int fd = LinkFd();
  if (fd < 0) return false;
  struct pollfd p = {fd, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  // The launcher never sends: POLLHUP (or an error) means its end closed. POLLNVAL (the program
  // closed our fd) says nothing about the launcher.
  return r > 0 && (p.revents & (POLLHUP | POLLERR)) != 0;
}

void ExitIfLauncherGone(int rank) {
  if (LauncherGone()) EndBecauseLauncherGone(rank);
}

void EndBecauseLauncherGone(int rank) {
  std::fflush(nullptr);
  std::fprintf(stderr, "mpigpu: rank %d: the launcher (mpigpurun) is gone; ending this rank\n",
               rank);
  std::fflush(stderr);
  _exit(1);
}

void LauncherLinkJoined(int rank) { Send('J', rank); }

void LauncherLinkFinalized(int rank) { Send('F', rank); }

void ResetLauncherLinkForTest() {
  Link& link = TheLink();
  std::lock_guard<std::mutex> lock(link.mu);
  link.read = false;
  link.fd = -1;
}

}  // namespace mpigpu::transport

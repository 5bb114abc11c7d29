#include "transport/launcher_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "memcopy/clock.h"

namespace mpigpu::transport {
namespace {

struct Link {
  std::mutex mu;
  bool read = false;  // MPIGPU_LAUNCHER_FD was looked at
  int fd = -1;        // the rank's end, or -1 without a launcher
  bool remote = false;  // fd is a TCP connection to the launcher's link server
  bool unreachable = false;  // MPIGPU_LAUNCHER_ADDR named a server that did not answer
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

// A whole decimal number in [0, 2^31), else -1.
long ParseCount(const char* text) {
  if (text == nullptr || *text == '\0') return -1;
  long v = 0;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9' || v > (1L << 30)) return -1;
    v = v * 10 + (*p - '0');
  }
  return v;
}

// "a.b.c.d:port" -> address; false for anything else.
bool ParseAddr(const std::string& text, sockaddr_in* a) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  const long port = ParseCount(text.c_str() + colon + 1);
  if (port <= 0 || port > 65535) return false;
  *a = sockaddr_in{};
  a->sin_family = AF_INET;
  a->sin_port = htons(static_cast<uint16_t>(port));
  return inet_pton(AF_INET, text.substr(0, colon).c_str(), &a->sin_addr) == 1;
}

// Writes all of `n` bytes before `deadline`; false on an error or the deadline.
bool SendAll(int fd, const void* data, size_t n, double deadline) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w > 0) {
      p += w;
      n -= static_cast<size_t>(w);
      continue;
    }
    if (w < 0 && errno != EAGAIN && errno != EINTR) return false;
    const double left = deadline - MonotonicSeconds();
    if (left <= 0) return false;
    pollfd q{fd, POLLOUT, 0};
    (void)poll(&q, 1, static_cast<int>(left * 1000) + 1);
  }
  return true;
}

// The remote link (MPIGPU_LAUNCHER_ADDR): a TCP connection to the launcher's link server that
// proved the job's secret, or -1 for settings that name no link, or -2 when the server did not
// answer within kRemoteLinkConnectS (the launcher is gone, or cannot be reached: either way
// nobody supervises this rank). One line on stderr says why. A refused connect is retried until
// the deadline: the server listens before any rank starts, so that only covers a slow network.
int ConnectRemote(const char* addr_text) {
  auto fail = [&](const std::string& why) {
    std::fprintf(stderr, "mpigpu: no link to the launcher at %s: %s\n", addr_text, why.c_str());
    return -1;
  };
  auto unreachable = [&](const std::string& why) {
    fail(why);
    return -2;
  };
  sockaddr_in addr{};
  if (!ParseAddr(addr_text, &addr))
    return fail(std::string(kLauncherAddrVariable) + " is not a.b.c.d:port");
  std::string secret;
  if (!TakeJobSecretFromEnvironment(&secret))
    return fail("MPIGPU_JOB_SECRET is missing or not 32 hex digits");
  const long rank = ParseCount(std::getenv("MPIGPU_RANK"));
  const long size = ParseCount(std::getenv("MPIGPU_SIZE"));
  if (rank < 0 || size <= rank) return fail("MPIGPU_RANK/MPIGPU_SIZE are not set");
  const double deadline = MonotonicSeconds() + kRemoteLinkConnectS;
  int fd = -1;
  for (;;) {
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return fail(std::strerror(errno));
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) break;
    const int err = errno;
    close(fd);
    if (MonotonicSeconds() > deadline) return unreachable(std::strerror(err));
    usleep(20000);
  }
  // A launcher host that vanishes (no close ever comes) is noticed by keepalives: ~10 s.
  const int one = 1, idle = 4, interval = 2, count = 3;
  setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  RemoteLinkHello hello{};
  hello.magic = kRemoteLinkMagic;
  hello.rank = static_cast<int32_t>(rank);
  hello.size = static_cast<int32_t>(size);
  std::memcpy(hello.secret, secret.data(), kJobSecretBytes);
  if (!SendAll(fd, &hello, sizeof hello, deadline)) {
    close(fd);
    return unreachable("the hello did not go through");
  }
  return fd;
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
    } else if (const char* addr = std::getenv(kLauncherAddrVariable);
               fd < 0 && addr != nullptr && *addr != '\0') {
      const int remote = ConnectRemote(addr);
      if (remote >= 0 && fstat(remote, &st) == 0) {
        link.fd = remote;
        link.remote = true;
        link.dev = st.st_dev;
        link.ino = st.st_ino;
      } else if (remote >= 0) {
        close(remote);
      } else {
        link.unreachable = remote == -2;
      }
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
  // One datagram (a remote link: one send of the whole record) per record. Blocks while the
  // launcher's queue is full (it drains it as it runs); fails at once, without SIGPIPE, when the
  // launcher is gone.
  ssize_t w;
  do {
    w = send(fd, record, static_cast<size_t>(n), MSG_NOSIGNAL);
  } while (w < 0 && errno == EINTR);
}

}  // namespace

bool LauncherGone() {
  const int fd = LinkFd();
  if (fd < 0) return TheLink().unreachable;  // set once, under the lock, in the first LinkFd
  const bool remote = TheLink().remote;  // set once, with fd, before LinkFd returned it
  struct pollfd p = {fd, static_cast<short>(remote ? POLLIN | POLLRDHUP : POLLIN), 0};
  int r;
  do {
    r = poll(&p, 1, 0);
  } while (r < 0 && errno == EINTR);
  // The launcher never sends: POLLHUP (or an error) means its end closed. POLLNVAL (the program
  // closed our fd) says nothing about the launcher.
  // A remote link: the launcher never writes, so readable means closed or reset.
  const short gone = remote ? (POLLIN | POLLRDHUP | POLLHUP | POLLERR) : (POLLHUP | POLLERR);
  return r > 0 && (p.revents & gone) != 0;
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
  if (link.remote && link.fd >= 0) close(link.fd);
  link.fd = -1;
  link.remote = false;
  link.unreachable = false;
}

}  // namespace mpigpu::transport

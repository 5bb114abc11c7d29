#include "transport/sock/sock_channel.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace mpigpu::transport {
namespace {

// The sockaddr of an abstract Unix socket name (no file; gone with its last descriptor).
socklen_t AbstractAddress(const std::string& name, sockaddr_un* a) {
  std::memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  const size_t n = std::min(name.size(), sizeof(a->sun_path) - 1);
  std::memcpy(a->sun_path + 1, name.data(), n);  // sun_path[0] = 0: abstract
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}

}  // namespace

std::string SockChannel::Address(const std::string& jobid, int rank) {
  return "mpigpu-sock-" + jobid + "-" + std::to_string(rank);
}

Status SockChannel::Listen(int* fd) {
  *fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (*fd < 0) return SysError("socket channel: socket");
  sockaddr_un a;
  const socklen_t len = AbstractAddress(Address(host_->job().jobid(), rank_), &a);
  if (::bind(*fd, reinterpret_cast<sockaddr*>(&a), len) != 0)
    return Status(Err::kSystem, "socket channel: the name of rank " + std::to_string(rank_) +
                                    " is taken (" + std::strerror(errno) +
                                    "): another job with this id, or someone else's socket");
  if (::listen(*fd, 128) != 0) return SysError("socket channel: listen");
  return Status::Ok();
}

// This user's process, and the pid the rank table holds for `rank`.
bool SockChannel::CredentialsOf(int fd, int rank) const {
  ucred c{};
  socklen_t n = sizeof c;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) != 0) return false;
  return c.uid == ::geteuid() && c.pid == host_->job().pid(rank);
}

Status SockChannel::Dial(int dst, int* fd, bool* later) {
  *later = false;
  const int s = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return SysError("socket channel: socket");
  sockaddr_un a;
  const socklen_t len = AbstractAddress(Address(host_->job().jobid(), dst), &a);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), len) != 0) {
    const int err = errno;
    ::close(s);
    if (err == EAGAIN) {
      *later = true;
      return Status::Ok();
    }
    return Status(Err::kSystem, std::strerror(err));
  }
  *fd = s;
  return Status::Ok();
}

}  // namespace mpigpu::transport

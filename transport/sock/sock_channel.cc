#include "transport/sock/sock_channel.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "memcopy/clock.h"
#include "memcopy/log.h"

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

SockChannel::~SockChannel() {
  for (Out& o : out_)
    if (o.fd >= 0) ::close(o.fd);
  for (In& in : in_)
    if (in.fd >= 0) ::close(in.fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

std::string SockChannel::Address(const std::string& jobid, int rank) {
  return "mpigpu-sock-" + jobid + "-" + std::to_string(rank);
}

Status SockChannel::Attach(TransportHost* host, char*, char*) {
  host_ = host;
  rank_ = host->rank();
  out_.resize(host->size());
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return SysError("socket channel: socket");
  sockaddr_un a;
  const socklen_t len = AbstractAddress(Address(host_->job().jobid(), rank_), &a);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), len) != 0)
    return Status(Err::kSystem, "socket channel: the name of rank " + std::to_string(rank_) +
                                    " is taken (" + std::strerror(errno) +
                                    "): another job with this id, or someone else's socket");
  if (::listen(listen_fd_, 128) != 0) return SysError("socket channel: listen");
  return Status::Ok();
}

// This user's process, and the pid the rank table holds for `rank`.
bool SockChannel::CredentialsOf(int fd, int rank) const {
  ucred c{};
  socklen_t n = sizeof c;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &c, &n) != 0) return false;
  return c.uid == ::geteuid() && c.pid == host_->job().pid(rank);
}

// Connects to dst's listener; *later when its backlog is full (nothing done: try again).
Status SockChannel::Connect(int dst, bool* later) {
  Out& o = out_[dst];
  *later = false;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return SysError("socket channel: socket");
  sockaddr_un a;
  const socklen_t len = AbstractAddress(Address(host_->job().jobid(), dst), &a);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), len) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EAGAIN) {
      *later = true;
      return Status::Ok();
    }
    o.broken = true;  // not listening: gone (the liveness check fails it)
    MPIGPU_INFO("socket channel: rank %d does not answer (%s)", dst, std::strerror(err));
    return Status::Ok();
  }
  if (!CredentialsOf(fd, dst)) {
    ::close(fd);
    return Status(Err::kSystem, "socket channel: the socket of rank " + std::to_string(dst) +
                                        " belongs to another process");
  }
  o.fd = fd;
  const Hello hello{kHelloMagic, rank_, 0};
  const auto* p = reinterpret_cast<const unsigned char*>(&hello);
  o.buf.insert(o.buf.end(), p, p + sizeof hello);
  return Status::Ok();
}

Status SockChannel::Flush(Out& o) {
  while (o.head < o.buf.size()) {
    const ssize_t n = ::send(o.fd, o.buf.data() + o.head, o.buf.size() - o.head,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      o.head += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    o.broken = true;  // EPIPE, ECONNRESET: the peer is gone; the liveness check fails its work
    o.buf.clear();
    o.head = 0;
    return Status::Ok();
  }
  if (o.head == o.buf.size()) {
    o.buf.clear();
    o.head = 0;
  } else if (o.head > (size_t{1} << 20) && o.head > o.buf.size() / 2) {
    o.buf.erase(o.buf.begin(), o.buf.begin() + static_cast<long>(o.head));
    o.head = 0;
  }
  return Status::Ok();
}

bool SockChannel::TrySend(int dst, MsgHeader* h, const Payload& p, Status* copy_error) {
  Out& o = out_[dst];
  if (o.fd < 0 && !o.broken) {
    bool later = false;
    Status st = Connect(dst, &later);
    if (later) return false;
    if (!st.ok()) {
      *copy_error = std::move(st);
      return true;
    }
  }
  if (o.broken) return true;  // the peer is gone: its requests fail by the liveness check
  if (p.len > kMaxPayload) {
    *copy_error = Status(Err::kInternal, "socket channel: payload larger than a frame");
    return true;
  }
  if (o.buf.size() - o.head > kMaxBuffered) {
    (void)Flush(o);
    if (o.buf.size() - o.head > kMaxBuffered) return false;
  }
  const size_t start = o.buf.size();
  const FrameHead head{static_cast<uint32_t>(p.len), kFrameMagic};
  o.buf.resize(start + sizeof head + sizeof *h + p.len);
  unsigned char* at = o.buf.data() + start;
  std::memcpy(at, &head, sizeof head);
  std::memcpy(at + sizeof head, h, sizeof *h);
  unsigned char* payload = at + sizeof head + sizeof *h;
  if (p.user != nullptr) {
    Status st = host_->CopyPackedNow(PackDir::kPack, *p.user, p.offset, p.len, payload);
    if (!st.ok()) {
      o.buf.resize(start);
      *copy_error = std::move(st);
      return true;
    }
  } else if (p.len > 0) {
    std::memcpy(payload, p.bytes, p.len);
  }
  (void)Flush(o);
  return true;
}

Status SockChannel::Accept() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return Status::Ok();  // EAGAIN: none waiting (others: try again next poll)
    }
    In in;
    in.fd = fd;
    in_.push_back(std::move(in));
  }
}

// Reads what the connection has, then hands every whole frame to the sink, in order.
Status SockChannel::Read(In& in, ChannelSink* sink) {
  for (;;) {
    if (in.buf.size() - in.have < (size_t{64} << 10)) in.buf.resize(in.have + (size_t{256} << 10));
    const ssize_t n = ::recv(in.fd, in.buf.data() + in.have, in.buf.size() - in.have, MSG_DONTWAIT);
    if (n > 0) {
      in.have += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) in.closed = true;  // the peer closed (finalized, or died: liveness decides)
    break;
  }
  size_t at = 0;
  if (in.rank < 0) {
    if (in.have < sizeof(Hello)) return Status::Ok();
    Hello hello;
    std::memcpy(&hello, in.buf.data(), sizeof hello);
    const bool known = hello.magic == kHelloMagic && hello.rank >= 0 &&
                       hello.rank < host_->size() && CredentialsOf(in.fd, hello.rank);
    bool twice = false;
    for (const In& other : in_) twice |= known && &other != &in && other.rank == hello.rank;
    if (!known || twice) {  // not one of the job's ranks, or a second connection: refused
      MPIGPU_WARN("socket channel: refusing a connection that is not a rank of this job");
      ::close(in.fd);
      in.fd = -1;
      in.closed = true;
      return Status::Ok();
    }
    in.rank = hello.rank;
    at = sizeof hello;
  }
  Status st;
  while (st.ok() && in.have - at >= sizeof(FrameHead) + sizeof(MsgHeader)) {
    FrameHead head;
    std::memcpy(&head, in.buf.data() + at, sizeof head);
    if (head.magic != kFrameMagic || head.len > kMaxPayload)
      return Status(Err::kInternal, "socket channel: a bad frame from rank " + std::to_string(in.rank));
    const size_t whole = sizeof head + sizeof(MsgHeader) + head.len;
    if (in.have - at < whole) {
      if (in.buf.size() < at + whole) in.buf.resize(at + whole);
      break;
    }
    MsgHeader h;
    std::memcpy(&h, in.buf.data() + at + sizeof head, sizeof h);
    h.src = in.rank;  // the connection says who sent it
    st = sink->Deliver(h, in.buf.data() + at + sizeof head + sizeof h, head.len);
    at += whole;
  }
  if (at > 0) {
    std::memmove(in.buf.data(), in.buf.data() + at, in.have - at);
    in.have -= at;
  }
  return st;
}

Status SockChannel::Poll(ChannelSink* sink) {
  MPIGPU_RETURN_IF_ERROR(Accept());
  for (size_t i = 0; i < in_.size(); ++i)
    if (in_[i].fd >= 0 && !in_[i].closed) MPIGPU_RETURN_IF_ERROR(Read(in_[i], sink));
  for (Out& o : out_)
    if (o.fd >= 0 && o.head < o.buf.size()) MPIGPU_RETURN_IF_ERROR(Flush(o));
  return Status::Ok();
}

bool SockChannel::Pending() const {
  for (const In& in : in_) {
    if (in.fd < 0 || in.closed) continue;
    unsigned char c;
    if (::recv(in.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0) return true;
  }
  return false;
}

// Finalize: what is still buffered goes out (bounded: a peer that stopped reading is gone).
Status SockChannel::Close() {
  const double deadline = MonotonicSeconds() + 2;
  for (Out& o : out_)
    while (o.fd >= 0 && !o.broken && o.head < o.buf.size() && MonotonicSeconds() < deadline) {
      (void)Flush(o);
      if (o.head < o.buf.size()) ::usleep(100);
    }
  return Status::Ok();
}

}  // namespace mpigpu::transport

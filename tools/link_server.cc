#include "tools/link_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "memcopy/clock.h"
#include "tools/launcher.h"
#include "transport/core/job_secret.h"
#include "transport/launcher_link.h"

namespace mpigpu {
namespace launcher {
namespace {

void Say(const std::string& line) { std::fprintf(stderr, "mpigpurun: %s\n", line.c_str()); }

constexpr size_t kMaxRecord = 16;  // "F 4095\n" and room: a longer line is garbage

}  // namespace

LinkServer::~LinkServer() {
  for (Conn& c : conns_)
    if (c.fd >= 0) close(c.fd);
  if (listen_fd_ >= 0) close(listen_fd_);
}

Status LinkServer::Start(const std::string& ip, int size, const std::string& secret) {
  if (size < 1 || secret.size() != transport::kJobSecretBytes)
    return Status(Err::kInvalidArg, "link server: a job of at least one rank and a secret");
  size_ = size;
  secret_ = secret;
  seen_.assign(static_cast<size_t>(size), 0);
  open_.assign(static_cast<size_t>(size), 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (inet_pton(AF_INET, ip.c_str(), &a.sin_addr) != 1)
    return Status(Err::kInvalidArg, "link server: '" + ip + "' is not an IPv4 address");
  listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) return SysError("link server: socket");
  if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    return SysError(("link server: bind " + ip).c_str());
  if (listen(listen_fd_, 1024) != 0) return SysError("link server: listen");
  socklen_t n = sizeof a;
  if (getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &n) != 0)
    return SysError("link server: getsockname");
  address_ = ip + ":" + std::to_string(ntohs(a.sin_port));
  return Status::Ok();
}

void LinkServer::AppendPollFds(std::vector<pollfd>* fds) const {
  if (listen_fd_ < 0) return;
  fds->push_back({listen_fd_, POLLIN, 0});
  for (const Conn& c : conns_) fds->push_back({c.fd, POLLIN, 0});
}

bool LinkServer::Open(int r) const {
  return r >= 0 && r < size_ && open_[static_cast<size_t>(r)] != 0;
}

void LinkServer::Accept() {
  for (;;) {
    sockaddr_in from{};
    socklen_t n = sizeof from;
    const int fd = accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &n,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: none left (or a transient error: poll says when to retry)
    char text[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &from.sin_addr, text, sizeof text);
    size_t pending = 0, oldest = conns_.size();
    for (size_t i = 0; i < conns_.size(); ++i)
      if (conns_[i].rank < 0 && pending++ == 0) oldest = i;
    if (pending >= kMaxPending) {
      Limited("link server: dropped " + conns_[oldest].peer +
              ": too many connections without a hello");
      close(conns_[oldest].fd);
      conns_.erase(conns_.begin() + static_cast<long>(oldest));
    }
    // A rank's host that vanishes (no close ever comes) is noticed by keepalives: ~10 s.
    const int one = 1, idle = 4, interval = 2, count = 3;
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
    Conn c;
    c.fd = fd;
    c.peer = std::string(text) + ":" + std::to_string(ntohs(from.sin_port));
    conns_.push_back(std::move(c));
  }
}

bool LinkServer::Read(Conn& c, std::vector<LinkEvent>* events) {
  char buf[256];
  for (;;) {
    const ssize_t k = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (k <= 0) {  // closed or reset
      if (c.rank >= 0) {
        open_[static_cast<size_t>(c.rank)] = 0;
        events->push_back({LinkEvent::kClosed, c.rank});
      }
      return false;
    }
    c.in.append(buf, static_cast<size_t>(k));
    if (c.rank < 0) {
      if (c.in.size() < sizeof(transport::RemoteLinkHello)) continue;
      transport::RemoteLinkHello h;
      std::memcpy(&h, c.in.data(), sizeof h);
      c.in.erase(0, sizeof h);
      if (h.magic != transport::kRemoteLinkMagic || !transport::SameJobSecret(h.secret, secret_) ||
          h.size != size_ || h.rank < 0 || h.rank >= size_) {
        Limited("link server: refused a connection from " + c.peer + " (not a rank of this job)");
        return false;
      }
      if (seen_[static_cast<size_t>(h.rank)] != 0) {
        Limited("link server: refused a second link for rank " + std::to_string(h.rank) +
                " from " + c.peer);
        return false;
      }
      c.rank = h.rank;
      seen_[static_cast<size_t>(h.rank)] = 1;
      open_[static_cast<size_t>(h.rank)] = 1;
    }
    size_t nl;
    while ((nl = c.in.find('\n')) != std::string::npos) {
      char kind;
      int r;
      if (!ParseLinkRecord(c.in.data(), nl + 1, size_, &kind, &r) || r != c.rank) {
        Say("link server: rank " + std::to_string(c.rank) + " sent a bad record; its link is cut");
        open_[static_cast<size_t>(c.rank)] = 0;
        events->push_back({LinkEvent::kClosed, c.rank});
        return false;
      }
      events->push_back({kind == 'J' ? LinkEvent::kJoined : LinkEvent::kFinalized, r});
      c.in.erase(0, nl + 1);
    }
    if (c.in.size() > kMaxRecord) {
      Say("link server: rank " + std::to_string(c.rank) + " sent garbage; its link is cut");
      open_[static_cast<size_t>(c.rank)] = 0;
      events->push_back({LinkEvent::kClosed, c.rank});
      return false;
    }
  }
}

void LinkServer::Limited(const std::string& line) {
  strangers_log_.Log(Say, line, MonotonicSeconds());
}

void LinkServer::Serve(std::vector<LinkEvent>* events) {
  if (listen_fd_ < 0) return;
  strangers_log_.Flush(Say, MonotonicSeconds());
  std::vector<pollfd> fds;
  AppendPollFds(&fds);
  if (poll(fds.data(), fds.size(), 0) <= 0) return;
  // Connections first (fds[1..] in conns_ order), then new ones: the indices still match.
  for (size_t i = 0; i < conns_.size(); ++i) {  // in the order they came
    if (fds[i + 1].revents != 0 && !Read(conns_[i], events)) {
      close(conns_[i].fd);
      conns_[i].fd = -1;
    }
  }
  for (size_t i = conns_.size(); i-- > 0;)
    if (conns_[i].fd < 0) conns_.erase(conns_.begin() + static_cast<long>(i));
  if (fds[0].revents != 0) Accept();
}

}  // namespace launcher
}  // namespace mpigpu

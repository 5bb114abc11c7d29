#include "internode/tcp/tcp_channel.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "internode/net_config.h"

namespace mpigpu::transport {

bool TcpChannel::ParseCard(const std::string& card, sockaddr_in* out) {
  const size_t colon = card.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= card.size()) return false;
  std::memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  if (::inet_pton(AF_INET, card.substr(0, colon).c_str(), &out->sin_addr) != 1) return false;
  char* end = nullptr;
  const long port = std::strtol(card.c_str() + colon + 1, &end, 10);
  if (*end != '\0' || port < 1 || port > 65535) return false;
  out->sin_port = htons(static_cast<uint16_t>(port));
  return true;
}

Status TcpChannel::ListenAddress(const char* net_if, const std::string& fallback, in_addr* out) {
  const std::string want = net_if != nullptr && *net_if != '\0' ? net_if : fallback;
  if (::inet_pton(AF_INET, want.c_str(), out) == 1) return Status::Ok();
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return SysError("tcp: getifaddrs");
  bool found = false;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || want != i->ifa_name)
      continue;
    *out = reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr;
    found = true;
  }
  ::freeifaddrs(list);
  if (found) return Status::Ok();
  return Status(Err::kInvalidArg, "MPIGPU_NET_IF='" + want +
                                      "' is neither an IPv4 address nor an interface with one");
}

Status TcpChannel::Listen(int* fd) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  MPIGPU_RETURN_IF_ERROR(
      ListenAddress(GetNetConfig().net_if, host_->boot().LocalAddress(), &a.sin_addr));
  *fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (*fd < 0) return SysError("tcp: socket");
  SocketBuffers(*fd);
  if (::bind(*fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    char text[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
    return Status(Err::kSystem, std::string("tcp: cannot listen on ") + text + " (" +
                                    std::strerror(errno) + "): set MPIGPU_NET_IF");
  }
  if (::listen(*fd, 512) != 0) return SysError("tcp: listen");
  socklen_t n = sizeof a;
  if (::getsockname(*fd, reinterpret_cast<sockaddr*>(&a), &n) != 0)
    return SysError("tcp: getsockname");
  char text[INET_ADDRSTRLEN];
  ::inet_ntop(AF_INET, &a.sin_addr, text, sizeof text);
  card_ = std::string(text) + ":" + std::to_string(ntohs(a.sin_port));
  return Status::Ok();
}

Status TcpChannel::SetCards(const std::vector<std::string>& cards) {
  peers_.assign(cards.size(), sockaddr_in{});
  for (size_t r = 0; r < cards.size(); ++r)
    if (!ParseCard(cards[r], &peers_[r]))
      return Status(Err::kInvalidArg, "tcp: rank " + std::to_string(r) + " published '" +
                                          cards[r] + "', not an address");
  if (host_->boot().secret().size() != kJobSecretBytes)
    return Status(Err::kInvalidArg, "tcp: the job has no secret to admit connections with");
  return Status::Ok();
}

Status TcpChannel::Dial(int dst, int* fd, bool* later) {
  *later = false;
  if (dst < 0 || static_cast<size_t>(dst) >= peers_.size())
    return Status(Err::kInternal, "tcp: no address for rank " + std::to_string(dst));
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s < 0) return SysError("tcp: socket");
  SocketBuffers(s);
  if (::connect(s, reinterpret_cast<const sockaddr*>(&peers_[dst]), sizeof peers_[dst]) != 0 &&
      errno != EINPROGRESS) {
    const int err = errno;
    ::close(s);
    return Status(Err::kSystem, std::strerror(err));
  }
  *fd = s;
  return Status::Ok();
}

bool TcpChannel::Admit(int, const Hello& hello) const {
  return SameJobSecret(hello.secret, host_->boot().secret());
}

void TcpChannel::Tune(int fd) const {
  const int timeout = static_cast<int>(GetNetConfig().net_timeout_s);
  const int one = 1, idle = 1, count = timeout;
  const unsigned user_timeout_ms = static_cast<unsigned>(timeout) * 1000u;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // A dead host or link: unacknowledged data fails after the timeout (TCP_USER_TIMEOUT), and an
  // idle connection notices through keepalives, one a second.
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
  (void)::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof one);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &idle, sizeof idle);
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

// MPIGPU_NET_SOCKBUF, set before the connection is made (on the listening socket, which accepted
// ones inherit, and before connect): the window scale is agreed in the handshake, and a receive
// buffer shrunk afterwards makes the peer send into a window that is not there.
void TcpChannel::SocketBuffers(int fd) {
  if (const size_t buf = GetNetConfig().net_sockbuf; buf > 0) {
    const int bytes = static_cast<int>(buf);
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    (void)::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }
}

double TcpChannel::DialTimeoutS() const {
  return static_cast<double>(GetNetConfig().net_timeout_s);
}

}  // namespace mpigpu::transport

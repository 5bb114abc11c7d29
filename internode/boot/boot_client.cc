#include "internode/boot/boot_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "internode/boot/boot_wire.h"
#include "internode/tcp/tcp_channel.h"
#include "transport/launcher_link.h"
#include "memcopy/clock.h"
#include "memcopy/log.h"
#include "transport/transport_config.h"

namespace mpigpu::transport {
namespace {

enum class Io { kDone, kClosed, kTimeout };

// Moves all `n` bytes through the blocking-with-deadline socket `fd`.
Io Move(int fd, void* buf, size_t n, bool send, double deadline) {
  auto* p = static_cast<unsigned char*>(buf);
  size_t done = 0;
  while (done < n) {
    const double left = deadline - MonotonicSeconds();
    if (left <= 0) return Io::kTimeout;
    pollfd q{fd, static_cast<short>(send ? POLLOUT : POLLIN), 0};
    const int ready = ::poll(&q, 1, static_cast<int>(left * 1000) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) return Io::kClosed;
    if (ready == 0) return Io::kTimeout;
    const ssize_t k = send ? ::send(fd, p + done, n - done, MSG_NOSIGNAL | MSG_DONTWAIT)
                           : ::recv(fd, p + done, n - done, MSG_DONTWAIT);
    if (k > 0) done += static_cast<size_t>(k);
    else if (k == 0 || (errno != EAGAIN && errno != EINTR)) return Io::kClosed;
  }
  return Io::kDone;
}

// Moves all `n` bytes; false on error or timeout.
bool Transfer(int fd, void* buf, size_t n, bool send, double deadline) {
  return Move(fd, buf, n, send, deadline) == Io::kDone;
}

// Dials `a` once (blocking); -1 with errno when it cannot.
int Dial(const sockaddr_in& a) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) return fd;
  const int err = errno;
  ::close(fd);
  errno = err;
  return -1;
}

}  // namespace

BootClient::~BootClient() {
  if (fd_ >= 0) ::close(fd_);
}

Status BootClient::FromEnvironment(const JobInfo& job, std::unique_ptr<Bootstrap>* out) {
  const char* addr = std::getenv("MPIGPU_BOOT_ADDR");
  if (addr == nullptr || *addr == '\0')
    return Status(Err::kInvalidArg, "a job that spans nodes needs MPIGPU_BOOT_ADDR (its launcher's "
                                    "boot server): start it with mpigpurun --host");
  std::string secret;
  if (!TakeJobSecretFromEnvironment(&secret))
    return Status(Err::kInvalidArg, "MPIGPU_JOB_SECRET is missing or not 32 hex digits");
  const double timeout = static_cast<double>(GetTransportConfig().bootstrap_timeout_s);
  return Connect(job, addr, secret, timeout, out);
}

Status BootClient::Connect(const JobInfo& job, const std::string& addr, const std::string& secret,
                           double timeout_s, std::unique_ptr<Bootstrap>* out) {
  sockaddr_in a{};
  if (!TcpChannel::ParseCard(addr, &a))
    return Status(Err::kInvalidArg, "MPIGPU_BOOT_ADDR='" + addr + "' is not a.b.c.d:port");
  std::unique_ptr<BootClient> c(new BootClient());
  c->rank_ = job.rank;
  c->size_ = job.size;
  c->secret_ = secret;
  const double deadline = MonotonicSeconds() + timeout_s;
  c->server_ = a;
  // The server may not listen yet when a rank starts first: retry refusals until the deadline.
  for (;;) {
    c->fd_ = Dial(a);
    if (c->fd_ >= 0) break;
    const int err = errno;
    if (MonotonicSeconds() > deadline)
      return Status(Err::kTimeout, "boot: no answer from the launcher at " + addr + " (" +
                                       std::strerror(err) + ")");
    ::usleep(20000);
  }
  sockaddr_in me{};
  socklen_t n = sizeof me;
  char text[INET_ADDRSTRLEN] = "";
  if (::getsockname(c->fd_, reinterpret_cast<sockaddr*>(&me), &n) == 0)
    ::inet_ntop(AF_INET, &me.sin_addr, text, sizeof text);
  c->local_address_ = text;
  *out = std::move(c);
  return Status::Ok();
}

bool BootClient::LauncherGone() const {
  if (transport::LauncherGone()) return true;
  if (!gathered_ || fd_ < 0) return false;
  pollfd p{fd_, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  if (!departing_) return true;
  char b;  // after the goodbye, bytes waiting are the answer (Departed reads them), not a close
  return ::recv(fd_, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

Status BootClient::Depart() {
  if (!gathered_ || fd_ < 0 || departing_) return Status::Ok();
  departing_ = true;
  boot::BootBye bye{boot::kByeMagic};
  if (!Transfer(fd_, &bye, sizeof bye, true, MonotonicSeconds() + 2))
    return Status(Err::kPeerFailed, "boot: the launcher's boot server is gone");
  return Status::Ok();
}

Status BootClient::Departed(bool* all, std::vector<int>* gone) {
  *all = true;
  gone->clear();
  if (!departing_) return Status::Ok();  // no card exchange, hence no server to ask
  *all = false;
  char buf[512];
  bool closed = false;  // told below unless the answer is whole
  for (;;) {
    const ssize_t k = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (k > 0) {
      answer_.append(buf, static_cast<size_t>(k));
    } else if (k == 0 || (errno != EINTR && errno != EAGAIN)) {
      closed = true;
      break;
    } else if (errno == EAGAIN) {
      break;
    }
  }
  boot::BootEnd head{};
  if (answer_.size() >= sizeof head) {
    std::memcpy(&head, answer_.data(), sizeof head);
    if (head.magic != boot::kEndMagic || head.gone < 0 || head.gone > size_)
      return Status(Err::kInternal, "boot: the launcher answered the goodbye with something else");
    const size_t whole = sizeof head + static_cast<size_t>(head.gone) * sizeof(int32_t);
    if (answer_.size() >= whole) {
      for (int i = 0; i < head.gone; ++i) {
        int32_t r = 0;
        std::memcpy(&r, answer_.data() + sizeof head + i * sizeof r, sizeof r);
        if (r < 0 || r >= size_) return Status(Err::kInternal, "boot: a bad rank in the answer");
        gone->push_back(r);
      }
      *all = true;
      return Status::Ok();
    }
  }
  if (closed)
    return Status(Err::kPeerFailed, "boot: the launcher's boot server closed before every rank "
                                    "finalized");
  return Status::Ok();
}

Status BootClient::Allgather(const std::string& mine, std::vector<std::string>* all,
                             double timeout_s) {
  if (gathered_) return Status(Err::kInternal, "boot: the cards are exchanged once");
  gathered_ = true;
  if (mine.size() > boot::kMaxCard)
    return Status(Err::kInvalidArg, "boot: a card of " + std::to_string(mine.size()) + " bytes");
  const double deadline = MonotonicSeconds() + timeout_s;
  boot::BootHello hello{};
  hello.magic = boot::kHelloMagic;
  hello.rank = rank_;
  hello.size = size_;
  std::memcpy(hello.secret, secret_.data(), kJobSecretBytes);
  hello.card_len = static_cast<uint32_t>(mine.size());
  std::string card = mine;
  boot::BootTable table{};
  // A connection closed before the table came was dropped unread (a flood of strangers at the
  // server, or our hello overdue after a slow start) or the launcher is gone: dial again, a
  // bounded number of times; a server that is gone refuses the dial.
  for (int redials = 0;; ++redials) {
    Io io = Move(fd_, &hello, sizeof hello, true, deadline);
    if (io == Io::kDone) io = Move(fd_, card.data(), card.size(), true, deadline);
    if (io == Io::kDone) io = Move(fd_, &table, sizeof table, false, deadline);
    if (io == Io::kDone) break;
    if (io == Io::kTimeout)
      return Status(Err::kTimeout, "boot: the other ranks' cards did not come within " +
                                       std::to_string(static_cast<long>(timeout_s)) + " s");
    ::close(fd_);
    fd_ = -1;
    if (redials >= kMaxRedials || MonotonicSeconds() > deadline)
      return Status(Err::kPeerFailed, "boot: the launcher's boot server is gone");
    ::usleep(static_cast<useconds_t>(std::min(20000 << redials, 1000000)));
    fd_ = Dial(server_);
    if (fd_ < 0)
      return Status(Err::kPeerFailed, std::string("boot: the launcher's boot server is gone (") +
                                          std::strerror(errno) + ")");
    MPIGPU_INFO("boot: the launcher's boot server closed our connection before the cards came: "
                "dialled again (%d of %d)", redials + 1, kMaxRedials);
  }
  if (table.magic != boot::kTableMagic || table.size != size_)
    return Status(Err::kInternal, "boot: the launcher answered with something else");
  all->assign(static_cast<size_t>(size_), std::string());
  for (std::string& c : *all) {
    uint32_t len = 0;
    if (!Transfer(fd_, &len, sizeof len, false, deadline) || len > boot::kMaxCard)
      return Status(Err::kInternal, "boot: a bad card table");
    c.resize(len);
    if (!Transfer(fd_, c.data(), len, false, deadline))
      return Status(Err::kInternal, "boot: a short card table");
  }
  return Status::Ok();
}

}  // namespace mpigpu::transport

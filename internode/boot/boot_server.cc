#include "internode/boot/boot_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "internode/boot/boot_wire.h"
#include "memcopy/clock.h"

namespace mpigpu::boot {

struct BootServer::Conn {
  int fd = -1;
  int rank = -1;  // once its hello passed
  double accepted_at = 0;
  std::string peer;  // its address, for the log
  BootHello hello{};
  size_t got = 0;  // bytes of hello, then of the card, then of the goodbye
  std::string card;
  BootBye bye{};
};

BootServer::~BootServer() {
  if (thread_.joinable()) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof one);
    thread_.join();
  }
  for (auto& c : conns_)
    if (c->fd >= 0) ::close(c->fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Status BootServer::Start(const std::string& bind_address, int size, const std::string& secret,
                         Log log, std::unique_ptr<BootServer>* out) {
  if (size < 1 || secret.size() != transport::kJobSecretBytes)
    return Status(Err::kInvalidArg, "boot server: a job of at least one rank and a secret");
  std::unique_ptr<BootServer> s(new BootServer());
  s->size_ = size;
  s->secret_ = secret;
  s->log_ = std::move(log);
  s->cards_.resize(size);
  s->have_.assign(size, false);
  s->bye_.assign(size, false);
  s->gone_.assign(size, false);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  if (::inet_pton(AF_INET, bind_address.c_str(), &a.sin_addr) != 1)
    return Status(Err::kInvalidArg, "boot server: '" + bind_address + "' is not an IPv4 address");
  s->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (s->listen_fd_ < 0) return SysError("boot server: socket");
  if (::bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    return SysError(("boot server: bind " + bind_address).c_str());
  if (::listen(s->listen_fd_, 1024) != 0) return SysError("boot server: listen");
  socklen_t n = sizeof a;
  if (::getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&a), &n) != 0)
    return SysError("boot server: getsockname");
  s->address_ = bind_address + ":" + std::to_string(ntohs(a.sin_port));
  s->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wake_fd_ < 0) return SysError("boot server: eventfd");
  // The thread takes none of the process's signals: a launcher that reads SIGCHLD through a
  // signalfd would never see a signal the kernel gave to this thread instead.
  sigset_t all, before;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &before);
  s->thread_ = std::thread([p = s.get()] { p->Run(); });
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  *out = std::move(s);
  return Status::Ok();
}

// Reads what `c` sent; false when it must go (a stranger, garbage, a duplicate, a close).
bool BootServer::ReadFrom(Conn& c) {
  for (;;) {
    char* at;
    size_t want;
    if (c.got < sizeof c.hello) {
      at = reinterpret_cast<char*>(&c.hello) + c.got;
      want = sizeof c.hello - c.got;
    } else if (c.rank >= 0 && c.got < sizeof c.hello + c.hello.card_len) {
      const size_t have = c.got - sizeof c.hello;
      at = c.card.data() + have;
      want = c.hello.card_len - have;
    } else if (c.rank >= 0 && c.got < sizeof c.hello + c.hello.card_len + sizeof c.bye) {
      const size_t have = c.got - sizeof c.hello - c.hello.card_len;
      at = reinterpret_cast<char*>(&c.bye) + have;
      want = sizeof c.bye - have;
    } else {
      char probe;  // after its goodbye a rank sends nothing: only its close
      const ssize_t k = ::recv(c.fd, &probe, 1, MSG_DONTWAIT);
      if (k == 0) return false;
      if (k > 0) {
        log_("boot server: rank " + std::to_string(c.rank) + " sent bytes after its goodbye");
        return false;
      }
      return errno == EAGAIN || errno == EINTR;
    }
    const ssize_t k = ::recv(c.fd, at, want, MSG_DONTWAIT);
    if (k == 0) return false;
    if (k < 0) return errno == EAGAIN || errno == EINTR;
    c.got += static_cast<size_t>(k);
    if (c.rank < 0 && c.got == sizeof c.hello) {
      const BootHello& h = c.hello;
      if (h.magic != kHelloMagic || !transport::SameJobSecret(h.secret, secret_) || h.size != size_ || h.rank < 0 ||
          h.rank >= size_ || h.card_len > kMaxCard) {
        Say("boot server: refused a connection from " + c.peer + " (not a rank of this job)");
        return false;
      }
      if (have_[h.rank] || [&] {
            for (auto& o : conns_)
              if (o.get() != &c && o->rank == h.rank) return true;
            return false;
          }()) {
        Say("boot server: refused a second connection for rank " + std::to_string(h.rank) +
            " from " + c.peer);
        return false;
      }
      c.rank = h.rank;
      c.card.resize(h.card_len);
    }
    if (c.rank >= 0 && !have_[c.rank] && c.got == sizeof c.hello + c.hello.card_len) {
      cards_[c.rank] = c.card;
      have_[c.rank] = true;
      if (++have_count_ == size_) SendTables();
    }
    if (c.rank >= 0 && !bye_[c.rank] && c.got == sizeof c.hello + c.hello.card_len + sizeof c.bye) {
      if (c.bye.magic != kByeMagic) {
        log_("boot server: rank " + std::to_string(c.rank) + " sent something after its card "
             "that is not its goodbye");
        return false;
      }
      bye_[c.rank] = true;
      ++left_count_;
    }
  }
}

void BootServer::Closed(const Conn& c) {
  if (c.rank < 0 || bye_[c.rank] || gone_[c.rank]) return;
  gone_[c.rank] = true;
  ++left_count_;
}

// Once the table went out and every rank has left (goodbye or close), those still connected
// learn which ranks closed without a goodbye.
void BootServer::SendEndsWhenAllLeft() {
  if (ended_ || !complete_.load(std::memory_order_relaxed) || left_count_ < size_) return;
  ended_ = true;
  std::string gone;
  for (int r = 0; r < size_; ++r)
    if (gone_[r]) {
      const int32_t n = r;
      gone.append(reinterpret_cast<const char*>(&n), sizeof n);
    }
  const BootEnd head{kEndMagic, static_cast<int32_t>(gone.size() / sizeof(int32_t)), 0};
  const std::string end = std::string(reinterpret_cast<const char*>(&head), sizeof head) + gone;
  for (auto& c : conns_)
    if (c->rank >= 0 && c->fd >= 0) SendAll(*c, end);
}

// Blocks up to kHelloTimeoutS: a rank that does not read its answer is gone (it fails alone).
void BootServer::SendAll(const Conn& c, const std::string& bytes) {
  size_t done = 0;
  const double deadline = MonotonicSeconds() + kHelloTimeoutS;
  while (done < bytes.size() && MonotonicSeconds() < deadline) {
    const ssize_t k =
        ::send(c.fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      done += static_cast<size_t>(k);
    } else if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      pollfd p{c.fd, POLLOUT, 0};
      (void)::poll(&p, 1, 100);
    } else {
      break;  // that rank is gone: it fails its own start-up or finalize
    }
  }
}

void BootServer::SendTables() {
  std::string table;
  const BootTable head{kTableMagic, size_, 0};
  table.append(reinterpret_cast<const char*>(&head), sizeof head);
  for (const std::string& card : cards_) {
    const uint32_t len = static_cast<uint32_t>(card.size());
    table.append(reinterpret_cast<const char*>(&len), sizeof len);
    table += card;
  }
  for (auto& c : conns_)
    if (c->rank >= 0) SendAll(*c, table);
  complete_.store(true, std::memory_order_release);
}

void BootServer::Run() {
  for (;;) {
    std::vector<pollfd> fds{{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (auto& c : conns_) fds.push_back({c->fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 500) < 0 && errno != EINTR) return;
    if (fds[0].revents != 0) return;
    for (size_t i = 0; i < conns_.size(); ++i) {
      Conn& c = *conns_[i];
      const bool quiet = c.rank < 0 && MonotonicSeconds() - c.accepted_at > kHelloTimeoutS;
      if (quiet) Say("boot server: dropped " + c.peer + ": no hello within 10 s");
      if (quiet || (fds[i + 2].revents != 0 && !ReadFrom(c))) {
        Closed(c);
        ::close(c.fd);
        c.fd = -1;
      }
    }
    SendEndsWhenAllLeft();
    for (size_t i = conns_.size(); i-- > 0;)
      if (conns_[i]->fd < 0) conns_.erase(conns_.begin() + static_cast<long>(i));
    if (fds[1].revents != 0) Accept();
    strangers_log_.Flush(log_, MonotonicSeconds());
  }
}

void BootServer::Say(const std::string& line) {
  strangers_log_.Log(log_, line, MonotonicSeconds());
}

// At most kMaxAcceptsPerRound a round (after the reads: a connection that sent its hello is
// read before it could be counted a stranger); beyond kMaxStrangers connections without a hello,
// the oldest accepted in an earlier round goes.
void BootServer::Accept() {
  const double round = MonotonicSeconds();
  for (int i = 0; i < kMaxAcceptsPerRound; ++i) {
    sockaddr_in from{};
    socklen_t n = sizeof from;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &n,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    char text[INET_ADDRSTRLEN] = "?";
    ::inet_ntop(AF_INET, &from.sin_addr, text, sizeof text);
    size_t strangers = 0, oldest = conns_.size();
    for (size_t k = 0; k < conns_.size(); ++k) {
      if (conns_[k]->rank >= 0) continue;  // a rank's: never counted, never dropped
      ++strangers;
      if (conns_[k]->accepted_at < round &&
          (oldest == conns_.size() || conns_[k]->accepted_at < conns_[oldest]->accepted_at))
        oldest = k;
    }
    if (strangers >= kMaxStrangers && oldest < conns_.size()) {
      Say("boot server: dropped " + conns_[oldest]->peer + ": " + std::to_string(strangers) +
          " connections have not said who they are");
      ::close(conns_[oldest]->fd);
      conns_.erase(conns_.begin() + static_cast<long>(oldest));
    }
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->accepted_at = MonotonicSeconds();
    c->peer = std::string(text) + ":" + std::to_string(ntohs(from.sin_port));
    conns_.push_back(std::move(c));
  }
}

}  // namespace mpigpu::boot

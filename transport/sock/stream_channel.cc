// StreamChannel's sending side, connections it dials, and close (see stream_channel.h; what
// arrives: stream_channel_recv.cc).
#include "transport/sock/stream_channel.h"

#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "memcopy/clock.h"
#include "memcopy/log.h"

namespace mpigpu::transport {

StreamChannel::~StreamChannel() {
  for (Out& o : out_)
    if (o.fd >= 0) ::close(o.fd);
  for (In& in : in_)
    if (in.fd >= 0 && !in.shared) ::close(in.fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

Status StreamChannel::Attach(TransportHost* host, char*, char*) {
  host_ = host;
  rank_ = host->rank();
  out_.resize(host->size());
  return Listen(&listen_fd_);
}

void StreamChannel::Append(Out& o, const void* p, size_t n) {
  const auto* b = static_cast<const unsigned char*>(p);
  o.buf.insert(o.buf.end(), b, b + n);
}

// Dials dst; *later when its backlog is full (nothing done: try again).
Status StreamChannel::Connect(int dst, bool* later) {
  Out& o = out_[dst];
  int fd = -1;
  Status st = Dial(dst, &fd, later);
  if (*later) return Status::Ok();
  if (!st.ok()) {
    o.broken = true;  // refused or unreachable: the peer is lost (the liveness check says so)
    MPIGPU_INFO("%s channel: rank %d does not answer (%s)", caps().name, dst,
                st.message().c_str());
    return Status::Ok();
  }
  o.fd = fd;
  o.connecting = true;
  o.dialled_at = MonotonicSeconds();
  if (o.redials == 0) o.first_dialled_at = o.dialled_at;
  o.redial_at = 0;
  o.answered = false;
  // Its reader: the peer may answer on it (it adopts it unless it dialled us too).
  In& reader = NewIn();
  reader.fd = fd;
  reader.rank = dst;
  reader.shared = true;
  reader.dialled = true;
  reader.accepted_at = o.dialled_at;
  Tune(fd);
  Hello hello{};
  hello.magic = kHelloMagic;
  hello.rank = rank_;
  const std::string secret = HelloSecret();
  std::memcpy(hello.secret, secret.data(), std::min(secret.size(), sizeof hello.secret));
  // The hello goes before frames kept from a dial the peer closed unanswered (Redial).
  const auto* h = reinterpret_cast<const unsigned char*>(&hello);
  o.buf.insert(o.buf.begin() + static_cast<long>(o.head), h, h + sizeof hello);
  // A dial carries its hello, then holds our frames until the peer answers: a lower rank says
  // whether it takes this connection (it may have dialled us: then we move to its dial), a
  // higher one takes it. Until then a close means the hello was not read: we dial again.
  o.held_from = o.head + sizeof hello;
  return Status::Ok();
}

bool StreamChannel::Redial(int dst) {
  Out& o = out_[static_cast<size_t>(dst)];
  if (o.fd < 0 || o.broken || o.answered || o.held_from == 0) return false;
  const double now = MonotonicSeconds();
  const double budget = DialTimeoutS();
  if (o.redials >= kMaxRedials || (budget > 0 && now - o.first_dialled_at > budget)) return false;
  for (In& in : in_)  // its reader goes with it (a close unanswered is no news of the peer)
    if (in.dialled && in.shared && in.fd == o.fd) in = In();
  ::close(o.fd);
  o.fd = -1;
  o.connecting = false;
  o.buf.erase(o.buf.begin(), o.buf.begin() + static_cast<long>(o.held_from));  // the old hello
  o.head = 0;
  o.held_from = 0;
  ++o.redials;
  o.redial_at = now + std::min(0.01 * static_cast<double>(1 << o.redials), 1.0);
  MPIGPU_INFO("%s channel: rank %d closed our connection before answering it: dialling again "
              "(%d of %d)", caps().name, dst, o.redials, kMaxRedials);
  return true;
}

bool StreamChannel::Connected(Out& o, int dst) {
  if (!o.connecting) return true;
  pollfd p{o.fd, POLLOUT, 0};
  if (::poll(&p, 1, 0) == 0) {
    if (DialTimeoutS() > 0 && MonotonicSeconds() - o.dialled_at > DialTimeoutS()) {
      MPIGPU_INFO("%s channel: no connection to rank %d within %.0f s", caps().name, dst,
                  DialTimeoutS());
      o.broken = true;
    }
    return false;
  }
  int err = 0;
  socklen_t n = sizeof err;
  if (::getsockopt(o.fd, SOL_SOCKET, SO_ERROR, &err, &n) != 0) err = errno;
  if (err != 0 || !Trust(o.fd, dst)) {
    MPIGPU_INFO("%s channel: rank %d does not answer (%s)", caps().name, dst,
                err != 0 ? std::strerror(err) : "not the job's rank");
    o.broken = true;
    return false;
  }
  o.connecting = false;
  ++stats_.stream_connections;
  return true;
}

// Sends what waits (owned bytes, then the lent ones) until the socket takes no more.
Status StreamChannel::Flush(Out& o) {
  if (o.fd < 0) return Status::Ok();  // a dial again waits (Redial): it sends what is kept
  if (o.connecting && !Connected(o, static_cast<int>(&o - out_.data()))) return Status::Ok();
  while (!o.broken && !o.idle()) {
    iovec iov[2];
    int n_iov = 0;
    if (o.held_from > 0) {  // only the hello goes before the answer
      if (o.head >= o.held_from) break;
      iov[n_iov++] = {o.buf.data() + o.head, o.held_from - o.head};
    } else {
      if (o.owned() > 0) iov[n_iov++] = {o.buf.data() + o.head, o.owned()};
      if (o.lent_len > 0) iov[n_iov++] = {const_cast<unsigned char*>(o.lent), o.lent_len};
    }
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = static_cast<size_t>(n_iov);
    const ssize_t n = ::sendmsg(o.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      size_t took = static_cast<size_t>(n);
      const size_t from_buf = std::min(took, o.owned());
      o.head += from_buf;
      took -= from_buf;
      o.lent += took;
      o.lent_len -= took;
      if (o.lent_len == 0) o.lent = nullptr;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (Redial(static_cast<int>(&o - out_.data()))) return Status::Ok();  // closed unanswered
    o.broken = true;  // EPIPE, ECONNRESET, a timeout: the peer is lost
  }
  if (o.broken) {
    o.lent = nullptr;
    o.lent_len = 0;
  }
  if (o.broken || o.owned() == 0) {
    o.buf.clear();
    o.head = 0;
    o.held_from = 0;  // nothing waits (or, broken, nothing will be answered)
  } else if (o.held_from == 0 && o.head > (size_t{1} << 20) && o.head > o.buf.size() / 2) {
    o.buf.erase(o.buf.begin(), o.buf.begin() + static_cast<long>(o.head));
    o.head = 0;
  }
  return Status::Ok();
}

Status StreamChannel::Lost(int dst) const {
  return Status(Err::kPeerFailed, std::string(caps().name) + " channel: the connection to rank " +
                                      std::to_string(dst) + " is lost");
}

bool StreamChannel::Lends(int dst, const void* p, size_t n) const {
  const Out& o = out_[dst];
  const auto* b = static_cast<const unsigned char*>(p);
  return o.lent_len > 0 && o.lent < b + n && b < o.lent + o.lent_len;
}

void StreamChannel::AddStats(TransportStats* s) const {
  s->stream_bytes_sent += stats_.stream_bytes_sent;
  s->stream_bytes_sent_copied += stats_.stream_bytes_sent_copied;
  s->stream_bytes_read += stats_.stream_bytes_read;
  s->stream_bytes_read_copied += stats_.stream_bytes_read_copied;
  s->stream_connections += stats_.stream_connections;
  for (const In& in : in_)
    s->stream_shared_pairs += in.carried && in.rank >= 0 && in.fd >= 0 &&
                              out_[static_cast<size_t>(in.rank)].fd == in.fd;
}

void StreamChannel::Settle(int dst) {
  Out& o = out_[dst];
  if (o.lent_len == 0) return;
  Append(o, o.lent, o.lent_len);
  stats_.stream_bytes_sent_copied += o.lent_len;
  o.lent = nullptr;
  o.lent_len = 0;
}

bool StreamChannel::TrySend(int dst, MsgHeader* h, const Payload& p, Status* copy_error) {
  Out& o = out_[dst];
  if (o.fd < 0 && !o.broken && o.redial_at == 0) {
    bool later = false;
    Status st = Connect(dst, &later);
    if (later) return false;
    if (!st.ok()) {
      *copy_error = std::move(st);
      return true;
    }
  }
  if (o.broken) {  // the peer is lost: nothing sent, the request fails now
    *copy_error = Lost(dst);
    return true;
  }
  if (p.len > kMaxPayload) {
    *copy_error = Status(Err::kInternal, std::string(caps().name) +
                                             " channel: payload larger than a frame");
    return true;
  }
  // Nothing goes behind a lent payload; a lent one goes only to an idle connection (it is read
  // from the owner's memory, so it cannot wait behind bytes of our own, held ones included).
  auto must_wait = [&] { return o.lent_len > 0 || (p.lend && (!o.idle() || o.held_from > 0)); };
  if (must_wait()) {
    (void)Flush(o);
    if (o.broken) {
      *copy_error = Lost(dst);
      return true;
    }
    if (must_wait()) return false;
  }
  if (o.owned() > kMaxBuffered) {
    (void)Flush(o);
    if (o.owned() > kMaxBuffered) return false;
  }
  const FrameHead head{static_cast<uint32_t>(p.len), kFrameMagic};
  stats_.stream_bytes_sent += p.len;
  // Contiguous host bytes are written from where they are when nothing waits before them.
  const unsigned char* direct = nullptr;
  if (p.user == nullptr) {
    direct = static_cast<const unsigned char*>(p.bytes);
  } else if (p.user->loc.is_host() && p.user->layout.contiguous()) {
    direct = static_cast<const unsigned char*>(p.user->ptr) + p.offset;
  }
  if ((direct != nullptr || p.len == 0) && o.fd >= 0 && o.idle() && !o.connecting &&
      o.held_from == 0) {
    unsigned char frame[sizeof head + sizeof *h];
    std::memcpy(frame, &head, sizeof head);
    std::memcpy(frame + sizeof head, h, sizeof *h);
    iovec iov[2] = {{frame, sizeof frame}, {const_cast<unsigned char*>(direct), p.len}};
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = p.len > 0 ? 2 : 1;
    ssize_t n;
    do {
      n = ::sendmsg(o.fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      o.broken = true;
      *copy_error = Lost(dst);
      return true;
    }
    size_t took = n > 0 ? static_cast<size_t>(n) : 0;
    if (took < sizeof frame) Append(o, frame + took, sizeof frame - took);
    took = took > sizeof frame ? took - sizeof frame : 0;
    if (took < p.len) {  // what the socket did not take: referenced if lent, else copied
      if (p.lend) {
        o.lent = direct + took;
        o.lent_len = p.len - took;
      } else {
        Append(o, direct + took, p.len - took);
        stats_.stream_bytes_sent_copied += p.len - took;
      }
    }
    return true;
  }
  const size_t start = o.buf.size();
  o.buf.resize(start + sizeof head + sizeof *h + p.len);
  unsigned char* at = o.buf.data() + start;
  std::memcpy(at, &head, sizeof head);
  std::memcpy(at + sizeof head, h, sizeof *h);
  unsigned char* payload = at + sizeof head + sizeof *h;
  stats_.stream_bytes_sent_copied += p.len;
  if (direct != nullptr) {
    if (p.len > 0) std::memcpy(payload, direct, p.len);
  } else if (p.len > 0) {
    Status st = host_->CopyPackedNow(PackDir::kPack, *p.user, p.offset, p.len, payload);
    if (!st.ok()) {
      o.buf.resize(start);
      *copy_error = std::move(st);
      return true;
    }
  }
  (void)Flush(o);
  return true;
}

PeerState StreamChannel::Peer(int peer, bool probe) {
  if (peer < 0 || peer >= static_cast<int>(out_.size()) || peer == rank_) return PeerState::kAlive;
  // A goodbye on any of its connections means it finalized (its exit may then reset another
  // one, e.g. a dial of ours whose hello it never read); a close without one, that it is lost.
  bool bye = false, closed = false;
  for (const In& in : in_)
    if (in.rank == peer) {
      bye |= in.bye;
      closed |= in.closed;
    }
  if (bye) return PeerState::kFinalized;
  if (closed) return PeerState::kLost;
  Out& o = out_[peer];
  if (probe && o.fd < 0 && !o.broken && o.redial_at == 0) {  // never talked: dial it (hello only)
    bool later = false;
    (void)Connect(peer, &later);
  }
  // What the peer sends on our connection (its messages, its goodbye, a close) is read by the
  // In that shares it, at Poll.
  if (o.fd >= 0 && !o.broken) (void)Flush(o);
  return o.broken ? PeerState::kLost : PeerState::kAlive;
}

// Finalize: a goodbye on every connection, after what is still buffered on ours (bounded: a peer
// that stopped reading is gone).
Status StreamChannel::Close() {
  const double deadline = MonotonicSeconds() + 2;
  const Goodbye goodbye;
  for (In& in : in_)  // only reads this way (a shared one gets its goodbye from its Out below)
    if (in.fd >= 0 && in.rank >= 0 && !in.closed && !in.shared)
      (void)::send(in.fd, &goodbye, sizeof goodbye, MSG_NOSIGNAL | MSG_DONTWAIT);
  for (Out& o : out_) {
    if (o.fd < 0 && o.redial_at > 0 && !o.broken) {  // what waits for a dial again goes now
      bool later = false;
      (void)Connect(static_cast<int>(&o - out_.data()), &later);
    }
    if (o.fd < 0 || o.broken) continue;
    Settle(static_cast<int>(&o - out_.data()));  // its owner may be gone after finalize
    // A dial still waiting for its answer sends what it holds now: all our frames to that rank
    // are on it (none moved), and the peer reads it whatever it answered, so the order holds.
    o.held_from = 0;
    Append(o, &goodbye, sizeof goodbye);
    while (!o.broken && (o.connecting || !o.idle()) && MonotonicSeconds() < deadline) {
      (void)Flush(o);
      if (o.connecting || !o.idle()) ::usleep(100);
    }
  }
  return Status::Ok();
}

}  // namespace mpigpu::transport

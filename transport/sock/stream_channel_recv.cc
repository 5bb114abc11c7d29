// StreamChannel's receiving side (see stream_channel.h): accepting and admitting connections
// (the greeting with the job's secret, adoption of a peer's connection), parsing frames and
// reading payloads where the sink places them, polling.
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

// At most kMaxAcceptsPerPoll at a time; beyond kMaxStrangers the oldest stranger goes. Strangers
// with bytes were read by this Poll before it accepts, so the oldest one left has been silent
// since the last poll() at least, where a rank's dial has its hello read at the first.
Status StreamChannel::Accept() {
  const double start = MonotonicSeconds();
  for (int accepted = 0; accepted < kMaxAcceptsPerPoll; ++accepted) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      return Status::Ok();  // EAGAIN: none waiting (others: try again next poll)
    }
    size_t strangers = 0;
    In* oldest = nullptr;
    for (In& in : in_) {
      if (in.fd < 0 || in.rank >= 0) continue;
      ++strangers;
      if (in.accepted_at < start && (oldest == nullptr || in.accepted_at < oldest->accepted_at))
        oldest = &in;
    }
    if (strangers >= kMaxStrangers && oldest != nullptr) {  // a flood of silent connections
      Warn("dropping the oldest of " + std::to_string(strangers) +
           " connections that have not said who they are");
      Drop(*oldest);
    }
    Tune(fd);
    In& in = NewIn();
    in.fd = fd;
    in.accepted_at = MonotonicSeconds();
  }
  return Status::Ok();
}

LogLimit::Print StreamChannel::WarnPrint() const {
  return [this](const std::string& l) { MPIGPU_WARN("%s channel: %s", caps().name, l.c_str()); };
}

void StreamChannel::Warn(const std::string& line) {
  strangers_log_.Log(WarnPrint(), line, MonotonicSeconds());
}

void StreamChannel::Drop(In& in) {
  if (!in.shared) ::close(in.fd);
  in.fd = -1;
  in.closed = true;
  in.buf = {};
  in.have = 0;
}

// The peer's dial `in` becomes our way to it too; the answer goes first on it, then whatever
// waited for a dial of ours again (Redial).
void StreamChannel::Adopt(Out& o, In& in, const Answer& a) {
  o.fd = in.fd;
  in.shared = true;
  o.redial_at = 0;
  o.held_from = 0;
  const auto* b = reinterpret_cast<const unsigned char*>(&a);
  o.buf.insert(o.buf.begin() + static_cast<long>(o.head), b, b + sizeof a);
  (void)Flush(o);
}

bool StreamChannel::Greet(In& in, size_t* at) {
  if (in.have < sizeof(Hello)) {
    if (in.closed) {
      if (CurrentLogLevel() >= LogLevel::kInfo)
        Warn("a connection closed before saying who it is");
      Drop(in);
    } else if (MonotonicSeconds() - in.accepted_at > kHelloTimeoutS) {
      Warn("dropping a connection that said nothing for " +
           std::to_string(static_cast<int>(kHelloTimeoutS)) + " s");
      Drop(in);
    }
    return false;
  }
  Hello hello;
  std::memcpy(&hello, in.buf.data(), sizeof hello);
  const bool known = hello.magic == kHelloMagic && hello.rank >= 0 &&
                     hello.rank < host_->size() && Admit(in.fd, hello);
  bool twice = false;  // a second accepted connection (our own dial to it does not count)
  for (const In& other : in_)
    twice |= known && &other != &in && !other.dialled && other.rank == hello.rank;
  if (!known || twice) {  // not one of the job's ranks, or a second connection: refused
    Warn("refusing a connection that is not a rank of this job");
    Drop(in);
    return false;
  }
  in.rank = hello.rank;
  *at = sizeof hello;
  ++stats_.stream_connections;
  Out& o = out_[static_cast<size_t>(in.rank)];
  if (in.rank > rank_) {  // a higher rank's dial waits for our answer
    const bool take = o.fd < 0 && !o.broken;  // we have not dialled it: one connection
    Answer a;
    a.head.magic = take ? kTakenMagic : kRefusedMagic;
    if (take) {
      Adopt(o, in, a);
    } else if (::send(in.fd, &a, sizeof a, MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof a) {
      MPIGPU_INFO("%s channel: could not answer rank %d's connection", caps().name, in.rank);
    }
  } else {  // a lower rank's dial waits for our answer too: Taken, always
    Answer a;
    a.head.magic = kTakenMagic;
    if (o.fd < 0 && !o.broken) {  // we have none (or wait to dial again): ours too
      Adopt(o, in, a);
    } else if (o.held_from > 0) {  // we both dialled: ours gives way (it carried only its hello)
      MoveTo(o, in);
      Append(o, &a, sizeof a);
      (void)Flush(o);
    } else if (::send(in.fd, &a, sizeof a, MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof a) {
      MPIGPU_INFO("%s channel: could not answer rank %d's connection", caps().name, in.rank);
    }
  }
  return true;
}

// Hands every whole frame in the connection's buffer to the sink, in order, and starts a placed
// payload where the sink names a place for it.
Status StreamChannel::Parse(In& in, ChannelSink* sink, bool* stop) {
  size_t at = 0;
  if (in.rank < 0 && !Greet(in, &at)) return Status::Ok();
  Status st;
  constexpr size_t kHead = sizeof(FrameHead) + sizeof(MsgHeader);
  while (st.ok() && !in.placing && in.have - at >= kHead) {
    FrameHead head;
    std::memcpy(&head, in.buf.data() + at, sizeof head);
    if (head.magic == kByeMagic) {
      in.bye = true;
      at += kHead;
      continue;
    }
    if (head.magic == kTakenMagic || head.magic == kRefusedMagic) {  // on our dial, to a lower rank
      Out& o = out_[static_cast<size_t>(in.rank)];
      if (in.dialled && in.shared && o.fd == in.fd && o.held_from > 0) {
        // Taken: ours carries the pair, the held frames go. Refused: its dial comes, and Greet
        // moves them there.
        if (head.magic == kTakenMagic) {
          o.held_from = 0;
          (void)Flush(o);
        }
      }
      at += kHead;
      continue;
    }
    if (head.magic != kFrameMagic || head.len > kMaxPayload)
      return Status(Err::kInternal, std::string(caps().name) + " channel: a bad frame from rank " +
                                        std::to_string(in.rank));
    MsgHeader h;
    std::memcpy(&h, in.buf.data() + at + sizeof head, sizeof h);
    h.src = in.rank;  // the connection says who sent it
    in.carried = true;
    const unsigned char* payload = in.buf.data() + at + kHead;
    const size_t here = std::min<size_t>(in.have - at - kHead, head.len);
    if (head.len > 0) {
      const PayloadPlace place = sink->PlacePayload(h, head.len);
      if (place.later) {
        *stop = true;
        break;
      }
      if (place.at != nullptr) {
        stats_.stream_bytes_read += head.len;
        stats_.stream_bytes_read_copied += here;
        if (here > 0) std::memcpy(place.at, payload, here);
        at += kHead + here;
        in.placed_last = true;
        if (here == head.len) {
          st = sink->Deliver(h, place.at, head.len);
          continue;
        }
        in.placing = true;
        in.dropping = false;
        in.ph = h;
        in.plen = head.len;
        in.pdone = here;
        break;
      }
    }
    if (here < head.len) {
      if (in.buf.size() < at + kHead + head.len) in.buf.resize(at + kHead + head.len);
      break;
    }
    stats_.stream_bytes_read += head.len;
    stats_.stream_bytes_read_copied += head.len;
    in.placed_last = false;
    st = sink->Deliver(h, payload, head.len);
    at += kHead + head.len;
  }
  if (at > 0) {
    std::memmove(in.buf.data(), in.buf.data() + at, in.have - at);
    in.have -= at;
  }
  return st;
}

// One read of a placed payload's rest (asking the sink again where it goes) and of what follows
// it into the buffer; the payload delivered once whole.
Status StreamChannel::ReadPlaced(In& in, ChannelSink* sink, bool* more, bool* stop) {
  *more = false;
  PayloadPlace place;
  if (!in.dropping) {
    place = sink->PlacePayload(in.ph, in.plen);
    if (place.later) {
      *stop = true;
      return Status::Ok();
    }
    if (place.at == nullptr) in.dropping = true;  // its request went: read and drop the rest
  }
  const size_t rest = in.plen - in.pdone;
  if (in.buf.size() < in.have + kPlacedTail) in.buf.resize(in.have + kPlacedTail);
  // What this read asks for: the rest of the payload (dropped into the buffer's free room), or
  // the rest placed plus the buffer's tail.
  const size_t want = in.dropping ? std::min(rest, in.buf.size() - in.have) : rest + kPlacedTail;
  ssize_t n;
  if (in.dropping) {
    do {
      n = ::recv(in.fd, in.buf.data() + in.have, want, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
  } else {
    iovec iov[2] = {{place.at + in.pdone, rest}, {in.buf.data() + in.have, kPlacedTail}};
    msghdr m{};
    m.msg_iov = iov;
    m.msg_iovlen = 2;
    do {
      n = ::recvmsg(in.fd, &m, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
  }
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
    in.closed = true;  // EOF or a reset: finalized (after its goodbye) or lost
    return Status::Ok();
  }
  if (n < 0) return Status::Ok();
  const size_t got = static_cast<size_t>(n);
  // A short read drained the socket: asking again would find nothing (a wasted syscall).
  *more = got == want;
  const size_t mine = std::min(got, rest);
  in.pdone += mine;
  if (!in.dropping) in.have += got - mine;
  if (in.pdone < in.plen) return Status::Ok();
  in.placing = false;
  if (in.dropping) return Status::Ok();
  return sink->Deliver(in.ph, place.at, in.plen);
}

// Reads what the connection has, handing every whole frame to the sink in order. A read that
// returns less than it asked for drained the socket: what came is parsed and the connection
// waits for the next Poll that finds it readable (no second read that would find nothing).
Status StreamChannel::Read(In& in, ChannelSink* sink) {
  in.stalled = false;
  bool drained = false;
  for (;;) {
    bool stop = false;
    if (!in.placing) MPIGPU_RETURN_IF_ERROR(Parse(in, sink, &stop));
    if (stop) {
      in.stalled = true;
      return Status::Ok();
    }
    if (drained || in.fd < 0 || in.closed) return Status::Ok();
    if (in.placing) {
      bool more = false;
      MPIGPU_RETURN_IF_ERROR(ReadPlaced(in, sink, &more, &stop));
      if (stop) {
        in.stalled = true;
        return Status::Ok();
      }
      drained = !more;
      continue;
    }
    if (in.buf.size() - in.have < (size_t{64} << 10)) in.buf.resize(in.have + kReadChunk);
    const size_t room = in.buf.size() - in.have;
    const size_t want = in.placed_last ? std::min(room, kPlacedTail) : room;
    const ssize_t n = ::recv(in.fd, in.buf.data() + in.have, want, MSG_DONTWAIT);
    if (n > 0) {
      if (in.dialled && out_[static_cast<size_t>(in.rank)].fd == in.fd)
        out_[static_cast<size_t>(in.rank)].answered = true;
      in.have += static_cast<size_t>(n);
      drained = static_cast<size_t>(n) < want;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
      in.closed = true;  // EOF or a reset: finalized (after its goodbye) or lost
    // The frames read before the close are still delivered.
    if (in.closed) return Parse(in, sink, &stop);
    return Status::Ok();
  }
}

Status StreamChannel::Ready() {
  poll_fds_.clear();
  poll_who_.clear();
  poll_fds_.push_back({listen_fd_, POLLIN, 0});
  poll_who_.push_back(-1);
  for (size_t i = 0; i < in_.size(); ++i) {
    if (in_[i].fd < 0 || in_[i].closed) continue;
    poll_fds_.push_back({in_[i].fd, POLLIN | POLLRDHUP, 0});
    poll_who_.push_back(static_cast<long>(i));
  }
  for (size_t d = 0; d < out_.size(); ++d) {
    const Out& o = out_[d];
    if (o.fd < 0 || o.broken || o.connecting || o.idle()) continue;
    if (o.held_from > 0 && o.head >= o.held_from) continue;  // waiting for the answer
    poll_fds_.push_back({o.fd, POLLOUT, 0});
    poll_who_.push_back(-2 - static_cast<long>(d));
  }
  int n;
  do {
    n = ::poll(poll_fds_.data(), poll_fds_.size(), 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return SysError("stream channel: poll");
  return Status::Ok();
}

// One poll() for every socket; only the ready ones (and those that must be looked at anyway:
// a stalled sink, a stranger past its hello's time, a dial under way) cost a syscall more.
Status StreamChannel::Poll(ChannelSink* sink) {
  MPIGPU_RETURN_IF_ERROR(Ready());
  bool accept = false;
  double now = -1;
  for (size_t k = 0; k < poll_fds_.size(); ++k) {
    const long who = poll_who_[k];
    const bool ready = poll_fds_[k].revents != 0;
    if (who == -1) {
      accept = ready;
    } else if (who >= 0) {
      In& in = in_[static_cast<size_t>(who)];
      bool visit = ready || in.stalled;
      if (!visit && in.rank < 0) {  // a stranger: dropped once its hello is overdue
        if (now < 0) now = MonotonicSeconds();
        visit = now - in.accepted_at > kHelloTimeoutS;
      }
      if (visit && in.fd >= 0 && !in.closed) {
        MPIGPU_RETURN_IF_ERROR(Read(in, sink));
        if (in.closed && in.dialled && in.shared) (void)Redial(in.rank);
      }
    } else if (ready) {
      MPIGPU_RETURN_IF_ERROR(Flush(out_[static_cast<size_t>(-2 - who)]));
    }
  }
  for (size_t d = 0; d < out_.size(); ++d) {
    Out& o = out_[d];
    // A dial under way: made, failed or overdue (rare: no syscall saved).
    if (o.fd >= 0 && o.connecting && !o.broken) MPIGPU_RETURN_IF_ERROR(Flush(o));
    if (o.fd < 0 && o.redial_at > 0 && !o.broken) {  // a dial again, once its backoff is over
      if (now < 0) now = MonotonicSeconds();
      bool later = false;
      if (now >= o.redial_at) MPIGPU_RETURN_IF_ERROR(Connect(static_cast<int>(d), &later));
    }
  }
  if (strangers_log_.held() > 0)
    strangers_log_.Flush(WarnPrint(), now < 0 ? MonotonicSeconds() : now);
  if (accept) MPIGPU_RETURN_IF_ERROR(Accept());
  return Status::Ok();
}

// A closed slot is reused: strangers that come and go do not grow the list. (A deque: an In
// being read keeps its address when one is added, e.g. by a dial from inside a sink callback.)
StreamChannel::In& StreamChannel::NewIn() {
  auto slot = std::find_if(in_.begin(), in_.end(), [](const In& in) { return in.fd < 0; });
  if (slot == in_.end()) {
    in_.emplace_back();
    return in_.back();
  }
  *slot = In();
  return *slot;
}

// Both dialled: the lower rank's dial carries the pair. Ours (to that lower rank) has carried
// only its hello (held_from), so what waits behind it moves, in order, to theirs; ours stays
// open and read (the peer's goodbye comes there), owned by its reader now.
void StreamChannel::MoveTo(Out& o, In& theirs) {
  const bool said_hello = !o.connecting && o.head >= o.held_from;
  for (In& ours : in_) {
    if (!ours.shared || !ours.dialled || ours.fd != o.fd) continue;
    ours.shared = false;
    if (!said_hello) Drop(ours);  // a dial that never said hello would only be a stranger there
  }
  const size_t keep_from = std::max(o.head, o.held_from);  // a hello not yet sent stays behind
  o.buf.erase(o.buf.begin(), o.buf.begin() + static_cast<long>(keep_from));
  o.head = 0;
  o.held_from = 0;
  o.connecting = false;
  o.fd = theirs.fd;
  theirs.shared = true;
  (void)Flush(o);
}

bool StreamChannel::Pending() const {
  for (const In& in : in_) {
    if (in.fd < 0 || in.closed) continue;
    unsigned char c;
    if (::recv(in.fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) > 0) return true;
  }
  return false;
}

}  // namespace mpigpu::transport

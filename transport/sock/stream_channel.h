// StreamChannel: a channel whose pairs talk over stream sockets, the part that does not depend on
// the socket's family. The Unix-socket loopback back-end (sock_channel.h) and the TCP netmod
// (internode/tcp/tcp_channel.h) are it plus how to listen, dial and admit.
//
// One connection per pair carries both directions, so a reply carries the ACK of the message it
// answers (two connections cost four packets a round trip). A rank dials a peer on its first
// message to it (or to watch it while waiting on it), unless the peer's connection came first:
// an admitted connection from a rank we have not dialled becomes our way to it too. When both
// dial at once, the lower rank's dial carries the pair: a dial to a lower rank sends its hello
// and holds our frames until that rank answers, Taken (it had not dialled: this connection
// carries both directions) or Refused (it dialled us too: when its hello arrives, the held
// frames move there, in order, and our dial stays open only to be read). So a rank sends all
// its messages to a peer on one connection and the pair's order holds; the first message from
// a higher rank to a lower one waits for the answer, which the higher rank's progress reads (as
// Open MPI's TCP transport queues until its connection handshake completes); at Close a held
// dial sends what it holds (the peer reads it, whatever it answered). The connection's first
// bytes are a Hello (who opens it, and the job's secret where the family needs one); the
// listener hands the hello to Admit and refuses what does not pass, a second accepted
// connection for a rank included; the dialler checks the other end with Trust. Then frames:
// FrameHead (the payload's length), the MsgHeader (src set by the receiver from the
// connection), the payload. At Close a rank sends a goodbye frame on every connection, once
// each, after what is still buffered, so that its peers tell a finalized rank (a goodbye on any
// of its connections, then EOF) from a lost one (EOF or a reset without one).
//
// A connection we send on is an Out (it owns the fd); one we read is an In. A shared connection
// is both: an In with `shared` reads the fd its rank's Out owns: our dial's reader (made with
// the dial), an accepted connection we send on too, or the lower rank's dial we moved to.
//
// Writes are non-blocking. A frame whose payload is contiguous host memory goes out with one
// sendmsg (head, header, payload straight from the sender's memory) when nothing waits on the
// connection; only what the socket did not take is kept: copied into the connection's buffer,
// or, for a lent payload (Payload::lend), referenced until the socket took it (Lends). While a
// lent payload waits nothing else is queued behind it (TrySend says no room), so the pair's
// order holds and at most one lent range per connection exists. Payloads that need packing
// (device memory, strided layouts) are packed into the buffer. What waits is moved by every
// Poll; the buffer holds up to kMaxBuffered, then TrySend says no room.
//
// Reads: frames are parsed from the connection's buffer; before a payload is read the sink is
// asked where it goes (ChannelSink::PlacePayload): the bytes already buffered are copied there
// and the rest is read straight into it (readv with a 4 KiB tail for the next frame heads), or
// the connection waits when the sink has no room yet.
//
// Strangers (anyone who can reach the port): a connection that has not said hello after
// kHelloTimeoutS is dropped, and beyond kMaxStrangers of them the oldest silent one is dropped
// for each new one (never the new one: a rank's dial says hello at once, so it is read at the
// next Poll and cannot be crowded out); at most kMaxAcceptsPerPoll are accepted per Poll, so
// those dropped were silent through at least one Poll. Every dial waits for the peer's answer
// (Taken or Refused) before its frames go, so a dial the peer closed unanswered carried only its
// hello: it is dialled again (kMaxRedials times at most, with a backoff, within DialTimeoutS)
// instead of counting as the peer's death; a peer that is gone refuses or times out the new dial.
// What strangers cause is logged through a LogLimit (a flood writes a few lines and a count).
#pragma once

#include <poll.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "memcopy/log_limit.h"
#include "transport/core/backend.h"
#include "transport/core/job_secret.h"

namespace mpigpu::transport {

class StreamChannel : public Channel {
 public:
  ~StreamChannel() override;

  SegmentNeeds Needs(const TransportConfig&, int) const override { return {}; }
  Status Attach(TransportHost* host, char* dense, char* sparse) override;
  bool TrySend(int dst, MsgHeader* h, const Payload& p, Status* copy_error) override;
  bool TrySendEagerNow(int, int, int, const void*, size_t) override { return false; }
  bool TryRecvEagerNow(int, int, int, void*, size_t, int, MsgInfo*) override { return false; }
  Status Poll(ChannelSink* sink) override;
  bool Pending() const override;
  void PrepareDeviceCopy() override {}
  Status Close() override;
  PeerState Peer(int peer, bool probe) override;
  bool Lends(int dst, const void* p, size_t n) const override;
  void Settle(int dst) override;
  void AddStats(TransportStats* s) const override;

  static constexpr size_t kMaxPayload = size_t{1} << 20;
  static constexpr size_t kMaxBuffered = size_t{8} << 20;
  static constexpr double kHelloTimeoutS = 10;
  static constexpr size_t kMaxStrangers = 64;
  static constexpr int kMaxAcceptsPerPoll = 16;
  static constexpr int kMaxRedials = 8;
  // Reading into a placed payload, the bytes after it are read into the connection's buffer up
  // to this many (the next frame heads; more would be payload copied once more).
  static constexpr size_t kPlacedTail = size_t{4} << 10;
  // Bytes read into the connection's buffer at a time otherwise.
  static constexpr size_t kReadChunk = size_t{256} << 10;
  // A connection's first bytes: who opens it.
  struct Hello {
    uint64_t magic;  // kHelloMagic
    int32_t rank;
    int32_t pad;
    unsigned char secret[kJobSecretBytes];  // the job's (Bootstrap::secret), zero where unused
  };
  static constexpr uint64_t kHelloMagic = 0x6d70696775736f63ull;

 protected:
  // The family's part. Listen: the listening socket (non-blocking). Dial: a connection to
  // `dst` under way or made (*fd); *later: the peer's backlog is full, nothing done; an error
  // status ends the pair (its peer is lost). Admit: whether the hello on accepted `fd` comes
  // from the rank it names. Trust: whether the connection we dialled reaches `dst` (checked
  // once it is made). Tune: options for each connection, either side.
  virtual Status Listen(int* fd) = 0;
  virtual Status Dial(int dst, int* fd, bool* later) = 0;
  virtual bool Admit(int fd, const Hello& hello) const = 0;
  virtual bool Trust(int fd, int dst) const = 0;
  virtual void Tune(int fd) const {}
  // The bytes our hellos carry as the job's secret (empty: zeros).
  virtual std::string HelloSecret() const { return {}; }
  // How long a dial may take before the peer counts as lost (0: no limit).
  virtual double DialTimeoutS() const { return 0; }

  TransportHost* host_ = nullptr;
  int rank_ = 0;

 private:
  struct FrameHead {
    uint32_t len;    // payload bytes
    uint32_t magic;  // kFrameMagic, or kByeMagic (len 0: the sender finalized)
  };
  static constexpr uint32_t kFrameMagic = 0x6d706766;  // "mpgf"
  static constexpr uint32_t kByeMagic = 0x6d706762;    // "mpgb"
  // A lower rank's answer to a higher rank's dial: it takes it (for both directions), or it
  // dialled the higher rank itself (refused: the higher rank moves to that dial).
  static constexpr uint32_t kTakenMagic = 0x6d706774;    // "mpgt"
  static constexpr uint32_t kRefusedMagic = 0x6d706772;  // "mpgr"
  // The goodbye, the same frame on either kind of connection: a frame head and an empty header.
  struct Goodbye {
    FrameHead head{0, kByeMagic};
    MsgHeader none{};
  };
  using Answer = Goodbye;  // the same shape; head.magic kTakenMagic or kRefusedMagic
  struct Out {  // our connection to a peer
    int fd = -1;
    bool connecting = false;  // dialled, not yet made
    double dialled_at = 0;
    bool broken = false;  // refused, a write failed, or the peer closed: no more sends
    std::vector<unsigned char> buf;  // bytes not yet taken by the socket
    size_t head = 0;                 // first of them
    const unsigned char* lent = nullptr;  // then these lent bytes (none queued behind them)
    size_t lent_len = 0;
    // Our dial: bytes from here on (our frames) wait for the peer's answer; 0: none wait.
    size_t held_from = 0;
    bool answered = false;         // bytes came back on our dial: the peer read its hello
    double first_dialled_at = 0;   // the first dial to this peer (the redials' time budget)
    double redial_at = 0;          // fd < 0: dial again then (0: no redial waits)
    int redials = 0;
    size_t owned() const { return buf.size() - head; }
    bool idle() const { return owned() == 0 && lent_len == 0; }
  };
  struct In {  // a connection from a peer (rank -1 until its hello)
    int fd = -1;
    int rank = -1;
    bool shared = false;   // fd is out_[rank].fd, which owns it (never closed through the In)
    bool dialled = false;  // our own dial (no hello on it), not an accepted connection
    bool carried = false;  // a message came on it
    bool closed = false;
    bool bye = false;  // its rank said goodbye before closing
    double accepted_at = 0;
    std::vector<unsigned char> buf;
    size_t have = 0;
    // A frame whose payload is being read where the sink placed it (or dropped: the place went).
    bool placing = false;
    bool dropping = false;
    MsgHeader ph{};
    size_t plen = 0;   // its payload's bytes
    size_t pdone = 0;  // of them read
    // The last frame's payload was placed: the next is likely another such frame, so reads
    // into the buffer take kPlacedTail at most (its head, little of its payload).
    bool placed_last = false;
    // The sink had no room for a payload: its bytes may all be read already, so the next Poll
    // visits this connection whether or not the socket says it is readable.
    bool stalled = false;
  };

  Status Connect(int dst, bool* later);
  bool Connected(Out& o, int dst);  // a dial under way finished (or failed: broken)
  Status Flush(Out& o);
  Status Accept();
  Status Read(In& in, ChannelSink* sink);
  // One poll() over the listening socket, the connections we read and those with bytes waiting
  // to go: which are ready (in poll_ready_, in that order). The list is remade each call.
  Status Ready();
  // Parses the frames in in.buf; *stop: the sink has no room for the next payload yet.
  Status Parse(In& in, ChannelSink* sink, bool* stop);
  // Reads into the placed payload (and the buffer's tail); *more: the read filled all it asked
  // for (the socket may hold more), else the socket is drained (or closed, or the sink stopped).
  Status ReadPlaced(In& in, ChannelSink* sink, bool* more, bool* stop);
  Status Lost(int dst) const;
  In& NewIn();
  void MoveTo(Out& o, In& theirs);
  void Adopt(Out& o, In& in, const Answer& a);  // the peer's dial becomes ours too
  bool Greet(In& in, size_t* at);  // the hello: admitted, or the connection dropped
  void Drop(In& in);
  // Our dial to dst closed or failed before its answer: true when it is dialled again later
  // (its frames kept), false when the peer counts as lost.
  bool Redial(int dst);
  void Warn(const std::string& line);  // a line strangers cause, through strangers_log_
  LogLimit::Print WarnPrint() const;
  void Append(Out& o, const void* p, size_t n);

  TransportStats stats_;  // its stream_* counters
  LogLimit strangers_log_{"stream channel: connections refused or dropped"};
  int listen_fd_ = -1;
  std::vector<Out> out_;
  std::deque<In> in_;
  // Poll's poll() set, remade each call: what each entry is (-1 the listening socket, i >= 0
  // in_[i], -2 - d out_[d]).
  std::vector<pollfd> poll_fds_;
  std::vector<long> poll_who_;
};

}  // namespace mpigpu::transport

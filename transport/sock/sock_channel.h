// The socket channel: every pair's messages as frames on Unix stream sockets (MPIGPU_CHANNEL=
// socket). The loopback test back-end of the seam: no shared memory on the message path, so the
// transport suite run over it proves that the core and the LMT interface carry a whole job the way
// a network back-end will (transport/lmt/chan_lmt.h carries the large messages' data).
//
// Each rank listens on an abstract Unix socket named after the job and the rank. A rank connects
// to a peer on its first message to it and uses that connection for its messages to that peer
// only (the peer's to it come on the connection the peer opens), so there is no connect race.
// Who may talk: a connection's first frame says which rank opens it, and the listener accepts it
// only if the kernel's credentials of the connecting process (SO_PEERCRED) are this user's and
// that rank's pid in the job's rank table; the connecting side checks the listener the same way.
//
// A frame: FrameHead (the payload's length), the MsgHeader (src set by the receiver from the
// connection), the payload. Writes are non-blocking: what the socket does not take waits in the
// connection's buffer (up to kMaxBuffered, then TrySend says no room), and every Poll moves it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "transport/core/backend.h"

namespace mpigpu::transport {

class SockChannel final : public Channel {
 public:
  SockChannel() = default;
  ~SockChannel() override;

  const ChannelCaps& caps() const override { return kCaps; }
  SegmentNeeds Needs(const TransportConfig&, int) const override { return {}; }
  Status Attach(TransportHost* host, char* dense, char* sparse) override;
  bool TrySend(int dst, MsgHeader* h, const Payload& p, Status* copy_error) override;
  bool TrySendEagerNow(int, int, int, const void*, size_t) override { return false; }
  bool TryRecvEagerNow(int, int, int, void*, size_t, int, MsgInfo*) override { return false; }
  Status Poll(ChannelSink* sink) override;
  bool Pending() const override;
  void PrepareDeviceCopy() override {}
  Status Close() override;

  static constexpr size_t kMaxPayload = size_t{1} << 20;
  static constexpr size_t kMaxBuffered = size_t{8} << 20;
  // A connection's first bytes: who opens it (checked against the kernel's credentials).
  struct Hello {
    uint64_t magic;  // kHelloMagic
    int32_t rank;
    int32_t pad;
  };
  static constexpr uint64_t kHelloMagic = 0x6d70696775736f63ull;
  // The abstract socket name rank `rank` of job `jobid` listens on.
  static std::string Address(const std::string& jobid, int rank);

 private:
  static constexpr ChannelCaps kCaps{"socket", kMaxPayload, /*fast_paths=*/false,
                                     /*same_node=*/true};
  struct FrameHead {
    uint32_t len;    // payload bytes
    uint32_t magic;  // kFrameMagic
  };
  static constexpr uint32_t kFrameMagic = 0x6d706766;  // "mpgf"
  struct Out {  // our connection to a peer
    int fd = -1;
    bool broken = false;  // a write failed: the peer is gone (the liveness check says so)
    std::vector<unsigned char> buf;  // bytes not yet taken by the socket
    size_t head = 0;                 // first of them
  };
  struct In {  // a connection from a peer (rank -1 until its hello)
    int fd = -1;
    int rank = -1;
    bool closed = false;
    std::vector<unsigned char> buf;
    size_t have = 0;
  };

  Status Connect(int dst, bool* later);
  Status Flush(Out& o);
  Status Accept();
  Status Read(In& in, ChannelSink* sink);
  bool CredentialsOf(int fd, int rank) const;

  TransportHost* host_ = nullptr;
  int rank_ = 0;
  int listen_fd_ = -1;
  std::vector<Out> out_;
  std::vector<In> in_;
};

}  // namespace mpigpu::transport

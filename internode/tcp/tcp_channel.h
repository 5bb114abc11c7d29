// The TCP netmod's channel: every message to a peer on another node (or, with MPIGPU_SHM=0, on
// this one) as frames on TCP connections. A StreamChannel (transport/sock/stream_channel.h:
// framing, buffering, hellos, goodbyes, connections made on first use) over IPv4 sockets.
//
// Each rank listens on one address (MPIGPU_NET_IF, else the one its bootstrap used), an
// ephemeral port, and publishes "a.b.c.d:port" as its card. Who may talk: a connection's hello
// must carry the job's secret (Bootstrap::secret, handed out by the bootstrap, never on a
// command line), compared in constant time; anything else is refused and logged. The secret is
// not encrypted on the wire: it keeps out strangers and port scans, not someone who can read the
// job's traffic. Failure: TCP_USER_TIMEOUT and keepalives of MPIGPU_NET_TIMEOUT make a dead
// link or host an error on the connection; a dead process's kernel resets its connections.
// Large messages go through chan_lmt (frames on this channel).
#pragma once

#include <netinet/in.h>

#include <string>
#include <vector>

#include "transport/sock/stream_channel.h"

namespace mpigpu::transport {

class TcpChannel final : public StreamChannel {
 public:
  const ChannelCaps& caps() const override { return kCaps; }
  std::string Card() const override { return card_; }
  Status SetCards(const std::vector<std::string>& cards) override;

  // "a.b.c.d:port" into an address; false for anything else.
  static bool ParseCard(const std::string& card, sockaddr_in* out);
  // MPIGPU_NET_IF's value (an IPv4 address, or an interface's first IPv4 address) or, when it
  // is empty, `fallback`; kInvalidArg naming it when it is neither.
  static Status ListenAddress(const char* net_if, const std::string& fallback, in_addr* out);

 protected:
  Status Listen(int* fd) override;
  Status Dial(int dst, int* fd, bool* later) override;
  bool Admit(int fd, const Hello& hello) const override;
  bool Trust(int, int) const override { return true; }  // the peer checks our hello
  void Tune(int fd) const override;
  static void SocketBuffers(int fd);
  std::string HelloSecret() const override { return host_->boot().secret(); }
  double DialTimeoutS() const override;

 private:
  static constexpr ChannelCaps kCaps{"tcp", ChannelCaps::kLends | ChannelCaps::kPlaces,
                                     kMaxPayload};
  std::string card_;
  std::vector<sockaddr_in> peers_;
};

}  // namespace mpigpu::transport

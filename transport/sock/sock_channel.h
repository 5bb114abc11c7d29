// The socket channel: every pair's messages as frames on Unix stream sockets (MPIGPU_CHANNEL=
// socket). The loopback test back-end of the seam: no shared memory on the message path, so the
// transport suite run over it proves that the core and the LMT interface carry a whole job the way
// a network back-end will (transport/lmt/chan_lmt.h carries the large messages' data).
//
// A StreamChannel (stream_channel.h: framing, buffering, hellos, goodbyes) over abstract Unix
// sockets named after the job and the rank. Who may talk: the kernel's credentials of the process
// at the other end (SO_PEERCRED) must be this user's and the pid the job's rank table holds for
// the rank it claims (listener) or dials (dialler).
#pragma once

#include <string>

#include "transport/sock/stream_channel.h"

namespace mpigpu::transport {

class SockChannel final : public StreamChannel {
 public:
  const ChannelCaps& caps() const override { return kCaps; }
  std::string Card() const override { return {}; }
  Status SetCards(const std::vector<std::string>&) override { return Status::Ok(); }

  // The abstract socket name rank `rank` of job `jobid` listens on.
  static std::string Address(const std::string& jobid, int rank);

 protected:
  Status Listen(int* fd) override;
  Status Dial(int dst, int* fd, bool* later) override;
  bool Admit(int fd, const Hello& hello) const override { return CredentialsOf(fd, hello.rank); }
  bool Trust(int fd, int dst) const override { return CredentialsOf(fd, dst); }

 private:
  static constexpr ChannelCaps kCaps{
      "socket", ChannelCaps::kSameNode | ChannelCaps::kLends | ChannelCaps::kPlaces, kMaxPayload};
  bool CredentialsOf(int fd, int rank) const;
};

}  // namespace mpigpu::transport

// The launcher's end of the links of ranks on other hosts (transport/launcher_link.h): a TCP
// listener on the address the other hosts reach this one by (MPIGPU_LAUNCHER_ADDR). A connection
// counts once its RemoteLinkHello proves the job's secret and names a rank of the job that has no
// link yet; then its "J <rank>" / "F <rank>" records and its close are the rank's events.
// Strangers, garbage, a second link for a rank and records naming another rank are cut off and
// reported on stderr (rate-limited: a few lines, then a count per interval); at most
// kMaxPending connections wait for their hello (the oldest is dropped beyond), so a flood cannot
// crowd the job out. Keepalives (about 10 s) close the link of a rank
// whose host can no longer be reached.
//
// Single-threaded: the supervisor polls Fds() with its other descriptors and calls Serve() when
// any is ready. Nothing here blocks.
#pragma once

#include <poll.h>

#include <string>
#include <vector>

#include "memcopy/log_limit.h"
#include "memcopy/status.h"

namespace mpigpu {
namespace launcher {

struct LinkEvent {
  enum Kind { kJoined, kFinalized, kClosed } kind;
  int rank;
};

class LinkServer {
 public:
  LinkServer() = default;
  LinkServer(const LinkServer&) = delete;
  LinkServer& operator=(const LinkServer&) = delete;
  ~LinkServer();

  // Listens on `ip` (IPv4, any port) for the links of a job of `size` ranks proving `secret`.
  Status Start(const std::string& ip, int size, const std::string& secret);
  const std::string& address() const { return address_; }  // "a.b.c.d:port"

  // The descriptors to poll for POLLIN (the listener and every connection).
  void AppendPollFds(std::vector<pollfd>* fds) const;
  // Accepts, reads and closes what is ready (a poll with no wait); appends what ranks did.
  void Serve(std::vector<LinkEvent>* events);
  // Whether rank r's link is open now (it said hello and has not closed).
  bool Open(int r) const;

  static constexpr size_t kMaxPending = 64;

 private:
  struct Conn {
    int fd = -1;
    int rank = -1;     // once its hello passed
    std::string peer;  // its address, for messages
    std::string in;    // the hello's bytes, then a partial record
  };
  void Accept();
  bool Read(Conn& c, std::vector<LinkEvent>* events);  // false: drop it (closed or refused)
  void Limited(const std::string& line);  // a line strangers cause, through strangers_log_

  int size_ = 0;
  std::string secret_;
  std::string address_;
  int listen_fd_ = -1;
  std::vector<Conn> conns_;
  std::vector<char> seen_;  // per rank: a link was admitted (once only)
  std::vector<char> open_;  // per rank: that link is open
  LogLimit strangers_log_{"link server: connections refused or dropped"};
};

}  // namespace launcher
}  // namespace mpigpu

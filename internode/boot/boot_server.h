// BootServer: the launcher's side of the boot protocol (boot_wire.h) for a job that spans nodes.
// It listens on one address, admits a connection only when its hello carries the job's secret and
// names a rank not yet seen, and once every rank's card is in, sends each rank the whole table.
// It keeps the connections open for the job's life (a rank sees its launcher's end close, and
// the server a rank's): at finalize every rank says goodbye, and once each rank has said it or
// closed without it (killed, or exited without finalizing), the server tells the ranks which did
// not, so that their Finalize names a rank that died on another node even when no rank talked
// to it.
// Strangers, garbage and ranks that say nothing for kHelloTimeoutS are dropped and reported
// through `log` (rate-limited: a few lines, then a count per interval); nothing they send can
// stop the job's exchange. Connections that have not said hello (strangers, or ranks not yet
// there) are at most kMaxStrangers: beyond, the oldest of them that stayed silent through a
// poll goes (never a registered rank's, never the newest: a rank says hello at once when it
// dials again, so it is read before it could be dropped). A rank whose connection closes before
// the table came dials again (boot_client.cc). Runs on its own thread, which
// blocks every signal (the process's signals go to its other threads).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "memcopy/log_limit.h"
#include "memcopy/status.h"

namespace mpigpu::boot {

class BootServer {
 public:
  using Log = std::function<void(const std::string&)>;
  ~BootServer();
  // Listens on bind_address (IPv4, any port) for `size` ranks proving `secret` (transport/core/job_secret.h).
  static Status Start(const std::string& bind_address, int size, const std::string& secret,
                      Log log, std::unique_ptr<BootServer>* out);
  // "a.b.c.d:port": MPIGPU_BOOT_ADDR for the ranks.
  const std::string& address() const { return address_; }
  // Every rank's card came and the table went out.
  bool complete() const { return complete_.load(std::memory_order_acquire); }

  static constexpr double kHelloTimeoutS = 10;
  static constexpr size_t kMaxStrangers = 64;
  static constexpr int kMaxAcceptsPerRound = 16;

 private:
  struct Conn;
  BootServer() = default;
  void Run();
  bool ReadFrom(Conn& c);  // false: drop it
  void SendTables();
  void Closed(const Conn& c);  // a rank's connection closed: gone, unless it said goodbye
  void SendEndsWhenAllLeft();
  void Accept();
  void Say(const std::string& line);  // a line strangers cause, through strangers_log_
  static void SendAll(const Conn& c, const std::string& bytes);

  int size_ = 0;
  std::string secret_;
  Log log_;
  std::string address_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: the destructor stops the thread
  std::vector<std::unique_ptr<Conn>> conns_;
  std::vector<std::string> cards_;
  std::vector<bool> have_;
  int have_count_ = 0;
  std::vector<bool> bye_;   // said goodbye (finalized)
  std::vector<bool> gone_;  // closed without it
  int left_count_ = 0;      // ranks with bye_ or gone_
  bool ended_ = false;      // the BootEnd went out
  std::atomic<bool> complete_{false};  // release by the thread, acquire by complete()
  LogLimit strangers_log_{"boot server: connections refused or dropped"};
  std::thread thread_;
};

}  // namespace mpigpu::boot

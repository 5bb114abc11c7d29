// BootServer: the launcher's side of the boot protocol (boot_wire.h) for a job that spans nodes.
// It listens on one address, admits a connection only when its hello carries the job's secret and
// names a rank not yet seen, and once every rank's card is in, sends each rank the whole table.
// It keeps the connections open for the job's life (a rank sees its launcher's end close).
// Strangers, garbage and ranks that say nothing for kHelloTimeoutS are dropped and reported
// through `log`; nothing they send can stop the job's exchange. Runs on its own thread, which
// blocks every signal (the process's signals go to its other threads).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

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

 private:
  struct Conn;
  BootServer() = default;
  void Run();
  bool ReadFrom(Conn& c);  // false: drop it
  void SendTables();

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
  std::atomic<bool> complete_{false};  // release by the thread, acquire by complete()
  std::thread thread_;
};

}  // namespace mpigpu::boot

// BootClient: the Bootstrap (transport/core/bootstrap.h) of a rank in a job that spans nodes,
// started by mpigpurun --host: the launcher's boot server (boot_server.h) collects every rank's
// card and hands the table back (boot_wire.h). The launcher names the server in
// MPIGPU_BOOT_ADDR ("a.b.c.d:port") and the job's secret in MPIGPU_JOB_SECRET (32 hex digits,
// in the environment only: never on a command line); the rank proves it with the secret.
#pragma once

#include <netinet/in.h>

#include <memory>
#include <string>
#include <vector>

#include "memcopy/status.h"
#include "transport/core/bootstrap.h"
#include "transport/local_job.h"

namespace mpigpu::transport {

class BootClient final : public Bootstrap {
 public:
  ~BootClient() override;
  // Connects to the server the environment names (waiting up to MPIGPU_BOOTSTRAP_TIMEOUT).
  static Status FromEnvironment(const JobInfo& job, std::unique_ptr<Bootstrap>* out);
  static Status Connect(const JobInfo& job, const std::string& addr, const std::string& secret,
                        double timeout_s, std::unique_ptr<Bootstrap>* out);

  const std::string& secret() const override { return secret_; }
  Status Allgather(const std::string& mine, std::vector<std::string>* all,
                   double timeout_s) override;
  std::string LocalAddress() const override { return local_address_; }
  // The launcher link's hang-up where this rank has one, or the boot connection closing (the
  // server writes after the table only its answer to Depart: readable means closed until then).
  bool LauncherGone() const override;
  // A goodbye to the boot server; its answer (boot_wire.h's BootEnd) names the ranks whose boot
  // connection closed without one.
  Status Depart() override;
  Status Departed(bool* all, std::vector<int>* gone) override;
  // The boot server names ended ranks only in Departed's answer: none here (the engine sees a
  // death through its connections).
  void Ended(bool, std::vector<EndedRank>* ended) override { ended->clear(); }

 private:
  BootClient() = default;
  // Dials again when the server closes our connection before the table (Allgather).
  static constexpr int kMaxRedials = 8;
  sockaddr_in server_{};
  int fd_ = -1;
  int rank_ = 0;
  int size_ = 0;
  bool gathered_ = false;
  bool departing_ = false;  // the goodbye went out: the server's answer may come
  std::string answer_;      // its bytes so far
  std::string secret_;
  std::string local_address_;
};

}  // namespace mpigpu::transport

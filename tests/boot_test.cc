// The boot protocol's end (internode/boot/boot_wire.h) between mpigpurun's boot server and its
// ranks' BootClient, in one process: after the card table each rank says goodbye (Depart), and
// the server's answer (Departed) names the ranks whose connection closed without one; a rank
// that sends something else than its goodbye is dropped and named too (logged). No engine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "internode/boot/boot_client.h"
#include "internode/boot/boot_server.h"
#include "internode/boot/boot_wire.h"
#include "memcopy/clock.h"
#include "memcopy/log_limit.h"
#include "transport/core/job_secret.h"

namespace mpigpu::transport {
namespace {

struct Job {
  std::string secret;
  std::unique_ptr<boot::BootServer> server;
  std::mutex log_mu;
  std::string log;
};

void StartServer(Job* job, int size) {
  ASSERT_TRUE(NewJobSecret(&job->secret).ok());
  ASSERT_TRUE(boot::BootServer::Start(
                  "127.0.0.1", size, job->secret,
                  [job](const std::string& line) {
                    std::lock_guard<std::mutex> hold(job->log_mu);
                    job->log += line + "\n";
                  },
                  &job->server)
                  .ok());
}

// Ranks 0..size-1 as BootClients, their cards exchanged (each Allgather on its own thread: it
// waits for every card).
std::vector<std::unique_ptr<Bootstrap>> Gathered(Job* job, int size) {
  std::vector<std::unique_ptr<Bootstrap>> ranks(size);
  for (int r = 0; r < size; ++r) {
    JobInfo info;
    info.rank = r;
    info.size = size;
    EXPECT_TRUE(BootClient::Connect(info, job->server->address(), job->secret, 10, &ranks[r]).ok());
  }
  std::vector<std::thread> threads;
  std::vector<int> ok(size, 0);
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      std::vector<std::string> all;
      ok[r] = ranks[r]->Allgather("card" + std::to_string(r), &all, 10).ok() &&
              all.size() == static_cast<size_t>(size) && all[size - 1] == "card" + std::to_string(size - 1);
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < size; ++r) EXPECT_TRUE(ok[r]) << "rank " << r;
  return ranks;
}

// Polls rank's Departed until it answers (10 s at most); the ranks it names.
std::vector<int> Answer(Bootstrap* rank) {
  const double deadline = MonotonicSeconds() + 10;
  std::vector<int> gone;
  bool all = false;
  while (!all && MonotonicSeconds() < deadline) {
    const Status st = rank->Departed(&all, &gone);
    EXPECT_TRUE(st.ok()) << st.ToString();
    if (!st.ok()) break;
    if (!all) ::usleep(1000);
  }
  EXPECT_TRUE(all) << "no answer within 10 s";
  return gone;
}

TEST(BootEnd, EveryRankSaysGoodbyeNoneIsNamed) {
  Job job;
  StartServer(&job, 3);
  auto ranks = Gathered(&job, 3);
  for (auto& r : ranks) ASSERT_TRUE(r->Depart().ok());
  for (auto& r : ranks) {
    EXPECT_EQ(Answer(r.get()), std::vector<int>{});
    EXPECT_FALSE(r->LauncherGone());  // the answer waiting is not the server's close
  }
}

// Rank 1's connection closes without a goodbye (its process ended): the others' answer names it,
// whether they said goodbye before or after.
TEST(BootEnd, ARankThatClosesWithoutGoodbyeIsNamed) {
  Job job;
  StartServer(&job, 3);
  auto ranks = Gathered(&job, 3);
  ASSERT_TRUE(ranks[0]->Depart().ok());
  bool all = true;
  std::vector<int> gone;
  ASSERT_TRUE(ranks[0]->Departed(&all, &gone).ok());
  EXPECT_FALSE(all);  // ranks 1 and 2 are still in the job
  ranks[1].reset();
  ASSERT_TRUE(ranks[2]->Depart().ok());
  EXPECT_EQ(Answer(ranks[0].get()), std::vector<int>{1});
  EXPECT_EQ(Answer(ranks[2].get()), std::vector<int>{1});
}

// Rank 1 (a raw socket that proves the secret) sends bytes that are not a goodbye after its card:
// the server drops it, logs it, and names it to rank 0.
TEST(BootEnd, GarbageInsteadOfAGoodbyeIsDroppedAndNamed) {
  Job job;
  StartServer(&job, 2);
  JobInfo info;
  info.size = 2;
  std::unique_ptr<Bootstrap> rank0;
  ASSERT_TRUE(BootClient::Connect(info, job.server->address(), job.secret, 10, &rank0).ok());
  std::thread gather([&] {
    std::vector<std::string> all;
    EXPECT_TRUE(rank0->Allgather("card0", &all, 10).ok());
  });
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  const std::string addr = job.server->address();
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(addr.substr(addr.find(':') + 1))));
  ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  boot::BootHello hello{};
  hello.magic = boot::kHelloMagic;
  hello.rank = 1;
  hello.size = 2;
  std::memcpy(hello.secret, job.secret.data(), kJobSecretBytes);
  hello.card_len = 5;
  ASSERT_EQ(::send(fd, &hello, sizeof hello, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof hello));
  ASSERT_EQ(::send(fd, "card1", 5, MSG_NOSIGNAL), 5);
  gather.join();
  ASSERT_EQ(::send(fd, "garbage!", 8, MSG_NOSIGNAL), 8);
  ASSERT_TRUE(rank0->Depart().ok());
  EXPECT_EQ(Answer(rank0.get()), std::vector<int>{1});
  ::close(fd);
  std::lock_guard<std::mutex> hold(job.log_mu);
  EXPECT_NE(job.log.find("rank 1 sent something after its card that is not its goodbye"),
            std::string::npos)
      << job.log;
}

// The server goes before answering: Departed says so (kPeerFailed), and LauncherGone too.
TEST(BootEnd, TheServerGoneBeforeItsAnswerIsAnError) {
  Job job;
  StartServer(&job, 2);
  auto ranks = Gathered(&job, 2);
  ASSERT_TRUE(ranks[0]->Depart().ok());
  job.server.reset();
  const double deadline = MonotonicSeconds() + 10;
  Status st;
  bool all = false;
  std::vector<int> gone;
  while (st.ok() && !all && MonotonicSeconds() < deadline) st = ranks[0]->Departed(&all, &gone);
  EXPECT_EQ(st.code(), Err::kPeerFailed) << st.ToString();
  EXPECT_TRUE(ranks[0]->LauncherGone());
}

// A socket connected to the server's address; -1 when it cannot be.
int ConnectTo(const std::string& address) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  const size_t colon = address.rfind(':');
  if (inet_pton(AF_INET, address.substr(0, colon).c_str(), &a.sin_addr) != 1) return -1;
  a.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

int LogLines(Job* job, const std::string& start) {
  std::lock_guard<std::mutex> hold(job->log_mu);
  int n = 0;
  for (size_t at = 0; at < job->log.size();) {
    const size_t nl = job->log.find('\n', at);
    n += job->log.compare(at, start.size(), start) == 0;
    at = nl == std::string::npos ? job->log.size() : nl + 1;
  }
  return n;
}

// 2,000 connections, each with a hello that is not the job's, each refused: the log holds a burst
// of lines (a count follows once the interval is over), and the ranks' exchange still works.
TEST(BootStrangers, AFloodOfRefusedConnectionsIsLoggedAsAFewLinesAndACount) {
  Job job;
  StartServer(&job, 2);
  std::vector<unsigned char> junk(sizeof(boot::BootHello), 0xAB);
  for (int i = 0; i < 2000; ++i) {
    const int fd = ConnectTo(job.server->address());
    ASSERT_GE(fd, 0);
    ASSERT_EQ(send(fd, junk.data(), junk.size(), MSG_NOSIGNAL), static_cast<ssize_t>(junk.size()));
    char c;
    (void)recv(fd, &c, 1, 0);  // the server's close
    close(fd);
  }
  auto ranks = Gathered(&job, 2);
  EXPECT_GE(LogLines(&job, "boot server: refused a connection"), 1) << job.log;
  EXPECT_LE(LogLines(&job, "boot server: "), LogLimit::kBurst + 1) << job.log;
}

// Both ranks connect and stay silent (a slow start), then strangers hold twice as many silent
// connections as the server lets wait: the ranks' connections, the oldest, are dropped, and their
// card exchange still works: each dials again and says hello at once.
TEST(BootStrangers, RanksDroppedWhileSilentDialAgainAndJoin) {
  Job job;
  StartServer(&job, 2);
  std::vector<std::unique_ptr<Bootstrap>> ranks(2);
  for (int r = 0; r < 2; ++r) {
    JobInfo info;
    info.rank = r;
    info.size = 2;
    ASSERT_TRUE(BootClient::Connect(info, job.server->address(), job.secret, 10, &ranks[r]).ok());
  }
  std::vector<int> held;
  for (size_t i = 0; i < 2 * boot::BootServer::kMaxStrangers; ++i) {
    held.push_back(ConnectTo(job.server->address()));
    ASSERT_GE(held.back(), 0);
  }
  const double t0 = MonotonicSeconds();
  while (LogLines(&job, "boot server: dropped") < 1 && MonotonicSeconds() - t0 < 10) usleep(1000);
  ASSERT_GE(LogLines(&job, "boot server: dropped"), 1) << job.log;
  std::vector<std::thread> threads;
  int ok[2] = {0, 0};
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&, r] {
      std::vector<std::string> all;
      const Status st = ranks[r]->Allgather("card" + std::to_string(r), &all, 10);
      ok[r] = st.ok() && all.size() == 2 && all[1] == "card1";
      if (!st.ok()) std::fprintf(stderr, "rank %d: %s\n", r, st.ToString().c_str());
    });
  for (auto& t : threads) t.join();
  EXPECT_TRUE(ok[0] && ok[1]) << job.log;
  for (int fd : held) close(fd);
}

}  // namespace
}  // namespace mpigpu::transport

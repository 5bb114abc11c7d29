// The boot protocol's end (internode/boot/boot_wire.h) between mpigpurun's boot server and its
// ranks' BootClient, in one process: after the card table each rank says goodbye (Depart), and
// the server's answer (Departed) names the ranks whose connection closed without one; a rank
// that sends something else than its goodbye is dropped and named too (logged). No engine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace mpigpu::transport

// The launcher's side of remote ranks' links (tools/link_server.h) against real TCP connections
// on loopback, and --tag-output's line cutting (tools/tag_output.h) into a pipe. Every read is
// bounded, so a server that never answers fails the test instead of hanging it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "tools/link_server.h"
#include "tools/tag_output.h"
#include "transport/core/job_secret.h"
#include "transport/launcher_link.h"

namespace mpigpu::launcher {
namespace {

class LinkServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(transport::NewJobSecret(&secret_).ok());
    ASSERT_TRUE(server_.Start("127.0.0.1", 2, secret_).ok());
  }
  // A connection to the server; -1 on failure.
  int Dial() {
    const std::string& addr = server_.address();
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(std::stoi(addr.substr(addr.find(':') + 1))));
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
    return fd;
  }
  static void Put(int fd, const std::string& bytes) {
    ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  std::string Hello(int rank, const std::string& secret, int size = 2) {
    transport::RemoteLinkHello h{};
    h.magic = transport::kRemoteLinkMagic;
    h.rank = rank;
    h.size = size;
    std::memcpy(h.secret, secret.data(), transport::kJobSecretBytes);
    return std::string(reinterpret_cast<const char*>(&h), sizeof h);
  }
  // Serves for up to 2 s, until `want` events came; returns them.
  std::vector<LinkEvent> Serve(size_t want) {
    std::vector<LinkEvent> events;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    do {
      std::vector<pollfd> fds;
      server_.AppendPollFds(&fds);
      poll(fds.data(), fds.size(), 20);
      server_.Serve(&events);
    } while (events.size() < want && std::chrono::steady_clock::now() < deadline);
    return events;
  }
  // True when the server closed `fd` within 2 s (EOF or reset), serving meanwhile.
  bool ClosedByServer(int fd) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline) {
      Serve(0);
      std::vector<LinkEvent> ignored;
      server_.Serve(&ignored);
      char c;
      const ssize_t k = recv(fd, &c, 1, MSG_DONTWAIT);
      if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }

  std::string secret_;
  LinkServer server_;
};

TEST_F(LinkServerTest, RecordsAndTheCloseBecomeEvents) {
  const int fd = Dial();
  ASSERT_GE(fd, 0);
  // The hello and the records in pieces, as TCP may deliver them.
  const std::string bytes = Hello(1, secret_) + "J 1\nF 1\n";
  for (size_t at = 0; at < bytes.size(); at += 7) Put(fd, bytes.substr(at, 7));
  std::vector<LinkEvent> events = Serve(2);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, LinkEvent::kJoined);
  EXPECT_EQ(events[1].kind, LinkEvent::kFinalized);
  EXPECT_EQ(events[1].rank, 1);
  EXPECT_TRUE(server_.Open(1));
  EXPECT_FALSE(server_.Open(0));
  close(fd);
  events = Serve(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, LinkEvent::kClosed);
  EXPECT_EQ(events[0].rank, 1);
  EXPECT_FALSE(server_.Open(1));
}

TEST_F(LinkServerTest, StrangersAreCutOffWithoutEvents) {
  std::string wrong = secret_;
  wrong[0] = static_cast<char>(wrong[0] ^ 1);
  for (const std::string& visit :
       {Hello(0, wrong), Hello(0, secret_, 3), Hello(2, secret_), std::string(200, 'x')}) {
    const int fd = Dial();
    ASSERT_GE(fd, 0);
    Put(fd, visit);
    EXPECT_TRUE(ClosedByServer(fd));
    close(fd);
  }
  EXPECT_FALSE(server_.Open(0));
  // The job's own rank is still admitted afterwards.
  const int fd = Dial();
  Put(fd, Hello(0, secret_) + "J 0\n");
  std::vector<LinkEvent> events = Serve(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].rank, 0);
  close(fd);
}

TEST_F(LinkServerTest, ASecondLinkOrABadRecordIsRefused) {
  const int first = Dial();
  Put(first, Hello(0, secret_));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (!server_.Open(0) && std::chrono::steady_clock::now() < deadline) {
    Serve(0);
    usleep(1000);
  }
  ASSERT_TRUE(server_.Open(0));
  const int second = Dial();
  Put(second, Hello(0, secret_));
  EXPECT_TRUE(ClosedByServer(second));
  close(second);
  EXPECT_TRUE(server_.Open(0));
  Put(first, "J 1\n");  // a record for another rank: the link is cut and counts as closed
  std::vector<LinkEvent> events = Serve(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, LinkEvent::kClosed);
  EXPECT_FALSE(server_.Open(0));
  close(first);
}

TEST_F(LinkServerTest, ManySilentConnectionsDoNotCrowdOutARank) {
  std::vector<int> silent;
  for (size_t i = 0; i < LinkServer::kMaxPending + 20; ++i) {
    silent.push_back(Dial());
    ASSERT_GE(silent.back(), 0);
    if (i % 8 == 0) Serve(0);
  }
  const int fd = Dial();
  Put(fd, Hello(1, secret_) + "J 1\n");
  std::vector<LinkEvent> events = Serve(1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, LinkEvent::kJoined);
  for (int s : silent) close(s);
  close(fd);
}

// ---- --tag-output's lines ----

// What the tagger wrote into a pipe after the calls `feed` made on it.
template <typename F>
std::string Tagged(F feed) {
  int p[2];
  EXPECT_EQ(pipe(p), 0);
  std::string got;
  std::thread reader([&] {
    char buf[65536];
    ssize_t k;
    while ((k = read(p[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<size_t>(k));
  });
  {
    LineTagger t("[7]<stdout>:", p[1]);
    feed(t);
  }
  close(p[1]);
  reader.join();
  close(p[0]);
  return got;
}

TEST(LineTagger, WholeLinesFromPieces) {
  EXPECT_EQ(Tagged([](LineTagger& t) {
              t.Feed("ab", 2);
              t.Feed("c\nde", 4);
              t.Feed("\n\nf", 3);
              t.Finish();
            }),
            "[7]<stdout>:abc\n[7]<stdout>:de\n[7]<stdout>:\n[7]<stdout>:f\n");
  EXPECT_EQ(Tagged([](LineTagger& t) { t.Finish(); }), "");
}

TEST(LineTagger, LongLinesGoOutInTaggedPieces) {
  const size_t max = LineTagger::kMaxLine;
  const std::string exact(max, 'x'), longer(max + 5, 'y');
  const std::string p = "[7]<stdout>:";
  EXPECT_EQ(Tagged([&](LineTagger& t) {
              t.Feed(exact.data(), exact.size());  // a full piece goes at once...
              t.Feed("\n", 1);                     // ...and its newline adds no empty line
            }),
            p + exact + "\n");
  EXPECT_EQ(Tagged([&](LineTagger& t) {
              const std::string line = longer + "\n";
              t.Feed(line.data(), line.size());
            }),
            p + std::string(max, 'y') + "\n" + p + "yyyyy\n");
}

}  // namespace
}  // namespace mpigpu::launcher

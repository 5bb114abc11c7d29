// The rank's side of the launcher link (transport/launcher_link.h) against a socket pair made
// here, as mpigpurun makes it: the records, FD_CLOEXEC, the hang-up when the launcher's end
// closes, and a variable that does not name a link socket. Then the remote kind (a TCP connection
// to a listener here, as mpigpurun's link server): the hello with the secret, the records, the
// launcher's close, bad settings. Children that must end are waited for
// with a deadline, so a hang fails the test.
#include "transport/launcher_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace mpigpu::transport {
namespace {

// A launcher's socket pair: launcher_ stays with the test, rank_ is named in the variable.
class LinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    launcher_ = sv[0];
    rank_ = sv[1];
    setenv(kLauncherFdVariable, std::to_string(rank_).c_str(), 1);
    ResetLauncherLinkForTest();
  }
  void TearDown() override {
    unsetenv(kLauncherFdVariable);
    ResetLauncherLinkForTest();
    if (launcher_ >= 0) close(launcher_);
    close(rank_);
  }

  // The next record the launcher got ("" when none is queued).
  std::string NextRecord() {
    char buf[64];
    ssize_t n = recv(launcher_, buf, sizeof buf, MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
  }

  int launcher_ = -1;
  int rank_ = -1;
};

// Waits (at most 10 s) for `pid`; its wait status, or -1 if it hung (then it is killed).
int WaitBounded(pid_t pid) {
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status;
}

TEST(LauncherLinkNone, WithoutALauncherEverythingIsANoOp) {
  unsetenv(kLauncherFdVariable);
  ResetLauncherLinkForTest();
  EXPECT_FALSE(LauncherGone());
  LauncherLinkJoined(0);
  LauncherLinkFinalized(0);
  ExitIfLauncherGone(0);  // returns
  SUCCEED();
}

TEST_F(LinkTest, JoinedAndFinalizedAreOneRecordEach) {
  EXPECT_EQ(NextRecord(), "");
  LauncherLinkJoined(3);
  LauncherLinkFinalized(3);
  LauncherLinkJoined(4095);
  EXPECT_EQ(NextRecord(), "J 3\n");
  EXPECT_EQ(NextRecord(), "F 3\n");
  EXPECT_EQ(NextRecord(), "J 4095\n");
  EXPECT_EQ(NextRecord(), "");
}

TEST_F(LinkTest, TheInheritedFdBecomesCloseOnExec) {
  ASSERT_EQ(fcntl(rank_, F_GETFD) & FD_CLOEXEC, 0);  // as a rank inherits it
  EXPECT_FALSE(LauncherGone());                     // the first call reads the variable
  EXPECT_NE(fcntl(rank_, F_GETFD) & FD_CLOEXEC, 0);
}

TEST_F(LinkTest, LauncherGoneOnceItsEndCloses) {
  EXPECT_FALSE(LauncherGone());
  EXPECT_FALSE(LauncherGone());
  // Another holder of the ranks' end (a second rank) changes nothing.
  int other = dup(rank_);
  EXPECT_FALSE(LauncherGone());
  close(launcher_);
  launcher_ = -1;
  EXPECT_TRUE(LauncherGone());
  close(other);
  EXPECT_TRUE(LauncherGone());
}

// The program closes the link's fd and reuses the number for a socket pair of its own, whose
// other end then closes: that is not the launcher's death, and nothing is written into it.
TEST_F(LinkTest, AReusedFdNumberIsNotTheLink) {
  EXPECT_FALSE(LauncherGone());
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
  ASSERT_EQ(dup2(sv[0], rank_), rank_);  // the program's own socket now has the number
  close(sv[0]);
  LauncherLinkFinalized(3);  // not sent into the program's socket
  char buf[16];
  EXPECT_EQ(recv(sv[1], buf, sizeof buf, MSG_DONTWAIT), -1);
  close(sv[1]);  // its peer closes: a hang-up on that number, not the launcher's death
  EXPECT_FALSE(LauncherGone());
}

TEST_F(LinkTest, LauncherGoneEvenWithRecordsUnread) {
  LauncherLinkJoined(1);
  close(launcher_);
  launcher_ = -1;
  EXPECT_TRUE(LauncherGone());
}

TEST_F(LinkTest, ExitIfLauncherGoneEndsTheRankWithOneLine) {
  // The rank is a child here; its stderr goes to a pipe the test reads.
  int err[2];
  ASSERT_EQ(pipe(err), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(err[1], STDERR_FILENO);
    close(launcher_);  // the child must not keep the launcher's end alive
    // The launcher (the test) closes its end below; wait for it, bounded.
    for (int i = 0; i < 5000; ++i) {
      ExitIfLauncherGone(7);
      usleep(1000);
    }
    _exit(42);  // never noticed
  }
  close(err[1]);
  close(launcher_);
  launcher_ = -1;
  const int status = WaitBounded(pid);
  char buf[256] = {};
  ssize_t n = read(err[0], buf, sizeof buf - 1);
  close(err[0]);
  ASSERT_NE(status, -1) << "the rank did not notice its launcher's death";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0),
            "mpigpu: rank 7: the launcher (mpigpurun) is gone; ending this rank\n");
}

TEST_F(LinkTest, RecordsAfterTheLauncherDiedRaiseNoSigpipe) {
  close(launcher_);
  launcher_ = -1;
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    signal(SIGPIPE, SIG_DFL);
    LauncherLinkJoined(0);
    LauncherLinkFinalized(0);
    _exit(0);
  }
  const int status = WaitBounded(pid);
  ASSERT_NE(status, -1);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
}

TEST(LauncherLinkBadFd, AVariableThatNamesNoLinkSocketIsIgnored) {
  // A file where the fd should be (the program closed the link and opened a file on its number):
  // never written to, and not taken for a dead launcher.
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  std::string p = std::string(tmpdir ? tmpdir : "/tmp") + "/launcher_link_test-XXXXXX";
  int fd = mkstemp(&p[0]);
  ASSERT_GE(fd, 0);
  for (const std::string& value : {std::to_string(fd), std::string("999"), std::string("abc"),
                                   std::string("-1"), std::string("")}) {
    SCOPED_TRACE(value);
    setenv(kLauncherFdVariable, value.c_str(), 1);
    ResetLauncherLinkForTest();
    EXPECT_FALSE(LauncherGone());
    LauncherLinkJoined(1);
    LauncherLinkFinalized(1);
  }
  EXPECT_EQ(lseek(fd, 0, SEEK_END), 0) << "records were written into a file";
  EXPECT_EQ(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0) << "a file that is not the link was changed";
  // A socket of another kind (a stream pair) is not the link either.
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  setenv(kLauncherFdVariable, std::to_string(sv[1]).c_str(), 1);
  ResetLauncherLinkForTest();
  LauncherLinkJoined(1);
  char buf[8];
  EXPECT_LT(recv(sv[0], buf, sizeof buf, MSG_DONTWAIT), 0);
  close(sv[0]);
  close(sv[1]);
  close(fd);
  unlink(p.c_str());
  unsetenv(kLauncherFdVariable);
  ResetLauncherLinkForTest();
}

// ---- a rank on another host: the link is a TCP connection (MPIGPU_LAUNCHER_ADDR) ----

class RemoteLinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(NewJobSecret(&secret_).ok());
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    ASSERT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(listen(listener_, 4), 0);
    socklen_t n = sizeof a;
    ASSERT_EQ(getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &n), 0);
    unsetenv(kLauncherFdVariable);
    setenv(kLauncherAddrVariable, ("127.0.0.1:" + std::to_string(ntohs(a.sin_port))).c_str(), 1);
    setenv("MPIGPU_JOB_SECRET", JobSecretHex(secret_).c_str(), 1);
    setenv("MPIGPU_RANK", "1", 1);
    setenv("MPIGPU_SIZE", "3", 1);
    ResetLauncherLinkForTest();
  }
  void TearDown() override {
    ResetLauncherLinkForTest();
    for (const char* v : {kLauncherAddrVariable, "MPIGPU_JOB_SECRET", "MPIGPU_RANK", "MPIGPU_SIZE"})
      unsetenv(v);
    if (conn_ >= 0) close(conn_);
    close(listener_);
  }
  // Reads exactly n bytes from the accepted connection within 5 s ("" on a short read).
  std::string ReadExactly(size_t n) {
    if (conn_ < 0) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 5000) != 1) return "";
      conn_ = accept(listener_, nullptr, nullptr);
    }
    std::string got;
    while (got.size() < n) {
      pollfd p{conn_, POLLIN, 0};
      if (poll(&p, 1, 5000) != 1) break;
      char buf[256];
      const ssize_t k = recv(conn_, buf, std::min(sizeof buf, n - got.size()), 0);
      if (k <= 0) break;
      got.append(buf, static_cast<size_t>(k));
    }
    return got;
  }

  std::string secret_;
  int listener_ = -1;
  int conn_ = -1;
};

TEST_F(RemoteLinkTest, HelloProvesTheSecretThenRecordsFollow) {
  LauncherLinkJoined(1);  // the first call connects
  const std::string hello = ReadExactly(sizeof(RemoteLinkHello));
  ASSERT_EQ(hello.size(), sizeof(RemoteLinkHello));
  RemoteLinkHello h;
  std::memcpy(&h, hello.data(), sizeof h);
  EXPECT_EQ(h.magic, kRemoteLinkMagic);
  EXPECT_EQ(h.rank, 1);
  EXPECT_EQ(h.size, 3);
  EXPECT_TRUE(SameJobSecret(h.secret, secret_));
  EXPECT_EQ(ReadExactly(4), "J 1\n");
  EXPECT_FALSE(LauncherGone());
  LauncherLinkFinalized(1);
  EXPECT_EQ(ReadExactly(4), "F 1\n");
}

// The launcher's end closing (its death) is the rank's sign, as with the local link.
TEST_F(RemoteLinkTest, TheLaunchersCloseIsNoticed) {
  EXPECT_FALSE(LauncherGone());  // connects
  ASSERT_EQ(ReadExactly(sizeof(RemoteLinkHello)).size(), sizeof(RemoteLinkHello));
  EXPECT_FALSE(LauncherGone());
  close(conn_);
  conn_ = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!LauncherGone() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_TRUE(LauncherGone());
}

// Nothing to reach, or bad settings: no link, one line on stderr, no crash, no wait beyond the
// connect deadline for a refused port.
TEST_F(RemoteLinkTest, BadSettingsMeanNoLink) {
  for (const char* addr : {"nonsense", "127.0.0.1:0", "127.0.0.1:99999", "1.2.3:4"}) {
    SCOPED_TRACE(addr);
    setenv(kLauncherAddrVariable, addr, 1);
    ResetLauncherLinkForTest();
    EXPECT_FALSE(LauncherGone());
    LauncherLinkJoined(1);
  }
  setenv(kLauncherAddrVariable, "127.0.0.1:1", 1);
  setenv("MPIGPU_JOB_SECRET", "short", 1);
  ResetLauncherLinkForTest();
  EXPECT_FALSE(LauncherGone());
}

// A launcher that is gone before the rank's first call: nothing listens at the address. After
// kRemoteLinkConnectS of refusals the rank counts its launcher as gone (nobody would end it).
TEST_F(RemoteLinkTest, ALauncherThatNeverAnswersCountsAsGone) {
  close(listener_);
  listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);  // for TearDown; never listens
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(LauncherGone());
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "gave up on the launcher after %.1f s\n", waited);
  EXPECT_TRUE(LauncherGone());  // and stays so, without a second wait
}

}  // namespace
}  // namespace mpigpu::transport

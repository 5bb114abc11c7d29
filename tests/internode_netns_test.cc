// The TCP netmod between hosts of their own: two network namespaces joined by a veth pair
// (10.213.<n>.1 and .2), ranks forked into them (tests/multiproc.h, MULTIPROC_NETNS), a boot
// server in the first. Bytes checked for every pair across and within hosts at sizes around the
// thresholds, ANY_SOURCE, a vector layout; then faults: a rank killed on the other host (while
// a peer waits for it, and unseen: named by the survivors' Finalize), a stranger at a rank's
// port, the link taken down mid-transfer; and mpigpurun --host across them, with the
// applications unchanged (halo --cpu --check, mpigpu-sweep -c). Needs root and `ip`: skips with
// the reason where namespaces cannot be made.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "internode/tcp/tcp_channel.h"
#include "memcopy/clock.h"
#include "memcopy/log_limit.h"
#include "memcopy/pattern.h"
#include "tests/e2e_util.h"
#include "tests/engine_util.h"
#include "tests/multiproc.h"
#include "tests/netns_hosts.h"
#include "transport/engine.h"

namespace mpigpu::transport {
namespace {

using mpigpu::testing::FillPattern;
using mpigpu::testing::FirstMismatch;
using mpigpu::testing::RunJob;

UserBuffer Host(void* p, size_t n) { return mpigpu::testing::HostBuffer(p, n); }

using mpigpu::testing::Sh;

// Two namespaces as hosts, made once for the suite; the test process moves into the first so
// that the boot server it starts listens on the first host's address.
class Netns : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hosts_ = new mpigpu::testing::NetnsHosts("mpg", "10.213");
    a_ = hosts_->a();
    b_ = hosts_->b();
    ip_a_ = hosts_->ip_a();
    ip_b_ = hosts_->ip_b();
    link_a_ = hosts_->link_a();
    if (hosts_->EnterA()) {
      setenv("MULTIPROC_NODES", "2", 1);
      setenv("MULTIPROC_NETNS", (a_ + "," + b_).c_str(), 1);
      setenv("MULTIPROC_BOOT_IP", ip_a_.c_str(), 1);
    }
    skip_ = hosts_->skip_reason();
  }
  static void TearDownTestSuite() {
    delete hosts_;
    hosts_ = nullptr;
  }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  static mpigpu::testing::NetnsHosts* hosts_;
  static std::string a_, b_, ip_a_, ip_b_, link_a_, skip_;
};
mpigpu::testing::NetnsHosts* Netns::hosts_ = nullptr;
std::string Netns::a_, Netns::b_, Netns::ip_a_, Netns::ip_b_, Netns::link_a_, Netns::skip_;

void WaitOk(Engine& e, Request* r) {
  Status st = e.Wait(r, 60);
  if (!st.ok() || !r->status().ok())
    std::fprintf(stderr, "wait: %s / %s\n", st.ToString().c_str(), r->status().ToString().c_str());
  RANK_CHECK(st.ok() && r->status().ok());
  e.Release(r);
}

// Every pair, both ways, sizes around the eager limit and the frame size, bytes checked; ranks 0, 1
// on the first host and 2, 3 on the second: pairs across go by tcp, pairs within by shm.
TEST_F(Netns, EveryPairEverySizeAcrossAndWithinHosts) {
  const std::string r = RunJob(4, [](int rank) {
    auto e = mpigpu::testing::JoinJob();
    for (int peer = 0; peer < 4; ++peer) {
      if (peer == rank) continue;
      const bool across = (peer / 2) != (rank / 2);
      RANK_CHECK(std::string(e->ChannelCapsFor(peer).name) == (across ? "tcp" : "shm"));
    }
    const size_t sizes[] = {0, 1, (64 << 10) - 1, 64 << 10, (64 << 10) + 1, (1 << 20) + 3, 5 << 20};
    for (size_t n : sizes) {
      for (int peer = 0; peer < 4; ++peer) {
        if (peer == rank) continue;
        std::vector<unsigned char> out(n), in(n + 1, 0xEE);
        FillPattern(out.data(), n, static_cast<uint32_t>(rank * 16 + peer));
        Request *s = nullptr, *q = nullptr;
        RANK_CHECK(e->Irecv(Host(in.data(), n), peer, 7, 0, &q).ok());
        RANK_CHECK(e->Isend(Host(out.data(), n), peer, 7, 0, &s).ok());
        WaitOk(*e, s);
        WaitOk(*e, q);
        RANK_CHECK(FirstMismatch(in.data(), n, static_cast<uint32_t>(peer * 16 + rank)) == -1);
        RANK_CHECK(in[n] == 0xEE);
      }
    }
    // ANY_SOURCE: rank 0 takes one message from each other rank, whichever host it is on.
    int64_t v = rank;
    if (rank == 0) {
      int seen = 0;
      for (int i = 0; i < 3; ++i) {
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(Host(&v, sizeof v), kAnySource, 9, 0, &q).ok());
        RANK_CHECK(e->Wait(q, 60).ok() && q->status().ok() && q->info().source == v);
        seen |= 1 << v;
        e->Release(q);
      }
      RANK_CHECK(seen == 0xE);
    } else {
      Request* s = nullptr;
      RANK_CHECK(e->Isend(Host(&v, sizeof v), 0, 9, 0, &s).ok());
      WaitOk(*e, s);
    }
    // A vector layout across hosts: 1000 blocks of 24 bytes, 40 apart, rank 0 -> rank 3.
    if (rank == 0 || rank == 3) {
      const Layout shape = Layout::Vector(1000, 24, 40);
      std::vector<unsigned char> buf(shape.extent(), 0xEE);
      if (rank == 0) {
        for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<unsigned char>(i * 7);
        Request* s = nullptr;
        RANK_CHECK(e->Isend(UserBuffer{buf.data(), MemLoc::Host(), shape}, 3, 11, 0, &s).ok());
        WaitOk(*e, s);
      } else {
        Request* q = nullptr;
        RANK_CHECK(e->Irecv(UserBuffer{buf.data(), MemLoc::Host(), shape}, 0, 11, 0, &q).ok());
        WaitOk(*e, q);
        for (size_t i = 0; i < buf.size(); ++i)
          RANK_CHECK(buf[i] == (i % 40 < 24 ? static_cast<unsigned char>(i * 7) : 0xEE));
      }
    }
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, 120);
  EXPECT_EQ(r, "");
}

// mpigpurun across the hosts: started in the first namespace, it starts the second host's ranks
// through a launch agent (ip netns exec, as ssh would on a real host) with the job's secret on the
// agent's stdin; every pair exchanges checked messages (tests/launcher_rank.cc "pairs"), by tcp
// across the hosts and shm within them.
TEST_F(Netns, MpigpurunStartsAJobAcrossTheHosts) {
  mpigpu::testing::RunOptions options;
  options.env["NETNS_AGENT_MAP"] = ip_b_ + "=" + b_;
  options.unset = {"MULTIPROC_NODES", "MULTIPROC_NETNS", "MULTIPROC_BOOT_IP"};
  mpigpu::testing::BoundedRun run(
      {mpigpu::testing::Mpigpurun(), "-n", "4", "--host", ip_a_ + ":2," + ip_b_ + ":2",
       "--launch-agent", mpigpu::testing::Runfile("tests/testdata/netns_agent.sh"), "-x",
       "MPIGPU_DEBUG=info", mpigpu::testing::Runfile("tests/launcher_rank"), "pairs"},
      options);
  const mpigpu::testing::Result r = run.Wait();
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0) << r.err;
  for (int rank = 0; rank < 4; ++rank) {
    const std::string me = "[mpigpu " + std::to_string(rank) + "] info: ";
    const bool first = rank < 2;
    EXPECT_NE(r.err.find(me + "ranks 0-1: " + (first ? "shm" : "tcp")), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(me + "ranks 2-3: " + (first ? "tcp" : "shm")), std::string::npos) << r.err;
  }
}

// The applications run across hosts unchanged: mpigpurun --host over the two namespaces starts
// them exactly as on one node. `ranks` ranks, half on each host.
mpigpu::testing::Result RunAcross(const std::string& ip_a, const std::string& ip_b,
                                  const std::string& ns_b, int ranks,
                                  const std::vector<std::string>& program) {
  mpigpu::testing::RunOptions options;
  options.timeout_ms = 120000;
  options.env["NETNS_AGENT_MAP"] = ip_b + "=" + ns_b;
  options.unset = {"MULTIPROC_NODES", "MULTIPROC_NETNS", "MULTIPROC_BOOT_IP"};
  const std::string per_host = std::to_string(ranks / 2);
  std::vector<std::string> argv = {
      mpigpu::testing::Mpigpurun(), "-n", std::to_string(ranks), "--timeout", "100", "--host",
      ip_a + ":" + per_host + "," + ip_b + ":" + per_host, "--launch-agent",
      mpigpu::testing::Runfile("tests/testdata/netns_agent.sh")};
  argv.insert(argv.end(), program.begin(), program.end());
  return mpigpu::testing::BoundedRun(argv, options).Wait();
}

// halo --cpu --check with 4 ranks, 2 per host (a 2x2 grid: each rank has a neighbour on its own
// host, by shm, and one on the other, by tcp): the distributed result equals the serial
// reference bit for bit, in both element types.
TEST_F(Netns, HaloCpuCheckAcrossTheHosts) {
  for (const char* type : {"double", "float"}) {
    const mpigpu::testing::Result r =
        RunAcross(ip_a_, ip_b_, b_, 4,
                  {mpigpu::testing::Runfile("benchmarks/halo"), "--cpu", "--check", "--type", type,
                   "--size", "40", "--halo", "2", "--iters", "12", "--warmup", "2"});
    EXPECT_FALSE(r.hung);
    EXPECT_EQ(r.code, 0) << "stdout:\n" << r.out << "stderr:\n" << r.err;
    EXPECT_NE(r.out.find("4 ranks (grid 2x2)"), std::string::npos) << r.out;
    EXPECT_EQ(r.Count("  ok\n"), 1) << r.out;
  }
}

// mpigpu-sweep's host series with one rank per host, every size from 1 B to 1 MiB (eager,
// rendezvous), with -c: every message's bytes checked. The node's copy limit is not a column
// between hosts, and the report says why.
TEST_F(Netns, SweepAcrossTheHosts) {
  const mpigpu::testing::Result r =
      RunAcross(ip_a_, ip_b_, b_, 2,
                {mpigpu::testing::Runfile("tools/mpigpu-sweep"), "latency", "bw", "bibw", "H", "H",
                 "-m", "1:1M", "-i", "3", "-x", "1", "-W", "8", "-c"});
  EXPECT_FALSE(r.hung);
  EXPECT_EQ(r.code, 0) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  for (const char* test : {"latency", "bw", "bibw"})
    EXPECT_NE(r.out.find(std::string("# mpigpu-sweep ") + test + " [HH]"), std::string::npos)
        << r.out;
  EXPECT_NE(r.out.find("\n1048576 "), std::string::npos) << r.out;
  EXPECT_EQ(r.Count("# Size            mpigpu\n"), 3) << r.out;  // no limit column
  EXPECT_NE(r.out.find("# note: limit and floors: not measured: the ranks are on different hosts"),
            std::string::npos)
      << r.out;
}

// kill -9 of mpigpurun while its ranks block in a receive: the rank on the other host, which has
// no launcher link (and, started through a shell, no parent-death signal either), ends within
// seconds because the boot server's connection closed; the local one through its link.
TEST_F(Netns, KillingTheLauncherEndsTheRankOnTheOtherHost) {
  const std::string dir = mpigpu::testing::MakeTempDir("ranks");
  mpigpu::testing::RunOptions options;
  options.env["NETNS_AGENT_MAP"] = ip_b_ + "=" + b_;
  options.unset = {"MULTIPROC_NODES", "MULTIPROC_NETNS", "MULTIPROC_BOOT_IP"};
  options.dir = mpigpu::testing::MakeTempDir("run");
  // "; true": the shell stays, so the rank is its child and no parent-death signal reaches it.
  const std::string rank = mpigpu::testing::Runfile("tests/launcher_rank") + " recv-forever " + dir;
  mpigpu::testing::BoundedRun run(
      {mpigpu::testing::Mpigpurun(), "-n", "2", "--host", ip_a_ + ":1," + ip_b_ + ":1",
       "--launch-agent", mpigpu::testing::Runfile("tests/testdata/netns_agent.sh"), "/bin/sh",
       "-c", rank + "; true"},
      options);
  auto recorded = [&](int r) { return access((dir + "/rank-" + std::to_string(r) + ".pid").c_str(), F_OK) == 0; };
  const double t0 = MonotonicSeconds();
  while (!(recorded(0) && recorded(1)) && MonotonicSeconds() - t0 < 20) usleep(10000);
  ASSERT_TRUE(recorded(0) && recorded(1)) << mpigpu::testing::ReadFile(options.dir + "/stderr");
  const pid_t remote = std::atoi(mpigpu::testing::ReadFile(dir + "/rank-1.pid").c_str());
  ASSERT_GT(remote, 0);
  ASSERT_EQ(kill(run.pid(), SIGKILL), 0);
  run.Wait();
  const double killed = MonotonicSeconds();
  while (kill(remote, 0) == 0 && MonotonicSeconds() - killed < 5) usleep(10000);
  const bool gone = kill(remote, 0) != 0;
  if (!gone) kill(remote, SIGKILL);
  EXPECT_TRUE(gone) << "the rank on the other host outlived its launcher by 5 s";
  std::fprintf(stderr, "the remote rank ended %.2f s after its launcher\n",
               MonotonicSeconds() - killed);
  const std::string err = mpigpu::testing::ReadFile(options.dir + "/stderr");
  EXPECT_NE(err.find("mpigpu: rank 1: the launcher (mpigpurun) is gone"), std::string::npos) << err;
}

// Rank 1 (the other host) is killed while rank 0 waits for its message: the receive fails with
// kPeerFailed within 2 s.
TEST_F(Netns, ARankKilledOnTheOtherHostFailsItsPeerWithinTwoSeconds) {
  const std::string r = RunJob(2, [](int rank) {
    auto e = mpigpu::testing::JoinJob();
    int64_t v = 1;
    // A round trip first, so the pair's connection exists and carried both ways (a completed
    // send may still sit in the sender's buffer: only the reply proves it went), then death.
    if (rank == 1) {
      Request* s = nullptr;
      RANK_CHECK(e->Isend(Host(&v, sizeof v), 0, 1, 0, &s).ok());
      WaitOk(*e, s);
      RANK_CHECK(e->Irecv(Host(&v, sizeof v), 0, 3, 0, &s).ok());
      WaitOk(*e, s);
      usleep(200 * 1000);
      raise(SIGKILL);
    }
    Request* q = nullptr;
    RANK_CHECK(e->Irecv(Host(&v, sizeof v), 1, 1, 0, &q).ok());
    WaitOk(*e, q);
    RANK_CHECK(e->Isend(Host(&v, sizeof v), 1, 3, 0, &q).ok());
    WaitOk(*e, q);
    RANK_CHECK(e->Irecv(Host(&v, sizeof v), 1, 2, 0, &q).ok());  // never sent
    const double t0 = MonotonicSeconds();
    Status st = e->Wait(q, 30);
    const double waited = MonotonicSeconds() - t0;
    std::fprintf(stderr, "dead peer across hosts: %s after %.3f s\n",
                 q->status().ToString().c_str(), waited);
    RANK_CHECK(st.ok() && q->status().code() == Err::kPeerFailed && waited < 2.0);
    e->Release(q);
    (void)e->Finalize();  // reports the dead rank
    return 0;
  }, 60, {1});
  EXPECT_EQ(r, "");
}

// Rank 2 (alone on the other host) is killed before any message: no rank ever talked to it, yet
// the survivors' Finalize names it (the boot server saw its connection close without a
// goodbye) within seconds, well before MPIGPU_BOOTSTRAP_TIMEOUT (60 s).
TEST_F(Netns, ARankKilledUnseenOnTheOtherHostIsNamedByTheSurvivorsFinalize) {
  const std::string r = RunJob(3, [](int rank) {
    auto e = mpigpu::testing::JoinJob();
    if (rank == 2) raise(SIGKILL);
    const double t0 = MonotonicSeconds();
    Status st = e->Finalize();
    const double waited = MonotonicSeconds() - t0;
    std::fprintf(stderr, "finalize after a rank died unseen across hosts: %s after %.3f s\n",
                 st.ToString().c_str(), waited);
    RANK_CHECK(st.code() == Err::kPeerFailed &&
               st.ToString().find("rank(s) 2 ") != std::string::npos && waited < 20);
    return 0;
  }, 60, {2});
  EXPECT_EQ(r, "");
}

// Strangers at rank 1's port (a port scan, junk bytes, a well-formed hello with a wrong secret):
// each is cut off, and the job's messages arrive whole.
TEST_F(Netns, StrangersAtARanksPortAreRefusedAndTheJobGoesOn) {
  const std::string r = RunJob(2, [](int rank) {
    auto e = mpigpu::testing::JoinJob();
    std::string card = e->Card();
    std::vector<char> text(64, 0);
    if (rank == 1) {
      std::memcpy(text.data(), card.data(), std::min(card.size(), text.size() - 1));
      Request* s = nullptr;
      RANK_CHECK(e->Isend(Host(text.data(), text.size()), 0, 1, 0, &s).ok());
      WaitOk(*e, s);
    } else {
      Request* q = nullptr;
      RANK_CHECK(e->Irecv(Host(text.data(), text.size()), 1, 1, 0, &q).ok());
      WaitOk(*e, q);
      sockaddr_in peer{};
      RANK_CHECK(TcpChannel::ParseCard(text.data(), &peer));
      // Each stranger: connect, send, and expect the rank to close the connection (EOF or a
      // reset) within a few seconds, while the job goes on.
      std::vector<std::vector<unsigned char>> visits;
      visits.emplace_back();                                  // says nothing (a port scan)
      visits.emplace_back(std::vector<unsigned char>(4096, 0xAB));  // junk
      StreamChannel::Hello hello{};
      hello.magic = StreamChannel::kHelloMagic;
      hello.rank = 0;  // claims a rank, with a zero secret
      visits.emplace_back(reinterpret_cast<unsigned char*>(&hello),
                          reinterpret_cast<unsigned char*>(&hello) + sizeof hello);
      const pid_t child = fork();
      if (child == 0) {
        for (const auto& bytes : visits) {
          const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
          if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&peer), sizeof peer) != 0) _exit(2);
          if (!bytes.empty() && send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) < 0) _exit(3);
          timeval tv{15, 0};  // the hello timeout is 10 s
          setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
          char c;
          const ssize_t k = recv(fd, &c, 1, 0);
          if (k > 0) _exit(4);                                           // never answered
          if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) _exit(5);  // nor kept
          close(fd);
        }
        _exit(0);
      }
      int status = 0;
      RANK_CHECK(waitpid(child, &status, 0) == child);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        std::fprintf(stderr, "stranger: status %d\n", status);
      RANK_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    // The job: a large message each way after the strangers, bytes checked.
    const size_t n = (3 << 20) + 5;
    std::vector<unsigned char> out(n), in(n);
    FillPattern(out.data(), n, static_cast<uint32_t>(rank));
    Request *s = nullptr, *q = nullptr;
    RANK_CHECK(e->Irecv(Host(in.data(), n), 1 - rank, 2, 0, &q).ok());
    RANK_CHECK(e->Isend(Host(out.data(), n), 1 - rank, 2, 0, &s).ok());
    WaitOk(*e, s);
    WaitOk(*e, q);
    RANK_CHECK(FirstMismatch(in.data(), n, static_cast<uint32_t>(1 - rank)) == -1);
    RANK_CHECK(e->Finalize().ok());
    return 0;
  }, 90);
  EXPECT_EQ(r, "");
}

// Both ranks' ports held by strangers, twice as many silent connections as the stranger limit
// (each made again as soon as the rank drops it), in place before the ranks' first message to
// each other (files in `dir` say so: no race with a sleep): the ranks' own connections get
// through, every message arrives whole, and what the attack writes to the ranks' stderr is a
// few lines and a count.
TEST_F(Netns, SilentStrangersHeldAtTheRanksPortsBeforeTheirFirstMessageDoNotEndTheJob) {
  const std::string dir = mpigpu::testing::MakeTempDir("strangers");
  const std::string r = RunJob(2, [dir](int rank) {
    const std::string log = dir + "/stderr-" + std::to_string(rank);
    const int err = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    RANK_CHECK(err >= 0 && dup2(err, 2) == 2);
    auto e = mpigpu::testing::JoinJob();
    const pid_t stranger = mpigpu::testing::HoldSilentConnections(
        e->Card(), 2 * static_cast<int>(StreamChannel::kMaxStrangers));
    RANK_CHECK(stranger > 0);
    RANK_CHECK(close(open((dir + "/held-" + std::to_string(rank)).c_str(),
                          O_WRONLY | O_CREAT | O_CLOEXEC, 0600)) == 0);
    const std::string other = dir + "/held-" + std::to_string(1 - rank);
    const double t0 = MonotonicSeconds();
    while (access(other.c_str(), F_OK) != 0 && MonotonicSeconds() - t0 < 30) usleep(1000);
    RANK_CHECK(access(other.c_str(), F_OK) == 0);
    // The first message each way, then more, small and large, bytes checked.
    for (int round = 0; round < 8; ++round) {
      const size_t n = round % 2 == 0 ? 64 : (1 << 20) + 7;
      std::vector<unsigned char> out(n), in(n);
      FillPattern(out.data(), n, static_cast<uint32_t>(rank * 100 + round));
      Request *s = nullptr, *q = nullptr;
      RANK_CHECK(e->Irecv(Host(in.data(), n), 1 - rank, round, 0, &q).ok());
      RANK_CHECK(e->Isend(Host(out.data(), n), 1 - rank, round, 0, &s).ok());
      WaitOk(*e, s);
      WaitOk(*e, q);
      RANK_CHECK(FirstMismatch(in.data(), n, static_cast<uint32_t>((1 - rank) * 100 + round)) ==
                 -1);
    }
    RANK_CHECK(e->Finalize().ok());
    mpigpu::testing::StopHolding(stranger);
    return 0;
  }, 90);
  EXPECT_EQ(r, "");
  for (int rank = 0; rank < 2; ++rank) {
    const std::string err = mpigpu::testing::ReadFile(dir + "/stderr-" + std::to_string(rank));
    size_t lines = 0;
    for (char ch : err) lines += ch == '\n';
    // The attack was felt (connections dropped) and logged in at most a burst and a count.
    EXPECT_NE(err.find("have not said who they are"), std::string::npos) << err;
    EXPECT_LE(lines, static_cast<size_t>(LogLimit::kBurst + 2)) << err;
  }
}

// The link goes down (1 s after the job starts) while rank 0 streams 64 MiB messages to rank 1 on
// the other host, more than the link carries in that time: with MPIGPU_NET_TIMEOUT=2 both ends'
// requests fail with kPeerFailed, no hang, within the cut, the timeout and a margin. Last in the
// suite (Z): the link is brought back up after it.
TEST_F(Netns, ZTheLinkGoingDownMidTransferEndsInAnErrorWithinTheTimeout) {
  setenv("MPIGPU_NET_TIMEOUT", "2", 1);
  const std::string cut = "ip -n " + a_ + " link set " + link_a_ + " down";
  std::thread cutter([cut] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Sh(cut);
  });
  const std::string r = RunJob(2, [](int rank) {
    auto e = mpigpu::testing::JoinJob();
    const size_t n = size_t{64} << 20;
    std::vector<unsigned char> buf(n, static_cast<unsigned char>(rank));
    const double t0 = MonotonicSeconds();
    for (int i = 0; i < 200; ++i) {  // 12.5 GiB: the link goes down long before the end
      Request* req = nullptr;
      if (rank == 0) RANK_CHECK(e->Isend(Host(buf.data(), n), 1, 3, 0, &req).ok());
      else RANK_CHECK(e->Irecv(Host(buf.data(), n), 0, 3, 0, &req).ok());
      Status st = e->Wait(req, 60);
      RANK_CHECK(st.ok());
      if (req->status().ok()) continue;
      const double waited = MonotonicSeconds() - t0;
      std::fprintf(stderr, "rank %d, message %d, after the link went down: %s, %.2f s from start\n",
                   rank, i, req->status().ToString().c_str(), waited);
      RANK_CHECK(req->status().code() == Err::kPeerFailed && waited < 1 + 2 + 8);
      _exit(0);  // finalize would report the lost peer again: the request's error is the test
    }
    RANK_CHECK(!"the link never went down");
    return 1;
  }, 60);
  cutter.join();
  unsetenv("MPIGPU_NET_TIMEOUT");
  Sh("ip -n " + a_ + " link set " + link_a_ + " up");
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::transport

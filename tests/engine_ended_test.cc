// The engine acts on its bootstrap's word that a rank ended (Bootstrap::Ended, which a PMIx
// launcher's process table or failure events feed): rank 0 runs with a test bootstrap that says
// from the start that rank 1 ended, around the job's own (none on one node; mpigpurun's boot
// client across nodes), while rank 1 lives on. On one node, rank 0's receive from rank 1 fails at
// once with kPeerFailed and the bootstrap's words, and the launcher is not asked (this node's
// deaths are seen in the segment). Across two nodes (MULTIPROC_NODES=2 for the job), the launcher
// is asked, a message rank 1 sends 0.1 s later still arrives (its connection decides within
// Engine's grace), and the next receive fails with the bootstrap's words.
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "internode/boot/boot_client.h"
#include "tests/engine_util.h"
#include "tests/multiproc.h"
#include "transport/engine.h"
#include "wiring/start.h"

namespace mpigpu::transport {
namespace {

using mpigpu::testing::RunJob;
using Clock = std::chrono::steady_clock;

constexpr char kWords[] = "the test's launcher says so";

// The job's own bootstrap (or none, on one node), but for Ended: rank 1 ended. Records whether
// the engine let it ask.
class SaysRank1Ended final : public Bootstrap {
 public:
  explicit SaysRank1Ended(std::unique_ptr<Bootstrap> inner) : inner_(std::move(inner)) {}
  const std::string& secret() const override { return inner_ ? inner_->secret() : none_; }
  Status Allgather(const std::string& mine, std::vector<std::string>* all,
                   double timeout_s) override {
    if (inner_) return inner_->Allgather(mine, all, timeout_s);
    return Status(Err::kInternal, "no exchange on one node");
  }
  std::string LocalAddress() const override {
    return inner_ ? inner_->LocalAddress() : "127.0.0.1";
  }
  bool LauncherGone() const override { return inner_ && inner_->LauncherGone(); }
  Status Depart() override { return inner_ ? inner_->Depart() : Status::Ok(); }
  Status Departed(bool* all, std::vector<int>* gone) override {
    if (inner_) return inner_->Departed(all, gone);
    *all = true;
    gone->clear();
    return Status::Ok();
  }
  void Ended(bool asking, std::vector<EndedRank>* ended) override {
    asked |= asking;
    *ended = {{1, kWords}};
  }
  bool asked = false;

 private:
  std::unique_ptr<Bootstrap> inner_;
  const std::string none_;
};

Status Finish(Engine* e, Request* r) {
  RANK_CHECK(e->Wait(r, 20).ok());
  Status st = r->status();
  e->Release(r);
  return st;
}

UserBuffer Host(int* v) { return mpigpu::testing::HostBuffer(v, sizeof *v); }

// Rank 0's engine, with the test bootstrap around the job's.
std::unique_ptr<Engine> JoinSaying(SaysRank1Ended** boot) {
  JobInfo job;
  RANK_CHECK(JobInfo::FromEnvironment(&job).ok());
  std::unique_ptr<Bootstrap> inner;
  if (job.SpansNodes()) RANK_CHECK(BootClient::FromEnvironment(job, &inner).ok());
  auto b = std::make_shared<SaysRank1Ended>(std::move(inner));
  *boot = b.get();
  job.launcher_boot = b;
  std::unique_ptr<Engine> e;
  const Status st = wiring::StartEngine(job, &e);
  if (!st.ok()) std::fprintf(stderr, "join: %s\n", st.ToString().c_str());
  RANK_CHECK(st.ok());
  return e;
}

// The receive failed with kPeerFailed naming rank 1 and the bootstrap's words.
void ExpectEnded(const Status& st) {
  const std::string text = st.ToString();
  std::fprintf(stderr, "rank 0's receive: %s\n", text.c_str());
  RANK_CHECK(st.code() == Err::kPeerFailed);
  RANK_CHECK(text.find("rank 1 ended without finalizing (" + std::string(kWords) + ")") !=
             std::string::npos);
}

// Rank 1: (across nodes: sends 42 with tag 1 after 0.1 s), then waits for rank 0, whose end
// ends the wait.
int Rank1(bool send) {
  auto e = mpigpu::testing::JoinJob();
  int v = 42;
  Request* r = nullptr;
  if (send) {
    usleep(100 * 1000);
    RANK_CHECK(e->Isend(Host(&v), 0, 1, 0, &r).ok());
    RANK_CHECK(Finish(e.get(), r).ok());
  }
  RANK_CHECK(e->Irecv(Host(&v), 0, 9, 0, &r).ok());
  (void)Finish(e.get(), r);
  return 0;
}

class EngineEnded : public ::testing::Test {
 protected:
  void TearDown() override { unsetenv("MULTIPROC_NODES"); }
};

TEST_F(EngineEnded, OnOneNodeAReceiveFailsAtOnceWithTheBootstrapsWords) {
  unsetenv("MULTIPROC_NODES");
  const std::string r = RunJob(2, [](int rank) {
    if (rank == 1) return Rank1(false);
    SaysRank1Ended* boot = nullptr;
    auto e = JoinSaying(&boot);
    int v = 0;
    Request* q = nullptr;
    RANK_CHECK(e->Irecv(Host(&v), 1, 7, 0, &q).ok());
    ExpectEnded(Finish(e.get(), q));
    RANK_CHECK(!boot->asked);  // a rank of this node: the segment tells, nobody is asked
    return 0;
  }, 60);
  EXPECT_EQ(r, "");
}

TEST_F(EngineEnded, AcrossNodesItsConnectionDecidesWithinTheGraceThenTheBootstrapsWordsDo) {
  setenv("MULTIPROC_NODES", "2", 1);
  const std::string r = RunJob(2, [](int rank) {
    if (rank == 1) return Rank1(true);
    SaysRank1Ended* boot = nullptr;
    auto e = JoinSaying(&boot);
    RANK_CHECK(e->job().info().NodeOf(1) != e->job().info().NodeOf(0));
    int v = 0;
    Request* q = nullptr;
    RANK_CHECK(e->Irecv(Host(&v), 1, 1, 0, &q).ok());
    const Status first = Finish(e.get(), q);
    if (!first.ok()) std::fprintf(stderr, "the first receive: %s\n", first.ToString().c_str());
    RANK_CHECK(first.ok() && v == 42);  // sent while the bootstrap already said it ended
    const auto t0 = Clock::now();
    RANK_CHECK(e->Irecv(Host(&v), 1, 2, 0, &q).ok());
    ExpectEnded(Finish(e.get(), q));
    std::fprintf(stderr, "the second receive failed after %.3f s\n",
                 std::chrono::duration<double>(Clock::now() - t0).count());
    RANK_CHECK(boot->asked);  // a rank of another node was waited on
    return 0;
  }, 60);
  EXPECT_EQ(r, "");
}

}  // namespace
}  // namespace mpigpu::transport

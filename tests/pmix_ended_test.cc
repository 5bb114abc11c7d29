// PmixEnded (internode/pmix/pmix_ended.h) without a launcher: a PmixLib whose functions are the
// test's, PMIx's callbacks called as PMIx's thread would call them. What a failure event names
// (affected proc, affected procs, else its source; only this job's other ranks), what a process
// table says (both layouts: Open MPI 4.1's rows of pmix_info_t, and pmix_proc_info_t; only
// failed states), the query's pacing and tickets, and a launcher that takes or answers no query.
#include "internode/pmix/pmix_ended.h"

#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mpigpu::internode {
namespace {

using transport::EndedRank;

// The test's libpmix: records the handler registration and the query in flight.
struct Fake {
  pmix_status_t register_rc = PMIX_SUCCESS;
  pmix_status_t query_rc = PMIX_SUCCESS;
  int registered = 0;
  int queries = 0;
  void* query_cbdata = nullptr;
  std::vector<std::string> query_keys;
  int released = 0;
};
Fake* g_fake = nullptr;

pmix_status_t FakeRegister(pmix_status_t*, size_t n, pmix_info_t*, size_t, pmix_notification_fn_t,
                           pmix_hdlr_reg_cbfunc_t, void*) {
  g_fake->registered = static_cast<int>(n);
  return g_fake->register_rc;
}

pmix_status_t FakeQuery(pmix_query_t* q, size_t n, pmix_info_cbfunc_t, void* cbdata) {
  ++g_fake->queries;
  g_fake->query_keys.clear();
  for (size_t i = 0; i < n; ++i)
    for (char** k = q[i].keys; k != nullptr && *k != nullptr; ++k) g_fake->query_keys.push_back(*k);
  if (g_fake->query_rc == PMIX_SUCCESS) g_fake->query_cbdata = cbdata;
  return g_fake->query_rc;
}

const char* FakeError(pmix_status_t rc) { return rc == PMIX_ERR_PROC_ABORTED_BY_SIG ? "EVSIG" : "ERR"; }
const char* FakeState(pmix_proc_state_t s) {
  return s == PMIX_PROC_STATE_ABORTED_BY_SIG ? "ABORTED BY SIGNAL" : "STATE";
}
void FakeRelease(void*) { ++g_fake->released; }

class PmixEndedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_fake = &fake_;
    lib_.RegisterEventHandler = FakeRegister;
    lib_.QueryInfoNb = FakeQuery;
    lib_.ErrorString = FakeError;
    lib_.ProcStateString = FakeState;
    std::memset(&me_, 0, sizeof me_);
    std::strncpy(me_.nspace, "job.1", PMIX_MAX_NSLEN);
    me_.rank = 0;
  }

  pmix_proc_t Proc(const char* nspace, pmix_rank_t r) {
    pmix_proc_t p;
    std::memset(&p, 0, sizeof p);
    std::strncpy(p.nspace, nspace, PMIX_MAX_NSLEN);
    p.rank = r;
    return p;
  }

  static std::vector<int> Ranks(PmixEnded* e) {
    std::vector<EndedRank> ended;
    e->Collect(&ended);
    std::vector<int> out;
    for (const EndedRank& x : ended) out.push_back(x.rank);
    return out;
  }

  static void Answer(pmix_status_t st, pmix_info_t* info, size_t n) {
    void* q = g_fake->query_cbdata;
    g_fake->query_cbdata = nullptr;
    PmixEnded::OnAnswer(st, info, n, q, FakeRelease, nullptr);
  }

  Fake fake_;
  PmixLib lib_{};
  pmix_proc_t me_;
};

// A row `key` of `type`, its data left for the caller.
pmix_info_t Row(const char* key, pmix_data_type_t type) {
  pmix_info_t i;
  std::memset(&i, 0, sizeof i);
  std::strncpy(i.key, key, PMIX_MAX_KEYLEN);
  i.value.type = type;
  return i;
}

pmix_info_t ArrayInfo(const char* key, pmix_data_array_t* array) {
  pmix_info_t i = Row(key, PMIX_DATA_ARRAY);
  i.value.data.darray = array;
  return i;
}

pmix_info_t AffectedProc(pmix_proc_t* p) {
  pmix_info_t i = Row(PMIX_EVENT_AFFECTED_PROC, PMIX_PROC);
  i.value.data.proc = p;
  return i;
}

TEST_F(PmixEndedTest, AnEventNamesItsAffectedRankOfThisJobOnly) {
  PmixEnded* e = PmixEnded::Start(&lib_, me_, 4);
  EXPECT_GT(fake_.registered, 0);
  EXPECT_TRUE(Ranks(e).empty());
  pmix_proc_t other_job = Proc("job.2", 1), self = Proc("job.1", 0), beyond = Proc("job.1", 4),
              two = Proc("job.1", 2);
  for (pmix_proc_t* p : {&other_job, &self, &beyond}) {
    pmix_info_t i = AffectedProc(p);
    PmixEnded::OnEvent(0, PMIX_ERR_PROC_ABORTED_BY_SIG, nullptr, &i, 1, nullptr, 0, nullptr, nullptr);
  }
  EXPECT_TRUE(Ranks(e).empty());
  pmix_info_t i = AffectedProc(&two);
  PmixEnded::OnEvent(0, PMIX_ERR_PROC_ABORTED_BY_SIG, nullptr, &i, 1, nullptr, 0, nullptr, nullptr);
  std::vector<EndedRank> ended;
  e->Collect(&ended);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].rank, 2);
  EXPECT_NE(ended[0].why.find("the PMIx launcher says: EVSIG"), std::string::npos) << ended[0].why;
}

TEST_F(PmixEndedTest, AnEventNamesItsAffectedProcsElseItsSource) {
  PmixEnded* e = PmixEnded::Start(&lib_, me_, 8);
  pmix_proc_t procs[2] = {Proc("job.1", 3), Proc("job.1", 5)};
  pmix_data_array_t array{PMIX_PROC, 2, procs};
  pmix_info_t i = ArrayInfo(PMIX_EVENT_AFFECTED_PROCS, &array);
  PmixEnded::OnEvent(0, PMIX_ERR_PROC_TERM_WO_SYNC, nullptr, &i, 1, nullptr, 0, nullptr, nullptr);
  EXPECT_EQ(Ranks(e), (std::vector<int>{3, 5}));
  const pmix_proc_t source = Proc("job.1", 6);
  PmixEnded::OnEvent(0, PMIX_ERR_PROC_ABORTED, &source, nullptr, 0, nullptr, 0, nullptr, nullptr);
  EXPECT_EQ(Ranks(e), (std::vector<int>{3, 5, 6}));
}

TEST_F(PmixEndedTest, TheProcessTableNamesFailedRanksInBothLayouts) {
  PmixEnded* e = PmixEnded::Start(&lib_, me_, 4);
  const uint64_t t1 = e->Ask(false);
  EXPECT_EQ(t1, 1u);
  EXPECT_EQ(fake_.query_keys, (std::vector<std::string>{PMIX_QUERY_PROC_TABLE}));
  EXPECT_FALSE(e->Answered(t1));
  EXPECT_EQ(e->Ask(true), 0u) << "one query in flight at a time";

  // Open MPI 4.1's layout: a data array of pmix_info_t rows, each holding a pmix_proc_info_t.
  pmix_proc_info_t procs[4];
  std::memset(procs, 0, sizeof procs);
  const pmix_proc_state_t states[4] = {PMIX_PROC_STATE_CONNECTED, PMIX_PROC_STATE_ABORTED_BY_SIG,
                                       PMIX_PROC_STATE_TERM_NON_ZERO, PMIX_PROC_STATE_TERMINATED};
  pmix_info_t rows[4];
  std::memset(rows, 0, sizeof rows);
  for (int r = 0; r < 4; ++r) {
    procs[r].proc = Proc("job.1", static_cast<pmix_rank_t>(r));
    procs[r].state = states[r];
    rows[r].value.type = PMIX_PROC_INFO;
    rows[r].value.data.pinfo = &procs[r];
  }
  pmix_data_array_t table{PMIX_INFO, 4, rows};
  pmix_info_t answer = ArrayInfo(PMIX_QUERY_PROC_TABLE, &table);
  Answer(PMIX_SUCCESS, &answer, 1);
  EXPECT_TRUE(e->Answered(t1));
  EXPECT_EQ(fake_.released, 1);
  std::vector<EndedRank> ended;
  e->Collect(&ended);
  ASSERT_EQ(ended.size(), 1u);  // not: connected, a non-zero exit after finalizing, a normal end
  EXPECT_EQ(ended[0].rank, 1);
  EXPECT_NE(ended[0].why.find("ABORTED BY SIGNAL"), std::string::npos) << ended[0].why;

  EXPECT_EQ(e->Ask(false), 0u) << "asked again within kAskPeriod";
  const uint64_t t2 = e->Ask(true);
  EXPECT_EQ(t2, 2u);
  EXPECT_FALSE(e->Answered(t2));
  // The standard's layout: a data array of pmix_proc_info_t.
  procs[3].state = PMIX_PROC_STATE_TERM_WO_SYNC;
  pmix_data_array_t plain{PMIX_PROC_INFO, 4, procs};
  answer.value.data.darray = &plain;
  Answer(PMIX_SUCCESS, &answer, 1);
  EXPECT_TRUE(e->Answered(t2));
  EXPECT_EQ(Ranks(e), (std::vector<int>{1, 3}));
}

TEST_F(PmixEndedTest, ALauncherThatCannotAnswerIsAskedNoMore) {
  PmixEnded* e = PmixEnded::Start(&lib_, me_, 2);
  const uint64_t t = e->Ask(true);
  ASSERT_NE(t, 0u);
  Answer(PMIX_ERR_UNREACH, nullptr, 0);  // Slurm 22.05's answer
  EXPECT_TRUE(e->Answered(t));
  EXPECT_TRUE(e->Answered(t + 5)) << "no query will come: nothing to wait for";
  EXPECT_EQ(e->Ask(true), 0u);
  EXPECT_EQ(fake_.queries, 1);
  EXPECT_TRUE(Ranks(e).empty());
}

TEST_F(PmixEndedTest, AQueryRefusedAtOnceOrAHandlerRefusedLeavesTheRest) {
  fake_.register_rc = PMIX_ERR_NOT_SUPPORTED;
  fake_.query_rc = PMIX_ERR_NOT_SUPPORTED;
  PmixEnded* e = PmixEnded::Start(&lib_, me_, 3);
  EXPECT_EQ(e->Ask(true), 0u);
  EXPECT_TRUE(e->Answered(1));
  EXPECT_EQ(e->Ask(true), 0u);
  EXPECT_EQ(fake_.queries, 1);
  // Events still count where the handler was taken after all (a later registration).
  pmix_proc_t one = Proc("job.1", 1);
  pmix_info_t i = AffectedProc(&one);
  PmixEnded::OnEvent(0, PMIX_ERR_PROC_KILLED_BY_CMD, nullptr, &i, 1, nullptr, 0, nullptr, nullptr);
  EXPECT_EQ(Ranks(e), (std::vector<int>{1}));
}

}  // namespace
}  // namespace mpigpu::internode

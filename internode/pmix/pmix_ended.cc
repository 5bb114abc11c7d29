#include "internode/pmix/pmix_ended.h"

#include <cstring>

#include "memcopy/clock.h"
#include "memcopy/log.h"

namespace mpigpu::internode {
namespace {

// The one record PMIx's event handler writes to (one PMIx client per process): published
// (release) before the handler is registered, read (acquire) by the handler.
std::atomic<PmixEnded*> g_ended{nullptr};

// The failure events of one process. PMIX_EVENT_PROC_TERMINATED is left out: it also reports
// normal ends, after finalizing.
constexpr pmix_status_t kEvents[] = {
    PMIX_ERR_PROC_ABORTED,      PMIX_ERR_PROC_ABORTING,        PMIX_ERR_PROC_ABORTED_BY_SIG,
    PMIX_ERR_PROC_TERM_WO_SYNC, PMIX_ERR_PROC_KILLED_BY_CMD,   PMIX_ERR_PROC_REQUESTED_ABORT,
    PMIX_ERR_PROC_FAILED_TO_START, PMIX_ERR_PROC_SENSOR_BOUND_EXCEEDED,
};

// A process state that means it ended without finalizing. TERM_NON_ZERO is a normal end after
// finalizing with a non-zero exit code; MIGRATING is a process that comes back.
bool Failed(pmix_proc_state_t s) {
  return s >= PMIX_PROC_STATE_ERROR && s != PMIX_PROC_STATE_TERM_NON_ZERO &&
         s != PMIX_PROC_STATE_MIGRATING;
}

}  // namespace

// One query in flight: PMIx holds the arrays until it calls back, so they live on the heap and
// the callback frees them (a launcher that never answers leaks this one, and no more are asked:
// asking_ stays set).
struct PmixEnded::Query {
  PmixEnded* owner = nullptr;
  uint64_t ticket = 0;
  char key[sizeof PMIX_QUERY_PROC_TABLE] = PMIX_QUERY_PROC_TABLE;
  char* keys[2] = {key, nullptr};
  char nspace[PMIX_MAX_NSLEN + 1] = {};
  pmix_info_t qualifier;
  pmix_query_t query;
};

PmixEnded::PmixEnded(const PmixLib* lib, const pmix_proc_t& me, int size)
    : lib_(lib), me_(me), size_(size), code_(new std::atomic<int32_t>[static_cast<size_t>(size)]) {
  for (int r = 0; r < size; ++r) code_[r].store(0, std::memory_order_relaxed);
}

PmixEnded* PmixEnded::Start(const PmixLib* lib, const pmix_proc_t& me, int size) {
  auto* e = new PmixEnded(lib, me, size);  // lives as long as the process (PMIx's thread)
  g_ended.store(e, std::memory_order_release);
  pmix_status_t codes[sizeof kEvents / sizeof kEvents[0]];
  std::memcpy(codes, kEvents, sizeof codes);
  const pmix_status_t reg = lib->RegisterEventHandler(codes, sizeof codes / sizeof codes[0],
                                                      nullptr, 0, OnEvent, nullptr, nullptr);
  if (reg < 0)
    MPIGPU_WARN("pmix: no handler for PMIx's process-failure events (%s): a rank's end is learnt "
                "from the launcher's process table and the engine's own checks only",
                lib->Error(reg).c_str());
  return e;
}

void PmixEnded::Mark(const char* nspace, pmix_rank_t r, int32_t code) {
  if (std::strncmp(nspace, me_.nspace, PMIX_MAX_NSLEN) != 0 || r >= static_cast<pmix_rank_t>(size_) ||
      r == me_.rank)
    return;
  int32_t none = 0;  // the first word on a rank stays
  if (code_[r].compare_exchange_strong(none, code, std::memory_order_relaxed))
    marks_.fetch_add(1, std::memory_order_release);  // -> Collect's acquire
}

void PmixEnded::OnEvent(size_t, pmix_status_t status, const pmix_proc_t* source,
                        pmix_info_t* info, size_t ninfo, pmix_info_t*, size_t,
                        pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata) {
  PmixEnded* e = g_ended.load(std::memory_order_acquire);
  bool named = false;
  for (size_t i = 0; e != nullptr && i < ninfo; ++i) {
    const pmix_value_t& v = info[i].value;
    if (std::strncmp(info[i].key, PMIX_EVENT_AFFECTED_PROC, PMIX_MAX_KEYLEN) == 0 &&
        v.type == PMIX_PROC && v.data.proc != nullptr) {
      e->Mark(v.data.proc->nspace, v.data.proc->rank, status);
      named = true;
    } else if (std::strncmp(info[i].key, PMIX_EVENT_AFFECTED_PROCS, PMIX_MAX_KEYLEN) == 0 &&
               v.type == PMIX_DATA_ARRAY && v.data.darray != nullptr &&
               v.data.darray->type == PMIX_PROC && v.data.darray->array != nullptr) {
      const auto* procs = static_cast<const pmix_proc_t*>(v.data.darray->array);
      for (size_t k = 0; k < v.data.darray->size; ++k) e->Mark(procs[k].nspace, procs[k].rank, status);
      named = true;
    }
  }
  // No affected process named: the event's source is the one that failed.
  if (e != nullptr && !named && source != nullptr) e->Mark(source->nspace, source->rank, status);
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_NO_ACTION_TAKEN, nullptr, 0, nullptr, nullptr, cbdata);
}

// The proc table: a data array of pmix_proc_info_t, or (Open MPI 4.1) of pmix_info_t rows each
// holding one.
void PmixEnded::MarkProcTable(const pmix_info_t* info, size_t ninfo) {
  for (size_t i = 0; i < ninfo; ++i) {
    const pmix_value_t& v = info[i].value;
    if (std::strncmp(info[i].key, PMIX_QUERY_PROC_TABLE, PMIX_MAX_KEYLEN) != 0 ||
        v.type != PMIX_DATA_ARRAY || v.data.darray == nullptr || v.data.darray->array == nullptr)
      continue;
    const pmix_data_array_t& d = *v.data.darray;
    for (size_t k = 0; k < d.size; ++k) {
      const pmix_proc_info_t* p = nullptr;
      if (d.type == PMIX_PROC_INFO) {
        p = static_cast<const pmix_proc_info_t*>(d.array) + k;
      } else if (d.type == PMIX_INFO) {
        const pmix_value_t& row = static_cast<const pmix_info_t*>(d.array)[k].value;
        if (row.type == PMIX_PROC_INFO) p = row.data.pinfo;
      }
      if (p != nullptr && Failed(p->state)) Mark(p->proc.nspace, p->proc.rank, p->state);
    }
  }
}

void PmixEnded::OnAnswer(pmix_status_t status, pmix_info_t* info, size_t ninfo, void* cbdata,
                         pmix_release_cbfunc_t release, void* release_data) {
  auto* q = static_cast<Query*>(cbdata);
  PmixEnded* e = q->owner;
  if (status == PMIX_SUCCESS || status == PMIX_ERR_PARTIAL_SUCCESS ||
      status == PMIX_QUERY_PARTIAL_SUCCESS)
    e->MarkProcTable(info, ninfo);
  else  // this launcher does not keep a process table for its clients (Slurm 22.05: UNREACH)
    e->no_query_.store(true, std::memory_order_relaxed);
  if (release != nullptr) release(release_data);
  e->answered_.store(q->ticket, std::memory_order_release);  // after the marks
  e->asking_.store(false, std::memory_order_release);
  delete q;
}

uint64_t PmixEnded::Ask(bool now) {
  if (no_query_.load(std::memory_order_relaxed) || asking_.load(std::memory_order_acquire))
    return 0;
  const double t = MonotonicSeconds();
  if (!now && last_ask_ >= 0 && t - last_ask_ < kAskPeriod) return 0;
  last_ask_ = t;
  auto* q = new Query();
  q->owner = this;
  q->ticket = ++tickets_;
  std::memcpy(q->nspace, me_.nspace, PMIX_MAX_NSLEN);
  std::memset(&q->qualifier, 0, sizeof q->qualifier);
  std::strncpy(q->qualifier.key, PMIX_NSPACE, PMIX_MAX_KEYLEN);
  q->qualifier.value.type = PMIX_STRING;
  q->qualifier.value.data.string = q->nspace;
  q->query.keys = q->keys;
  q->query.qualifiers = &q->qualifier;
  q->query.nqual = 1;
  const uint64_t ticket = q->ticket;  // PMIx may call back (and free q) before it returns
  asking_.store(true, std::memory_order_relaxed);
  const pmix_status_t rc = lib_->QueryInfoNb(&q->query, 1, OnAnswer, q);
  if (rc != PMIX_SUCCESS) {
    MPIGPU_INFO("pmix: the launcher takes no process-table query (%s): a rank's end is learnt "
                "from PMIx's events and the engine's own checks only", lib_->Error(rc).c_str());
    no_query_.store(true, std::memory_order_relaxed);
    asking_.store(false, std::memory_order_relaxed);
    delete q;
    return 0;
  }
  return ticket;
}

bool PmixEnded::Answered(uint64_t ticket) const {
  return no_query_.load(std::memory_order_relaxed) ||
         answered_.load(std::memory_order_acquire) >= ticket;
}

std::string PmixEnded::Words(int32_t code) const {
  const char* s = code > 0 ? lib_->ProcStateString(static_cast<pmix_proc_state_t>(code))
                           : lib_->ErrorString(code);
  return std::string("the PMIx launcher says: ") + (s ? s : "?") + " (" + std::to_string(code) +
         ")";
}

void PmixEnded::Collect(std::vector<transport::EndedRank>* out) {
  const uint64_t marks = marks_.load(std::memory_order_acquire);  // pairs with Mark's release
  if (marks != seen_marks_) {
    seen_marks_ = marks;
    seen_.clear();
    for (int r = 0; r < size_; ++r) {
      const int32_t code = code_[r].load(std::memory_order_relaxed);
      if (code != 0) seen_.push_back({r, Words(code)});
    }
  }
  *out = seen_;
}

}  // namespace mpigpu::internode

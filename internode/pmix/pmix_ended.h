// PmixEnded: which ranks of this job the PMIx launcher says ended without finalizing (killed,
// aborted, exited without PMIx_Finalize), for PmixBootstrap::Ended and Departed. Two sources,
// since launchers differ in what they send (measured; README's issue-17 notes):
//   - events: a handler for PMIx's process-failure events (PMIX_ERR_PROC_ABORTED_BY_SIG,
//     PMIX_ERR_PROC_TERM_WO_SYNC, ...), for a launcher that notifies its clients. Open MPI
//     4.1's mpirun --enable-recovery tries (PROC-ABORTED) but libpmix 4.2.2's server refuses it
//     (BAD-PARAM), and Slurm 22.05's PMIx plugin kills the step instead: neither arrives there.
//   - queries: PMIx_Query_info_nb(PMIX_QUERY_PROC_TABLE), every rank's state from the launcher
//     (Open MPI 4.1's mpirun answers: "PROC ABORTED BY SIGNAL"; Slurm 22.05 does not: then no
//     more are asked). Asked at most every kAskPeriod s, and only while the engine waits on a
//     peer or at finalize.
//
// Threads: PMIx's progress thread runs the event handler and the query's callback; the engine's
// thread calls Ask, Answered and Collect. Shared state, all std::atomic:
//   code_[r]   written by PMIx's thread (relaxed), then marks_ incremented (release); read by the
//              engine thread after an acquire load of marks_ that saw the increment.
//   answered_  the ticket of the last query answered: PMIx's thread stores it (release) after
//              its marks; Answered loads it (acquire).
//   asking_    true from Ask (engine thread, relaxed: only it sets it) until the callback clears
//              it (release; Ask's acquire load sees the callback's writes before asking again).
//   no_query_  set by either thread once the launcher cannot answer a query; read relaxed.
// An object lives as long as the process (never freed): PMIx may call back after Finalize.
#pragma once

#include <pmix.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "internode/pmix/pmix_lib.h"
#include "transport/core/bootstrap.h"

namespace mpigpu::internode {

class PmixEnded {
 public:
  static constexpr double kAskPeriod = 0.5;  // s between two queries while the engine waits

  // The record for job `me.nspace` of `size` ranks, with the event handler registered (a
  // warning, not an error, when PMIx refuses the handler: the queries remain).
  static PmixEnded* Start(const PmixLib* lib, const pmix_proc_t& me, int size);

  // Engine thread: starts a proc-table query unless one is in flight, the launcher cannot
  // answer them, or (unless `now`) the last was asked less than kAskPeriod s ago. Returns the
  // query's ticket, or 0 when none was started.
  uint64_t Ask(bool now);
  // The query of `ticket` (or a later one) was answered, or none will be.
  bool Answered(uint64_t ticket) const;
  // The launcher may still take queries (none failed yet).
  bool Asks() const { return !no_query_.load(std::memory_order_relaxed); }
  // Every rank the launcher said ended, with its words ("the PMIx launcher says: ...").
  void Collect(std::vector<transport::EndedRank>* out);

  // PMIx's callbacks (public so that pmix_ended_test calls them as PMIx's thread would): the
  // event handler, and a query's answer (cbdata: the query Ask started).
  static void OnEvent(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t* info,
                      size_t ninfo, pmix_info_t*, size_t,
                      pmix_event_notification_cbfunc_fn_t cbfunc, void* cbdata);
  static void OnAnswer(pmix_status_t status, pmix_info_t* info, size_t ninfo, void* cbdata,
                       pmix_release_cbfunc_t release, void* release_data);

 private:
  PmixEnded(const PmixLib* lib, const pmix_proc_t& me, int size);
  struct Query;
  // PMIx's thread: rank `r` of `nspace` ended; `code` > 0 a PMIx process state, < 0 an event.
  void Mark(const char* nspace, pmix_rank_t r, int32_t code);
  void MarkProcTable(const pmix_info_t* info, size_t ninfo);
  std::string Words(int32_t code) const;

  const PmixLib* lib_;
  pmix_proc_t me_;
  const int size_;
  std::unique_ptr<std::atomic<int32_t>[]> code_;
  std::atomic<uint64_t> marks_{0};
  std::atomic<uint64_t> answered_{0};
  std::atomic<bool> asking_{false};
  std::atomic<bool> no_query_{false};
  // Engine thread only.
  uint64_t tickets_ = 0;
  double last_ask_ = -1;
  uint64_t seen_marks_ = 0;
  std::vector<transport::EndedRank> seen_;
};

}  // namespace mpigpu::internode

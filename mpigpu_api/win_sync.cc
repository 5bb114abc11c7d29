// Synchronisation of one-sided communication: fence, passive-target locks and flushes, PSCW
// (post/start/complete/wait/test) and Win_sync. Completion at a target is an acknowledgement
// of a message that the target applies after every earlier operation of the same origin
// (kFlush, kUnlock), so it covers them all (win_internal.h).
#include <algorithm>
#include <atomic>

#include "mpigpu_api/api_entry.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/win_internal.h"

namespace mpigpu::api {
namespace {

constexpr int kAllModes = MPIGPU_MODE_NOCHECK | MPIGPU_MODE_NOSTORE | MPIGPU_MODE_NOPUT |
                          MPIGPU_MODE_NOPRECEDE | MPIGPU_MODE_NOSUCCEED;

int CheckAssert(int a) {
  return (a & ~kAllModes) == 0 ? MPIGPU_SUCCESS
                               : SetLastError(MPIGPU_ERR_ASSERT, "unknown assertion bits " +
                                                                     std::to_string(a));
}

// Sends `kind` (acknowledged) to every target in `targets`, then waits for every
// acknowledgement; the first error (a target's refusal, PROC_FAILED) wins, after all arrived.
int AckedRound(Lock& lk, WinData& w, AmKind kind, int lock_type, const std::vector<int>& targets) {
  struct Wait {
    ApiRequest* req;
    int32_t code;
  };
  std::vector<Wait> waits(targets.size());
  int first = MPIGPU_SUCCESS;
  size_t started = 0;
  for (size_t i = 0; i < targets.size(); ++i) {
    WireHdr h;
    h.kind = kind;
    h.lock_type = static_cast<uint8_t>(lock_type);
    int tag = 0;
    int rc = PostAck(w, targets[i], &tag, &waits[i].req, &waits[i].code);
    if (rc == MPIGPU_SUCCESS) {
      h.reply_tag = tag;
      rc = SendAm(w, targets[i], h, {}, nullptr, nullptr);
      ++started;
      if (rc != MPIGPU_SUCCESS) {
        first = rc;
        break;
      }
    } else {
      first = rc;
      break;
    }
  }
  for (size_t i = 0; i < started; ++i) {
    MPIGPU_Status st;
    int rc = WaitP2P(lk, waits[i].req, &st);
    if (rc == MPIGPU_SUCCESS && st.count_bytes != sizeof(int32_t))
      rc = SetLastError(MPIGPU_ERR_PROC_FAILED, "target " + std::to_string(targets[i]) +
                                                    " ended without acknowledging (" +
                                                    std::to_string(st.count_bytes) + " bytes)");
    if (rc == MPIGPU_SUCCESS) rc = waits[i].code;
    if (first == MPIGPU_SUCCESS) first = rc;
    if (rc == MPIGPU_SUCCESS) w.dirty[targets[i]] = false;
  }
  return first;
}

// Completes every operation to `targets` at the targets, and every operation at the origin.
int FlushTargets(Lock& lk, WinData& w, std::vector<int> targets, bool only_dirty) {
  if (only_dirty)
    targets.erase(std::remove_if(targets.begin(), targets.end(), [&w](int t) { return !w.dirty[t]; }),
                  targets.end());
  int rc = AckedRound(lk, w, AmKind::kFlush, 0, targets);
  const int local = ReapOrigin(lk, w, true);
  return rc != MPIGPU_SUCCESS ? rc : local;
}

std::vector<int> AllRanks(const WinData& w) {
  std::vector<int> v(w.comm->size());
  for (int i = 0; i < w.comm->size(); ++i) v[i] = i;
  return v;
}

bool PassiveEpoch(const WinData& w, int rank) { return w.lock_all || w.lock_type[rank] != 0; }

WinPtr Win(MPIGPU_Win win, int* rc) {
  *rc = CheckActive();
  if (*rc != MPIGPU_SUCCESS) return nullptr;
  WinData* w = LookupWin(win);
  if (w == nullptr) {
    *rc = MPIGPU_ERR_WIN;
    return nullptr;
  }
  return Windows()[win];
}

int Barrier(Lock& lk, const WinData& w) {
  std::vector<int> all;
  return AllgatherInts(lk, w.comm, {0}, &all);
}

int DoFence(Lock& lk, int assert_bits, WinData& w) {
  if (int rc = CheckAssert(assert_bits); rc != MPIGPU_SUCCESS) return rc;
  if (w.lock_all || std::any_of(w.lock_type.begin(), w.lock_type.end(), [](int t) { return t; }) ||
      w.access || w.exposure)
    return SetLastError(MPIGPU_ERR_RMA_SYNC, "fence inside a lock or PSCW epoch");
  int rc = MPIGPU_SUCCESS;
  if (!(assert_bits & MPIGPU_MODE_NOPRECEDE)) rc = FlushTargets(lk, w, AllRanks(w), true);
  // Every member's operations are complete at their targets once all are past this point.
  const int brc = Barrier(lk, w);
  w.fence_epoch = !(assert_bits & MPIGPU_MODE_NOSUCCEED);
  return rc != MPIGPU_SUCCESS ? rc : brc;
}

int CheckRank(const WinData& w, int rank) {
  if (rank == MPIGPU_PROC_NULL) return MPIGPU_SUCCESS;
  return CheckPeer(*w.comm, rank, false);
}

int DoLock(Lock& lk, int type, int rank, int assert_bits, WinData& w) {
  if (type != MPIGPU_LOCK_SHARED && type != MPIGPU_LOCK_EXCLUSIVE)
    return SetLastError(MPIGPU_ERR_LOCKTYPE, "lock type " + std::to_string(type));
  if (int rc = CheckAssert(assert_bits); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckRank(w, rank); rc != MPIGPU_SUCCESS) return rc;
  if (rank == MPIGPU_PROC_NULL) return MPIGPU_SUCCESS;
  if (PassiveEpoch(w, rank))
    return SetLastError(MPIGPU_ERR_RMA_SYNC, "rank " + std::to_string(rank) + " is locked already");
  if (w.access) return SetLastError(MPIGPU_ERR_RMA_CONFLICT, "lock inside a PSCW access epoch");
  if (!(assert_bits & MPIGPU_MODE_NOCHECK)) {
    const int rc = AckedRound(lk, w, AmKind::kLock, type == MPIGPU_LOCK_EXCLUSIVE ? 2 : 1, {rank});
    if (rc != MPIGPU_SUCCESS) return rc;
  }
  w.lock_type[rank] = type;
  w.nocheck[rank] = (assert_bits & MPIGPU_MODE_NOCHECK) != 0;
  w.fence_epoch = false;  // a passive epoch ends a fence's (which had no operations)
  return MPIGPU_SUCCESS;
}

int DoUnlock(Lock& lk, int rank, WinData& w) {
  if (int rc = CheckRank(w, rank); rc != MPIGPU_SUCCESS) return rc;
  if (rank == MPIGPU_PROC_NULL) return MPIGPU_SUCCESS;
  if (w.lock_type[rank] == 0)
    return SetLastError(MPIGPU_ERR_RMA_SYNC, "rank " + std::to_string(rank) + " is not locked");
  // The lock goes whatever happens: a dead target's lock cannot be given back.
  const bool nocheck = w.nocheck[rank];
  w.lock_type[rank] = 0;
  w.nocheck[rank] = false;
  int rc = nocheck ? FlushTargets(lk, w, {rank}, true)
                   : AckedRound(lk, w, AmKind::kUnlock, 0, {rank});
  const int local = ReapOrigin(lk, w, true);
  w.dirty[rank] = false;
  return rc != MPIGPU_SUCCESS ? rc : local;
}

int DoLockAll(Lock& lk, int assert_bits, WinData& w) {
  if (int rc = CheckAssert(assert_bits); rc != MPIGPU_SUCCESS) return rc;
  if (w.lock_all || std::any_of(w.lock_type.begin(), w.lock_type.end(), [](int t) { return t; }))
    return SetLastError(MPIGPU_ERR_RMA_SYNC, "a lock is held already");
  if (w.access)
    return SetLastError(MPIGPU_ERR_RMA_CONFLICT, "lock_all inside a PSCW access epoch");
  if (!(assert_bits & MPIGPU_MODE_NOCHECK)) {
    if (int rc = AckedRound(lk, w, AmKind::kLock, 1, AllRanks(w)); rc != MPIGPU_SUCCESS) {
      // Give back what was granted (a refused or dead target holds nothing).
      (void)AckedRound(lk, w, AmKind::kUnlock, 0, AllRanks(w));
      return rc;
    }
  }
  w.lock_all = true;
  w.nocheck_all = (assert_bits & MPIGPU_MODE_NOCHECK) != 0;
  w.fence_epoch = false;
  return MPIGPU_SUCCESS;
}

int DoUnlockAll(Lock& lk, WinData& w) {
  if (!w.lock_all) return SetLastError(MPIGPU_ERR_RMA_SYNC, "no lock_all epoch is open");
  w.lock_all = false;
  int rc = w.nocheck_all ? FlushTargets(lk, w, AllRanks(w), true)
                         : AckedRound(lk, w, AmKind::kUnlock, 0, AllRanks(w));
  const int local = ReapOrigin(lk, w, true);
  std::fill(w.dirty.begin(), w.dirty.end(), false);
  return rc != MPIGPU_SUCCESS ? rc : local;
}

int DoFlush(Lock& lk, int rank, WinData& w, bool local) {
  if (int rc = CheckRank(w, rank); rc != MPIGPU_SUCCESS) return rc;
  if (rank == MPIGPU_PROC_NULL) return MPIGPU_SUCCESS;
  if (!PassiveEpoch(w, rank))
    return SetLastError(MPIGPU_ERR_RMA_SYNC, "flush outside a passive-target epoch");
  // Local completion: every request of the origin (sends, and get replies) done.
  return local ? ReapOrigin(lk, w, true) : FlushTargets(lk, w, {rank}, true);
}

int DoFlushAll(Lock& lk, WinData& w, bool local) {
  if (!w.lock_all && std::none_of(w.lock_type.begin(), w.lock_type.end(), [](int t) { return t; }))
    return SetLastError(MPIGPU_ERR_RMA_SYNC, "flush outside a passive-target epoch");
  return local ? ReapOrigin(lk, w, true) : FlushTargets(lk, w, AllRanks(w), true);
}

// The group's members as ranks of the window; GROUP if one is not a member.
int GroupRanks(const WinData& w, MPIGPU_Group group, std::vector<int>* out) {
  GroupPtr g = LookupGroup(group);
  if (!g) return MPIGPU_ERR_GROUP;
  for (int world : *g) {
    const int r = world >= 0 && world < static_cast<int>(w.comm->from_world.size())
                      ? w.comm->from_world[world]
                      : -1;
    if (r < 0) return SetLastError(MPIGPU_ERR_GROUP, "group member is not in the window");
    out->push_back(r);
  }
  return MPIGPU_SUCCESS;
}

int DoPost(MPIGPU_Group group, int assert_bits, WinData& w) {
  if (int rc = CheckAssert(assert_bits); rc != MPIGPU_SUCCESS) return rc;
  if (w.exposure) return SetLastError(MPIGPU_ERR_RMA_SYNC, "an exposure epoch is open already");
  std::vector<int> ranks;
  if (int rc = GroupRanks(w, group, &ranks); rc != MPIGPU_SUCCESS) return rc;
  w.exposure = true;
  w.exposure_group = ranks;
  for (int r : ranks) {
    WireHdr h;
    h.kind = AmKind::kPost;
    if (int rc = SendAm(w, r, h, {}, nullptr, nullptr); rc != MPIGPU_SUCCESS) return rc;
  }
  return MPIGPU_SUCCESS;
}

int DoStart(Lock& lk, MPIGPU_Group group, int assert_bits, WinData& w) {
  if (int rc = CheckAssert(assert_bits); rc != MPIGPU_SUCCESS) return rc;
  if (w.access) return SetLastError(MPIGPU_ERR_RMA_SYNC, "an access epoch is open already");
  std::vector<int> ranks;
  if (int rc = GroupRanks(w, group, &ranks); rc != MPIGPU_SUCCESS) return rc;
  // Waits for every target's post (MPI lets start block until then).
  if (int rc = ProgressUntil(lk, [&w, &ranks] {
        return std::all_of(ranks.begin(), ranks.end(), [&w](int r) {
          return w.posts_from[r] > 0 || w.source_dead[r];
        });
      });
      rc != MPIGPU_SUCCESS)
    return rc;
  for (int r : ranks) {
    if (w.source_dead[r])
      return SetLastError(MPIGPU_ERR_PROC_FAILED, "target " + std::to_string(r) + " died");
    --w.posts_from[r];
  }
  w.access_group = ranks;
  w.access = true;
  w.fence_epoch = false;
  return MPIGPU_SUCCESS;
}

int DoComplete(Lock& lk, WinData& w) {
  if (!w.access) return SetLastError(MPIGPU_ERR_RMA_SYNC, "complete without start");
  int first = MPIGPU_SUCCESS;
  for (int r : w.access_group) {
    WireHdr h;
    h.kind = AmKind::kComplete;
    if (int rc = SendAm(w, r, h, {}, nullptr, nullptr); rc != MPIGPU_SUCCESS && !first) first = rc;
    w.dirty[r] = false;
  }
  w.access_group.clear();
  w.access = false;
  const int rc = ReapOrigin(lk, w, true);
  return first != MPIGPU_SUCCESS ? first : rc;
}

bool Exposed(const WinData& w) {
  return w.completes >= static_cast<int>(w.exposure_group.size());
}

int EndExposure(WinData& w) {
  w.completes -= static_cast<int>(w.exposure_group.size());
  w.exposure = false;
  for (int r : w.exposure_group)
    if (w.source_dead[r]) return SetLastError(MPIGPU_ERR_PROC_FAILED, "an origin died");
  w.exposure_group.clear();
  return MPIGPU_SUCCESS;
}

int DoWait(Lock& lk, WinData& w) {
  if (!w.exposure) return SetLastError(MPIGPU_ERR_RMA_SYNC, "wait without post");
  if (int rc = ProgressUntil(lk, [&w] {
        if (Exposed(w)) return true;
        // A dead origin never completes: its share is given up.
        for (int r : w.exposure_group)
          if (w.source_dead[r]) return true;
        return false;
      });
      rc != MPIGPU_SUCCESS)
    return rc;
  return EndExposure(w);
}

int DoTest(WinData& w, int* flag) {
  if (flag == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null flag");
  if (!w.exposure) return SetLastError(MPIGPU_ERR_RMA_SYNC, "test without post");
  if (int rc = ProgressOnce(); rc != MPIGPU_SUCCESS) return rc;
  *flag = Exposed(w) ? 1 : 0;
  return *flag ? EndExposure(w) : MPIGPU_SUCCESS;
}

// Runs `body(lk, window)` on a live window under the lock.
template <class Body>
int WithWin(const char* fn, MPIGPU_Win win, Body&& body) {
  Lock lk(GetState().mu);
  int rc = MPIGPU_SUCCESS;
  WinPtr w = Win(win, &rc);
  if (w) rc = body(lk, *w);
  return FinishWin(fn, win, rc);
}

}  // namespace

int FlushDirty(Lock& lk, WinData& w) { return FlushTargets(lk, w, AllRanks(w), true); }

}  // namespace mpigpu::api

namespace api = mpigpu::api;
using WinRef = api::WinData&;

extern "C" int MPIGPU_Win_fence(int a, MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_fence", win,
                      [a](Lock& lk, WinRef w) { return api::DoFence(lk, a, w); });
}
extern "C" int MPIGPU_Win_lock(int type, int rank, int a, MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_lock", win,
                      [=](Lock& lk, WinRef w) { return api::DoLock(lk, type, rank, a, w); });
}
extern "C" int MPIGPU_Win_unlock(int rank, MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_unlock", win,
                      [=](Lock& lk, WinRef w) { return api::DoUnlock(lk, rank, w); });
}
extern "C" int MPIGPU_Win_lock_all(int a, MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_lock_all", win,
                      [=](Lock& lk, WinRef w) { return api::DoLockAll(lk, a, w); });
}
extern "C" int MPIGPU_Win_unlock_all(MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_unlock_all", win,
                      [](Lock& lk, WinRef w) { return api::DoUnlockAll(lk, w); });
}
extern "C" int MPIGPU_Win_flush(int rank, MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_flush", win,
                      [=](Lock& lk, WinRef w) { return api::DoFlush(lk, rank, w, false); });
}
extern "C" int MPIGPU_Win_flush_local(int rank, MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_flush_local", win,
                      [=](Lock& lk, WinRef w) { return api::DoFlush(lk, rank, w, true); });
}
extern "C" int MPIGPU_Win_flush_all(MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_flush_all", win,
                      [](Lock& lk, WinRef w) { return api::DoFlushAll(lk, w, false); });
}
extern "C" int MPIGPU_Win_flush_local_all(MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_flush_local_all", win,
                      [](Lock& lk, WinRef w) { return api::DoFlushAll(lk, w, true); });
}
extern "C" int MPIGPU_Win_sync(MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_sync", win, [](Lock&, WinRef) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    return MPIGPU_SUCCESS;
  });
}
extern "C" int MPIGPU_Win_post(MPIGPU_Group group, int a, MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_post", win,
                      [=](Lock&, WinRef w) { return api::DoPost(group, a, w); });
}
extern "C" int MPIGPU_Win_start(MPIGPU_Group group, int a, MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_start", win,
                      [=](Lock& lk, WinRef w) { return api::DoStart(lk, group, a, w); });
}
extern "C" int MPIGPU_Win_complete(MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_complete", win,
                      [](Lock& lk, WinRef w) { return api::DoComplete(lk, w); });
}
extern "C" int MPIGPU_Win_wait(MPIGPU_Win win) {
  return api::WithWin("MPIGPU_Win_wait", win,
                      [](Lock& lk, WinRef w) { return api::DoWait(lk, w); });
}
extern "C" int MPIGPU_Win_test(MPIGPU_Win win, int* flag) {
  return api::WithWin("MPIGPU_Win_test", win,
                      [flag](Lock&, WinRef w) { return api::DoTest(w, flag); });
}

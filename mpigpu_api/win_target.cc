// The target side of one-sided communication: header receives posted per source, each
// operation checked against the window and applied in its origin's order, replies (get data,
// fetched values, acknowledgements, lock grants) and the lock manager.
#include <algorithm>
#include <cstring>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/ops.h"
#include "mpigpu_api/win_internal.h"

namespace mpigpu::api {
namespace {

int PostHdr(WinData& w, int src, std::vector<unsigned char> buf) {
  WinData::HdrRecv h;
  h.buf = std::move(buf);
  h.buf.resize(kAmBytes);
  if (int rc = StartP2P(true, WinBytes(h.buf.data(), kAmBytes), w.comm, src, kTagHdr,
                        w.comm->ctx_p2p, &h.req);
      rc != MPIGPU_SUCCESS)
    return rc;
  w.hdr_recvs[src].push_back(std::move(h));
  return MPIGPU_SUCCESS;
}

void Refuse(WinData& w, int src, int rc) {
  if (w.target_error[src] == MPIGPU_SUCCESS) w.target_error[src] = rc;
}

// Sends `n` bytes (kept alive in `buf`, or at `at` in `loc`) to src's reply tag.
void Reply(WinData& w, int src, int tag, std::vector<unsigned char> buf, const void* at = nullptr,
           MemLoc loc = MemLoc::Host(), size_t n = 0) {
  WinData::Reply r;
  r.buf = std::move(buf);
  TypedBuf b = WinBytes(at ? const_cast<void*>(at) : r.buf.data(), at ? n : r.buf.size());
  b.loc = loc;
  if (StartP2P(false, b, w.comm, src, tag, w.comm->ctx_p2p, &r.req) != MPIGPU_SUCCESS) return;
  w.replies.push_back(std::move(r));
}

void Ack(WinData& w, int src, int tag, int code) {
  std::vector<unsigned char> b(sizeof(int32_t));
  const int32_t c = code;
  std::memcpy(b.data(), &c, sizeof c);
  Reply(w, src, tag, std::move(b));
}

// Where [lo, hi) of the window lies: its address and location; false if outside.
bool Locate(const WinData& w, int64_t lo, int64_t hi, unsigned char** at, MemLoc* loc) {
  if (lo > hi) return false;
  if (w.flavor == MPIGPU_WIN_FLAVOR_DYNAMIC) {
    for (const Region& r : w.regions) {
      const int64_t b = static_cast<int64_t>(r.base), e = b + static_cast<int64_t>(r.size);
      if (lo >= b && hi <= e) {
        *at = reinterpret_cast<unsigned char*>(lo);
        *loc = r.loc;
        return true;
      }
    }
    return false;
  }
  if (lo < 0 || hi > static_cast<int64_t>(w.size)) return false;
  *at = static_cast<unsigned char*>(w.base) + lo;
  *loc = w.loc;
  return true;
}

// The target region of `op` as runs (address, bytes) in packed order; false if any byte lies
// outside the window or the pieces do not add up to the header's byte count.
struct Run {
  unsigned char* at;
  size_t bytes;
};
bool TargetRuns(const WinData& w, const TargetOp& op, std::vector<Run>* runs, MemLoc* loc) {
  const WireHdr& h = op.hdr;
  unsigned char* at = nullptr;
  if (op.pieces.empty()) {
    if (h.bytes > (uint64_t{1} << 62)) return false;
    if (!Locate(w, h.offset, h.offset + static_cast<int64_t>(h.bytes), &at, loc)) return false;
    runs->push_back({at, h.bytes});
    return true;
  }
  uint64_t total = 0;
  for (const WirePiece& p : op.pieces) {
    if (p.nblocks == 0 || p.block_bytes == 0) continue;
    if (p.block_bytes > (uint64_t{1} << 40) || p.nblocks > (uint64_t{1} << 40) ||
        p.stride_bytes > (uint64_t{1} << 40))
      return false;
    const int64_t lo = h.offset + p.offset;
    const int64_t hi = lo + static_cast<int64_t>((p.nblocks - 1) * p.stride_bytes + p.block_bytes);
    MemLoc l;
    if (!Locate(w, lo, hi, &at, &l)) return false;
    *loc = l;
    for (uint64_t k = 0; k < p.nblocks; ++k) runs->push_back({at + k * p.stride_bytes, p.block_bytes});
    total += p.block_bytes * p.nblocks;
  }
  return total == h.bytes;
}

int CopyRun(void* dst, MemLoc dl, const void* src, MemLoc sl, size_t n) {
  if (n == 0) return MPIGPU_SUCCESS;
  if (dl.is_host() && sl.is_host()) {
    std::memmove(dst, src, n);
    return MPIGPU_SUCCESS;
  }
  DeviceScope scope(dl.is_device() ? dl : sl);
  if (!scope.ok()) return ReturnCode(scope.status(), MPIGPU_ERR_OTHER);
  return ReturnCode(Copy(dst, dl, src, sl, n, nullptr), MPIGPU_ERR_OTHER);
}

// Packed bytes of the runs into `out` / from `in` into the runs.
int Gather(const std::vector<Run>& runs, MemLoc loc, std::vector<unsigned char>* out) {
  size_t n = 0;
  for (const Run& r : runs) n += r.bytes;
  out->resize(n);
  size_t pos = 0;
  for (const Run& r : runs) {
    if (int rc = CopyRun(out->data() + pos, MemLoc::Host(), r.at, loc, r.bytes); rc != MPIGPU_SUCCESS)
      return rc;
    pos += r.bytes;
  }
  return MPIGPU_SUCCESS;
}
int Scatter(const std::vector<Run>& runs, MemLoc loc, const unsigned char* in) {
  size_t pos = 0;
  for (const Run& r : runs) {
    if (int rc = CopyRun(r.at, loc, in + pos, MemLoc::Host(), r.bytes); rc != MPIGPU_SUCCESS)
      return rc;
    pos += r.bytes;
  }
  return MPIGPU_SUCCESS;
}

bool IsAccumulate(AmKind k) { return k == AmKind::kAcc || k == AmKind::kGetAcc; }
bool CarriesData(const WireHdr& h) {
  return h.kind == AmKind::kPut || h.kind == AmKind::kCas ||
         (IsAccumulate(h.kind) && h.op != MPIGPU_NO_OP);
}
size_t DataBytes(const WireHdr& h) {
  if (!CarriesData(h)) return 0;
  return h.kind == AmKind::kCas ? 2 * h.bytes : h.bytes;
}

// Checks an accumulate's op and element type; its element bytes.
int CheckAcc(const WireHdr& h, size_t* elem) {
  if (!IsPredefinedType(h.basic_type))
    return SetLastError(MPIGPU_ERR_TYPE, "accumulate element type is not predefined");
  *elem = h.kind == AmKind::kCas ? PredefinedTypeSize(h.basic_type) : OpElementBytes(h.basic_type);
  if (h.op != MPIGPU_REPLACE && h.op != MPIGPU_NO_OP && h.kind != AmKind::kCas) {
    if (int rc = CheckOpForType(h.op, h.basic_type); rc != MPIGPU_SUCCESS) return rc;
  }
  if (*elem == 0) *elem = PredefinedTypeSize(h.basic_type);
  if (*elem == 0 || h.bytes % *elem != 0)
    return SetLastError(MPIGPU_ERR_TYPE, "accumulate bytes are not whole elements");
  return MPIGPU_SUCCESS;
}

// target = target op in, on packed elements.
int Combine(const WireHdr& h, unsigned char* target, const unsigned char* in, size_t elem) {
  if (h.op == MPIGPU_NO_OP) return MPIGPU_SUCCESS;
  if (h.op == MPIGPU_REPLACE) {
    std::memcpy(target, in, h.bytes);
    return MPIGPU_SUCCESS;
  }
  return ApplyOp(h.op, h.basic_type, target, in, h.bytes / elem);
}

// ---- the lock manager ----

bool Grantable(const WinData& w, int type) {
  if (w.excl_holder >= 0) return false;
  return type == 1 || w.shared_holders == 0;
}
void Grant(WinData& w, int src, int type, int tag) {
  if (type == 2) w.excl_holder = src;
  else ++w.shared_holders;
  ++w.held[src];
  Ack(w, src, tag, MPIGPU_SUCCESS);
}
void GrantWaiters(WinData& w) {
  while (!w.lock_queue.empty() && Grantable(w, w.lock_queue.front().type)) {
    const WinData::LockWaiter l = w.lock_queue.front();
    w.lock_queue.pop_front();
    if (!w.source_dead[l.src]) Grant(w, l.src, l.type, l.reply_tag);
  }
}
int Release(WinData& w, int src) {
  if (w.held[src] == 0) return SetLastError(MPIGPU_ERR_RMA_SYNC, "unlock without a lock");
  --w.held[src];
  if (w.excl_holder == src) w.excl_holder = -1;
  else if (w.shared_holders > 0) --w.shared_holders;
  GrantWaiters(w);
  return MPIGPU_SUCCESS;
}

// An origin died: its locks go, its queued requests too.
void SourceDied(WinData& w, int src) {
  w.source_dead[src] = true;
  while (w.held[src] > 0) (void)Release(w, src);
  w.lock_queue.erase(std::remove_if(w.lock_queue.begin(), w.lock_queue.end(),
                                    [src](const WinData::LockWaiter& l) { return l.src == src; }),
                     w.lock_queue.end());
  GrantWaiters(w);
}

// ---- applying operations ----

void ApplyData(WinData& w, TargetOp& op) {
  const WireHdr& h = op.hdr;
  std::vector<Run> runs;
  MemLoc loc;
  const bool in_range = TargetRuns(w, op, &runs, &loc);
  if (!in_range) {
    SetLastError(MPIGPU_ERR_RMA_RANGE, "target region outside the window");
    Refuse(w, op.src, MPIGPU_ERR_RMA_RANGE);
  }
  const bool replies = h.kind == AmKind::kGet || h.kind == AmKind::kGetAcc || h.kind == AmKind::kCas;
  size_t elem = 1;
  int rc = in_range ? MPIGPU_SUCCESS : MPIGPU_ERR_RMA_RANGE;
  if (rc == MPIGPU_SUCCESS && h.kind != AmKind::kPut && h.kind != AmKind::kGet) {
    rc = CheckAcc(h, &elem);
    if (rc != MPIGPU_SUCCESS) Refuse(w, op.src, rc);
  }
  if (rc != MPIGPU_SUCCESS) {
    if (replies) Reply(w, op.src, h.reply_tag, {});  // the origin's receive ends, empty
    return;
  }
  if (h.kind == AmKind::kPut) {
    if (!op.direct) rc = Scatter(runs, loc, op.data.data());
  } else if (h.kind == AmKind::kGet) {
    if (runs.size() == 1) {
      Reply(w, op.src, h.reply_tag, {}, runs[0].at, loc, runs[0].bytes);
    } else {
      std::vector<unsigned char> out;
      rc = Gather(runs, loc, &out);
      Reply(w, op.src, h.reply_tag, rc == MPIGPU_SUCCESS ? std::move(out) : std::vector<unsigned char>{});
    }
  } else {
    // Accumulates read, combine and write back in one step: nothing else runs in between (the
    // API's lock is held), so each is atomic with respect to every other operation.
    const bool in_place = loc.is_host() && runs.size() == 1 && !replies;
    if (in_place) {
      rc = Combine(h, runs[0].at, op.data.data(), elem);
    } else {
      std::vector<unsigned char> cur;
      rc = Gather(runs, loc, &cur);
      if (rc == MPIGPU_SUCCESS && replies) Reply(w, op.src, h.reply_tag, cur);
      if (rc == MPIGPU_SUCCESS) {
        if (h.kind == AmKind::kCas) {
          if (std::memcmp(cur.data(), op.data.data() + h.bytes, h.bytes) == 0)
            rc = Scatter(runs, loc, op.data.data());
        } else if (h.op != MPIGPU_NO_OP) {
          rc = Combine(h, cur.data(), op.data.data(), elem);
          if (rc == MPIGPU_SUCCESS) rc = Scatter(runs, loc, cur.data());
        }
      } else if (replies) {
        Reply(w, op.src, h.reply_tag, {});
      }
    }
  }
  if (rc != MPIGPU_SUCCESS) Refuse(w, op.src, rc);
}

void Apply(WinData& w, TargetOp& op) {
  const WireHdr& h = op.hdr;
  switch (h.kind) {
    case AmKind::kFlush:
      Ack(w, op.src, h.reply_tag, w.target_error[op.src]);
      w.target_error[op.src] = MPIGPU_SUCCESS;
      return;
    case AmKind::kLock:
      if (h.lock_type != 1 && h.lock_type != 2) {
        Ack(w, op.src, h.reply_tag, MPIGPU_ERR_LOCKTYPE);
      } else if (w.lock_queue.empty() && Grantable(w, h.lock_type)) {
        Grant(w, op.src, h.lock_type, h.reply_tag);
      } else {
        w.lock_queue.push_back({op.src, h.lock_type, h.reply_tag});
      }
      return;
    case AmKind::kUnlock: {
      int rc = Release(w, op.src);
      if (rc == MPIGPU_SUCCESS) rc = w.target_error[op.src];
      w.target_error[op.src] = MPIGPU_SUCCESS;
      Ack(w, op.src, h.reply_tag, rc);
      return;
    }
    case AmKind::kComplete:
      ++w.completes;
      return;
    case AmKind::kPost:
      ++w.posts_from[op.src];
      return;
    default:
      ApplyData(w, op);
  }
}

bool ValidKind(AmKind k) { return k >= AmKind::kPut && k <= AmKind::kPost; }

// Takes in the header message of `n` bytes from `src`: the operation joins the FIFO; receives
// for what did not fit in it are posted now, in the origin's order.
void TakeHeader(WinData& w, int src, const unsigned char* msg, size_t n) {
  TargetOp op;
  op.src = src;
  if (n < sizeof(WireHdr)) return Refuse(w, src, MPIGPU_ERR_INTERN);
  std::memcpy(&op.hdr, msg, sizeof op.hdr);
  const WireHdr& h = op.hdr;
  if (!ValidKind(h.kind) || h.npieces > (1u << 24) || h.bytes > (uint64_t{1} << 40))
    return Refuse(w, src, MPIGPU_ERR_INTERN);
  size_t pos = sizeof(WireHdr);
  const size_t piece_bytes = size_t{h.npieces} * sizeof(WirePiece);
  op.pieces.resize(h.npieces);
  if (h.npieces > 0) {
    if (h.pieces_inline) {
      if (n < pos + piece_bytes) return Refuse(w, src, MPIGPU_ERR_INTERN);
      std::memcpy(op.pieces.data(), msg + pos, piece_bytes);
      pos += piece_bytes;
    } else if (StartP2P(true, WinBytes(op.pieces.data(), piece_bytes), w.comm, src, kTagData,
                        w.comm->ctx_p2p, &op.pieces_req) != MPIGPU_SUCCESS) {
      return Refuse(w, src, MPIGPU_ERR_INTERN);
    }
  }
  const size_t data = DataBytes(h);
  if (data > 0) {
    if (h.data_inline) {
      if (n < pos + data) return Refuse(w, src, MPIGPU_ERR_INTERN);
      op.data.assign(msg + pos, msg + pos + data);
    } else {
      // A contiguous Put lands in the window itself; everything else is staged.
      std::vector<Run> runs;
      MemLoc loc;
      TypedBuf into;
      if (h.kind == AmKind::kPut && h.npieces == 0 && TargetRuns(w, op, &runs, &loc)) {
        into = WinBytes(runs[0].at, data);
        into.loc = loc;
      } else {
        op.data.resize(data);
        into = WinBytes(op.data.data(), data);
      }
      op.direct = into.ptr != op.data.data();
      ApiRequest** req = op.direct ? &op.direct_req : &op.data_req;
      if (StartP2P(true, into, w.comm, src, kTagData, w.comm->ctx_p2p, req) != MPIGPU_SUCCESS)
        return Refuse(w, src, MPIGPU_ERR_INTERN);
    }
  }
  w.fifo.push_back(std::move(op));
}

// Completes a target-side receive; false if it failed (its source is then dead to the window).
bool Finished(WinData& w, int src, ApiRequest*& r) {
  if (r == nullptr) return true;
  const int rc = CompleteP2P(r, nullptr);
  r = nullptr;
  if (rc == MPIGPU_SUCCESS) return true;
  SourceDied(w, src);
  return false;
}

bool Ready(const TargetOp& op) {
  for (const ApiRequest* r : {op.pieces_req, op.data_req, op.direct_req})
    if (r != nullptr && !P2PDone(r)) return false;
  return true;
}

void ProgressWindow(WinData& w) {
  const int n = w.comm->size();
  for (int src = 0; src < n; ++src) {
    auto& q = w.hdr_recvs[src];
    while (!q.empty() && P2PDone(q.front().req)) {
      WinData::HdrRecv h = std::move(q.front());
      q.pop_front();
      MPIGPU_Status st;
      if (CompleteP2P(h.req, &st) != MPIGPU_SUCCESS) {
        SourceDied(w, src);
        continue;
      }
      TakeHeader(w, src, h.buf.data(), st.count_bytes);
      if (PostHdr(w, src, std::move(h.buf)) != MPIGPU_SUCCESS) SourceDied(w, src);
    }
  }
  while (!w.fifo.empty() && Ready(w.fifo.front())) {
    TargetOp op = std::move(w.fifo.front());
    w.fifo.pop_front();
    bool ok = Finished(w, op.src, op.pieces_req);
    ok = Finished(w, op.src, op.data_req) && ok;
    ok = Finished(w, op.src, op.direct_req) && ok;
    if (ok) Apply(w, op);
  }
  while (!w.replies.empty() && P2PDone(w.replies.front().req)) {
    (void)CompleteP2P(w.replies.front().req, nullptr);  // a dead origin's reply: nobody waits
    w.replies.pop_front();
  }
}

bool g_in_progress = false;

}  // namespace

int StartTarget(WinData& w) {
  const int n = w.comm->size();
  w.hdr_recvs.resize(n);
  w.source_dead.assign(n, false);
  w.target_error.assign(n, MPIGPU_SUCCESS);
  w.held.assign(n, 0);
  w.posts_from.assign(n, 0);
  for (int src = 0; src < n; ++src)
    for (int k = 0; k < kHdrRecvsPerSource; ++k)
      if (int rc = PostHdr(w, src, {}); rc != MPIGPU_SUCCESS) return rc;
  return MPIGPU_SUCCESS;
}

void StopTarget(Lock& lk, WinData& w) {
  State& s = GetState();
  w.stopping = true;
  // Header receives nobody will match now (every member's operations completed before Win_free
  // got here): withdrawn; one that matched after all is waited for, as the replies in flight.
  for (auto& q : w.hdr_recvs)
    for (WinData::HdrRecv& h : q)
      if (h.req->op != nullptr) s.engine->CancelRecv(h.req->op);
  (void)ProgressUntil(lk, [&w] {
    for (const auto& q : w.hdr_recvs)
      for (const WinData::HdrRecv& h : q)
        if (!P2PDone(h.req)) return false;
    for (const WinData::Reply& r : w.replies)
      if (!P2PDone(r.req)) return false;
    return true;
  });
  for (auto& q : w.hdr_recvs)
    for (WinData::HdrRecv& h : q) (void)CompleteP2P(h.req, nullptr);
  w.hdr_recvs.clear();
  for (WinData::Reply& r : w.replies) (void)CompleteP2P(r.req, nullptr);
  w.replies.clear();
}

void ProgressWindows() {
  if (g_in_progress) return;  // a window's own waits progress too: no re-entry
  g_in_progress = true;
  for (const WinPtr& w : Windows())
    if (w && !w->stopping && !w->hdr_recvs.empty()) ProgressWindow(*w);
  g_in_progress = false;
}

}  // namespace mpigpu::api

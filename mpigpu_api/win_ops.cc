// The origin side of one-sided communication: Put, Get, Accumulate, Get_accumulate,
// Fetch_and_op, Compare_and_swap and their request forms, as active messages (win_internal.h).
#include <algorithm>
#include <cstring>

#include "mpigpu_api/api_entry.h"
#include "mpigpu_api/coll_internal.h"  // PackToHost
#include "mpigpu_api/ops.h"
#include "mpigpu_api/win_internal.h"

namespace mpigpu::api {
namespace {

// What one call asks for.
struct RmaArgs {
  AmKind kind = AmKind::kPut;
  const void* origin = nullptr;
  MPIGPU_Buftype obt = MPIGPU_BUF_HOST;
  int ocount = 0;
  MPIGPU_Datatype otype = MPIGPU_BYTE;
  void* result = nullptr;
  MPIGPU_Buftype rbt = MPIGPU_BUF_HOST;
  int rcount = 0;
  MPIGPU_Datatype rtype = MPIGPU_BYTE;
  const void* compare = nullptr;
  MPIGPU_Buftype cbt = MPIGPU_BUF_HOST;
  int target = 0;
  MPIGPU_Aint disp = 0;
  int tcount = 0;
  MPIGPU_Datatype ttype = MPIGPU_BYTE;
  MPIGPU_Op op = MPIGPU_REPLACE;
};

bool InEpoch(const WinData& w, int target) {
  if (w.fence_epoch || w.lock_all || w.lock_type[target] != 0) return true;
  return std::find(w.access_group.begin(), w.access_group.end(), target) != w.access_group.end();
}

// Checks the target region against the target's window (sizes exchanged at creation) and
// fills the header's offset and the layout pieces.
int TargetLayout(const WinData& w, const RmaArgs& a, const TypeDesc& t, WireHdr* h,
                 std::vector<WirePiece>* pieces) {
  const bool dynamic = w.flavor == MPIGPU_WIN_FLAVOR_DYNAMIC;
  const PeerInfo& p = w.peers[a.target];
  if (!dynamic && a.disp < 0) return SetLastError(MPIGPU_ERR_RMA_RANGE, "negative target_disp");
  __int128 off = static_cast<__int128>(a.disp) * (dynamic ? 1 : p.disp_unit);
  if (off > INT64_MAX / 2) return SetLastError(MPIGPU_ERR_RMA_RANGE, "target_disp too large");
  h->offset = static_cast<int64_t>(off);
  h->bytes = t.total_bytes;
  __int128 lo = 0, hi = static_cast<__int128>(t.total_bytes);
  if (!t.contiguous && t.total_bytes > 0) {
    lo = INT64_MAX;
    hi = INT64_MIN;
    for (const TypePiece& q : FlattenPieces(t)) {
      if (q.nblocks == 0 || q.block_bytes == 0) continue;
      pieces->push_back({q.offset, q.block_bytes, q.stride_bytes, q.nblocks});
      lo = std::min<__int128>(lo, q.offset);
      hi = std::max<__int128>(hi, q.offset + static_cast<__int128>((q.nblocks - 1) * q.stride_bytes +
                                                                   q.block_bytes));
    }
    if (pieces->empty()) lo = hi = 0;
  }
  if (dynamic || t.total_bytes == 0) return MPIGPU_SUCCESS;  // the target checks its regions
  if (off + lo < 0 || off + hi > static_cast<__int128>(p.size))
    return SetLastError(MPIGPU_ERR_RMA_RANGE,
                        "target region [" + std::to_string(static_cast<long long>(off + lo)) + ", " +
                            std::to_string(static_cast<long long>(off + hi)) +
                            ") is outside rank " + std::to_string(a.target) + "'s window of " +
                            std::to_string(p.size) + " bytes");
  return MPIGPU_SUCCESS;
}

int CheckAccumulate(const RmaArgs& a, const TypeDesc& t, const TypeDesc* o) {
  if (!IsPredefinedOp(a.op))
    return SetLastError(MPIGPU_ERR_OP, "one-sided accumulates take predefined ops only");
  if (!IsPredefinedType(t.basic_type))
    return SetLastError(MPIGPU_ERR_TYPE, "target type is not made of one predefined type");
  if (o != nullptr && o->total_bytes > 0 && o->basic_type != t.basic_type)
    return SetLastError(MPIGPU_ERR_TYPE, "origin and target element types differ");
  if (a.op != MPIGPU_REPLACE && a.op != MPIGPU_NO_OP && a.kind != AmKind::kCas)
    return CheckOpForType(a.op, t.basic_type);
  return MPIGPU_SUCCESS;
}

int SizeMismatch(const char* what, size_t a, size_t b) {
  return SetLastError(MPIGPU_ERR_COUNT, std::string(what) + " has " + std::to_string(a) +
                                            " bytes, the target region " + std::to_string(b));
}

// A request that is complete at once (PROC_NULL target, or data sent inline) for the user.
int DoneRequest(const WinData& w, MPIGPU_Request* request) {
  ApiRequest* r = nullptr;
  if (int rc = StartP2P(false, WinBytes(nullptr, 0), w.comm, MPIGPU_PROC_NULL, 0,
                        w.comm->ctx_p2p, &r);
      rc != MPIGPU_SUCCESS)
    return rc;
  r->handle = r->key;
  *request = HandleFromValue(r->handle);
  return MPIGPU_SUCCESS;
}

int DoRma(Lock& lk, MPIGPU_Win win, const RmaArgs& a, MPIGPU_Request* request) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  WinData* wp = LookupWin(win);
  if (wp == nullptr) return MPIGPU_ERR_WIN;
  WinData& w = *wp;
  if (request != nullptr) *request = MPIGPU_REQUEST_NULL;
  if (a.target == MPIGPU_PROC_NULL) return request ? DoneRequest(w, request) : MPIGPU_SUCCESS;
  if (int rc = CheckPeer(*w.comm, a.target, false); rc != MPIGPU_SUCCESS) return rc;
  if (!InEpoch(w, a.target))
    return SetLastError(MPIGPU_ERR_RMA_SYNC, "no access epoch to rank " + std::to_string(a.target) +
                                                 " is open (fence, lock or start first)");
  TypeDesc t;
  if (int rc = DescribeForComm(a.ttype, a.tcount, &t); rc != MPIGPU_SUCCESS) return rc;
  const bool acc = a.kind == AmKind::kAcc || a.kind == AmKind::kGetAcc || a.kind == AmKind::kCas;
  const bool sends = a.kind == AmKind::kPut || a.kind == AmKind::kCas ||
                     ((a.kind == AmKind::kAcc || a.kind == AmKind::kGetAcc) && a.op != MPIGPU_NO_OP);
  const bool fetches = a.kind != AmKind::kPut && a.kind != AmKind::kAcc;
  TypedBuf ob, rb;
  if (sends || a.kind == AmKind::kGet) {
    if (int rc = ResolveTypedBuf(a.origin, a.obt, a.ocount, a.otype, &ob); rc != MPIGPU_SUCCESS)
      return rc;
    if (ob.desc.total_bytes != t.total_bytes && a.kind != AmKind::kCas)
      return SizeMismatch("the origin buffer", ob.desc.total_bytes, t.total_bytes);
  }
  if (a.kind == AmKind::kGet) rb = ob;
  if (a.kind == AmKind::kGetAcc || a.kind == AmKind::kCas) {
    if (int rc = ResolveTypedBuf(a.result, a.rbt, a.rcount, a.rtype, &rb); rc != MPIGPU_SUCCESS)
      return rc;
    if (rb.desc.total_bytes != t.total_bytes)
      return SizeMismatch("the result buffer", rb.desc.total_bytes, t.total_bytes);
  }
  if (acc) {
    if (int rc = CheckAccumulate(a, t, sends ? &ob.desc : nullptr); rc != MPIGPU_SUCCESS) return rc;
  }
  WireHdr h;
  h.kind = a.kind;
  h.op = a.op;
  h.basic_type = t.basic_type;
  std::vector<WirePiece> pieces;
  if (int rc = TargetLayout(w, a, t, &h, &pieces); rc != MPIGPU_SUCCESS) return rc;
  if (t.total_bytes == 0 && a.kind != AmKind::kCas)
    return request ? DoneRequest(w, request) : MPIGPU_SUCCESS;  // nothing moves

  // Compare_and_swap's data: the new value, then the value to compare with.
  std::vector<unsigned char> cas;
  TypedBuf data = ob;
  if (a.kind == AmKind::kCas) {
    TypedBuf cb;
    if (int rc = ResolveTypedBuf(a.compare, a.cbt, 1, a.ttype, &cb); rc != MPIGPU_SUCCESS) return rc;
    if (!IsPredefinedType(a.ttype) || t.total_bytes != PredefinedTypeSize(a.ttype))
      return SetLastError(MPIGPU_ERR_TYPE, "compare_and_swap takes one predefined element");
    cas.resize(2 * t.total_bytes);
    if (int rc = PackToHost(ob, cas.data()); rc != MPIGPU_SUCCESS) return rc;
    if (int rc = PackToHost(cb, cas.data() + t.total_bytes); rc != MPIGPU_SUCCESS) return rc;
    data = WinBytes(cas.data(), cas.size());
  }
  ApiRequest* reply = nullptr;
  if (fetches) {
    h.reply_tag = NextReplyTag(w);
    if (int rc = StartP2P(true, rb, w.comm, a.target, h.reply_tag, w.comm->ctx_p2p, &reply);
        rc != MPIGPU_SUCCESS)
      return rc;
  }
  ApiRequest* primary = nullptr;
  int rc = SendAm(w, a.target, h, pieces, sends ? &data : nullptr, &primary);
  w.dirty[a.target] = true;
  if (rc != MPIGPU_SUCCESS) {
    if (reply != nullptr) w.pending.push_back({reply, {}});
    return rc;
  }
  if (fetches) {
    if (primary != nullptr) w.pending.push_back({primary, {}});
    primary = reply;
  }
  if (request == nullptr) {
    if (primary != nullptr) w.pending.push_back({primary, {}});
    // Keep the list short between synchronisations.
    if (w.pending.size() >= 64) (void)ReapOrigin(lk, w, false);
    return MPIGPU_SUCCESS;
  }
  if (primary == nullptr) return DoneRequest(w, request);
  primary->handle = primary->key;
  *request = HandleFromValue(primary->handle);
  w.user_pending.push_back({primary, primary->key});
  return MPIGPU_SUCCESS;
}

}  // namespace

int NextReplyTag(WinData& w) {
  const int span = MPIGPU_TAG_UB - kFirstReplyTag;
  w.next_reply = (w.next_reply + 1) % span;
  return kFirstReplyTag + w.next_reply;
}

int SendAm(WinData& w, int target, const WireHdr& hdr, const std::vector<WirePiece>& pieces,
           const TypedBuf* data, ApiRequest** primary) {
  if (primary) *primary = nullptr;
  const size_t pb = pieces.size() * sizeof(WirePiece);
  const size_t db = data ? data->desc.total_bytes : 0;
  const bool pin = sizeof(WireHdr) + pb <= kAmBytes;
  const bool din = data != nullptr && pin && sizeof(WireHdr) + pb + db <= kAmBytes;
  WireHdr h = hdr;
  h.npieces = static_cast<uint32_t>(pieces.size());
  h.pieces_inline = pin && pb > 0;
  h.data_inline = din;
  WinData::Pending msg;
  msg.buf.resize(sizeof(WireHdr) + (pin ? pb : 0) + (din ? db : 0));
  std::memcpy(msg.buf.data(), &h, sizeof h);
  if (pin && pb > 0) std::memcpy(msg.buf.data() + sizeof h, pieces.data(), pb);
  if (din && db > 0) {
    if (int rc = PackToHost(*data, msg.buf.data() + sizeof h + pb); rc != MPIGPU_SUCCESS) return rc;
  }
  const int ctx = w.comm->ctx_p2p;
  if (int rc = StartP2P(false, WinBytes(msg.buf.data(), msg.buf.size()), w.comm, target, kTagHdr,
                        ctx, &msg.req);
      rc != MPIGPU_SUCCESS)
    return rc;
  w.pending.push_back(std::move(msg));
  if (!pin && pb > 0) {
    WinData::Pending p;
    p.buf.resize(pb);
    std::memcpy(p.buf.data(), pieces.data(), pb);
    if (int rc = StartP2P(false, WinBytes(p.buf.data(), pb), w.comm, target, kTagData, ctx, &p.req);
        rc != MPIGPU_SUCCESS)
      return rc;
    w.pending.push_back(std::move(p));
  }
  if (data != nullptr && !din) {
    ApiRequest* d = nullptr;
    if (int rc = StartP2P(false, *data, w.comm, target, kTagData, ctx, &d); rc != MPIGPU_SUCCESS)
      return rc;
    if (primary) *primary = d;
    else w.pending.push_back({d, {}});
  }
  return MPIGPU_SUCCESS;
}

int PostAck(WinData& w, int target, int* tag, ApiRequest** req, int32_t* code) {
  *tag = NextReplyTag(w);
  *code = MPIGPU_SUCCESS;
  return StartP2P(true, WinBytes(code, sizeof *code), w.comm, target, *tag, w.comm->ctx_p2p, req);
}

int WaitReply(Lock& lk, ApiRequest* r) { return WaitP2P(lk, r, nullptr); }

int ReapOrigin(Lock& lk, WinData& w, bool all) {
  if (all) {
    auto done = [&w] {
      for (const WinData::Pending& p : w.pending)
        if (!P2PDone(p.req)) return false;
      for (const auto& [r, key] : w.user_pending)
        if (r->handle == key && !P2PDone(r)) return false;
      return true;
    };
    if (int rc = ProgressUntil(lk, done); rc != MPIGPU_SUCCESS) return rc;
  }
  for (size_t i = 0; i < w.pending.size();) {
    if (!P2PDone(w.pending[i].req)) {
      ++i;
      continue;
    }
    const int rc = CompleteP2P(w.pending[i].req, nullptr);
    if (rc != MPIGPU_SUCCESS && w.failed == MPIGPU_SUCCESS) w.failed = rc;
    w.pending.erase(w.pending.begin() + static_cast<ptrdiff_t>(i));
  }
  auto& u = w.user_pending;
  u.erase(std::remove_if(u.begin(), u.end(),
                         [](const auto& e) { return e.first->handle != e.second || P2PDone(e.first); }),
          u.end());
  if (!all) return MPIGPU_SUCCESS;
  const int rc = w.failed;
  w.failed = MPIGPU_SUCCESS;
  return rc;
}

}  // namespace mpigpu::api

using mpigpu::api::AmKind;
using mpigpu::api::DoRma;
using mpigpu::api::FinishWin;
using mpigpu::api::RmaArgs;

namespace {

int Run(const char* fn, MPIGPU_Win win, const RmaArgs& a, MPIGPU_Request* request,
        bool wants_request) {
  Lock lk(GetState().mu);
  if (wants_request && request == nullptr)
    return FinishWin(fn, win, SetLastError(MPIGPU_ERR_ARG, "null request"));
  return FinishWin(fn, win, DoRma(lk, win, a, request));
}

RmaArgs Args(AmKind kind, const void* o, MPIGPU_Buftype obt, int oc, MPIGPU_Datatype ot,
             int target, MPIGPU_Aint disp, int tc, MPIGPU_Datatype tt,
             MPIGPU_Op op = MPIGPU_REPLACE) {
  RmaArgs a;
  a.kind = kind;
  a.origin = o;
  a.obt = obt;
  a.ocount = oc;
  a.otype = ot;
  a.target = target;
  a.disp = disp;
  a.tcount = tc;
  a.ttype = tt;
  a.op = op;
  return a;
}

RmaArgs GetAccArgs(const void* o, MPIGPU_Buftype obt, int oc, MPIGPU_Datatype ot, void* r,
                   MPIGPU_Buftype rbt, int rc, MPIGPU_Datatype rt, int target, MPIGPU_Aint disp,
                   int tc, MPIGPU_Datatype tt, MPIGPU_Op op) {
  RmaArgs a = Args(AmKind::kGetAcc, o, obt, oc, ot, target, disp, tc, tt, op);
  a.result = r;
  a.rbt = rbt;
  a.rcount = rc;
  a.rtype = rt;
  return a;
}

}  // namespace

extern "C" int MPIGPU_Put(const void* o, MPIGPU_Buftype obt, int oc, MPIGPU_Datatype ot,
                          int target, MPIGPU_Aint disp, int tc, MPIGPU_Datatype tt,
                          MPIGPU_Win win) {
  return Run("MPIGPU_Put", win, Args(AmKind::kPut, o, obt, oc, ot, target, disp, tc, tt), nullptr,
             false);
}

extern "C" int MPIGPU_Get(void* o, MPIGPU_Buftype obt, int oc, MPIGPU_Datatype ot, int target,
                          MPIGPU_Aint disp, int tc, MPIGPU_Datatype tt, MPIGPU_Win win) {
  return Run("MPIGPU_Get", win, Args(AmKind::kGet, o, obt, oc, ot, target, disp, tc, tt), nullptr,
             false);
}

extern "C" int MPIGPU_Accumulate(const void* o, MPIGPU_Buftype obt, int oc, MPIGPU_Datatype ot,
                                 int target, MPIGPU_Aint disp, int tc, MPIGPU_Datatype tt,
                                 MPIGPU_Op op, MPIGPU_Win win) {
  return Run("MPIGPU_Accumulate", win, Args(AmKind::kAcc, o, obt, oc, ot, target, disp, tc, tt, op),
             nullptr, false);
}

extern "C" int MPIGPU_Get_accumulate(const void* o, MPIGPU_Buftype obt, int oc,
                                     MPIGPU_Datatype ot, void* r, MPIGPU_Buftype rbt, int rc,
                                     MPIGPU_Datatype rt, int target, MPIGPU_Aint disp, int tc,
                                     MPIGPU_Datatype tt, MPIGPU_Op op, MPIGPU_Win win) {
  return Run("MPIGPU_Get_accumulate", win,
             GetAccArgs(o, obt, oc, ot, r, rbt, rc, rt, target, disp, tc, tt, op), nullptr, false);
}

extern "C" int MPIGPU_Fetch_and_op(const void* o, MPIGPU_Buftype obt, void* r,
                                   MPIGPU_Buftype rbt, MPIGPU_Datatype type, int target,
                                   MPIGPU_Aint disp, MPIGPU_Op op, MPIGPU_Win win) {
  return Run("MPIGPU_Fetch_and_op", win,
             GetAccArgs(o, obt, 1, type, r, rbt, 1, type, target, disp, 1, type, op), nullptr,
             false);
}

extern "C" int MPIGPU_Compare_and_swap(const void* o, MPIGPU_Buftype obt, const void* c,
                                       MPIGPU_Buftype cbt, void* r, MPIGPU_Buftype rbt,
                                       MPIGPU_Datatype type, int target, MPIGPU_Aint disp,
                                       MPIGPU_Win win) {
  RmaArgs a = GetAccArgs(o, obt, 1, type, r, rbt, 1, type, target, disp, 1, type, MPIGPU_REPLACE);
  a.kind = AmKind::kCas;
  a.compare = c;
  a.cbt = cbt;
  return Run("MPIGPU_Compare_and_swap", win, a, nullptr, false);
}

extern "C" int MPIGPU_Rput(const void* o, MPIGPU_Buftype obt, int oc, MPIGPU_Datatype ot,
                           int target, MPIGPU_Aint disp, int tc, MPIGPU_Datatype tt,
                           MPIGPU_Win win, MPIGPU_Request* request) {
  return Run("MPIGPU_Rput", win, Args(AmKind::kPut, o, obt, oc, ot, target, disp, tc, tt), request,
             true);
}

extern "C" int MPIGPU_Rget(void* o, MPIGPU_Buftype obt, int oc, MPIGPU_Datatype ot, int target,
                           MPIGPU_Aint disp, int tc, MPIGPU_Datatype tt, MPIGPU_Win win,
                           MPIGPU_Request* request) {
  return Run("MPIGPU_Rget", win, Args(AmKind::kGet, o, obt, oc, ot, target, disp, tc, tt), request,
             true);
}

extern "C" int MPIGPU_Raccumulate(const void* o, MPIGPU_Buftype obt, int oc, MPIGPU_Datatype ot,
                                  int target, MPIGPU_Aint disp, int tc, MPIGPU_Datatype tt,
                                  MPIGPU_Op op, MPIGPU_Win win, MPIGPU_Request* request) {
  return Run("MPIGPU_Raccumulate", win,
             Args(AmKind::kAcc, o, obt, oc, ot, target, disp, tc, tt, op), request, true);
}

extern "C" int MPIGPU_Rget_accumulate(const void* o, MPIGPU_Buftype obt, int oc,
                                      MPIGPU_Datatype ot, void* r, MPIGPU_Buftype rbt, int rc,
                                      MPIGPU_Datatype rt, int target, MPIGPU_Aint disp, int tc,
                                      MPIGPU_Datatype tt, MPIGPU_Op op, MPIGPU_Win win,
                                      MPIGPU_Request* request) {
  return Run("MPIGPU_Rget_accumulate", win,
             GetAccArgs(o, obt, oc, ot, r, rbt, rc, rt, target, disp, tc, tt, op), request, true);
}

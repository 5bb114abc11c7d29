// One-sided communication (windows) over the point-to-point engine: what win.cc (objects,
// creation, queries), win_target.cc (the target side: incoming operations, the lock manager),
// win_ops.cc (the origin side: Put, Get, accumulates) and win_sync.cc (fence, locks, flush,
// PSCW) share. Not part of the public interface.
//
// Every operation is an active message on the window's own context (a private communicator
// over the window's group): a fixed header (WireHdr), the target's layout when it is not one
// contiguous run, and the data, inline in the header message when small. The target keeps
// two header receives posted per source and applies each source's operations in the order they
// were issued (one FIFO per window), so accumulates of one origin to one location keep their
// order and a flush's acknowledgement means every earlier operation of that origin is applied.
// Everything here runs under the API's lock (State::mu), the progress thread's rounds included.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "pipeline/type_pieces.h"

namespace mpigpu::api {

// Kinds of active messages.
enum class AmKind : uint8_t {
  kPut = 1,
  kGet,
  kAcc,     // accumulate (REPLACE, NO_OP and every predefined op)
  kGetAcc,  // get_accumulate and fetch_and_op: the old value goes back
  kCas,     // compare_and_swap: data = origin value, then compare value
  kFlush,   // acknowledged once every earlier operation of the origin is applied
  kLock,    // lock request: granted by a reply
  kUnlock,  // releases the origin's lock once its earlier operations are applied; acknowledged
  kComplete,  // PSCW: the origin's access epoch to this target ended
  kPost,      // PSCW: the target exposes its window to the receiver
};

// The header of every active message. Fixed-size, checked field by field at the target.
struct WireHdr {
  AmKind kind = AmKind::kPut;
  uint8_t lock_type = 0;    // kLock: 1 shared, 2 exclusive
  uint8_t data_inline = 0;  // data follows the header (and the pieces) in this message
  uint8_t pieces_inline = 0;
  int32_t op = 0;                   // accumulates: a predefined MPIGPU_Op
  int32_t basic_type = 0;           // accumulates: the elements' predefined type
  uint32_t npieces = 0;             // target layout pieces (0: one contiguous run of `bytes`)
  int32_t reply_tag = 0;            // where the reply goes (0: none)
  int32_t pad = 0;
  int64_t offset = 0;               // target byte offset from the window's base (dynamic: address)
  uint64_t bytes = 0;               // packed bytes at the target (Cas: of one element)
};
static_assert(sizeof(WireHdr) == 40, "WireHdr travels between processes: keep it packed");

// A target layout piece as it travels (pipeline's TypePiece, fixed widths).
struct WirePiece {
  int64_t offset;
  uint64_t block_bytes;
  uint64_t stride_bytes;
  uint64_t nblocks;
};

// Tags on the window's context.
constexpr int kTagHdr = 1;
constexpr int kTagData = 2;   // pieces and data that do not fit in the header message
constexpr int kFirstReplyTag = 16;
// Bytes of one header message (header receives are this large).
constexpr size_t kAmBytes = 4096;
constexpr int kHdrRecvsPerSource = 2;

// A region of a dynamic window.
struct Region {
  uintptr_t base = 0;
  size_t size = 0;
  MemLoc loc;
};

// One operation received at the target, waiting for its data or its turn.
struct TargetOp {
  int src = 0;  // window rank of the origin
  WireHdr hdr;
  std::vector<WirePiece> pieces;
  std::vector<unsigned char> data;  // packed data (inline copy or received)
  ApiRequest* pieces_req = nullptr;
  ApiRequest* data_req = nullptr;
  ApiRequest* direct_req = nullptr;  // a Put received straight into the window
  bool direct = false;               // (so nothing is left to copy)
};

// What an origin knows of each target: sizes exchanged at creation.
struct PeerInfo {
  uint64_t size = 0;
  int disp_unit = 1;
};

struct WinData {
  MPIGPU_Win handle = MPIGPU_WIN_NULL;
  CommPtr comm;  // private: its own contexts (ctx_p2p carries every active message)
  MPIGPU_Comm comm_handle = MPIGPU_COMM_NULL;
  int flavor = MPIGPU_WIN_FLAVOR_CREATE;
  void* base = nullptr;
  size_t size = 0;
  int disp_unit = 1;
  MemLoc loc;
  bool owns_memory = false;  // Win_allocate: freed with the window
  std::vector<PeerInfo> peers;
  std::vector<Region> regions;  // dynamic windows
  std::string name;
  MPIGPU_Errhandler errhandler = MPIGPU_ERRORS_ARE_FATAL;

  // ---- target side ----
  struct HdrRecv {
    ApiRequest* req = nullptr;
    std::vector<unsigned char> buf;
  };
  std::vector<std::deque<HdrRecv>> hdr_recvs;  // per source, in posting order
  std::vector<bool> source_dead;
  std::deque<TargetOp> fifo;
  std::vector<int> target_error;  // per source: first refusal, returned with the next ack
  // Lock manager: holders and the queue of waiting requests.
  int excl_holder = -1;
  int shared_holders = 0;
  struct LockWaiter {
    int src, type, reply_tag;
  };
  std::deque<LockWaiter> lock_queue;
  bool stopping = false;        // Win_free withdraws the header receives: progress leaves it
  std::vector<int> held;        // locks each source holds here
  std::vector<int> posts_from;  // PSCW origin side: posts received from each target
  int completes = 0;            // PSCW target side: completes received
  struct Reply {
    ApiRequest* req = nullptr;
    std::vector<unsigned char> buf;  // what it sends, unless it sends from the window
  };
  std::deque<Reply> replies;  // the target's reply sends in flight

  // ---- origin side ----
  int next_reply = 0;
  struct Pending {
    ApiRequest* req = nullptr;
    std::vector<unsigned char> buf;  // the message it sends (header messages)
  };
  std::deque<Pending> pending;  // the origin's internal requests in flight
  // A user's request (Rput, Rget...) that a flush must see done too: (object, its handle).
  std::vector<std::pair<ApiRequest*, uintptr_t>> user_pending;
  std::vector<bool> dirty;     // operations sent to the target since its last flush
  std::vector<int> lock_type;  // per target: 0 none, else MPIGPU_LOCK_*
  bool lock_all = false;
  bool nocheck_all = false;
  std::vector<bool> nocheck;  // per target: locked with MODE_NOCHECK
  bool fence_epoch = false;
  bool access = false;              // PSCW: between start and complete
  std::vector<int> access_group;    // PSCW start: window ranks
  std::vector<int> exposure_group;  // PSCW post: window ranks
  bool exposure = false;
  int failed = MPIGPU_SUCCESS;  // first failure of an internal request, for the next sync

  int rank() const { return comm->rank; }
  int size_of_group() const { return comm->size(); }
};
using WinPtr = std::shared_ptr<WinData>;

// n host bytes at p as a typed buffer (messages of the window's own protocol).
inline TypedBuf WinBytes(void* p, size_t n) {
  TypedBuf b;
  b.ptr = p;
  (void)DescribeForComm(MPIGPU_BYTE, static_cast<int>(n), &b.desc);
  return b;
}

// The windows of the process by handle (index); null once freed.
std::vector<WinPtr>& Windows();
// The window `win`, or null (detail recorded, class WIN).
WinData* LookupWin(MPIGPU_Win win);
// Finishes a public window call: names `fn` and applies the window's handler.
int FinishWin(const char* fn, MPIGPU_Win win, int rc);

// Target side (win_target.cc).
// Posts the header receives of a new window.
int StartTarget(WinData& w);
// Withdraws them (Win_free, after every member's operations completed) and waits for the
// replies in flight.
void StopTarget(Lock& lk, WinData& w);
// Takes in and applies what arrived for every window (called by every progress round).
void ProgressWindows();

// Origin side (win_ops.cc).
// Sends `hdr`, the target layout `pieces` and `data` (an origin buffer; null: none) to
// `target`. *primary (if not null) receives the request whose completion frees the origin
// buffer, which the caller then owns; every other request joins WinData::pending.
int SendAm(WinData& w, int target, const WireHdr& hdr, const std::vector<WirePiece>& pieces,
           const TypedBuf* data, ApiRequest** primary);
// A fresh reply tag.
int NextReplyTag(WinData& w);
// Posts a receive of a 4-byte acknowledgement from `target` on a fresh tag (*tag).
int PostAck(WinData& w, int target, int* tag, ApiRequest** req, int32_t* code);
// Completes the origin's requests that are done; with `all`, waits for every one.
int ReapOrigin(Lock& lk, WinData& w, bool all);
// Waits for a receive (reply) and completes it; its error.
int WaitReply(Lock& lk, ApiRequest* r);

// Completes every operation at every target written since the last flush, and every local
// request (win_sync.cc); the first error.
int FlushDirty(Lock& lk, WinData& w);

// Starts the progress thread once (MPIGPU_ASYNC_PROGRESS=1); stops it when no window is left.
void StartProgressThread();
void StopProgressThreadIfIdle(Lock& lk);

}  // namespace mpigpu::api

// Shared pieces of the collectives (coll*.cc): tags on a communicator's collective context,
// typed-buffer blocks, staging of typed buffers (host or device, any datatype) to packed host
// bytes, the reduction context that combines packed host data with a predefined or user op,
// the schedule pieces several collectives share, and RunColl, which runs a built schedule
// (blocking) or hands it to a request (nonblocking).
//
// Matching: every rank calls a communicator's collectives in the same order, collectives use a
// context of their own (never a user's point-to-point one), and messages of one pair never
// overtake each other; so a fixed tag per kind suffices (nonblocking ones add a tag block of
// their own, coll_sched.h). A schedule posts all of a round's receives and sends before
// waiting, so no pair of ranks waits on each other's rendezvous.
#pragma once

#include <cstddef>
#include <vector>

#include <memory>

#include "devcoll/reduce_kinds.h"
#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/coll_sched.h"
#include "mpigpu_api/ops.h"

namespace mpigpu::api {

constexpr int kTagBcast = 1;
constexpr int kTagReduce = 2;
constexpr int kTagGather = 3;
constexpr int kTagScatter = 4;
constexpr int kTagAllgather = 5;
constexpr int kTagAlltoall = 6;
constexpr int kTagScan = 7;
constexpr int kTagBarrier = 0x100;  // + round

inline bool IsInPlace(const void* p) { return p == MPIGPU_IN_PLACE; }

// The communicator behind `comm` (MPIGPU_Init done). Errors: NOT_INITIALIZED, COMM.
int CommOf(MPIGPU_Comm comm, CommPtr* c);
// Errors: RANK (root outside comm).
int CheckRoot(const CommData& c, int root);
// The error (class ARG) of IN_PLACE where MPI does not allow it.
int InPlaceError(const char* where);

// `bytes` contiguous host bytes at p.
TypedBuf HostBytes(void* p, size_t bytes);
// `count` elements of predefined `type` in host memory.
TypedBuf HostBuf(void* p, int count, MPIGPU_Datatype type);
// The user's (buf, buftype, count, type), resolved. IN_PLACE is the caller's to handle.
inline int UserBuf(const void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype type,
                   TypedBuf* out) {
  return ResolveTypedBuf(buf, bt, count, type, out);
}
// The block of `count` elements of base's type starting `byte_offset` bytes after base.ptr (a
// v-form's displacement times the extent). Errors: COUNT, TYPE.
int BlockAt(const TypedBuf& base, ptrdiff_t byte_offset, int count, TypedBuf* out);
// As BlockAt, of another type (Alltoallw).
int BlockOfType(const TypedBuf& base, ptrdiff_t byte_offset, int count, MPIGPU_Datatype type,
                TypedBuf* out);

// Block r of base (r < n): counts[r] elements at displs[r] extents, or `count` elements at
// r * count when counts/displs are null (the regular forms). Errors: COUNT, TYPE, BUFFER.
int BlocksOf(const TypedBuf& base, int n, const int* counts, int count, const int* displs,
             std::vector<TypedBuf>* out);
// Errors: ARG (a v-form's null counts or displacements).
int CheckCountArrays(const int* counts, const int* displs);

// Per-peer counts, displacements and types of one side of an alltoall. Displacements count
// in elements of the type's extent (regular and v forms) or in bytes (w form).
struct AlltoallSide {
  const void* buf = nullptr;
  MPIGPU_Buftype bt = MPIGPU_BUF_HOST;
  int count = 0;  // regular form
  const int* counts = nullptr;
  const int* displs = nullptr;
  MPIGPU_Datatype type = MPIGPU_DATATYPE_NULL;
  const MPIGPU_Datatype* types = nullptr;  // w form
  bool vform = false;                      // counts and displs given (v and w forms)
  bool wform = false;                      // types given, displacements in bytes
};
// The n per-peer blocks of one side (IN_PLACE is the caller's to handle).
int AlltoallBlocks(const AlltoallSide& s, int n, std::vector<TypedBuf>* out);

// Packed bytes of the whole typed buffer `b` (host or device) into the host `packed`, and
// back: the first `bytes` packed bytes of `b` from `packed`. Complete on return.
int PackToHost(const TypedBuf& b, void* packed);
int UnpackFromHost(const void* packed, size_t bytes, const TypedBuf& b);
// Copies src's packed bytes into dst (either may be on a device, any types).
// Errors: TRUNCATE (src holds more bytes than dst), BUFFER (copy failed).
int LocalCopy(const TypedBuf& src, const TypedBuf& dst);

// A reduction of `count` elements of `type` with `op`, on packed bytes on the host or, for
// predefined ops on device buffers, on their device (coll_device.h).
struct ReduceCtx {
  MPIGPU_Op op = MPIGPU_OP_NULL;
  MPIGPU_Datatype type = MPIGPU_DATATYPE_NULL;
  int count = 0;
  TypeDesc desc;       // count x type
  size_t bytes = 0;    // packed bytes of count elements
  bool commute = true;
  // Predefined op: applied to `nelem` packed elements of the basic type.
  bool predefined = true;
  MPIGPU_Datatype basic = MPIGPU_DATATYPE_NULL;
  size_t elem_bytes = 0;
  // User op.
  UserOp user;
  // Where the schedule's packed data lives: the host, or a device whose kernels combine it
  // with dev_op on dev_elem elements (ChooseReduceLoc, coll_device.h).
  MemLoc loc = MemLoc::Host();
  devcoll::Op dev_op = devcoll::Op::kNoOp;
  devcoll::Elem dev_elem = devcoll::Elem::kNone;

  // `bytes` packed bytes at p, where the data lives (a transfer's buffer).
  TypedBuf Packed(void* p, size_t bytes) const {
    TypedBuf b = HostBytes(p, bytes);
    b.loc = loc;
    return b;
  }

  // b = a op b over `n` elements of `type` (packed: n * desc.size bytes each); a is the
  // contribution of lower ranks. Errors: OP, TYPE, INTERN.
  int Combine(const void* a, void* b, int n) const;
  int Combine(const void* a, void* b) const { return Combine(a, b, count); }
};
// Validates op against type (ERR_OP, ERR_TYPE, ERR_COUNT) and fills *ctx.
int MakeReduceCtx(MPIGPU_Op op, MPIGPU_Datatype type, int count, ReduceCtx* ctx);

// The packed host copy of a whole typed buffer, into a schedule buffer.
int StageInto(CollSched& s, const TypedBuf& b, unsigned char** out);

// Rounds that reduce every rank's acc (ctx->bytes, packed) into root's acc, in rank order
// when the op is not commutative. acc is scratch on the other ranks; it and the scratch the
// rounds take live where ctx's data does. Errors: OTHER (no device scratch).
int AddReduceToRoot(CollSched& s, const std::shared_ptr<const ReduceCtx>& ctx,
                     unsigned char* acc, int root);
// Rounds of a dissemination barrier: no rank leaves before every rank entered.
void AddBarrierRounds(CollSched& s);
// Rounds of a binomial-tree broadcast of b from root.
void AddBcastTree(CollSched& s, const TypedBuf& b, int root);

// A Reduce_scatter(_block)'s arguments over the group s addresses: block r of counts[r]
// elements for rank r (recvcounts, or `block` each when it is null), total elements in all.
struct ReduceScatterArgs {
  std::shared_ptr<ReduceCtx> ctx;  // over total elements
  std::vector<int> counts;
  int total = 0;
  TypedBuf sb, rb;  // the contribution (total elements) and this rank's result block
};
// Errors: COUNT, OP, TYPE, ARG (IN_PLACE as recvbuf), BUFFER.
int PrepareReduceScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                         MPIGPU_Buftype rbt, const int* recvcounts, int block, MPIGPU_Datatype dt,
                         MPIGPU_Op op, ReduceScatterArgs* a);
// Rank 0 of s holds the whole result (a.total packed elements, where a.ctx's data lives) in
// `result`: rank r gets block r into a.rb. Errors: OTHER (no device scratch).
int AddScatterResult(CollSched& s, const ReduceScatterArgs& a, unsigned char* result);

// ---- intercommunicators (coll_inter.cc) ----
// MPI's intercommunicator forms, which each collective's builder hands over to when its
// communicator is one: roots are MPIGPU_ROOT / MPIGPU_PROC_NULL in the root's group and the
// root's remote rank in the other; IN_PLACE is erroneous (ARG). Same errors as the intra forms.
int BuildInterBarrier(CollSched& s);
int BuildInterBcast(CollSched& s, void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt,
                    int root);
int BuildInterGather(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                     MPIGPU_Datatype stype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
                     const int* recvcounts, const int* displs, MPIGPU_Datatype rtype, int root,
                     bool vform);
int BuildInterScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                      const int* sendcounts, const int* displs, MPIGPU_Datatype stype,
                      void* recvbuf, MPIGPU_Buftype rbt, int recvcount, MPIGPU_Datatype rtype,
                      int root, bool vform);
int BuildInterAllgather(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, int sendcount,
                        MPIGPU_Datatype stype, void* recvbuf, MPIGPU_Buftype rbt, int recvcount,
                        const int* recvcounts, const int* displs, MPIGPU_Datatype rtype,
                        bool vform);
int BuildInterAlltoall(CollSched& s, const AlltoallSide& send, const AlltoallSide& recv);
// Reduce to `root`, or Allreduce (`all`).
int BuildInterReduce(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                     MPIGPU_Buftype rbt, int count, MPIGPU_Datatype dt, MPIGPU_Op op, int root,
                     bool all);
int BuildInterReduceScatter(CollSched& s, const void* sendbuf, MPIGPU_Buftype sbt, void* recvbuf,
                            MPIGPU_Buftype rbt, const int* recvcounts, int block,
                            MPIGPU_Datatype dt, MPIGPU_Op op);

// Runs a collective on `comm` built by build(CollSched&) -> error class: to the end when
// `request` is null, else as a nonblocking collective whose request goes to *request.
template <class Build>
int RunColl(Lock& lk, MPIGPU_Comm comm, MPIGPU_Request* request, bool nonblocking, Build&& build) {
  CommPtr c;
  if (nonblocking) {
    if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
    *request = MPIGPU_REQUEST_NULL;
  }
  if (int rc = CommOf(comm, &c); rc != MPIGPU_SUCCESS) return rc;
  auto s = std::make_shared<CollSched>(c, nonblocking ? NbcTagBase(*c) : 0);
  if (int rc = build(*s); rc != MPIGPU_SUCCESS) return rc;
  if (!nonblocking) return s->Run(lk);
  CollSched* started = s.get();
  if (int rc = StartCollRequest(std::move(s), request); rc != MPIGPU_SUCCESS) return rc;
  started->Advance();  // posts the first round now (later ones come with progress)
  return MPIGPU_SUCCESS;
}

}  // namespace mpigpu::api

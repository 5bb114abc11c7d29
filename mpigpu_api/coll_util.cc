// The collectives' shared pieces (coll_internal.h).
#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/coll_device.h"
#include "mpigpu_api/coll_internal.h"
#include "mpigpu_api/errors.h"
#include "pipeline/pack.h"

namespace mpigpu::api {

int CommOf(MPIGPU_Comm comm, CommPtr* c) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  *c = LookupComm(comm);
  if (!*c) return MPIGPU_ERR_COMM;
  return MPIGPU_SUCCESS;
}

int CheckRoot(const CommData& c, int root) {
#ifdef MPIGPU_ERR_ROOT
  constexpr int kRootError = MPIGPU_ERR_ROOT;
#else
  constexpr int kRootError = MPIGPU_ERR_RANK;
#endif
  if (root < 0 || root >= c.size())
    return SetLastError(kRootError, "root " + std::to_string(root) +
                                             " is not in communicator of size " +
                                             std::to_string(c.size()));
  return MPIGPU_SUCCESS;
}

int InPlaceError(const char* where) {
  return SetLastError(MPIGPU_ERR_ARG, std::string("MPIGPU_IN_PLACE is not allowed ") + where);
}

TypedBuf HostBytes(void* p, size_t bytes) {
  TypedBuf b;
  b.ptr = p;
  TypeDesc& d = b.desc;
  d.type = d.basic_type = MPIGPU_BYTE;
  d.count = d.total_bytes = bytes;
  d.size = d.extent = d.base_size = 1;
  d.contiguous = true;
  return b;
}

TypedBuf HostBuf(void* p, int count, MPIGPU_Datatype type) {
  TypedBuf b;
  b.ptr = p;
  (void)DescribeForComm(type, count, &b.desc);  // a predefined type and count >= 0: cannot fail
  return b;
}

int BlockOfType(const TypedBuf& base, ptrdiff_t byte_offset, int count, MPIGPU_Datatype type,
                TypedBuf* out) {
  TypedBuf b;
  b.loc = base.loc;
  if (int rc = DescribeForComm(type, count, &b.desc); rc != MPIGPU_SUCCESS) return rc;
  if (base.ptr == nullptr && b.desc.total_bytes > 0) return NullBufferError(count);
  b.ptr = static_cast<char*>(base.ptr) + byte_offset;
  *out = std::move(b);
  return MPIGPU_SUCCESS;
}

int BlockAt(const TypedBuf& base, ptrdiff_t byte_offset, int count, TypedBuf* out) {
  return BlockOfType(base, byte_offset, count, base.desc.type, out);
}

// Block r of base: counts[r] elements at displs[r] extents (or r * count when displs is null).
int BlocksOf(const TypedBuf& base, int n, const int* counts, int count, const int* displs,
             std::vector<TypedBuf>* out) {
  out->resize(n);
  for (int r = 0; r < n; ++r) {
    const int cnt = counts ? counts[r] : count;
    const ptrdiff_t disp = displs ? ptrdiff_t{displs[r]} : ptrdiff_t{r} * count;
    if (int rc = BlockAt(base, disp * static_cast<ptrdiff_t>(base.desc.extent), cnt, &(*out)[r]);
        rc != MPIGPU_SUCCESS)
      return SetLastError(rc, "block " + std::to_string(r) + ": " + LastErrorDetail(rc));
  }
  return MPIGPU_SUCCESS;
}

int CheckCountArrays(const int* counts, const int* displs) {
  if (counts == nullptr || displs == nullptr)
    return SetLastError(MPIGPU_ERR_ARG, "null counts or displacements array");
  return MPIGPU_SUCCESS;
}

int AlltoallBlocks(const AlltoallSide& s, int n, std::vector<TypedBuf>* out) {
  if (s.vform && (s.counts == nullptr || s.displs == nullptr))
    return SetLastError(MPIGPU_ERR_ARG, "null counts or displacements array");
  if (s.wform && s.types == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null types array");
  TypedBuf base;
  const MPIGPU_Datatype first = s.wform ? MPIGPU_BYTE : s.type;
  if (int rc = UserBuf(s.buf, s.bt, 0, first, &base); rc != MPIGPU_SUCCESS) return rc;
  out->resize(n);
  for (int r = 0; r < n; ++r) {
    int rc;
    if (s.wform) {
      rc = BlockOfType(base, s.displs[r], s.counts[r], s.types[r], &(*out)[r]);
    } else {
      const int cnt = s.vform ? s.counts[r] : s.count;
      const ptrdiff_t disp = s.vform ? ptrdiff_t{s.displs[r]} : ptrdiff_t{r} * s.count;
      rc = BlockAt(base, disp * static_cast<ptrdiff_t>(base.desc.extent), cnt, &(*out)[r]);
    }
    if (rc != MPIGPU_SUCCESS)
      return SetLastError(rc, "block " + std::to_string(r) + ": " + LastErrorDetail(rc));
  }
  return MPIGPU_SUCCESS;
}

namespace {

// PackPieces in either direction, on the device's default stream where one is involved.
int MovePacked(const TypedBuf& b, void* packed, size_t bytes, PackDir dir) {
  if (bytes == 0) return MPIGPU_SUCCESS;
  if (b.loc.is_host()) {
    return PackerCode(PackPieces(dir, b.desc.shape(), b.ptr, b.loc, 0, bytes, packed,
                                 MemLoc::Host()));
  }
  DeviceScope scope(b.loc);
  if (!scope.ok()) return ReturnCode(scope.status(), MPIGPU_ERR_OTHER);
  return ReturnCode(
      PackPieces(dir, b.desc.shape(), b.ptr, b.loc, 0, bytes, packed, MemLoc::Host()),
      MPIGPU_ERR_BUFFER);
}

}  // namespace

int PackToHost(const TypedBuf& b, void* packed) {
  return MovePacked(b, packed, b.desc.total_bytes, PackDir::kPack);
}

int UnpackFromHost(const void* packed, size_t bytes, const TypedBuf& b) {
  return MovePacked(b, const_cast<void*>(packed), bytes, PackDir::kUnpack);
}

int LocalCopy(const TypedBuf& src, const TypedBuf& dst) {
  const size_t bytes = src.desc.total_bytes;
  if (bytes > dst.desc.total_bytes)
    return SetLastError(MPIGPU_ERR_TRUNCATE,
                        "local contribution of " + std::to_string(bytes) +
                            " bytes is longer than its receive block of " +
                            std::to_string(dst.desc.total_bytes) + " bytes");
  if (bytes == 0 || src.ptr == dst.ptr) return MPIGPU_SUCCESS;
  if (src.desc.contiguous && dst.desc.contiguous) {
    const MemLoc dev = dst.loc.is_device() ? dst.loc : src.loc;
    DeviceScope scope(dev);  // default-stream copies run on the current device
    if (!scope.ok()) return ReturnCode(scope.status(), MPIGPU_ERR_OTHER);
    Status st = Copy(dst.ptr, dst.loc, src.ptr, src.loc, bytes, nullptr);
    if (!st.ok()) return ReturnCode(st, MPIGPU_ERR_BUFFER);
    return dev.is_device() ? SyncDefaultStream() : MPIGPU_SUCCESS;
  }
  std::vector<unsigned char> tmp(bytes);
  if (int rc = PackToHost(src, tmp.data()); rc != MPIGPU_SUCCESS) return rc;
  return UnpackFromHost(tmp.data(), bytes, dst);
}

// ---- reductions ----

int MakeReduceCtx(MPIGPU_Op op, MPIGPU_Datatype type, int count, ReduceCtx* ctx) {
  ctx->op = op;
  ctx->type = type;
  ctx->count = count;
  if (int rc = DescribeForComm(type, count, &ctx->desc); rc != MPIGPU_SUCCESS) return rc;
  ctx->bytes = ctx->desc.total_bytes;
  if (IsPredefinedOp(op)) {
    ctx->predefined = true;
    ctx->commute = true;
    ctx->basic = ctx->desc.basic_type;
    if (!IsPredefinedType(ctx->basic))
      return SetLastError(MPIGPU_ERR_OP, std::string(OpName(op)) +
                                             " needs a datatype built from one predefined type");
    if (int rc = CheckOpForType(op, ctx->basic); rc != MPIGPU_SUCCESS) return rc;
    ctx->elem_bytes = OpElementBytes(ctx->basic);
    TypeInfo bi;
    if (int rc = LookupType(ctx->basic, &bi); rc != MPIGPU_SUCCESS) return rc;
    // The packed stream holds whole elements of the basic type, as ApplyOp steps them.
    if (bi.size != ctx->elem_bytes || (ctx->desc.size % ctx->elem_bytes) != 0)
      return SetLastError(MPIGPU_ERR_INTERN,
                          std::string(TypeName(ctx->basic)) + " has " + std::to_string(bi.size) +
                              " data bytes, the reduction steps " +
                              std::to_string(ctx->elem_bytes));
    return MPIGPU_SUCCESS;
  }
  if (!LookupUserOp(op, &ctx->user))
    return SetLastError(MPIGPU_ERR_OP, "op " + std::to_string(op) + " is not a valid op");
  ctx->predefined = false;
  ctx->commute = ctx->user.commute;
  return MPIGPU_SUCCESS;
}

namespace {

// Bytes from an element run's start to past the last byte any of its n elements touches (the
// layout a user function sees).
size_t LayoutSpan(const TypeDesc& d) {
  size_t end = 0;
  (void)ForEachPiece(d, [&](const TypePiece& p, size_t) {
    end = std::max(end, p.offset + (p.nblocks - 1) * p.stride_bytes + p.block_bytes);
    return true;
  });
  return end;
}

}  // namespace

int ReduceCtx::Combine(const void* a, void* b, int n) const {
  if (n <= 0) return MPIGPU_SUCCESS;
  if (loc.is_device())
    return CombineOnDevice(*this, a, b, static_cast<size_t>(n) * (desc.size / elem_bytes));
  if (predefined)
    return ApplyOp(op, basic, b, a, static_cast<size_t>(n) * (desc.size / elem_bytes));
  int len = n;
  MPIGPU_Datatype t = type;
  if (desc.contiguous) {
    user.fn(const_cast<void*>(a), b, &len, &t);
    return MPIGPU_SUCCESS;
  }
  // The user function sees the datatype's layout: unpack both, apply, pack the result.
  TypeDesc d;
  if (int rc = DescribeForComm(type, n, &d); rc != MPIGPU_SUCCESS) return rc;
  const size_t span = LayoutSpan(d);
  std::vector<unsigned char> la(span), lb(span);
  TypedBuf ta, tb;
  ta.desc = tb.desc = d;
  ta.ptr = la.data();
  tb.ptr = lb.data();
  if (int rc = UnpackFromHost(a, d.total_bytes, ta); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = UnpackFromHost(b, d.total_bytes, tb); rc != MPIGPU_SUCCESS) return rc;
  user.fn(la.data(), lb.data(), &len, &t);
  return PackToHost(tb, b);
}

int StageInto(CollSched& s, const TypedBuf& b, unsigned char** out) {
  *out = s.Buffer(b.desc.total_bytes);
  return PackToHost(b, *out);
}

int AddReduceToRoot(CollSched& s, const std::shared_ptr<const ReduceCtx>& ctx,
                    unsigned char* acc, int root) {
  const int n = s.size();
  const size_t bytes = ctx->bytes;
  // Commutative: a binomial tree rooted at `root`. Otherwise rooted at rank 0, where each node
  // holds the ranks [vr, vr + mask) and combines the next range after its own, so the order is
  // x0 op x1 op ... ; rank 0 then hands the result to `root`.
  const int base = ctx->commute ? root : 0;
  const int vr = (s.rank() - base + n) % n;
  unsigned char* in = nullptr;
  for (int mask = 1; mask < n; mask <<= 1) {
    if (vr & mask) {
      s.Send(ctx->Packed(acc, bytes), (vr - mask + base) % n, kTagReduce);
      s.NextRound();
      break;
    }
    if (vr + mask < n) {
      // One scratch: rounds run one after another.
      if (in == nullptr)
        if (int rc = ReduceScratch(s, *ctx, bytes, &in); rc != MPIGPU_SUCCESS) return rc;
      s.Recv(ctx->Packed(in, bytes), (vr + mask + base) % n, kTagReduce);
      if (ctx->commute) {
        s.Then([ctx, in, acc] { return ctx->Combine(in, acc); });  // acc = in op acc
      } else {
        // in = acc op in (acc: the lower ranks), then back into acc (user ops: on the host).
        s.Then([ctx, in, acc, bytes] {
          if (int rc = ctx->Combine(acc, in); rc != MPIGPU_SUCCESS) return rc;
          std::memcpy(acc, in, bytes);
          return MPIGPU_SUCCESS;
        });
      }
      s.NextRound();
    }
  }
  if (base == root) return MPIGPU_SUCCESS;
  if (s.rank() == 0) s.Send(ctx->Packed(acc, bytes), root, kTagReduce);
  if (s.rank() == root) s.Recv(ctx->Packed(acc, bytes), 0, kTagReduce);
  s.NextRound();
  return MPIGPU_SUCCESS;
}

void AddBcastTree(CollSched& s, const TypedBuf& b, int root) {
  const int n = s.size();
  const int vr = (s.rank() - root + n) % n;  // rank relative to the root
  int mask = 1;
  for (; mask < n; mask <<= 1) {
    if (vr & mask) {
      s.Recv(b, (vr - mask + root) % n, kTagBcast);
      s.NextRound();
      break;
    }
  }
  // The children get theirs in one round: one slow child does not hold up the others.
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (vr + mask < n) s.Send(b, (vr + mask + root) % n, kTagBcast);
  s.NextRound();
}

}  // namespace mpigpu::api

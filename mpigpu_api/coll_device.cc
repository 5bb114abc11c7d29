// Reductions of device buffers on their GPU (coll_device.h).
#include "mpigpu_api/coll_device.h"

#include <memory>
#include <string>

#include "devcoll/device_reduce.h"
#include "devcoll/scratch_pool.h"
#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"
#include "mpigpu_api/errors.h"
#include "pipeline/pack.h"

namespace mpigpu::api {
namespace {

// The kernels' element kind of each predefined type, from the one table of their C types.
template <class T>
constexpr devcoll::Elem ElemFor(const T*) {
  return devcoll::ElemOf<T>();
}
template <class V, class I>
constexpr devcoll::Elem ElemFor(const ValueIndex<V, I>*) {
  return devcoll::PairElemOf<V, I>();
}

devcoll::Elem DeviceElem(MPIGPU_Datatype t) {
#define MPIGPU_DEVICE_ELEM(handle, ctype) \
  case handle: return ElemFor(static_cast<const ctype*>(nullptr));
  switch (t) {
    MPIGPU_FOR_EACH_PREDEFINED_TYPE(MPIGPU_DEVICE_ELEM)
    default: break;
  }
#undef MPIGPU_DEVICE_ELEM
  return devcoll::Elem::kNone;
}

devcoll::Op DeviceOp(MPIGPU_Op op) {
  switch (op) {
    case MPIGPU_SUM: return devcoll::Op::kSum;
    case MPIGPU_PROD: return devcoll::Op::kProd;
    case MPIGPU_MIN: return devcoll::Op::kMin;
    case MPIGPU_MAX: return devcoll::Op::kMax;
    case MPIGPU_LAND: return devcoll::Op::kLand;
    case MPIGPU_LOR: return devcoll::Op::kLor;
    case MPIGPU_LXOR: return devcoll::Op::kLxor;
    case MPIGPU_BAND: return devcoll::Op::kBand;
    case MPIGPU_BOR: return devcoll::Op::kBor;
    case MPIGPU_BXOR: return devcoll::Op::kBxor;
    case MPIGPU_MINLOC: return devcoll::Op::kMinloc;
    case MPIGPU_MAXLOC: return devcoll::Op::kMaxloc;
    case MPIGPU_REPLACE: return devcoll::Op::kReplace;
    default: return devcoll::Op::kNoOp;
  }
}

// PackPieces between b and packed bytes at `plain` on `plain_loc`, on b's device.
int MovePackedOn(PackDir dir, const TypedBuf& b, void* plain, MemLoc plain_loc, size_t bytes) {
  if (bytes == 0) return MPIGPU_SUCCESS;
  DeviceScope scope(b.loc.is_device() ? b.loc : plain_loc);
  if (!scope.ok()) return ReturnCode(scope.status(), MPIGPU_ERR_OTHER);
  return ReturnCode(PackPieces(dir, b.desc.shape(), b.ptr, b.loc, 0, bytes, plain, plain_loc),
                    MPIGPU_ERR_BUFFER);
}

}  // namespace

void ChooseReduceLoc(ReduceCtx* ctx, std::initializer_list<const TypedBuf*> bufs) {
  ctx->loc = MemLoc::Host();
  if (!ctx->predefined) return;  // user functions run on the host
  const devcoll::Elem e = DeviceElem(ctx->basic);
  const devcoll::Op op = DeviceOp(ctx->op);
  if (!devcoll::Supports(op, e) || devcoll::ElemBytes(e) != ctx->elem_bytes) return;
  MemLoc dev = MemLoc::Host();
  for (const TypedBuf* b : bufs) {
    if (b == nullptr) continue;
    if (!b->loc.is_device() || (dev.is_device() && b->loc != dev)) return;
    dev = b->loc;
  }
  if (!dev.is_device()) return;
  ctx->loc = dev;
  ctx->dev_elem = e;
  ctx->dev_op = op;
}

int ReduceScratch(CollSched& s, const ReduceCtx& ctx, size_t bytes, unsigned char** out) {
  if (!ctx.loc.is_device()) {
    *out = s.Buffer(bytes);
    return MPIGPU_SUCCESS;
  }
  std::shared_ptr<devcoll::ScratchBlock> block;
  if (int rc = ReturnCode(devcoll::TakeScratch(ctx.loc.device, bytes, &block), MPIGPU_ERR_OTHER);
      rc != MPIGPU_SUCCESS)
    return rc;
  *out = block->data();
  s.Keep(std::move(block));
  return MPIGPU_SUCCESS;
}

int StageReduce(CollSched& s, const ReduceCtx& ctx, const TypedBuf& b, unsigned char** out) {
  if (!ctx.loc.is_device()) return StageInto(s, b, out);
  if (int rc = ReduceScratch(s, ctx, b.desc.total_bytes, out); rc != MPIGPU_SUCCESS) return rc;
  return MovePackedOn(PackDir::kPack, b, *out, ctx.loc, b.desc.total_bytes);
}

int UnpackReduce(const ReduceCtx& ctx, const void* p, size_t bytes, const TypedBuf& b) {
  if (!ctx.loc.is_device()) return UnpackFromHost(p, bytes, b);
  return MovePackedOn(PackDir::kUnpack, b, const_cast<void*>(p), ctx.loc, bytes);
}

int CombineOnDevice(const ReduceCtx& ctx, const void* a, void* b, size_t nelem) {
  DeviceScope scope(ctx.loc);
  if (!scope.ok()) return ReturnCode(scope.status(), MPIGPU_ERR_OTHER);
  if (int rc = ReturnCode(devcoll::ReduceOnDevice(ctx.dev_op, ctx.dev_elem, b, a, nelem, nullptr),
                          MPIGPU_ERR_INTERN);
      rc != MPIGPU_SUCCESS)
    return rc;
  return SyncDefaultStream();
}

int ReduceLocalOnDevice(const ReduceCtx& ctx, const TypedBuf& in, const TypedBuf& io) {
  const size_t bytes = ctx.bytes;
  std::shared_ptr<devcoll::ScratchBlock> a, b;
  for (auto* blk : {&a, &b})
    if (int rc = ReturnCode(devcoll::TakeScratch(ctx.loc.device, bytes, blk), MPIGPU_ERR_OTHER);
        rc != MPIGPU_SUCCESS)
      return rc;
  if (int rc = MovePackedOn(PackDir::kPack, in, a->data(), ctx.loc, bytes); rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = MovePackedOn(PackDir::kPack, io, b->data(), ctx.loc, bytes); rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = ctx.Combine(a->data(), b->data()); rc != MPIGPU_SUCCESS) return rc;
  return MovePackedOn(PackDir::kUnpack, io, b->data(), ctx.loc, bytes);
}

}  // namespace mpigpu::api

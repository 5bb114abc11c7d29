// Reductions of device buffers on their GPU (devcoll kernels) instead of through the host.
//
// When a reduction's op is predefined, its type is built from one predefined type the kernels
// know (every one MPI defines ops for, except the long double family, which CUDA computes as
// double: those stay on the host), and every buffer of this rank is device memory of one GPU,
// the schedule's packed data lives in device scratch of that GPU (devcoll/scratch_pool.h):
// the contribution is packed there device to device, peers' data is received there, combined by
// a kernel, and the result unpacked device to device into the user's buffer. The wire format is
// the same packed stream as on the host path, so ranks on either path meet in one collective.
// User ops are host functions: their data is staged through the host (docs/collectives.md).
//
// Kernels and copies run on the legacy default stream of the buffers' device and are waited
// for before the step returns, so the next round's sends read finished data and the user's
// earlier default-stream work is ordered before the collective reads its buffers.
#pragma once

#include <initializer_list>

#include "mpigpu_api/coll_internal.h"

namespace mpigpu::api {

// Puts ctx on the device path when the rules above allow it for the given buffers (null
// entries skipped); leaves it on the host otherwise.
void ChooseReduceLoc(ReduceCtx* ctx, std::initializer_list<const TypedBuf*> bufs);

// `bytes` of scratch where ctx's packed data lives: a schedule buffer, or a pooled device
// block that s keeps until it is destroyed. Errors: OTHER (allocation failed).
int ReduceScratch(CollSched& s, const ReduceCtx& ctx, size_t bytes, unsigned char** out);
// The packed bytes of the whole of b in new scratch (as ReduceScratch).
int StageReduce(CollSched& s, const ReduceCtx& ctx, const TypedBuf& b, unsigned char** out);
// The first `bytes` packed bytes at p (where ctx's data lives) into b.
int UnpackReduce(const ReduceCtx& ctx, const void* p, size_t bytes, const TypedBuf& b);

// b = a op b over `nelem` basic elements in ctx's device memory; complete on return.
int CombineOnDevice(const ReduceCtx& ctx, const void* a, void* b, size_t nelem);

// MPIGPU_Reduce_local when ctx is on the device path: io = in op io on the GPU.
int ReduceLocalOnDevice(const ReduceCtx& ctx, const TypedBuf& in, const TypedBuf& io);

}  // namespace mpigpu::api

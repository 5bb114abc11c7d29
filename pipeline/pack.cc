#include "pipeline/pack.h"

#include <cuda_runtime_api.h>

#include <cstring>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"

namespace mpigpu {
namespace {

// Host memory on both sides: plain memcpy per block.
Status PackHost(PackDir dir, const TypeShape& shape, char* user, size_t packed_offset,
                size_t bytes, char* plain) {
  char* packed = plain - packed_offset;  // indexed by packed position
  const bool pack = dir == PackDir::kPack;
  return WalkPieces(shape, packed_offset, bytes, [&](const TypePiece& p, size_t pos) {
    for (size_t i = 0; i < p.nblocks; ++i) {
      char* u = user + p.offset + i * p.stride_bytes;
      char* q = packed + pos + i * p.block_bytes;
      if (pack) std::memcpy(q, u, p.block_bytes);
      else std::memcpy(u, q, p.block_bytes);
    }
    return true;
  });
}

// A device on either side: one strided copy per piece on the default stream, then one sync.
Status PackDevice(PackDir dir, const TypeShape& shape, char* user, MemLoc user_loc,
                  size_t packed_offset, size_t bytes, char* plain, MemLoc plain_loc) {
  // Default-stream copies run on the current device.
  DeviceScope scope(user_loc.is_device() ? user_loc : plain_loc);
  char* packed = plain - packed_offset;  // indexed by packed position
  Status st;
  auto copy = [&](const TypePiece& p, size_t pos) {
    char* u = user + p.offset;
    if (dir == PackDir::kPack)
      st = Copy2D(packed + pos, plain_loc, p.block_bytes, u, user_loc, p.stride_bytes,
                  p.block_bytes, p.nblocks, nullptr);
    else
      st = Copy2D(u, user_loc, p.stride_bytes, packed + pos, plain_loc, p.block_bytes,
                  p.block_bytes, p.nblocks, nullptr);
    return st.ok();
  };
  MPIGPU_RETURN_IF_ERROR(WalkPieces(shape, packed_offset, bytes, copy));
  MPIGPU_RETURN_IF_ERROR(st);
  cudaError_t e = cudaStreamSynchronize(nullptr);
  if (e != cudaSuccess) return CudaFailure("cudaStreamSynchronize", e);
  return Status::Ok();
}

}  // namespace

Status PackPieces(PackDir dir, const TypeShape& shape, void* user, MemLoc user_loc,
                  size_t packed_offset, size_t bytes, void* plain, MemLoc plain_loc) {
  // A null `user` is MPI_BOTTOM when the shape's offsets are absolute addresses: the caller,
  // who knows the type's bounds, has refused it otherwise.
  if (bytes > 0 && plain == nullptr)
    return Status(Err::kInvalidArg, dir == PackDir::kPack ? "Pack: null buffer"
                                                          : "Unpack: null buffer");
  char* u = static_cast<char*>(user);
  char* p = static_cast<char*>(plain);
  if (user_loc.is_host() && plain_loc.is_host())
    return PackHost(dir, shape, u, packed_offset, bytes, p);
  return PackDevice(dir, shape, u, user_loc, packed_offset, bytes, p, plain_loc);
}

}  // namespace mpigpu

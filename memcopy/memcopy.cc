#include "memcopy/memcopy.h"

#include <cstdint>
#include <cstring>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mpigpu {

Status CudaFailure(const std::string& what, cudaError_t e, Err code) {
  (void)cudaGetLastError();
  return Status(code, what + ": " + cudaGetErrorString(e));
}

namespace {

Status CheckArgs(const void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc, size_t bytes) {
  if (bytes > 0 && (dst == nullptr || src == nullptr))
    return Status(Err::kInvalidArg, "copy of " + std::to_string(bytes) + " bytes with a null pointer");
  if ((dst_loc.is_device() && dst_loc.device < 0) || (src_loc.is_device() && src_loc.device < 0))
    return Status(Err::kInvalidArg, "device location without a device ordinal");
  return Status::Ok();
}

cudaMemcpyKind KindOf(MemLoc dst_loc, MemLoc src_loc) {
  if (src_loc.is_host()) return dst_loc.is_host() ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice;
  return dst_loc.is_host() ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
}

// The parameterized copy once the arguments are known to be valid.
Status CopyKnown(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc, size_t bytes,
                 cudaStream_t stream) {
  if (bytes == 0) return Status::Ok();
  if (dst_loc.is_host() && src_loc.is_host()) {
    HostCopy(dst, src, bytes, GetMemcopyConfig().memcpy_nt_threshold);
    return Status::Ok();
  }
  if (dst_loc.is_device() && src_loc.is_device() && dst_loc.device != src_loc.device) {
    MPIGPU_CUDA_CHECK(
        cudaMemcpyPeerAsync(dst, dst_loc.device, src, src_loc.device, bytes, stream));
    return Status::Ok();
  }
  MPIGPU_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, KindOf(dst_loc, src_loc), stream));
  return Status::Ok();
}

// What the driver says of a pointer (the kQuery strategy's cost).
Status QueryLoc(const void* p, MemLoc* loc) {
  cudaPointerAttributes attr{};
  MPIGPU_CUDA_CHECK(cudaPointerGetAttributes(&attr, p));
  *loc = attr.type == cudaMemoryTypeDevice ? MemLoc::Device(attr.device) : MemLoc::Host();
  return Status::Ok();
}

}  // namespace

Status Copy(void* dst, MemLoc dst_loc, const void* src, MemLoc src_loc, size_t bytes,
            cudaStream_t stream) {
  MPIGPU_RETURN_IF_ERROR(CheckArgs(dst, dst_loc, src, src_loc, bytes));
  return CopyKnown(dst, dst_loc, src, src_loc, bytes, stream);
}

Status CopyWithStrategy(CopyStrategy strategy, void* dst, MemLoc dst_loc, const void* src,
                        MemLoc src_loc, size_t bytes, cudaStream_t stream) {
  MPIGPU_RETURN_IF_ERROR(CheckArgs(dst, dst_loc, src, src_loc, bytes));
  switch (strategy) {
    case CopyStrategy::kParameterized:
      return CopyKnown(dst, dst_loc, src, src_loc, bytes, stream);
    case CopyStrategy::kUvaDefault:
      if (bytes == 0) return Status::Ok();
      MPIGPU_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
      return Status::Ok();
    case CopyStrategy::kQuery: {
      MemLoc d, s;
      MPIGPU_RETURN_IF_ERROR(QueryLoc(dst, &d));
      MPIGPU_RETURN_IF_ERROR(QueryLoc(src, &s));
      return CopyKnown(dst, d, src, s, bytes, stream);
    }
  }
  return Status(Err::kInvalidArg, "unknown copy strategy");
}

Status Copy2D(void* dst, MemLoc dst_loc, size_t dpitch, const void* src, MemLoc src_loc,
              size_t spitch, size_t width, size_t height, cudaStream_t stream) {
  MPIGPU_RETURN_IF_ERROR(CheckArgs(dst, dst_loc, src, src_loc, width * height));
  if (width == 0 || height == 0) return Status::Ok();
  if (height > 1 && (width > dpitch || width > spitch))
    return Status(Err::kInvalidArg, "strided copy: row width " + std::to_string(width) +
                                        " exceeds a pitch (" + std::to_string(dpitch) + ", " +
                                        std::to_string(spitch) + ")");
  if (dst_loc.is_host() && src_loc.is_host()) {
    size_t nt = GetMemcopyConfig().memcpy_nt_threshold;
    for (size_t r = 0; r < height; ++r)
      HostCopy(static_cast<char*>(dst) + r * dpitch, static_cast<const char*>(src) + r * spitch,
               width, nt);
    return Status::Ok();
  }
  if (dst_loc.is_device() && src_loc.is_device() && dst_loc.device != src_loc.device) {
    cudaMemcpy3DPeerParms p{};
    p.dstPtr = cudaPitchedPtr{dst, dpitch, width, height};
    p.dstDevice = dst_loc.device;
    p.srcPtr = cudaPitchedPtr{const_cast<void*>(src), spitch, width, height};
    p.srcDevice = src_loc.device;
    p.extent = cudaExtent{width, height, 1};
    MPIGPU_CUDA_CHECK(cudaMemcpy3DPeerAsync(&p, stream));
    return Status::Ok();
  }
  MPIGPU_CUDA_CHECK(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height,
                                      KindOf(dst_loc, src_loc), stream));
  return Status::Ok();
}

void HostCopy(void* dst, const void* src, size_t bytes, size_t nt_threshold) {
  if (nt_threshold != 0 && bytes >= nt_threshold)
    StreamingCopy(dst, src, bytes);
  else
    std::memcpy(dst, src, bytes);
}

#if defined(__x86_64__)
namespace {

// 64 bytes a step with 32-byte streaming stores; dst 32-byte aligned.
__attribute__((target("avx2"))) void StreamAvx2(char* d, const char* s, size_t bytes) {
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 32));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d), a);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(d + 32), b);
  }
  std::memcpy(d, s, bytes);
}

// The same with 16-byte stores (SSE2 is in every x86-64); dst 16-byte aligned.
void StreamSse2(char* d, const char* s, size_t bytes) {
  for (; bytes >= 64; bytes -= 64, d += 64, s += 64) {
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  std::memcpy(d, s, bytes);
}

const bool kHasAvx2 = __builtin_cpu_supports("avx2");

}  // namespace
#endif

void StreamingCopy(void* dst, const void* src, size_t bytes) {
#if defined(__x86_64__)
  if (bytes < 256) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto* d = static_cast<char*>(dst);
  auto* s = static_cast<const char*>(src);
  // Head: bring the destination to a 32-byte boundary (streaming stores need it aligned).
  size_t head = (32 - (reinterpret_cast<uintptr_t>(d) & 31)) & 31;
  std::memcpy(d, s, head);
  if (kHasAvx2) StreamAvx2(d + head, s + head, bytes - head);
  else StreamSse2(d + head, s + head, bytes - head);
  // Streaming stores are weakly ordered: fence so a later release store (a flag the peer reads)
  // cannot become visible before the data.
  _mm_sfence();
#else
  std::memcpy(dst, src, bytes);
#endif
}

int CudaDeviceCount() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      (void)cudaGetLastError();  // no driver / no device: not an error for host-only programs
      n = 0;
    }
    return n;
  }();
  return count;
}

}  // namespace mpigpu

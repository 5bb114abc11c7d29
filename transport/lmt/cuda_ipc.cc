#include "transport/lmt/cuda_ipc.h"

#include <cinttypes>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include "memcopy/driver_entry.h"
#include "memcopy/log.h"
#include "memcopy/memcopy.h"

namespace mpigpu {
namespace {

// The ABI version asked of the driver: the signatures above (cuMemGetAddressRange_v2 etc.) are
// current since long before 12.0, and asking for an older version than the toolkit's keeps the
// lookup working on drivers older than the headers (minor-version compatibility).
constexpr unsigned kDriverApiVersion = 12000;

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

DriverApi LoadDriverApi() {
  DriverApi api;
  if (CudaDeviceCount() == 0) {
    api.status = Status(Err::kNoGpu, "no CUDA device: driver API not loaded");
    return api;
  }
  api.status =
      FindDriverEntry("cuPointerGetAttributes", kDriverApiVersion, &api.pointer_get_attributes);
  api.status.KeepFirst(
      FindDriverEntry("cuMemGetAddressRange", kDriverApiVersion, &api.mem_get_address_range));
  // For messages only.
  (void)FindDriverEntry("cuGetErrorString", kDriverApiVersion, &api.get_error_string);
  if (!api.status.ok()) {
    api.pointer_get_attributes = nullptr;
    api.mem_get_address_range = nullptr;
  }
  return api;
}

// ---- exporter's handle cache ----

struct ExportEntry {
  uint64_t buffer_id;
  uint64_t size;
  cudaIpcMemHandle_t handle;
};

// Handles hold no resources, so the cache is simply emptied when it reaches this many entries
// (allocations freed by the application are never told to us).
constexpr size_t kMaxExportEntries = 1024;

struct ExportCache {
  std::mutex mu;
  std::unordered_map<uint64_t, ExportEntry> by_base;  // guarded by mu
  IpcExportCacheStats stats;                          // guarded by mu
};

ExportCache& TheExportCache() {
  static ExportCache* cache = new ExportCache;  // never destroyed: usable during exit
  return *cache;
}

// ---- importer's default opener ----

class CudaRuntimeOpener final : public IpcOpener {
 public:
  cudaError_t Open(const cudaIpcMemHandle_t& handle, void** mapped) override {
    if (CudaDeviceCount() == 0) return cudaErrorNoDevice;
    cudaError_t r = cudaIpcOpenMemHandle(mapped, handle, cudaIpcMemLazyEnablePeerAccess);
    if (r != cudaSuccess) (void)cudaGetLastError();
    return r;
  }
  cudaError_t Close(void* mapped) override {
    cudaError_t r = cudaIpcCloseMemHandle(mapped);
    if (r != cudaSuccess) (void)cudaGetLastError();
    return r;
  }
};

IpcOpener* DefaultOpener() {
  static IpcOpener* opener = new CudaRuntimeOpener;  // never destroyed: caches may outlive statics
  return opener;
}

void WarnIfError(const Status& st) {
  if (!st.ok()) MPIGPU_WARN("cuda ipc: %s", st.ToString().c_str());
}

}  // namespace

const DriverApi& DriverApi::Get() {
  static const DriverApi api = LoadDriverApi();
  return api;
}

Status DriverApi::Error(const char* call, CUresult r) const {
  const char* text = nullptr;
  if (get_error_string == nullptr || get_error_string(r, &text) != CUDA_SUCCESS || text == nullptr)
    text = "unknown driver error";
  return Status(Err::kCuda, std::string(call) + ": " + text + " (CUresult " +
                                std::to_string(static_cast<int>(r)) + ")");
}

bool IpcSupported(int device) {
  if (device < 0 || device >= CudaDeviceCount()) return false;
  int uva = 0, ipc = 0, mode = cudaComputeModeDefault;
  if (cudaDeviceGetAttribute(&uva, cudaDevAttrUnifiedAddressing, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&ipc, cudaDevAttrIpcEventSupport, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, device) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return uva == 1 && ipc == 1 && mode != cudaComputeModeProhibited;
}

Status ExportDeviceBuffer(const void* ptr, IpcExport* out) {
  if (out == nullptr) return Status(Err::kInvalidArg, "ExportDeviceBuffer: null output");
  *out = IpcExport{};
  if (ptr == nullptr) return Status(Err::kInvalidArg, "ExportDeviceBuffer: null buffer pointer");
  if (CudaDeviceCount() == 0)
    return Status(Err::kNoGpu, "no CUDA device: cannot export buffer " + Hex(reinterpret_cast<uintptr_t>(ptr)));
  const DriverApi& api = DriverApi::Get();
  MPIGPU_RETURN_IF_ERROR(api.status);

  // One driver call for every property; a host pointer gets zeros, not an error.
  const auto dptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr));
  unsigned int mem_type = 0, managed = 0, ipc_capable = 0;  // the driver's "booleans" may be ints
  int ordinal = -1;
  unsigned long long buffer_id = 0;
  CUdeviceptr range_start = 0;
  size_t range_size = 0;
  CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                 CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                 CU_POINTER_ATTRIBUTE_RANGE_SIZE};
  void* data[] = {&mem_type, &managed, &ipc_capable, &ordinal, &buffer_id, &range_start, &range_size};
  static_assert(sizeof attrs / sizeof attrs[0] == sizeof data / sizeof data[0], "one slot each");
  CUresult r = api.pointer_get_attributes(sizeof attrs / sizeof attrs[0], attrs, data, dptr);
  if (r != CUDA_SUCCESS) return api.Error("cuPointerGetAttributes", r);
  if (mem_type != CU_MEMORYTYPE_DEVICE || managed != 0)
    return Status(Err::kInvalidArg, "buffer " + Hex(dptr) + " is not device memory (" +
                                        (managed ? "managed" : "memory type " + std::to_string(mem_type)) +
                                        "): no CUDA IPC export");
  if (ipc_capable == 0)
    return Status(Err::kInvalidArg, "buffer " + Hex(dptr) +
                                        " cannot be exported with cudaIpcGetMemHandle (memory pool "
                                        "or virtual memory API allocation?)");

  // The allocation's range comes with the attributes (one driver call per send: this runs for
  // every device message); cuMemGetAddressRange only where a driver leaves them out.
  CUdeviceptr base = range_start;
  size_t size = range_size;
  if (base == 0 || size == 0) {
    r = api.mem_get_address_range(&base, &size, dptr);
    if (r != CUDA_SUCCESS) return api.Error("cuMemGetAddressRange", r);
  }
  if (dptr < base || dptr - base >= size)
    return Status(Err::kInternal, "allocation range of " + Hex(dptr) + ": [" + Hex(base) +
                                      ", +" + std::to_string(size) + ") not containing it");

  out->base = base;
  out->alloc_size = size;
  out->offset = dptr - base;
  out->buffer_id = buffer_id;
  out->device = ordinal;

  ExportCache& cache = TheExportCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  auto it = cache.by_base.find(base);
  if (it != cache.by_base.end() && it->second.buffer_id == buffer_id && it->second.size == size) {
    ++cache.stats.hits;
    out->handle = it->second.handle;
    return Status::Ok();
  }
  ++cache.stats.misses;
  MPIGPU_CUDA_CHECK(cudaIpcGetMemHandle(&out->handle, reinterpret_cast<void*>(base)));
  if (cache.by_base.size() >= kMaxExportEntries) cache.by_base.clear();
  cache.by_base[base] = ExportEntry{buffer_id, size, out->handle};  // replaces a freed buffer's
  return Status::Ok();
}

IpcExportCacheStats GetExportCacheStats() {
  ExportCache& cache = TheExportCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  return cache.stats;
}

void ClearExportCache() {
  ExportCache& cache = TheExportCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  cache.by_base.clear();
}

// ---- IpcCache ----

IpcCache::IpcCache(size_t max_entries, IpcOpener* opener)
    : max_entries_(max_entries), opener_(opener != nullptr ? opener : DefaultOpener()) {}

IpcCache::~IpcCache() { WarnIfError(Clear()); }

Status IpcCache::Map(int peer, const IpcExport& e, void** peer_ptr) {
  if (peer_ptr == nullptr) return Status(Err::kInvalidArg, "IpcCache::Map: null output");
  *peer_ptr = nullptr;
  if (max_entries_ == 0) return Status(Err::kInvalidArg, "IPC cache size is 0 (must be >= 1)");
  if (peer < 0) return Status(Err::kInvalidArg, "IpcCache::Map: peer " + std::to_string(peer));
  if (e.base == 0 || e.alloc_size == 0 || e.offset >= e.alloc_size ||
      e.base + e.alloc_size < e.base || e.device < 0)
    return Status(Err::kInvalidArg, "malformed IPC export from peer " + std::to_string(peer) +
                                        ": base " + Hex(e.base) + " size " +
                                        std::to_string(e.alloc_size) + " offset " +
                                        std::to_string(e.offset) + " device " +
                                        std::to_string(e.device));

  auto found = index_.find(Key{peer, e.base});
  if (found != index_.end()) {
    Lru::iterator it = found->second;
    if (it->buffer_id == e.buffer_id && it->size == e.alloc_size) {
      ++stats_.hits;
      ++it->pins;
      lru_.splice(lru_.begin(), lru_, it);  // most recently used
      *peer_ptr = static_cast<char*>(it->mapped) + e.offset;
      return Status::Ok();
    }
  }

  // A miss. Mappings of this peer that overlap the new allocation map memory the peer freed
  // (its live allocations never overlap): close them, unless a copy still reads one.
  ++stats_.misses;
  const uint64_t end = e.base + e.alloc_size;
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (it->peer == peer && it->base < end && e.base < it->base + it->size) {
      if (it->pins > 0)
        return Status(Err::kInvalidArg,
                      "peer " + std::to_string(peer) + " reused address range [" + Hex(it->base) +
                          ", +" + std::to_string(it->size) + ") (buffer id " +
                          std::to_string(it->buffer_id) + " -> " + std::to_string(e.buffer_id) +
                          ") while a copy from the old buffer is in flight");
      WarnIfError(Close(it, &stats_.stale));
    }
    it = next;
  }
  WarnIfError(MakeRoom());

  void* mapped = nullptr;
  MPIGPU_RETURN_IF_ERROR(Open(peer, e, &mapped));
  lru_.push_front(Entry{peer, e.base, e.alloc_size, e.buffer_id, mapped, 1});
  index_[Key{peer, e.base}] = lru_.begin();
  *peer_ptr = static_cast<char*>(mapped) + e.offset;
  MPIGPU_TRACE("cuda ipc: mapped peer %d [%s, +%" PRIu64 ") buffer id %" PRIu64 " at %p", peer,
               Hex(e.base).c_str(), e.alloc_size, e.buffer_id, mapped);
  return Status::Ok();
}

Status IpcCache::Release(int peer, const IpcExport& e) {
  auto found = index_.find(Key{peer, e.base});
  if (found == index_.end() || found->second->buffer_id != e.buffer_id || found->second->pins == 0)
    return Status(Err::kInvalidArg, "IpcCache::Release: no pinned mapping of peer " +
                                        std::to_string(peer) + " base " + Hex(e.base) +
                                        " buffer id " + std::to_string(e.buffer_id));
  --found->second->pins;
  return Status::Ok();
}

Status IpcCache::Clear() {
  Status first;
  while (!lru_.empty()) first.KeepFirst(Close(lru_.begin(), nullptr));
  return first;
}

IpcCacheStats IpcCache::stats() const {
  IpcCacheStats s = stats_;
  s.entries = lru_.size();
  return s;
}

Status IpcCache::Close(Lru::iterator it, uint64_t* counter) {
  cudaError_t r = opener_->Close(it->mapped);
  const int peer = it->peer;
  const uint64_t base = it->base;
  index_.erase(Key{peer, base});
  lru_.erase(it);
  if (counter != nullptr) ++*counter;
  if (r != cudaSuccess)
    return CudaFailure("cudaIpcCloseMemHandle(peer " + std::to_string(peer) + " base " +
                           Hex(base) + ")", r);
  return Status::Ok();
}

Status IpcCache::MakeRoom() {
  Status first;
  auto it = lru_.end();
  while (lru_.size() >= max_entries_ && it != lru_.begin()) {
    --it;  // walk from the least recently used end
    if (it->pins > 0) continue;
    auto victim = it++;
    first.KeepFirst(Close(victim, &stats_.evictions));
  }
  if (lru_.size() >= max_entries_)
    MPIGPU_TRACE("cuda ipc: all %zu mappings pinned; cache grows past %zu", lru_.size(),
                 max_entries_);
  return first;
}

Status IpcCache::CloseUnpinned(int peer) {
  Status first;
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (it->pins == 0 && (peer < 0 || it->peer == peer))
      first.KeepFirst(Close(it, &stats_.evictions));
    it = next;
  }
  return first;
}

Status IpcCache::Open(int peer, const IpcExport& e, void** mapped) {
  cudaError_t r = opener_->Open(e.handle, mapped);
  if (r == cudaErrorAlreadyMapped || r == cudaErrorMemoryAllocation) {
    // A mapping we hold conflicts with this one, or mappings use up the address space: drop
    // what can be dropped (this peer's for a conflict, everyone's for memory) and retry once.
    MPIGPU_INFO("cuda ipc: open for peer %d failed (%s); closing cached mappings and retrying",
                peer, cudaGetErrorString(r));
    WarnIfError(CloseUnpinned(r == cudaErrorAlreadyMapped ? peer : -1));
    r = opener_->Open(e.handle, mapped);
  }
  if (r == cudaSuccess) return Status::Ok();
  *mapped = nullptr;
  return CudaFailure("cudaIpcOpenMemHandle(peer " + std::to_string(peer) + " base " +
                         Hex(e.base) + " size " + std::to_string(e.alloc_size) + ")",
                     r, IsNoGpu(r) ? Err::kNoGpu : Err::kCuda);
}

}  // namespace mpigpu

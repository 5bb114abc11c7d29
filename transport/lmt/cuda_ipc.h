// CUDA IPC building blocks for the single-copy rendezvous of device buffers.
//
// The sender exports its buffer (ExportDeviceBuffer) and puts the IpcExport in the RTS; the
// receiver maps it (IpcCache::Map), copies straight out of the peer's device memory with the
// mapped pointer (a device pointer of the receiver's current device, D->D over NVLink or D->H),
// releases it (IpcCache::Release) once the copy completed, and sends FIN.
//
// IPC works on whole allocations: the handle is made for the allocation's base and the receiver
// adds the offset. Both sides cache, because both calls are costly (opening a handle ~2 ms):
//  - exporter: one handle per allocation, keyed by (base, buffer id);
//  - importer: one mapping per (peer, allocation), LRU-bounded. A mapping is used only while the
//    export's buffer id matches the one it was opened for: the peer may free a buffer and get a
//    new one at the same address (new buffer id), and then the old mapping is closed, never read.
//
// Driver API calls (pointer attributes) go through entry points from the runtime
// (cudaGetDriverEntryPointByVersion), so nothing links libcuda and the code runs, returning
// Err::kNoGpu, where no driver exists.
#pragma once

#include <cuda.h>  // types and enums only: the functions come from DriverApi
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <type_traits>
#include <utility>

#include "memcopy/status.h"

namespace mpigpu {

// What a receiver needs to map a sender's device buffer; travels by value in the RTS (shared
// memory), so it is plain data with a fixed layout. All fields are written by the exporter.
struct IpcExport {
  cudaIpcMemHandle_t handle;  // for the allocation at `base`
  uint64_t base;              // allocation start in the exporter's address space
  uint64_t alloc_size;        // allocation size in bytes
  uint64_t offset;            // the exported pointer minus base (< alloc_size)
  uint64_t buffer_id;         // CU_POINTER_ATTRIBUTE_BUFFER_ID: unique per allocation in the process
  int32_t device;             // the allocation's device, in the EXPORTER's ordinals
  uint32_t reserved;          // zero; makes the tail padding explicit
};
static_assert(std::is_trivially_copyable_v<IpcExport>, "IpcExport is copied as bytes");
static_assert(std::is_standard_layout_v<IpcExport>, "IpcExport lives in shared memory");
static_assert(sizeof(cudaIpcMemHandle_t) == 64, "CUDA IPC handle size changed");
static_assert(sizeof(IpcExport) == 104 && alignof(IpcExport) == 8, "IpcExport layout changed");

// The few driver entry points this file needs, fetched once from the runtime. Where loading
// failed (no driver), `status` says why and the pointers are null.
struct DriverApi {
  PFN_cuPointerGetAttributes_v7000 pointer_get_attributes = nullptr;
  PFN_cuMemGetAddressRange_v3020 mem_get_address_range = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;  // optional, for messages
  Status status;

  // Loaded on first use (thread-safe); initialises CUDA, so never call it before fork().
  static const DriverApi& Get();
  // "call: CUDA_ERROR_..." for a failed driver call.
  Status Error(const char* call, CUresult r) const;
};

// Whether `device` (an ordinal of this process) can take part in CUDA IPC: it exists, has unified
// addressing and IPC support. Says nothing of PID namespaces or the peer (the caller checks those).
bool IpcSupported(int device);

// Fills *out for the device buffer that contains `ptr` (any address inside a cudaMalloc
// allocation): pointer attributes (one cuPointerGetAttributes call), the allocation range from
// cuMemGetAddressRange (or, in a thread without a current context, from the range attributes),
// the handle from cudaIpcGetMemHandle(base). Errors: kInvalidArg for null, host, managed or not IPC-capable memory (e.g. from
// cudaMallocAsync pools or the VMM API): send without IPC then; kNoGpu without a GPU; kCuda when
// the driver fails. Handles are cached per allocation (base, buffer id); thread-safe.
Status ExportDeviceBuffer(const void* ptr, IpcExport* out);

struct IpcExportCacheStats {
  uint64_t hits = 0;    // exports answered from the cache
  uint64_t misses = 0;  // cudaIpcGetMemHandle calls
};
IpcExportCacheStats GetExportCacheStats();
// Forgets every cached export handle (they hold no resources; Finalize and tests).
void ClearExportCache();

// How IpcCache opens and closes mappings. The default (nullptr to IpcCache) is the CUDA runtime:
// cudaIpcOpenMemHandle on the current device with cudaIpcMemLazyEnablePeerAccess, and
// cudaErrorNoDevice without a GPU. Tests substitute a fake to exercise the cache's logic anywhere.
class IpcOpener {
 public:
  virtual ~IpcOpener() = default;
  virtual cudaError_t Open(const cudaIpcMemHandle_t& handle, void** mapped) = 0;
  virtual cudaError_t Close(void* mapped) = 0;
};

struct IpcCacheStats {
  uint64_t hits = 0;       // Map found a valid mapping
  uint64_t misses = 0;     // Map opened a handle
  uint64_t evictions = 0;  // mappings closed to respect the size bound (LRU) or to retry an open
  uint64_t stale = 0;      // mappings closed because the peer's allocation they mapped is gone
                           // (same address, new buffer id or size; or an overlapping new range)
  size_t entries = 0;      // mappings open now
};

// The receiver's cache of mapped peer allocations. Not thread-safe: one owner (the progress
// engine) calls it. Pointers it returns are device pointers of the device that was current when
// the mapping was opened.
//
// Pinning: Map pins the mapping until Release; a pinned mapping is never closed by eviction or
// as stale, so an in-flight copy never reads through a closed mapping. When every mapping is
// pinned the cache exceeds max_entries for a while (bounded by the copies in flight).
class IpcCache {
 public:
  // max_entries >= 1 (MPIGPU_IPC_CACHE_SIZE); with 0 every Map fails with kInvalidArg.
  // opener: nullptr for the CUDA runtime; a fake must outlive the cache.
  explicit IpcCache(size_t max_entries, IpcOpener* opener = nullptr);
  ~IpcCache();  // closes what is still open (errors logged)
  IpcCache(const IpcCache&) = delete;
  IpcCache& operator=(const IpcCache&) = delete;

  // *peer_ptr = this process's address of e's buffer (mapping of e.base + e.offset), pinned.
  // peer: the exporter's rank (>= 0). Errors: kInvalidArg for a malformed export or a peer that
  // reused a pinned allocation's address; kNoGpu without a GPU; kCuda when opening fails (the
  // caller falls back to another LMT).
  Status Map(int peer, const IpcExport& e, void** peer_ptr);
  // Unpins the mapping Map returned for (peer, e) once the copies reading it completed.
  // kInvalidArg when no pinned mapping matches.
  Status Release(int peer, const IpcExport& e);
  // Closes every mapping, pinned or not (Finalize: no copy may be in flight). Keeps the first
  // close error; the cache is empty afterwards either way.
  Status Clear();

  IpcCacheStats stats() const;
  size_t max_entries() const { return max_entries_; }

 private:
  struct Entry {
    int peer;
    uint64_t base, size, buffer_id;
    void* mapped;  // this process's address of `base`
    int pins;      // Map calls not yet released
  };
  using Lru = std::list<Entry>;  // front: most recently used
  using Key = std::pair<int, uint64_t>;  // (peer, base)

  // Closes and forgets one entry; counts it in *counter (nullptr: not counted).
  Status Close(Lru::iterator it, uint64_t* counter);
  // Closes the least recently used unpinned entries until one more fits.
  Status MakeRoom();
  // Closes every unpinned entry of `peer` (peer < 0: of all peers); before retrying an open.
  Status CloseUnpinned(int peer);
  // Opens e's handle; on "already mapped" or "out of memory" closes unpinned entries, retries once.
  Status Open(int peer, const IpcExport& e, void** mapped);

  size_t max_entries_;
  IpcOpener* opener_;
  Lru lru_;
  std::map<Key, Lru::iterator> index_;
  IpcCacheStats stats_;
};

}  // namespace mpigpu

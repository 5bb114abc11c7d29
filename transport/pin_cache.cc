#include "transport/pin_cache.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"

namespace mpigpu {
namespace {

constexpr uint64_t kPresent = uint64_t{1} << 63;       // pagemap: page present in RAM
constexpr uint64_t kPfnMask = (uint64_t{1} << 55) - 1;  // pagemap: bits 0-54, the PFN
constexpr size_t kMaxSightings = 64;  // ranges seen once that a second use would register

std::string Range(uintptr_t start, size_t bytes) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "[0x%" PRIxPTR ", +%zu)", start, bytes);
  return buf;
}

class CudaRegistrar final : public PinRegistrar {
 public:
  cudaError_t Register(void* addr, size_t bytes) override {
    if (CudaDeviceCount() == 0) return cudaErrorNoDevice;
    // Portable: the engine may copy with any of this process's devices.
    cudaError_t r = cudaHostRegister(addr, bytes, cudaHostRegisterPortable);
    if (r != cudaSuccess) (void)cudaGetLastError();  // not sticky; leave none for the application
    return r;
  }
  cudaError_t Unregister(void* addr) override {
    cudaError_t r = cudaHostUnregister(addr);
    if (r != cudaSuccess) (void)cudaGetLastError();
    return r;
  }
};

PinRegistrar* DefaultRegistrar() {
  // Never destroyed: caches may outlive statics.
  static PinRegistrar* registrar = new CudaRegistrar;
  return registrar;
}

class ProcPagemap final : public PagemapReader {
 public:
  explicit ProcPagemap(size_t page) : page_(page) {}
  ~ProcPagemap() override {
    if (fd_ >= 0) close(fd_);
  }
  Status Read(uintptr_t addr, size_t pages, uint64_t* entries) override {
    // /proc/self is resolved at open: a descriptor kept across fork() reads the parent's table.
    if (fd_ < 0 || pid_ != getpid()) {
      if (fd_ >= 0) close(fd_);
      fd_ = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
      if (fd_ < 0) return SysError("open(/proc/self/pagemap)");
      pid_ = getpid();
    }
    auto* out = reinterpret_cast<char*>(entries);
    size_t want = pages * sizeof(uint64_t);
    auto off = static_cast<off_t>(addr / page_ * sizeof(uint64_t));
    while (want > 0) {
      const ssize_t got = pread(fd_, out, want, off);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return SysError("pread(/proc/self/pagemap)");
      if (got == 0) return Status(Err::kSystem, "pread(/proc/self/pagemap): end of file");
      out += got;
      want -= static_cast<size_t>(got);
      off += got;
    }
    return Status::Ok();
  }

 private:
  size_t page_;
  int fd_ = -1;
  pid_t pid_ = -1;
};

void WarnIfError(const Status& st) {
  if (!st.ok()) MPIGPU_WARN("pin cache: %s", st.ToString().c_str());
}

}  // namespace

PinCache::PinCache(const Config& config, PinRegistrar* registrar, PagemapReader* pagemap)
    : enabled_(config.pin_cache),
      max_bytes_(config.pin_cache_size),
      min_bytes_(config.pin_cache_min),
      page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))),
      registrar_(registrar != nullptr ? registrar : DefaultRegistrar()),
      pagemap_(pagemap) {
  if (pagemap_ == nullptr) {
    own_pagemap_ = std::make_unique<ProcPagemap>(page_);
    pagemap_ = own_pagemap_.get();
  }
}

PinCache::~PinCache() { WarnIfError(Clear()); }

PinCache::Handle PinCache::Acquire(const void* ptr, size_t extent) {
  const auto addr = reinterpret_cast<uintptr_t>(ptr);
  if (!enabled_ || ptr == nullptr || extent == 0 || addr + extent < addr || !CheckActive())
    return 0;
  const uintptr_t start = addr & ~(page_ - 1);
  const uintptr_t end = (addr + extent + page_ - 1) & ~(page_ - 1);

  // Every entry the range touches is checked on the pages it touches, whatever the range's
  // size: the driver would use a stale registration for any copy that falls inside it.
  Lru::iterator cover = lru_.end();
  std::vector<Lru::iterator> overlaps;  // valid entries that do not cover the range
  auto at = index_.upper_bound(start);
  if (at != index_.begin()) --at;
  while (at != index_.end() && at->first < end) {
    const Lru::iterator e = (at++)->second;
    const uintptr_t e_end = e->start + e->bytes;
    if (e_end <= start) continue;
    const uintptr_t from = std::max(start, e->start), to = std::min(end, e_end);
    if (!Valid(*e, from, to - from)) {
      if (e->refs > 0) {  // cannot happen unless the application unmapped a buffer mid-copy
        MPIGPU_WARN("pin cache: pages of %s changed while a copy uses them",
                    Range(e->start, e->bytes).c_str());
        return 0;
      }
      WarnIfError(Drop(e, &stats_.stale));
    } else if (e->start <= start && end <= e_end) {
      cover = e;
    } else {
      overlaps.push_back(e);
    }
  }
  if (cover != lru_.end()) {
    ++stats_.hits;
    ++cover->refs;
    lru_.splice(lru_.begin(), lru_, cover);  // most recently used
    return cover->start;
  }
  if (extent < min_bytes_) return 0;

  Sighting* seen = FindSighting(start, end - start);
  if (seen == nullptr) {
    ++stats_.first_sightings;
    sightings_.push_back(Sighting{start, end - start, false});
    if (sightings_.size() > kMaxSightings) sightings_.pop_front();
    return 0;
  }
  // The second use. A new range replaces the entries it overlaps, unless a copy uses one.
  for (const Lru::iterator& e : overlaps) {
    if (e->refs > 0) {
      ++stats_.uncached;
      return 0;
    }
  }
  for (const Lru::iterator& e : overlaps) WarnIfError(Drop(e, &stats_.evictions));
  return Register(start, end - start, seen);
}

PinCache::Handle PinCache::Register(uintptr_t start, size_t bytes, Sighting* seen) {
  if (seen->user_pinned || !MakeRoom(bytes)) {
    ++stats_.uncached;
    return 0;
  }
  void* addr = reinterpret_cast<void*>(start);
  const cudaError_t r = registrar_->Register(addr, bytes);
  if (r == cudaErrorHostMemoryAlreadyRegistered) {  // pinned by the user: copies run fast as is
    seen->user_pinned = true;
    ++stats_.uncached;
    return 0;
  }
  if (r != cudaSuccess) {
    LogOnce(Status(Err::kCuda, "cudaHostRegister(" + Range(start, bytes) +
                                   "): " + cudaGetErrorString(r)));
    ++stats_.uncached;
    return 0;
  }
  sightings_.erase(sightings_.begin() + (seen - &sightings_.front()));
  ++stats_.registrations;

  // The PFNs are read after registering: the registration has faulted the pages in and pins
  // them, so these are the pages the driver will copy from for as long as it holds.
  lru_.push_front(Entry{start, bytes, std::vector<uint64_t>(bytes / page_), 1});
  index_[start] = lru_.begin();
  stats_.bytes += bytes;
  Entry& e = lru_.front();
  Status st = pagemap_->Read(start, e.pfns.size(), e.pfns.data());
  for (size_t i = 0; st.ok() && i < e.pfns.size(); ++i) {
    if ((e.pfns[i] & kPresent) == 0 || (e.pfns[i] & kPfnMask) == 0)
      st = Status(Err::kInternal, "a registered page of " + Range(start, bytes) +
                                      " is not present in pagemap");
    e.pfns[i] &= kPfnMask;
  }
  if (!st.ok()) {
    LogOnce(st);
    WarnIfError(Drop(lru_.begin(), &stats_.uncached));
    return 0;
  }
  MPIGPU_TRACE("pin cache: registered %s", Range(start, bytes).c_str());
  return start;
}

Status PinCache::Release(Handle h) {
  auto found = index_.find(h);
  if (h == 0 || found == index_.end() || found->second->refs == 0)
    return Status(Err::kInvalidArg,
                  "PinCache::Release: no registration in use at " + Range(h, 0));
  --found->second->refs;
  return Status::Ok();
}

Status PinCache::Clear() {
  Status first;
  while (!lru_.empty()) first.KeepFirst(Drop(lru_.begin(), nullptr));
  return first;
}

PinCacheStats PinCache::stats() const {
  PinCacheStats s = stats_;
  s.entries = lru_.size();
  s.active = mode_ == Mode::kActive;
  return s;
}

bool PinCache::CheckActive() {
  if (mode_ == Mode::kUnknown) {
    volatile char probe = 1;  // on a page of ours that is surely present: the stack
    const uintptr_t page = reinterpret_cast<uintptr_t>(&probe) & ~(page_ - 1);
    uint64_t entry = 0;
    Status st = pagemap_->Read(page, 1, &entry);
    if (st.ok() && (entry & kPfnMask) == 0)
      st = Status(Err::kSystem, "pagemap shows no page frame numbers (needs CAP_SYS_ADMIN)");
    mode_ = st.ok() ? Mode::kActive : Mode::kInactive;
    if (!st.ok())
      MPIGPU_INFO("pin cache inactive (%s): pageable host buffers are copied unregistered",
                  st.ToString().c_str());
  }
  return mode_ == Mode::kActive;
}

bool PinCache::Valid(const Entry& e, uintptr_t addr, size_t bytes) {
  const size_t first = (addr - e.start) / page_, n = bytes / page_;
  scratch_.resize(n);
  if (!pagemap_->Read(addr, n, scratch_.data()).ok()) return false;  // unsure: not valid
  for (size_t i = 0; i < n; ++i)
    if ((scratch_[i] & kPresent) == 0 || (scratch_[i] & kPfnMask) != e.pfns[first + i])
      return false;
  return true;
}

Status PinCache::Drop(Lru::iterator it, uint64_t* counter) {
  const uintptr_t start = it->start;
  const size_t bytes = it->bytes;
  const cudaError_t r = registrar_->Unregister(reinterpret_cast<void*>(start));
  index_.erase(start);
  lru_.erase(it);
  stats_.bytes -= bytes;
  if (counter != nullptr) ++*counter;
  if (r != cudaSuccess)
    return Status(Err::kCuda,
                  "cudaHostUnregister(" + Range(start, bytes) + "): " + cudaGetErrorString(r));
  return Status::Ok();
}

bool PinCache::MakeRoom(size_t bytes) {
  if (bytes > max_bytes_) return false;  // would empty the cache and still not fit
  auto it = lru_.end();
  while (stats_.bytes + bytes > max_bytes_ && it != lru_.begin()) {
    --it;  // walk from the least recently used end
    if (it->refs > 0) continue;
    auto victim = it++;
    WarnIfError(Drop(victim, &stats_.evictions));
  }
  return stats_.bytes + bytes <= max_bytes_;
}

PinCache::Sighting* PinCache::FindSighting(uintptr_t start, size_t bytes) {
  for (Sighting& s : sightings_)
    if (s.start == start && s.bytes == bytes) return &s;
  return nullptr;
}

void PinCache::LogOnce(const Status& why) {
  if (logged_failure_) return;
  logged_failure_ = true;
  MPIGPU_INFO("pin cache: %s; such buffers are copied unregistered (said once)",
              why.ToString().c_str());
}

}  // namespace mpigpu

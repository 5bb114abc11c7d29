#include "internode/ib/regcache/reg_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "internode/ib/regcache/reg_cache_config.h"
#include "memcopy/log.h"

namespace mpigpu::internode {

RegCache::RegCache(RegisterFn reg, DeregisterFn dereg, size_t max_bytes, size_t max_entries)
    : reg_(std::move(reg)),
      dereg_(std::move(dereg)),
      max_bytes_(std::max<size_t>(max_bytes, 1)),
      max_entries_(std::max<size_t>(max_entries, 1)),
      page_mask_(static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)) - 1) {
  if (memhooks::HooksActive()) {
    caching_ = true;
  } else {
    why_not_ = memhooks::HooksInactiveReason();
    MPIGPU_INFO("ib reg cache: off, registering for each use (%s)", why_not_);
  }
  cursor_ = memhooks::OpenReader();
}

RegCache::RegCache(RegisterFn reg, DeregisterFn dereg)
    : RegCache(std::move(reg), std::move(dereg),
               GetRegCacheConfig().max_mb << 20, GetRegCacheConfig().max_entries) {
  if (caching_ && !GetRegCacheConfig().enabled) {
    caching_ = false;
    why_not_ = "MPIGPU_IB_REG_CACHE=0";
  }
}

RegCache::~RegCache() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [start, e] : map_) {
    e->in_map = false;
    if (e->refs != 0) {
      MPIGPU_WARN("ib reg cache: a region [%p, +%zu) is still referenced (%d) at destruction",
                  e->region.addr, e->region.len, e->refs);
    }
    Destroy(e);
  }
  map_.clear();
  if (stats_.entries != 0)
    MPIGPU_WARN("ib reg cache: %zu referenced regions outlive the cache", stats_.entries);
  memhooks::CloseReader();
}

RegCache::Stats RegCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  s.cached = map_.size();
  return s;
}

void RegCache::LruPush(Entry* e) {
  e->lru_prev = lru_tail_;
  e->lru_next = nullptr;
  if (lru_tail_) lru_tail_->lru_next = e;
  else lru_head_ = e;
  lru_tail_ = e;
}

void RegCache::LruUnlink(Entry* e) {
  if (e->lru_prev) e->lru_prev->lru_next = e->lru_next;
  else lru_head_ = e->lru_next;
  if (e->lru_next) e->lru_next->lru_prev = e->lru_prev;
  else lru_tail_ = e->lru_prev;
  e->lru_prev = e->lru_next = nullptr;
}

void RegCache::Destroy(Entry* e) {
  dereg_(e->region.handle);
  ++stats_.deregistrations;
  stats_.bytes -= e->region.len;
  --stats_.entries;
  delete e;
}

void RegCache::RemoveFromMap(Entry* e) {
  map_.erase(e->start);
  e->in_map = false;
  if (e->refs == 0) {
    LruUnlink(e);
    Destroy(e);
  }
  // Referenced: its holders keep it until their last Release, which destroys it (not in_map).
}

void RegCache::Invalidate(uintptr_t start, uintptr_t end) {
  if (map_.empty() || end <= start) return;
  // From the last region starting at or below `start`, every region starting before `end`.
  auto it = map_.upper_bound(start);
  if (it != map_.begin()) --it;
  while (it != map_.end() && it->first < end) {
    Entry* e = it->second;
    ++it;
    if (e->end > start) {
      ++stats_.invalidations;
      RemoveFromMap(e);
    }
  }
}

void RegCache::FlushAll() {
  ++stats_.flushes;
  while (!map_.empty()) RemoveFromMap(map_.begin()->second);
}

void RegCache::ApplyInvalidations() {
  const bool complete = memhooks::Drain(&cursor_, [this](uintptr_t s, uintptr_t e) {
    Invalidate(s, e);
  });
  if (!complete) FlushAll();
}

void RegCache::EvictToLimits(size_t extra_bytes, size_t extra_entries) {
  while (lru_head_ != nullptr && (stats_.bytes + extra_bytes > max_bytes_ ||
                                  stats_.entries + extra_entries > max_entries_)) {
    ++stats_.evictions;
    RemoveFromMap(lru_head_);
  }
}

Status RegCache::Acquire(void* addr, size_t len, Region** out) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if (addr == nullptr || len == 0 || a + len < a || ((a + len - 1) | page_mask_) == UINTPTR_MAX)
    return Status(Err::kInvalidArg, "ib reg cache: cannot register " + std::to_string(len) +
                                        " bytes at " + std::to_string(a));
  const uintptr_t start = a & ~page_mask_;
  const uintptr_t end = ((a + len - 1) | page_mask_) + 1;

  std::lock_guard<std::mutex> lock(mu_);
  ApplyInvalidations();

  if (caching_ && !map_.empty()) {
    auto it = map_.upper_bound(start);
    if (it != map_.begin()) {
      Entry* e = std::prev(it)->second;
      if (e->start <= start && end <= e->end) {
        if (e->refs++ == 0) LruUnlink(e);
        ++stats_.hits;
        *out = &e->region;
        return Status::Ok();
      }
    }
  }
  ++stats_.misses;

  // The cached regions sharing pages with the request, and the union with them.
  std::vector<Entry*> overlap;
  uintptr_t ustart = start, uend = end;
  if (caching_) {
    auto it = map_.upper_bound(start);
    if (it != map_.begin()) --it;
    for (; it != map_.end() && it->first < end; ++it) {
      if (it->second->end <= start) continue;
      overlap.push_back(it->second);
      ustart = std::min(ustart, it->second->start);
      uend = std::max(uend, it->second->end);
    }
  }
  bool merge = !overlap.empty() && uend - ustart <= 2 * (end - start);
  if (!merge) ustart = start, uend = end;

  void* handle = nullptr;
  Status st = reg_(reinterpret_cast<void*>(ustart), uend - ustart, &handle);
  if (!st.ok() && (merge || (st.code() == Err::kNoMemory && lru_head_ != nullptr))) {
    // Either the union took what the request alone does not (other rights on the absorbed
    // part), or the device ran out of registrable memory or MRs: drop the overlapped regions,
    // and on kNoMemory every idle one, and register the request alone.
    for (Entry* e : overlap) RemoveFromMap(e);
    overlap.clear();
    if (st.code() == Err::kNoMemory) EvictToLimits(SIZE_MAX / 2, SIZE_MAX / 2);
    merge = false;
    ustart = start, uend = end;
    st = reg_(reinterpret_cast<void*>(ustart), uend - ustart, &handle);
  }
  if (!st.ok()) return st;
  ++stats_.registrations;
  if (merge && (ustart != start || uend != end)) ++stats_.merges;

  // The overlapped regions leave the map (the cached regions never overlap).
  for (Entry* e : overlap) RemoveFromMap(e);

  auto* e = new Entry;
  e->region = Region{reinterpret_cast<void*>(ustart), uend - ustart, handle};
  e->start = ustart;
  e->end = uend;
  e->refs = 1;
  stats_.bytes += e->region.len;
  ++stats_.entries;
  if (caching_) {
    e->in_map = true;
    map_.emplace(ustart, e);
  }
  // Over a limit: the least recently released idle regions go (this one is referenced).
  EvictToLimits(0, 0);
  *out = &e->region;
  return Status::Ok();
}

void RegCache::Release(Region* r) {
  if (r == nullptr) return;
  // The Region handed out is the first member of its Entry.
  static_assert(std::is_standard_layout<Entry>::value && offsetof(Entry, region) == 0, "");
  Entry* e = reinterpret_cast<Entry*>(r);
  std::lock_guard<std::mutex> lock(mu_);
  if (e->refs <= 0) {
    MPIGPU_WARN("ib reg cache: Release of an unreferenced region [%p, +%zu)", r->addr, r->len);
    return;
  }
  if (--e->refs != 0) return;
  if (!e->in_map) {
    Destroy(e);
    return;
  }
  LruPush(e);
  EvictToLimits(0, 0);
}

}  // namespace mpigpu::internode

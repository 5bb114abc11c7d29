#include "memreg/reg_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "memreg/reg_cache_config.h"
#include "memcopy/log.h"

namespace mpigpu::memreg {

namespace {
bool Real(const void* h) { return h != nullptr && h != kNotRegistrable; }
}  // namespace

RegCache::RegCache(bool enabled, size_t max_map)
    : max_map_(std::max<size_t>(max_map, 1)),
      page_mask_(static_cast<uintptr_t>(sysconf(_SC_PAGESIZE)) - 1) {
  if (!enabled) {
    why_not_ = "disabled";
  } else if (memhooks::HooksActive()) {
    caching_ = true;
  } else {
    why_not_ = memhooks::HooksInactiveReason();
    MPIGPU_INFO("reg cache: off, registering for each use (%s)", why_not_);
  }
  cursor_ = memhooks::OpenReader();
}

RegCache::RegCache(RegisterFn reg, DeregisterFn dereg, size_t max_bytes, size_t max_entries)
    : RegCache(true, max_entries) {
  Client c;
  c.name = "client";
  c.reg = std::move(reg);
  c.dereg = std::move(dereg);
  c.max_bytes = max_bytes;
  c.max_entries = max_entries;
  (void)AddClient(std::move(c));
}

RegCache::RegCache(RegisterFn reg, DeregisterFn dereg)
    : RegCache(std::move(reg), std::move(dereg), GetRegCacheConfig().max_mb << 20,
               GetRegCacheConfig().max_entries) {
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
      MPIGPU_WARN("reg cache: a region [%p, +%zu) is still referenced (%d) at destruction",
                  e->region.addr, e->region.len, e->refs);
    }
    Destroy(e);
  }
  map_.clear();
  (void)memhooks::ReleaseKept();
  memhooks::CloseReader();
}

RegCache::Client::SpanFn RegCache::OwnMappingSpan(size_t max_bytes) {
  return [max_bytes](uintptr_t a, uintptr_t b, uintptr_t* start, uintptr_t* end) {
    return memhooks::OwnMapping(a, b, start, end) && *end - *start <= max_bytes;
  };
}

int RegCache::AddClient(Client c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (nclients_ == kMaxClients) return -1;
  c.max_bytes = std::max<size_t>(c.max_bytes, 1);
  c.max_entries = std::max<size_t>(c.max_entries, 1);
  clients_[nclients_].spec = std::move(c);
  return nclients_++;
}

RegCache::Stats RegCache::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  for (int i = 0; i < nclients_; ++i) {
    const Stats& c = clients_[i].stats;
    s.hits += c.hits;
    s.misses += c.misses;
    s.registrations += c.registrations;
    s.deregistrations += c.deregistrations;
    s.evictions += c.evictions;
    s.first_uses += c.first_uses;
    s.refused += c.refused;
    s.uncached += c.uncached;
    s.bytes += c.bytes;
    s.entries += c.entries;
  }
  s.cached = map_.size();
  return s;
}

RegCache::Stats RegCache::stats(int client) const {
  std::lock_guard<std::mutex> lock(mu_);
  Stats s = stats_;
  if (client >= 0 && client < nclients_) {
    const Stats& c = clients_[client].stats;
    s.hits = c.hits;
    s.misses = c.misses;
    s.registrations = c.registrations;
    s.deregistrations = c.deregistrations;
    s.evictions = c.evictions;
    s.first_uses = c.first_uses;
    s.refused = c.refused;
    s.uncached = c.uncached;
    s.bytes = c.bytes;
    s.entries = c.entries;
  }
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

bool RegCache::Registered(const Entry* e) const {
  for (int i = 0; i < nclients_; ++i)
    if (e->region.handle[i] != nullptr) return true;
  return false;
}

void RegCache::DropHandle(Entry* e, int c) {
  void*& h = e->region.handle[c];
  if (h == nullptr) return;
  ClientState& cs = clients_[c];
  if (Real(h)) {
    cs.spec.dereg(h);
    ++cs.stats.deregistrations;
    cs.stats.bytes -= e->region.len;
    --cs.stats.entries;
  }
  h = nullptr;
  // The addresses stay protected while any address-keyed registration of them remains.
  if (e->protect_slot >= 0) {
    bool still = false;
    for (int i = 0; i < nclients_; ++i)
      still |= clients_[i].spec.pins_addresses && Real(e->region.handle[i]);
    if (!still) {
      memhooks::Unprotect(e->protect_slot);
      e->protect_slot = -1;
    }
  }
}

void RegCache::Destroy(Entry* e) {
  for (int c = 0; c < nclients_; ++c) DropHandle(e, c);
  if (e->protect_slot >= 0) memhooks::Unprotect(e->protect_slot);
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

std::map<uintptr_t, RegCache::Entry*>::iterator RegCache::FirstEndingAfter(uintptr_t a) {
  // The last entry starting at or below `a`, or the one before it where both hold a's page.
  auto it = map_.upper_bound(a);
  while (it != map_.begin() && std::prev(it)->second->end > a) --it;
  return it;
}

std::vector<RegCache::Entry*> RegCache::NeighboursHolding(const Entry* e, int c) {
  std::vector<Entry*> out;
  for (auto it = FirstEndingAfter(e->start); it != map_.end() && it->first < e->end; ++it)
    if (it->second != e && Real(it->second->region.handle[c])) out.push_back(it->second);
  return out;
}

void RegCache::Invalidate(uintptr_t start, uintptr_t end) {
  if (map_.empty() || end <= start) return;
  // Every entry ending after `start` and starting before `end` (both entries over a shared
  // edge page go).
  auto it = FirstEndingAfter(start);
  while (it != map_.end() && it->first < end) {
    Entry* e = it->second;
    ++it;
    ++stats_.invalidations;
    RemoveFromMap(e);
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

void RegCache::EvictToLimits() {
  for (int c = 0; c < nclients_; ++c) {
    ClientState& cs = clients_[c];
    for (Entry* e = lru_head_; e != nullptr &&
                               (cs.stats.bytes > cs.spec.max_bytes ||
                                cs.stats.entries > cs.spec.max_entries);) {
      Entry* next = e->lru_next;
      if (Real(e->region.handle[c])) {
        ++cs.stats.evictions;
        DropHandle(e, c);  // with no handle left it stays as a seen entry: used again, it pins
      }
      e = next;
    }
  }
  while (lru_head_ != nullptr && map_.size() > max_map_) RemoveFromMap(lru_head_);
}

void RegCache::AfterChange() {
  EvictToLimits();
  (void)memhooks::ReleaseKept();
}

Status RegCache::RegisterInto(Entry* e, int c) {
  ClientState& cs = clients_[c];
  int slot = -1;
  if (cs.spec.pins_addresses && e->protect_slot < 0) {
    // Protected before the registration exists: an unmap racing with it then keeps the
    // addresses rather than freeing them under a live registration.
    slot = memhooks::Protect(e->start, e->end);
    if (slot < 0) return Status(Err::kNoMemory, "reg cache: protection table full");
  }
  void* handle = nullptr;
  Status st = cs.spec.reg(e->region.addr, e->region.len, &handle);
  if (!st.ok() || !Real(handle)) {
    if (slot >= 0) memhooks::Unprotect(slot);
    if (!st.ok()) return st;
  } else if (slot >= 0) {
    e->protect_slot = slot;
  }
  e->region.handle[c] = handle;
  ++cs.stats.registrations;
  if (Real(handle)) {
    cs.stats.bytes += e->region.len;
    ++cs.stats.entries;
  } else {
    ++cs.stats.refused;
  }
  return Status::Ok();
}

bool RegCache::Seen(uintptr_t a, size_t len, uintptr_t start, uintptr_t end) {
  // The pages wholly inside the request (the outer ones where there are none): two chunks that
  // share a boundary page are each first used on their own.
  uintptr_t is = (a + page_mask_) & ~page_mask_, ie = (a + len) & ~page_mask_;
  if (ie <= is) is = start, ie = end;
  auto it = FirstEndingAfter(is);
  if (it != map_.end() && it->first < ie) return true;
  // Not seen: record [is, ie) (nothing overlaps it).
  auto* e = new Entry;
  e->region = Region{reinterpret_cast<void*>(is), ie - is, {}};
  e->start = is;
  e->end = ie;
  e->in_map = true;
  map_.emplace(is, e);
  LruPush(e);
  return false;
}

Status RegCache::Acquire(int client, void* addr, size_t len, Region** out) {
  return AcquireImpl(client, addr, len, /*on_reuse=*/false, out);
}

Status RegCache::AcquireOnReuse(int client, void* addr, size_t len, Region** out) {
  return AcquireImpl(client, addr, len, /*on_reuse=*/true, out);
}

Status RegCache::AcquireImpl(int c, void* addr, size_t len, bool on_reuse, Region** out) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  if (out == nullptr || addr == nullptr || len == 0 || a + len < a ||
      ((a + len - 1) | page_mask_) == UINTPTR_MAX)
    return Status(Err::kInvalidArg, "reg cache: cannot register " + std::to_string(len) +
                                        " bytes at " + std::to_string(a));
  *out = nullptr;
  uintptr_t start = a & ~page_mask_;
  uintptr_t end = ((a + len - 1) | page_mask_) + 1;

  std::lock_guard<std::mutex> lock(mu_);
  if (c < 0 || c >= nclients_)
    return Status(Err::kInvalidArg, "reg cache: unknown client " + std::to_string(c));
  ClientState& cs = clients_[c];
  ApplyInvalidations();
  if (!caching_ && on_reuse) {
    (void)memhooks::ReleaseKept();
    return Status::Ok();  // nothing is kept: never worth registering
  }
  // The range a registration of this client must cover whole (its span), or none: then
  // AcquireOnReuse leaves the request unregistered (no seen entry recorded), and Acquire
  // registers it for this use alone (an address-keyed client's Acquire fails).
  uintptr_t span_start = start, span_end = end;
  // Kept between uses: what this request registers enters the map (false: a span-refused
  // request of a page-keyed client, registered for this use alone).
  bool keep = caching_;
  if (cs.spec.span && !cs.spec.span(a, a + len, &span_start, &span_end)) {
    if (on_reuse || cs.spec.pins_addresses) {
      AfterChange();
      return on_reuse ? Status::Ok()
                      : Status(Err::kInvalidArg, std::string("reg cache: ") + cs.spec.name +
                                                     " cannot register this range");
    }
    // No allocation owns the range whole (heap, stack, static data): its pages may change
    // behind the hooks (glibc's own trim and munmap), so it is registered now and deregistered
    // at its last Release, never looked up nor kept.
    keep = false;
    span_start = start;
    span_end = end;
    ++cs.stats.uncached;
  }
  if (on_reuse && !Seen(a, len, start, end)) {
    // First use: remember the pages, register nothing.
    ++cs.stats.first_uses;
    AfterChange();
    return Status::Ok();
  }
  if (span_start > start || span_end < end || ((span_start | span_end) & page_mask_) != 0)
    return Status(Err::kInternal, "reg cache: a client's span does not cover the request");
  const uintptr_t req_start = start, req_end = end;  // the request's own pages
  start = span_start;
  end = span_end;

  if (keep && !map_.empty()) {
    auto it = map_.upper_bound(start);
    if (it != map_.begin()) {
      Entry* e = std::prev(it)->second;
      if (e->start <= start && end <= e->end) {
        if (e->region.handle[c] != nullptr) {
          ++cs.stats.hits;
        } else {
          // Covered: seen before (or registered by another client): register it for this one.
          ++cs.stats.misses;
          if (cs.spec.exclusive_pages) {
            // A neighbour holds this client's registration on a shared page: on reuse the
            // request goes unregistered (the neighbour keeps its pages); Acquire takes the page.
            std::vector<Entry*> held = NeighboursHolding(e, c);
            if (!held.empty() && on_reuse) {
              AfterChange();
              return Status::Ok();
            }
            for (Entry* o : held) RemoveFromMap(o);
          }
          Status st = RegisterInto(e, c);
          if (!st.ok()) {
            if (on_reuse) return Status::Ok();
            return st;
          }
        }
        if (e->refs++ == 0) LruUnlink(e);
        *out = &e->region;
        AfterChange();
        return Status::Ok();
      }
    }
  }
  ++cs.stats.misses;

  // The cached entries the new one absorbs, and the union with them: every one sharing pages
  // with the request but a neighbour over one of its edge pages (which stays, unless it holds a
  // registration of a client whose pages are exclusive: then it is absorbed too).
  std::vector<Entry*> overlap;
  uintptr_t ustart = start, uend = end;
  bool held_pins = false;  // a referenced entry of ours (address-keyed) overlaps
  if (keep) {
    const uintptr_t page = page_mask_ + 1;
    for (auto it = FirstEndingAfter(start); it != map_.end() && it->first < end; ++it) {
      Entry* o = it->second;
      // No entry covers the request here, so a one-page request has no edge neighbours.
      const bool edge = (o->start < start && o->end == start + page) ||
                        (o->end > end && o->start + page == end);
      if (edge && !(cs.spec.exclusive_pages && Real(o->region.handle[c]))) continue;
      overlap.push_back(o);
      ustart = std::min(ustart, o->start);
      uend = std::max(uend, o->end);
      if (o->refs > 0 && Real(o->region.handle[c])) held_pins = true;
    }
  }
  if (on_reuse && held_pins && cs.spec.pins_addresses) return Status::Ok();  // refused now
  bool merge = !overlap.empty() && uend - ustart <= 2 * (end - start);
  if (merge && cs.spec.exclusive_pages && (ustart != start || uend != end)) {
    // The union reaches past the request: an entry over its outer edge page (a neighbour of an
    // absorbed one) may hold this client's registration; then the request alone.
    for (auto it = FirstEndingAfter(ustart); merge && it != map_.end() && it->first < uend; ++it)
      if (Real(it->second->region.handle[c]) &&
          std::find(overlap.begin(), overlap.end(), it->second) == overlap.end())
        merge = false;
  }
  if (!merge) ustart = start, uend = end;
  if (on_reuse && !merge) {
    // A registration of this client mostly outside the request (a neighbour sharing a boundary
    // page) is kept, and the request goes unregistered: replacing it would make two chunks
    // sharing a page deregister each other on every use.
    for (Entry* o : overlap) {
      if (!Real(o->region.handle[c])) continue;
      const uintptr_t in = std::min(o->end, end) - std::max(o->start, start);
      if (2 * in < o->end - o->start) return Status::Ok();
    }
  }
  if (merge && (ustart != start || uend != end)) ++stats_.merges;

  // The absorbed entries leave the map first (entries never nest and share at most an edge
  // page; an exclusive client's page is registered once: CUDA refuses a second registration).
  for (Entry* o : overlap) RemoveFromMap(o);

  auto* e = new Entry;
  e->region = Region{reinterpret_cast<void*>(ustart), uend - ustart, {}};
  e->start = ustart;
  e->end = uend;
  Status st = RegisterInto(e, c);
  if (!st.ok() && (merge || (st.code() == Err::kNoMemory && lru_head_ != nullptr))) {
    // Either the union took what the request alone does not (other rights on the absorbed
    // part), or the device ran out of registrable memory: on kNoMemory every idle entry goes;
    // then the request alone.
    if (st.code() == Err::kNoMemory)
      while (lru_head_ != nullptr) RemoveFromMap(lru_head_);
    e->region = Region{reinterpret_cast<void*>(start), end - start, {}};
    e->start = start;
    e->end = end;
    st = RegisterInto(e, c);
  }
  if (!st.ok() && !on_reuse && !cs.spec.pins_addresses &&
      (start != req_start || end != req_end)) {
    // The span took what the request does not (part of the mapping made read-only, say): the
    // request alone, for this use only (as a range the span refuses).
    e->region = Region{reinterpret_cast<void*>(req_start), req_end - req_start, {}};
    e->start = req_start;
    e->end = req_end;
    st = RegisterInto(e, c);
    if (st.ok()) {
      keep = false;
      ++cs.stats.uncached;
    }
  }
  if (!st.ok()) {
    delete e;
    (void)memhooks::ReleaseKept();
    if (on_reuse) return Status::Ok();
    return st;
  }
  e->refs = 1;
  if (keep) {
    e->in_map = true;
    map_.emplace(e->start, e);
  }
  // Over a limit: the least recently released idle entries go (this one is referenced).
  AfterChange();
  *out = &e->region;
  return Status::Ok();
}

void RegCache::Sync() {
  std::lock_guard<std::mutex> lock(mu_);
  ApplyInvalidations();
  AfterChange();
}

void RegCache::DropClient(int c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (c < 0 || c >= nclients_) return;
  ApplyInvalidations();
  for (auto& [start, e] : map_) DropHandle(e, c);  // one left with no handle is a seen entry
  AfterChange();
}

void RegCache::Release(Region* r) {
  if (r == nullptr) return;
  // The Region handed out is the first member of its Entry.
  static_assert(std::is_standard_layout<Entry>::value && offsetof(Entry, region) == 0, "");
  Entry* e = reinterpret_cast<Entry*>(r);
  std::lock_guard<std::mutex> lock(mu_);
  if (e->refs <= 0) {
    MPIGPU_WARN("reg cache: Release of an unreferenced region [%p, +%zu)", r->addr, r->len);
    return;
  }
  ApplyInvalidations();  // e, still referenced, may leave the map here
  if (--e->refs != 0) return;
  if (!e->in_map) {
    Destroy(e);
  } else {
    LruPush(e);
  }
  AfterChange();
}

}  // namespace mpigpu::memreg

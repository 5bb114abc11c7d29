#include "transport/core/match.h"

namespace mpigpu {

std::string ToString(const MatchKey& key) {
  const std::string source =
      key.source == kMatchAnySource ? "ANY" : std::to_string(key.source);
  const std::string tag = key.tag == kMatchAnyTag ? "ANY" : std::to_string(key.tag);
  return "(context " + std::to_string(key.context) + ", source " + source + ", tag " + tag + ")";
}

// ---- MatchBinTable ----

namespace {

constexpr size_t kMinSlots = 16;
// A queue that drops its index frees tables larger than this (after a burst of distinct keys).
constexpr size_t kKeepSlots = 1024;

inline bool SameKey(const MatchKey& a, const MatchKey& b) {
  return a.context == b.context && a.source == b.source && a.tag == b.tag;
}

inline size_t Hash(const MatchKey& k) {
  uint64_t h = (static_cast<uint64_t>(static_cast<uint32_t>(k.source)) << 32) |
               static_cast<uint32_t>(k.tag);
  h ^= static_cast<uint64_t>(static_cast<uint32_t>(k.context)) * 0x9E3779B97F4A7C15ull;
  // murmur3's finaliser: every input bit reaches the low bits the mask keeps.
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return static_cast<size_t>(h);
}

}  // namespace

MatchBin* MatchBinTable::Find(const MatchKey& key) const {
  if (slots_.empty()) return nullptr;
  const size_t mask = slots_.size() - 1;
  for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
    MatchBin* b = slots_[i];
    if (b == nullptr) return nullptr;
    if (SameKey(b->key, key)) return b;
  }
}

MatchBin* MatchBinTable::FindOrAdd(const MatchKey& key) {
  if (MatchBin* b = Find(key)) return b;
  if ((used_ + 1) * 2 > slots_.size()) Rebuild();
  MatchBin* b = free_;
  if (b != nullptr) {
    free_ = b->next_free;
    --free_count_;
    b->next_free = nullptr;
  } else {
    b = new MatchBin();
  }
  b->key = key;
  const size_t mask = slots_.size() - 1;
  size_t i = Hash(key) & mask;
  while (slots_[i] != nullptr) i = (i + 1) & mask;
  slots_[i] = b;
  ++used_;
  return b;
}

// Keeps the bins that hold entries, in a table of at least four times their number: at most a
// quarter full, so at least a quarter of the slots are added before the next rebuild, which pays
// for this one (it visits the old slots once). Empty bins go to the free list, up to the new
// capacity (a steady stream of new keys then allocates nothing); the rest are freed.
void MatchBinTable::Rebuild() {
  std::vector<MatchBin*> live;
  live.reserve(used_);
  for (MatchBin* b : slots_) {
    if (b == nullptr) continue;
    if (b->head != nullptr) {
      live.push_back(b);
    } else {
      b->next_free = free_;
      free_ = b;
      ++free_count_;
    }
  }
  size_t cap = kMinSlots;
  while (cap < 4 * (live.size() + 1)) cap *= 2;
  while (free_count_ > cap) {
    MatchBin* b = free_;
    free_ = b->next_free;
    --free_count_;
    delete b;
  }
  if (slots_.capacity() > 2 * cap) {
    std::vector<MatchBin*>(cap, nullptr).swap(slots_);  // give back what a burst took
  } else {
    slots_.assign(cap, nullptr);
  }
  const size_t mask = cap - 1;
  for (MatchBin* b : live) {
    size_t i = Hash(b->key) & mask;
    while (slots_[i] != nullptr) i = (i + 1) & mask;
    slots_[i] = b;
  }
  used_ = live.size();
}

void MatchBinTable::Clear() {
  for (MatchBin* b : slots_) delete b;
  while (free_ != nullptr) {
    MatchBin* b = free_;
    free_ = b->next_free;
    delete b;
  }
  std::vector<MatchBin*>().swap(slots_);
  used_ = 0;
  free_count_ = 0;
}

// ---- MatchList ----

namespace {
// A queue that drops its index frees a node pool larger than this.
constexpr size_t kKeepNodes = 1024;
}  // namespace

MatchList::~MatchList() {
  while (head_ != nullptr) Remove(head_);
}

bool MatchList::PushBackIndexed(MatchEntry* e) {
  if (indexed_) {
    Index(e);
  } else {
    BuildIndex();
  }
  return true;
}

bool MatchList::RemoveIndexed(MatchEntry* e) {
  Unindex(e);
  (e->prev_ != nullptr ? e->prev_->next_ : head_) = e->next_;
  (e->next_ != nullptr ? e->next_->prev_ : tail_) = e->prev_;
  e->prev_ = e->next_ = nullptr;
  e->owner_ = nullptr;
  --size_;
  if (size_ <= index_above_ / 4) DropIndex();
  return true;
}

// Files every entry, oldest first, so each bin is in insertion order.
void MatchList::BuildIndex() {
  indexed_ = true;
  push_limit_ = 0;
  nodes_.reserve(size_);
  for (MatchEntry* e = head_; e != nullptr; e = e->next_) Index(e);
}

void MatchList::DropIndex() {
  for (MatchEntry* e = head_; e != nullptr; e = e->next_) Unindex(e);
  indexed_ = false;
  push_limit_ = index_above_;
  // Every node is free now.
  nodes_.clear();
  free_nodes_.clear();
  if (nodes_.capacity() > kKeepNodes) {
    std::vector<Node>().swap(nodes_);
    std::vector<uint32_t>().swap(free_nodes_);
  }
  for (MatchBinTable& t : tables_)
    if (t.capacity() > kKeepSlots) t.Clear();
}

void MatchList::File(MatchEntry* e, Node& node, int kind, const MatchKey& bin_key) {
  MatchBin* bin = tables_[kind].FindOrAdd(bin_key);
  node.bin[kind] = bin;
  node.prev[kind] = bin->tail;
  node.next[kind] = nullptr;
  (bin->tail != nullptr ? NodeOf(bin->tail).next[kind] : bin->head) = e;
  bin->tail = e;
  ++filed_[kind];
}

// A pattern sits in the bin of its own key. An envelope sits in the bin of every pattern that
// matches it: exact, ANY source, and (when ANY_TAG accepts its tag) ANY tag and both.
void MatchList::Index(MatchEntry* e) {
  // A node numbered like the entries (4G queued entries would overflow the number).
  if (!free_nodes_.empty()) {
    e->node_ = free_nodes_.back();
    free_nodes_.pop_back();
    nodes_[e->node_] = Node{};
  } else {
    e->node_ = static_cast<uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& node = nodes_[e->node_];
  node.seq = next_seq_++;
  const MatchKey& k = e->key;
  if (patterns_) {
    File(e, node, KindOf(k), k);
    return;
  }
  File(e, node, 0, k);
  File(e, node, 2, MatchKey{k.context, kMatchAnySource, k.tag});
  if (AnyTagAccepts(k.tag)) {
    File(e, node, 1, MatchKey{k.context, k.source, kMatchAnyTag});
    File(e, node, 3, MatchKey{k.context, kMatchAnySource, kMatchAnyTag});
  }
}

void MatchList::Unindex(MatchEntry* e) {
  Node& node = NodeOf(e);
  for (int kind = 0; kind < kMatchKinds; ++kind) {
    MatchBin* bin = node.bin[kind];
    if (bin == nullptr) continue;
    MatchEntry* prev = node.prev[kind];
    MatchEntry* next = node.next[kind];
    (prev != nullptr ? NodeOf(prev).next[kind] : bin->head) = next;
    (next != nullptr ? NodeOf(next).prev[kind] : bin->tail) = prev;
    --filed_[kind];
  }
  free_nodes_.push_back(e->node_);
}

MatchEntry* MatchList::HeadOf(int kind, const MatchKey& bin_key) const {
  if (filed_[kind] == 0) return nullptr;
  const MatchBin* bin = tables_[kind].Find(bin_key);
  return bin != nullptr ? bin->head : nullptr;
}

MatchEntry* MatchList::FindIndexed(const MatchKey& key) const {
  if (!patterns_) return HeadOf(KindOf(key), key);  // key is a pattern: its own bin
  // key is an envelope: the oldest head among the bins of the patterns that accept it.
  MatchEntry* best = HeadOf(0, key);
  auto consider = [this, &best](MatchEntry* e) {
    if (e != nullptr && (best == nullptr || NodeOf(e).seq < NodeOf(best).seq)) best = e;
  };
  consider(HeadOf(2, MatchKey{key.context, kMatchAnySource, key.tag}));
  if (AnyTagAccepts(key.tag)) {
    consider(HeadOf(1, MatchKey{key.context, key.source, kMatchAnyTag}));
    consider(HeadOf(3, MatchKey{key.context, kMatchAnySource, kMatchAnyTag}));
  }
  return best;
}

}  // namespace mpigpu

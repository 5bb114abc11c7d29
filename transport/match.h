// MPI tag matching, independent of how bytes move: the posted-receive queue and the
// unexpected-message queue of one process.
//
// Non-overtaking order: both queues keep entries in insertion order and every search returns the
// earliest match. An incoming message searches the posted queue in posting order, so it goes to
// the oldest receive that accepts it; a new receive (or probe) searches the unexpected queue in
// arrival order, so of two messages from one source with one tag on one communicator the first
// sent is the first received (the transport must insert them in the order each sender sent).
// Contexts never match across communicators.
//
// How a search stays near constant time with long queues: a queue of at most
// `index_above` entries (default kMatchIndexAbove) is a plain list searched front to back, which
// is the cheapest for the common short queue (a ping-pong has one posted receive). When it grows
// past that it is indexed: every entry also sits in FIFO bins of hash tables, and it goes back to
// the plain list once it shrinks to a quarter of that (the bins are dropped).
//   - Unexpected queue (entries are envelopes, searches are patterns): an envelope is linked into
//     the bins of all four patterns that can match it: (context, source, tag), (context, ANY,
//     tag), and, if ANY_TAG accepts its tag, (context, source, ANY) and (context, ANY, ANY). A
//     search is one hash look-up in the table of the pattern's kind, and the bin's head (its
//     oldest entry) is the answer.
//   - Posted queue (entries are patterns, searches are envelopes): a receive sits in one bin, of
//     the table of its kind (no wildcard, ANY source, ANY tag, both). An envelope looks up the
//     up to four bins whose patterns accept it (tables with no entries are skipped) and takes,
//     of their heads, the one posted first (the index numbers entries in insertion order).
// Every bin is FIFO in insertion order, so its head is its oldest entry; KeyMatches stays the
// definition, and tests/match_test.cc checks the index against a plain list.
//
// Ownership and concurrency invariants:
//   - The queues are intrusive (an entry derives from MatchEntry) and own no entry: the caller
//     keeps each entry alive while it is queued (Find returns the caller's own entry, still
//     queued). The destructor unlinks whatever is left; entries must outlive the queue.
//   - An entry is in at most one queue at a time (PushBack refuses one that is queued anywhere).
//   - An entry's key must not change while it is queued (the index files it under its key).
//   - Not thread-safe, and no atomics: a queue and its entries are used by one thread at a time.
//     The engine that owns them is called by one thread per process (the API's mutex serialises
//     its callers), and progress is that thread's. Nothing here is shared between processes.
//   - The plain list's path never allocates. The queue's own memory (hash tables, bins, index
//     nodes) is allocated only while indexed, when the index needs a bin or node it has not
//     kept from before; it is freed when a shrinking queue drops its index (what is large) and
//     in the destructor.
//   - ForEach's callback may Remove the entry it is given, and no other; an entry it pushes is
//     walked too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace mpigpu {

constexpr int kMatchAnySource = -2;  // == MPIGPU_ANY_SOURCE
constexpr int kMatchAnyTag = -1;     // == MPIGPU_ANY_TAG

// A queue longer than this is indexed (see the header comment).
constexpr size_t kMatchIndexAbove = 8;

// A message's envelope (every field concrete), or a receive's pattern (source may be
// kMatchAnySource, tag kMatchAnyTag). `context` identifies the communicator (the transport may
// give collectives of a communicator a context of their own).
struct MatchKey {
  int context = 0;
  int source = 0;
  int tag = 0;
};

// Whether MPIGPU_ANY_TAG accepts an envelope's tag: tags >= 0, and kMatchAnyTag itself (equal).
inline bool AnyTagAccepts(int tag) { return tag >= 0 || tag == kMatchAnyTag; }

// Does a receive's `pattern` accept a message's `envelope`? Contexts must be equal; the tag
// wildcard accepts only tags >= 0, so internal (negative) tags are never caught by a user's
// MPIGPU_ANY_TAG.
inline bool KeyMatches(const MatchKey& pattern, const MatchKey& envelope) {
  return pattern.context == envelope.context &&
         (pattern.source == kMatchAnySource || pattern.source == envelope.source) &&
         (pattern.tag == envelope.tag || (pattern.tag == kMatchAnyTag && envelope.tag >= 0));
}

// "(context 3, source 1, tag ANY)" for logs and error messages.
std::string ToString(const MatchKey& key);

class MatchList;
struct MatchEntry;

// The index has one table per kind of pattern: bit 1 = ANY source, bit 0 = ANY tag.
constexpr int kMatchKinds = 4;
inline int KindOf(const MatchKey& pattern) {
  return (pattern.source == kMatchAnySource ? 2 : 0) | (pattern.tag == kMatchAnyTag ? 1 : 0);
}

// One FIFO bin of the index: the entries filed under one pattern, oldest first.
struct MatchBin {
  MatchKey key;
  MatchEntry* head = nullptr;
  MatchEntry* tail = nullptr;
  MatchBin* next_free = nullptr;  // in the table's free list
};

// Open-addressing hash table (linear probing) from a pattern to its bin; internal to MatchList.
// Bins have stable addresses. A bin that empties stays in the table (a key used again reuses it)
// until the table is rebuilt, which happens only when a new bin would fill it past half: the
// rebuild keeps the non-empty bins and sizes the table to four times their number, so its cost
// is amortised over the insertions that filled it.
class MatchBinTable {
 public:
  MatchBinTable() = default;
  MatchBinTable(const MatchBinTable&) = delete;
  MatchBinTable& operator=(const MatchBinTable&) = delete;
  ~MatchBinTable() { Clear(); }

  MatchBin* Find(const MatchKey& key) const;
  MatchBin* FindOrAdd(const MatchKey& key);
  void Clear();  // frees every bin; only when no entry is filed here
  size_t capacity() const { return slots_.size(); }

 private:
  void Rebuild();
  std::vector<MatchBin*> slots_;
  size_t used_ = 0;  // bins in slots_, empty ones included
  MatchBin* free_ = nullptr;
  size_t free_count_ = 0;
};

// Base of every queued entry: its key plus the queue's links. An entry is in at most one queue.
// It is as small as before the index (40 bytes): the index's links live in nodes of the queue,
// made only while it is indexed, so requests recycled per message stay cheap to reset.
struct MatchEntry {
  MatchKey key;

  MatchEntry() = default;
  // Copies carry the key only: a copy is not in any queue.
  MatchEntry(const MatchEntry& other) : key(other.key) {}
  MatchEntry& operator=(const MatchEntry& other) {
    key = other.key;
    return *this;
  }

 private:
  friend class MatchList;
  uint32_t node_ = 0;  // its node in the queue's index (meaningful only while indexed)
  // Insertion order (every queued entry).
  MatchEntry* prev_ = nullptr;
  MatchEntry* next_ = nullptr;
  const MatchList* owner_ = nullptr;  // the queue holding this entry, or null
};
static_assert(sizeof(MatchEntry) <= 40, "the index keeps entries small (see above)");

// Entries in insertion order, indexed when long (the untyped core of MatchQueue).
class MatchList {
 public:
  MatchList(bool entries_are_patterns, size_t index_above)
      : patterns_(entries_are_patterns), index_above_(index_above), push_limit_(index_above) {}
  MatchList(const MatchList&) = delete;
  MatchList& operator=(const MatchList&) = delete;
  ~MatchList();  // unlinks every entry (they stay alive: not owned)

  // Appends e; false (nothing done) if e is null or already in a queue.
  // Inline: on a plain list's path (short queues: the common case) this is all that runs.
  bool PushBack(MatchEntry* e) {
    if (e == nullptr || e->owner_ != nullptr) return false;
    e->owner_ = this;
    e->prev_ = tail_;
    e->next_ = nullptr;
    (tail_ != nullptr ? tail_->next_ : head_) = e;
    tail_ = e;
    // One compare: past push_limit_ the queue is indexed, or must be now.
    if (++size_ > push_limit_) return PushBackIndexed(e);
    return true;
  }
  // Unlinks e; false (nothing done) if e is not in this queue.
  bool Remove(MatchEntry* e) {
    if (!Contains(e)) return false;
    if (indexed_) return RemoveIndexed(e);
    (e->prev_ != nullptr ? e->prev_->next_ : head_) = e->next_;
    (e->next_ != nullptr ? e->next_->prev_ : tail_) = e->prev_;
    e->prev_ = e->next_ = nullptr;
    e->owner_ = nullptr;
    --size_;
    return true;
  }
  bool Contains(const MatchEntry* e) const { return e != nullptr && e->owner_ == this; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // Whether searches use the index now (for tests).
  bool indexed() const { return indexed_; }

 protected:
  MatchEntry* head() const { return head_; }
  static MatchEntry* Next(const MatchEntry* e) { return e->next_; }
  // The earliest match of `key` through the index; only while indexed().
  MatchEntry* FindIndexed(const MatchKey& key) const;

 private:
  // An entry's place in the index: its insertion number and, per kind of pattern, its bin and
  // its neighbours there. Nodes live in nodes_ (moved when it grows: referred to by number).
  struct Node {
    uint64_t seq = 0;
    MatchBin* bin[kMatchKinds] = {};
    MatchEntry* prev[kMatchKinds] = {};
    MatchEntry* next[kMatchKinds] = {};
  };
  Node& NodeOf(const MatchEntry* e) { return nodes_[e->node_]; }
  const Node& NodeOf(const MatchEntry* e) const { return nodes_[e->node_]; }

  bool PushBackIndexed(MatchEntry* e);
  bool RemoveIndexed(MatchEntry* e);
  void BuildIndex();
  void DropIndex();
  void Index(MatchEntry* e);
  void Unindex(MatchEntry* e);
  void File(MatchEntry* e, Node& node, int kind, const MatchKey& bin_key);
  MatchEntry* HeadOf(int kind, const MatchKey& bin_key) const;

  MatchEntry* head_ = nullptr;
  MatchEntry* tail_ = nullptr;
  size_t size_ = 0;
  bool indexed_ = false;
  const bool patterns_;
  const size_t index_above_;
  size_t push_limit_;  // index_above_ while a plain list, 0 while indexed
  // The index (only while indexed_).
  uint64_t next_seq_ = 0;
  size_t filed_[kMatchKinds] = {};  // entries filed in each table
  MatchBinTable tables_[kMatchKinds];
  std::vector<Node> nodes_;
  std::vector<uint32_t> free_nodes_;
};

// A typed queue. kEntriesArePatterns: entries are receive patterns searched with a message's
// envelope (the posted queue); otherwise entries are envelopes searched with a receive's pattern
// (the unexpected queue). `index_above`: see the header comment (tests vary it).
template <class T, bool kEntriesArePatterns>
class MatchQueue : private MatchList {
  static_assert(std::is_base_of<MatchEntry, T>::value, "queued types derive from MatchEntry");

 public:
  explicit MatchQueue(size_t index_above = kMatchIndexAbove)
      : MatchList(kEntriesArePatterns, index_above) {}

  using MatchList::empty;
  using MatchList::indexed;
  using MatchList::size;

  bool PushBack(T* e) { return MatchList::PushBack(e); }
  bool Remove(T* e) { return MatchList::Remove(e); }
  bool Contains(const T* e) const { return MatchList::Contains(e); }
  T* front() const { return static_cast<T*>(head()); }

  // Earliest entry matching `key` (an envelope for the posted queue, a pattern for the
  // unexpected queue), or null. Leaves it queued: a probe.
  T* Find(const MatchKey& key) const {
    if (indexed()) return static_cast<T*>(FindIndexed(key));
    for (MatchEntry* e = head(); e != nullptr; e = Next(e)) {
      if (kEntriesArePatterns ? KeyMatches(e->key, key) : KeyMatches(key, e->key)) {
        return static_cast<T*>(e);
      }
    }
    return nullptr;
  }

  // Find, and unlink what was found.
  T* FindAndRemove(const MatchKey& key) {
    T* e = Find(key);
    if (e != nullptr) MatchList::Remove(e);
    return e;
  }

  // fn(T*) for every entry in insertion order; fn may Remove the entry it was given (e.g.
  // failing every receive posted for a peer that died).
  template <class Fn>
  void ForEach(Fn&& fn) {
    for (MatchEntry* e = head(); e != nullptr;) {
      MatchEntry* next = Next(e);
      fn(static_cast<T*>(e));
      e = next;
    }
  }
};

template <class T>
using PostedQueue = MatchQueue<T, true>;
template <class T>
using UnexpectedQueue = MatchQueue<T, false>;

}  // namespace mpigpu

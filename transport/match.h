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
// The queues are intrusive (an entry derives from MatchEntry): pushing, searching and removing
// never allocate. They are not thread-safe: the progress engine that owns them serialises access.
// Entries are not owned: the caller keeps each alive while it is queued.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>

namespace mpigpu {

constexpr int kMatchAnySource = -2;  // == MPIGPU_ANY_SOURCE
constexpr int kMatchAnyTag = -1;     // == MPIGPU_ANY_TAG

// A message's envelope (every field concrete), or a receive's pattern (source may be
// kMatchAnySource, tag kMatchAnyTag). `context` identifies the communicator (the transport may
// give collectives of a communicator a context of their own).
struct MatchKey {
  int context = 0;
  int source = 0;
  int tag = 0;
};

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

// Base of every queued entry: its key plus the list links. An entry is in at most one list.
struct MatchEntry {
  MatchKey key;

  MatchEntry() = default;
  // Copies carry the key only: a copy is not in any list.
  MatchEntry(const MatchEntry& other) : key(other.key) {}
  MatchEntry& operator=(const MatchEntry& other) {
    key = other.key;
    return *this;
  }

 private:
  friend class MatchList;
  MatchEntry* prev_ = nullptr;
  MatchEntry* next_ = nullptr;
  const MatchList* owner_ = nullptr;  // the list holding this entry, or null
};

// Doubly linked list of MatchEntry in insertion order (the untyped core of MatchQueue).
class MatchList {
 public:
  MatchList() = default;
  MatchList(const MatchList&) = delete;
  MatchList& operator=(const MatchList&) = delete;
  ~MatchList();  // unlinks every entry (they stay alive: not owned)

  // Appends e; false (nothing done) if e is null or already in a list.
  bool PushBack(MatchEntry* e);
  // Unlinks e; false (nothing done) if e is not in this list.
  bool Remove(MatchEntry* e);
  bool Contains(const MatchEntry* e) const { return e != nullptr && e->owner_ == this; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 protected:
  MatchEntry* head() const { return head_; }
  static MatchEntry* Next(const MatchEntry* e) { return e->next_; }

 private:
  MatchEntry* head_ = nullptr;
  MatchEntry* tail_ = nullptr;
  size_t size_ = 0;
};

// A typed queue. kEntriesArePatterns: entries are receive patterns searched with a message's
// envelope (the posted queue); otherwise entries are envelopes searched with a receive's pattern
// (the unexpected queue).
template <class T, bool kEntriesArePatterns>
class MatchQueue : private MatchList {
  static_assert(std::is_base_of<MatchEntry, T>::value, "queued types derive from MatchEntry");

 public:
  using MatchList::empty;
  using MatchList::size;

  bool PushBack(T* e) { return MatchList::PushBack(e); }
  bool Remove(T* e) { return MatchList::Remove(e); }
  bool Contains(const T* e) const { return MatchList::Contains(e); }
  T* front() const { return static_cast<T*>(head()); }

  // Earliest entry matching `key` (an envelope for the posted queue, a pattern for the
  // unexpected queue), or null. Leaves it queued: a probe.
  T* Find(const MatchKey& key) const {
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

  // fn(T*) for every entry in order; fn may Remove the entry it was given (e.g. failing every
  // receive posted for a peer that died).
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

#include "transport/match.h"

namespace mpigpu {

std::string ToString(const MatchKey& key) {
  const std::string source =
      key.source == kMatchAnySource ? "ANY" : std::to_string(key.source);
  const std::string tag = key.tag == kMatchAnyTag ? "ANY" : std::to_string(key.tag);
  return "(context " + std::to_string(key.context) + ", source " + source + ", tag " + tag + ")";
}

MatchList::~MatchList() {
  while (head_ != nullptr) Remove(head_);
}

bool MatchList::PushBack(MatchEntry* e) {
  if (e == nullptr || e->owner_ != nullptr) return false;
  e->owner_ = this;
  e->prev_ = tail_;
  e->next_ = nullptr;
  if (tail_ != nullptr) {
    tail_->next_ = e;
  } else {
    head_ = e;
  }
  tail_ = e;
  ++size_;
  return true;
}

bool MatchList::Remove(MatchEntry* e) {
  if (!Contains(e)) return false;
  (e->prev_ != nullptr ? e->prev_->next_ : head_) = e->next_;
  (e->next_ != nullptr ? e->next_->prev_ : tail_) = e->prev_;
  e->prev_ = e->next_ = nullptr;
  e->owner_ = nullptr;
  --size_;
  return true;
}

}  // namespace mpigpu

// Tag matching: wildcards, non-overtaking order, context isolation, probe, list hygiene.
#include <deque>
#include <memory>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "transport/match.h"

namespace mpigpu {
namespace {

struct Entry : MatchEntry {
  Entry(int context, int source, int tag, int id_in) : id(id_in) { key = {context, source, tag}; }
  int id;
};

constexpr int kAny = kMatchAnySource;
constexpr int kAnyTag = kMatchAnyTag;

TEST(MatchTest, KeyMatchesRules) {
  EXPECT_TRUE(KeyMatches({0, 1, 5}, {0, 1, 5}));
  EXPECT_TRUE(KeyMatches({0, kAny, 5}, {0, 3, 5}));
  EXPECT_TRUE(KeyMatches({0, 1, kAnyTag}, {0, 1, 0}));
  EXPECT_TRUE(KeyMatches({0, kAny, kAnyTag}, {0, 7, 1 << 29}));
  EXPECT_FALSE(KeyMatches({0, 1, 5}, {0, 2, 5}));
  EXPECT_FALSE(KeyMatches({0, 1, 5}, {0, 1, 6}));
  EXPECT_FALSE(KeyMatches({0, kAny, kAnyTag}, {1, 1, 5}));  // other communicator
  EXPECT_FALSE(KeyMatches({0, 1, kAnyTag}, {0, 1, -5}));    // internal tags stay out of reach
  EXPECT_TRUE(KeyMatches({0, 1, -5}, {0, 1, -5}));
}

TEST(MatchTest, IncomingMessageTakesTheOldestMatchingReceive) {
  PostedQueue<Entry> posted;
  Entry r1(0, 1, 5, 1), r2(0, kAny, 5, 2), r3(0, 1, kAnyTag, 3), r4(0, 2, 5, 4);
  for (Entry* e : {&r1, &r2, &r3, &r4}) ASSERT_TRUE(posted.PushBack(e));
  EXPECT_EQ(posted.FindAndRemove({0, 1, 5})->id, 1);
  EXPECT_EQ(posted.FindAndRemove({0, 1, 5})->id, 2);
  EXPECT_EQ(posted.FindAndRemove({0, 1, 5})->id, 3);
  EXPECT_EQ(posted.FindAndRemove({0, 1, 5}), nullptr);
  EXPECT_EQ(posted.FindAndRemove({1, 2, 5}), nullptr);  // wrong context
  EXPECT_EQ(posted.FindAndRemove({0, 2, 5})->id, 4);
  EXPECT_TRUE(posted.empty());
}

TEST(MatchTest, NewReceiveTakesTheEarliestArrival) {
  UnexpectedQueue<Entry> unexpected;
  Entry a(0, 1, 1, 1), b(0, 2, 1, 2), c(0, 1, 2, 3), d(0, 1, 1, 4), e(0, 2, 1, 5);
  for (Entry* m : {&a, &b, &c, &d, &e}) ASSERT_TRUE(unexpected.PushBack(m));
  EXPECT_EQ(unexpected.FindAndRemove({0, 1, 1})->id, 1);      // (1,1) in sending order
  EXPECT_EQ(unexpected.FindAndRemove({0, kAny, 1})->id, 2);   // earliest tag 1 from anyone
  EXPECT_EQ(unexpected.FindAndRemove({0, 1, kAnyTag})->id, 3);
  EXPECT_EQ(unexpected.FindAndRemove({0, 1, 1})->id, 4);
  EXPECT_EQ(unexpected.FindAndRemove({0, 1, 1}), nullptr);
  EXPECT_EQ(unexpected.FindAndRemove({0, kAny, kAnyTag})->id, 5);
  EXPECT_EQ(unexpected.size(), 0u);
}

TEST(MatchTest, ContextsNeverMatchAcrossCommunicators) {
  UnexpectedQueue<Entry> unexpected;
  Entry m0(7, 0, 0, 1), m1(8, 0, 0, 2);
  ASSERT_TRUE(unexpected.PushBack(&m0));
  ASSERT_TRUE(unexpected.PushBack(&m1));
  EXPECT_EQ(unexpected.Find({9, kAny, kAnyTag}), nullptr);
  EXPECT_EQ(unexpected.FindAndRemove({8, kAny, kAnyTag})->id, 2);
  EXPECT_EQ(unexpected.FindAndRemove({8, kAny, kAnyTag}), nullptr);
  EXPECT_EQ(unexpected.FindAndRemove({7, 0, 0})->id, 1);
}

TEST(MatchTest, ProbeFindsWithoutRemoving) {
  UnexpectedQueue<Entry> unexpected;
  Entry a(0, 3, 9, 1), b(0, 3, 9, 2);
  ASSERT_TRUE(unexpected.PushBack(&a));
  ASSERT_TRUE(unexpected.PushBack(&b));
  EXPECT_EQ(unexpected.Find({0, kAny, 9}), &a);
  EXPECT_EQ(unexpected.Find({0, 3, kAnyTag}), &a);
  EXPECT_EQ(unexpected.size(), 2u);
  // The receive after a probe gets the probed message.
  EXPECT_EQ(unexpected.FindAndRemove({0, 3, 9}), &a);
  EXPECT_EQ(unexpected.Find({0, 3, 9}), &b);
}

TEST(MatchTest, ListHygiene) {
  PostedQueue<Entry> q1, q2;
  Entry a(0, 0, 0, 1), b(0, 0, 0, 2), c(0, 0, 0, 3);
  EXPECT_FALSE(q1.PushBack(nullptr));
  ASSERT_TRUE(q1.PushBack(&a));
  EXPECT_FALSE(q1.PushBack(&a));  // already queued
  EXPECT_FALSE(q2.PushBack(&a));  // in another queue
  ASSERT_TRUE(q1.PushBack(&b));
  ASSERT_TRUE(q1.PushBack(&c));
  EXPECT_FALSE(q2.Remove(&b));    // not in q2
  EXPECT_TRUE(q1.Remove(&b));     // from the middle
  EXPECT_FALSE(q1.Remove(&b));
  EXPECT_FALSE(q1.Contains(&b));
  EXPECT_EQ(q1.size(), 2u);
  EXPECT_EQ(q1.front(), &a);
  Entry copy = a;  // a copy is in no list
  EXPECT_FALSE(q1.Contains(&copy));
  EXPECT_TRUE(q2.PushBack(&copy));
  // ForEach may remove the entry it is given.
  std::vector<int> ids;
  q1.ForEach([&](Entry* e) {
    ids.push_back(e->id);
    EXPECT_TRUE(q1.Remove(e));
  });
  EXPECT_EQ(ids, (std::vector<int>{1, 3}));
  EXPECT_TRUE(q1.empty());
  {
    UnexpectedQueue<Entry> gone;
    ASSERT_TRUE(gone.PushBack(&a));
  }  // the destructor unlinks
  EXPECT_TRUE(q1.PushBack(&a));
}

// Random pushes and searches against a plain reference model (vectors searched front to back).
TEST(MatchTest, RandomOperationsAgreeWithAReferenceModel) {
  std::mt19937 rng(12345);
  PostedQueue<Entry> posted;
  UnexpectedQueue<Entry> unexpected;
  std::deque<std::unique_ptr<Entry>> storage;
  std::vector<Entry*> ref_posted, ref_unexpected;
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  int next_id = 0;
  for (int step = 0; step < 20000; ++step) {
    const int ctx = pick(2), src = pick(3), tag = pick(3);
    if (pick(2) == 0) {
      // A receive: pattern with wildcards sometimes.
      MatchKey pattern{ctx, pick(4) == 0 ? kAny : src, pick(4) == 0 ? kAnyTag : tag};
      const bool probe = pick(5) == 0;
      Entry* want = nullptr;
      size_t want_index = 0;
      for (size_t i = 0; i < ref_unexpected.size(); ++i) {
        if (KeyMatches(pattern, ref_unexpected[i]->key)) {
          want = ref_unexpected[i];
          want_index = i;
          break;
        }
      }
      Entry* got = probe ? unexpected.Find(pattern) : unexpected.FindAndRemove(pattern);
      ASSERT_EQ(got, want) << "step " << step;
      if (want != nullptr && !probe) {
        ref_unexpected.erase(ref_unexpected.begin() + want_index);
      } else if (want == nullptr && !probe) {
        storage.push_back(std::make_unique<Entry>(pattern.context, pattern.source, pattern.tag,
                                                  next_id++));
        ASSERT_TRUE(posted.PushBack(storage.back().get()));
        ref_posted.push_back(storage.back().get());
      }
    } else {
      // A message arrives.
      MatchKey envelope{ctx, src, tag};
      Entry* want = nullptr;
      size_t want_index = 0;
      for (size_t i = 0; i < ref_posted.size(); ++i) {
        if (KeyMatches(ref_posted[i]->key, envelope)) {
          want = ref_posted[i];
          want_index = i;
          break;
        }
      }
      Entry* got = posted.FindAndRemove(envelope);
      ASSERT_EQ(got, want) << "step " << step;
      if (want != nullptr) {
        ref_posted.erase(ref_posted.begin() + want_index);
      } else {
        storage.push_back(std::make_unique<Entry>(ctx, src, tag, next_id++));
        ASSERT_TRUE(unexpected.PushBack(storage.back().get()));
        ref_unexpected.push_back(storage.back().get());
      }
    }
    ASSERT_EQ(posted.size(), ref_posted.size());
    ASSERT_EQ(unexpected.size(), ref_unexpected.size());
  }
}

TEST(MatchTest, KeyToString) {
  EXPECT_EQ(ToString(MatchKey{3, kAny, kAnyTag}), "(context 3, source ANY, tag ANY)");
  EXPECT_EQ(ToString(MatchKey{0, 1, 2}), "(context 0, source 1, tag 2)");
}

}  // namespace
}  // namespace mpigpu

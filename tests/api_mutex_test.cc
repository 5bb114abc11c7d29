// The API's futex mutex: mutual exclusion under contention (threads outnumber the CPUs, so
// holders are preempted and waiters sleep on the futex), and try_lock.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "mpigpu_api/api_mutex.h"

namespace mpigpu::api {
namespace {

TEST(ApiMutexTest, ThreadsNeverShareTheLockAndLoseNoUpdate) {
  ApiMutex mu;
  constexpr int kThreads = 6;
  constexpr int kRounds = 100000;
  long counter = 0;            // plain: only the lock orders its updates
  std::atomic<int> inside{0};  // threads between lock and unlock
  std::atomic<int> overlaps{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<ApiMutex> lock(mu);
        if (inside.fetch_add(1, std::memory_order_relaxed) != 0)
          overlaps.fetch_add(1, std::memory_order_relaxed);
        ++counter;
        if (i % 1000 == 0) std::this_thread::yield();  // preempted while holding it
        inside.fetch_sub(1, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(counter, static_cast<long>(kThreads) * kRounds);
}

TEST(ApiMutexTest, TryLockFailsWhileHeldElsewhere) {
  ApiMutex mu;
  ASSERT_TRUE(mu.try_lock());
  bool other = true;
  std::thread([&] { other = mu.try_lock(); }).join();
  EXPECT_FALSE(other);
  mu.unlock();
  std::thread([&] {
    other = mu.try_lock();
    if (other) mu.unlock();
  }).join();
  EXPECT_TRUE(other);
}

// A thread that sleeps on the lock wakes when the holder lets go.
TEST(ApiMutexTest, SleeperWakesOnUnlock) {
  ApiMutex mu;
  mu.lock();
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    std::lock_guard<ApiMutex> lock(mu);
    got.store(true, std::memory_order_relaxed);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let it reach the futex
  EXPECT_FALSE(got.load());
  mu.unlock();
  waiter.join();
  EXPECT_TRUE(got.load());
}

}  // namespace
}  // namespace mpigpu::api

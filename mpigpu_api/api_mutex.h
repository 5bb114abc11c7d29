// The lock of the public API (one per process, taken by every call): a futex mutex, Drepper's
// "Futexes Are Tricky" mutex 3, as Rust's std mutex is on Linux. Uncontended, lock and unlock
// are one atomic instruction and a few others each, where glibc's pthread mutex (std::mutex)
// costs about 50 instructions more per lock/unlock pair (callgrind: `msgcost api`, 3 calls per
// message, went from 2603 to 2440 instructions). Not recursive, no owner checks;
// process-private (FUTEX_*_PRIVATE).
// Ordering: state_ is written by whoever takes or gives back the lock. unlock's release exchange
// pairs with the acquire of the next lock's compare-exchange (or exchange, contended), so the
// next holder sees everything the previous one wrote under the lock.
#pragma once

#include <atomic>

namespace mpigpu::api {

class ApiMutex {
 public:
  ApiMutex() = default;
  ApiMutex(const ApiMutex&) = delete;
  ApiMutex& operator=(const ApiMutex&) = delete;

  void lock() {
    int expected = kFree;
    if (!state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire,
                                        std::memory_order_relaxed))
      LockContended();
  }
  bool try_lock() {
    int expected = kFree;
    return state_.compare_exchange_strong(expected, kLocked, std::memory_order_acquire,
                                          std::memory_order_relaxed);
  }
  void unlock() {
    // kContended: a thread may sleep on the lock (or just did and took it): wake one.
    if (state_.exchange(kFree, std::memory_order_release) == kContended) WakeOne();
  }

 private:
  enum : int { kFree = 0, kLocked = 1, kContended = 2 };
  void LockContended();
  void WakeOne();

  std::atomic<int> state_{kFree};
};

}  // namespace mpigpu::api

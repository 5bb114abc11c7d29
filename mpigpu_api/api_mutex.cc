#include "mpigpu_api/api_mutex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace mpigpu::api {
namespace {

// The futex word is the atomic's int itself.
static_assert(sizeof(std::atomic<int>) == sizeof(int) && std::atomic<int>::is_always_lock_free,
              "std::atomic<int> must be a plain int to serve as a futex word");

int* FutexWord(std::atomic<int>* a) { return reinterpret_cast<int*>(a); }

}  // namespace

void ApiMutex::LockContended() {
  // Whoever takes the lock from here leaves it marked kContended (others may sleep on it), so
  // its unlock wakes one: at worst a wake-up in vain. FUTEX_WAIT returns at once if the word is
  // no longer kContended, so a release between the exchange and the wait is not missed.
  while (state_.exchange(kContended, std::memory_order_acquire) != kFree)
    syscall(SYS_futex, FutexWord(&state_), FUTEX_WAIT_PRIVATE, kContended, nullptr, nullptr, 0);
}

void ApiMutex::WakeOne() {
  syscall(SYS_futex, FutexWord(&state_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace mpigpu::api

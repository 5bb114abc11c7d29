#include "ringbuf/populate.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

namespace mpigpu {
namespace {

#ifdef MADV_POPULATE_WRITE
constexpr int kMadvPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kMadvPopulateWrite = 23;  // Linux 5.14
#endif

}  // namespace

Status PopulateForWrite(void* addr, size_t bytes, const std::string& what) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(addr) + bytes;
  if (madvise(reinterpret_cast<void*>(begin), end - begin, kMadvPopulateWrite) == 0)
    return Status::Ok();
  const int err = errno;
  if (err == ENOMEM || err == EFAULT || err == ENOSPC)
    return Status(Err::kNoMemory, "shared memory is full: no room for " + what);
  if (err != EINVAL) return SysError("madvise(MADV_POPULATE_WRITE)", err);
  for (uintptr_t p = begin; p < end; p += page)
    reinterpret_cast<std::atomic<uint64_t>*>(p)->fetch_add(0, std::memory_order_relaxed);
  return Status::Ok();
}

}  // namespace mpigpu

#include "ringbuf/populate.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <vector>

namespace mpigpu {
namespace {

#ifdef MADV_POPULATE_WRITE
constexpr int kMadvPopulateWrite = MADV_POPULATE_WRITE;
#else
constexpr int kMadvPopulateWrite = 23;  // Linux 5.14
#endif

std::atomic<bool> forced{false};

struct File {
  uintptr_t begin, end;
  int fd;
};
std::mutex files_mu;
std::vector<File>& Files() {
  static auto* files = new std::vector<File>;  // never destroyed: used until exit
  return *files;
}

bool KernelLacksPopulateWrite() {
  static const bool lacks = [] {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    const bool einval = madvise(p, page, kMadvPopulateWrite) != 0 && errno == EINVAL;
    munmap(p, page);
    return einval;
  }();
  return lacks;
}

// posix_fallocate over the registered file behind [begin, end), if any: the pages then exist,
// so touching them cannot raise SIGBUS.
Status Reserve(uintptr_t begin, uintptr_t end, const std::string& what) {
  std::lock_guard<std::mutex> lock(files_mu);
  for (const File& f : Files()) {
    if (begin < f.begin || end > f.end) continue;
    const int err = posix_fallocate(f.fd, static_cast<off_t>(begin - f.begin),
                                    static_cast<off_t>(end - begin));
    if (err == ENOSPC || err == ENOMEM)
      return Status(Err::kNoMemory, "shared memory is full: no room for " + what);
    if (err != 0) return SysError("posix_fallocate(shared memory)", err);
    return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

bool PopulateFallsBack() { return forced.load() || KernelLacksPopulateWrite(); }

void ForcePopulateFallbackForTesting(bool on) { forced.store(on); }

void RegisterPopulateFile(const void* base, size_t bytes, int fd) {
  const auto b = reinterpret_cast<uintptr_t>(base);
  std::lock_guard<std::mutex> lock(files_mu);
  Files().push_back({b, b + bytes, fd});
}

void UnregisterPopulateFile(const void* base) {
  std::lock_guard<std::mutex> lock(files_mu);
  auto& files = Files();
  for (size_t i = 0; i < files.size(); ++i)
    if (files[i].begin == reinterpret_cast<uintptr_t>(base)) {
      ::close(files[i].fd);
      files.erase(files.begin() + static_cast<long>(i));
      return;
    }
}

Status PopulateForWrite(void* addr, size_t bytes, const std::string& what) {
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(addr) & ~(page - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(addr) + bytes;
  if (!forced.load()) {
    if (madvise(reinterpret_cast<void*>(begin), end - begin, kMadvPopulateWrite) == 0)
      return Status::Ok();
    const int err = errno;
    if (err == ENOMEM || err == EFAULT || err == ENOSPC)
      return Status(Err::kNoMemory, "shared memory is full: no room for " + what);
    if (err != EINVAL) return SysError("madvise(MADV_POPULATE_WRITE)", err);
  }
  MPIGPU_RETURN_IF_ERROR(Reserve(begin, end, what));
  for (uintptr_t p = begin; p < end; p += page)
    reinterpret_cast<std::atomic<uint64_t>*>(p)->fetch_add(0, std::memory_order_relaxed);
  return Status::Ok();
}

}  // namespace mpigpu

#include "transport/lmt/cma.h"

#include <sys/uio.h>

#include <cerrno>
#include <string>

namespace mpigpu::transport {

void CmaBegin(CmaSlot* slot, uint32_t gen) {
  slot->done.store(0, std::memory_order_relaxed);
  slot->failed.store(0, std::memory_order_relaxed);
  // Publishes done = 0 and failed = 0 with the new generation.
  slot->claim.store(uint64_t{gen} << 32, std::memory_order_release);
}

size_t CmaCopy(bool reader, pid_t peer, char* local, uint64_t remote, size_t len) {
  size_t copied = 0;
  while (copied < len) {
    iovec l{local + copied, len - copied};
    iovec r{reinterpret_cast<void*>(remote + copied), len - copied};
    ssize_t n = reader ? process_vm_readv(peer, &l, 1, &r, 1, 0)
                       : process_vm_writev(peer, &l, 1, &r, 1, 0);
    if (n <= 0) {
      if (n == 0) errno = EFAULT;
      break;
    }
    copied += static_cast<size_t>(n);
  }
  return copied;
}

Status CmaCopyChunks(CmaSlot* slot, uint32_t gen, bool reader, pid_t peer, char* local,
                     uint64_t remote, uint64_t total, size_t chunk) {
  const uint64_t chunks = (total + chunk - 1) / chunk;
  uint64_t word = slot->claim.load(std::memory_order_acquire);
  for (;;) {
    if ((word >> 32) != gen || (word & 0xffffffffu) >= chunks) return Status::Ok();
    if (!slot->claim.compare_exchange_weak(word, word + 1, std::memory_order_acq_rel,
                                           std::memory_order_acquire))
      continue;  // `word` now holds the current value
    const uint64_t off = (word & 0xffffffffu) * chunk;
    const size_t len = static_cast<size_t>(total - off < chunk ? total - off : chunk);
    if (CmaCopy(reader, peer, local + off, remote + off, len) != len) {
      int err = errno;
      int32_t none = 0;
      slot->failed.compare_exchange_strong(none, err, std::memory_order_release,
                                           std::memory_order_relaxed);
      return SysError(reader ? "process_vm_readv (cooperative copy)"
                             : "process_vm_writev (cooperative copy)",
                      err);
    }
    slot->done.fetch_add(len, std::memory_order_release);
    word = slot->claim.load(std::memory_order_acquire);
  }
}

bool CmaFinished(const CmaSlot* slot, uint32_t gen, uint64_t total) {
  if ((slot->claim.load(std::memory_order_acquire) >> 32) != gen) return true;
  return slot->done.load(std::memory_order_acquire) >= total;
}

int CmaFailed(const CmaSlot* slot, uint32_t gen) {
  if ((slot->claim.load(std::memory_order_acquire) >> 32) != gen) return 0;
  return slot->failed.load(std::memory_order_acquire);
}

}  // namespace mpigpu::transport

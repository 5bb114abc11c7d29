// Cooperative single-copy (CMA) transfers between the host buffers of two processes.
//
// The receiver reads chunks of the sender's buffer with process_vm_readv while the sender writes
// chunks into the receiver's buffer with process_vm_writev; both claim chunks from one counter in
// the pair's CmaSlot, so two CPUs copy at once and neither waits for the other: a sender that is
// busy elsewhere simply claims nothing, and the receiver copies everything itself.
//
// CmaSlot lives in the job segment, one per ordered pair (sender -> receiver). Fields:
//   - claim: (generation << 32) | next chunk. The receiver stores a new generation with chunk 0
//     (release) before it tells the sender about the transfer; both sides then claim with a CAS
//     that keeps the generation, so a late claim from an old transfer can never take a chunk of
//     a new one. The CAS is acq_rel: it pairs with the receiver's release of the generation.
//   - done: bytes copied in this generation; each side adds its chunk after the copy (release);
//     Finished() is an acquire load that pairs with those adds, so when it says done, every byte
//     is in the receiver's buffer and the sender's buffer is no longer read.
//   - failed: errno of the first failed copy of this generation (release store), 0 otherwise.
// Invariant: one transfer per slot at a time; the receiver starts the next one only after
// Finished() of the previous one (or after it failed).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "memcopy/status.h"

namespace mpigpu::transport {

struct alignas(64) CmaSlot {
  std::atomic<uint64_t> claim;
  std::atomic<uint64_t> done;
  std::atomic<int32_t> failed;
};
static_assert(std::is_standard_layout<CmaSlot>::value, "shared layout");
static_assert(sizeof(CmaSlot) == 64, "one slot per cache line");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared between processes");

// Receiver: opens generation `gen` of the slot (gen != 0).
void CmaBegin(CmaSlot* slot, uint32_t gen);

// Either side: claims chunks of `chunk` bytes of a `total`-byte transfer until none is left and
// copies each: the reader with process_vm_readv (local = its buffer, remote = the sender's), the
// writer with process_vm_writev (local = its buffer, remote = the receiver's). Returns the first
// copy error (also recorded in the slot).
Status CmaCopyChunks(CmaSlot* slot, uint32_t gen, bool reader, pid_t peer, char* local,
                     uint64_t remote, uint64_t total, size_t chunk);

// True once every byte of generation `gen` is copied, or the slot moved on to a newer generation.
bool CmaFinished(const CmaSlot* slot, uint32_t gen, uint64_t total);

// A copy of this generation failed: its errno, else 0.
int CmaFailed(const CmaSlot* slot, uint32_t gen);

// One process_vm_readv/writev of [off, off + len), repeated until all is copied (the kernel may
// copy less than asked). Returns bytes copied; on failure fewer, with errno set.
size_t CmaCopy(bool reader, pid_t peer, char* local, uint64_t remote, size_t len);

}  // namespace mpigpu::transport

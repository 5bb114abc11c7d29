// DeviceCopier: a resident copy kernel for small (and strided) device-to-device copies.
//
// Every copy-engine operation costs 7-10 us on the H200 node however small, while a kernel that
// is already running and polls a trigger in pinned host memory copies a few KiB over NVLink and
// reports back in 3-4 us (ANCHORS.md). The copier is that kernel: one block on this process's
// GPU, on its own non-blocking stream, fed through a mailbox in pinned, mapped host memory.
//
// The block: one warp polls the mailbox, 512 worker threads copy. The poller loops on its reads
// alone (no block-wide barrier per poll) and reads the next copy while the workers run the
// current one; the hand-over between them is described at BlockState in device_copier.cu.
// (Several polling warps at staggered times were tried on one H200 on 2026-11-24: with 2, 3
// and 4 of them an 8-byte copy took 4.5, 8.0 and 10.7 us, against 3.5 us with one:
// benchmarks/results/2026-11-24-copier-polling-h200/.)
//
// Safety:
//   - It leaves after MPIGPU_GPU_COPIER_IDLE_US without work, so an application's
//     cudaDeviceSynchronize() waits at most that long for it; the next Submit relaunches it.
//     Release() asks it to leave as soon as it is idle: the engine does so when the program
//     leaves the library for a while (a blocking collective ended), where a program typically
//     synchronises its GPU next and would otherwise wait out the idle time (550 us per small
//     device Allgather on 2026-11-28, 4xH200, in a loop that synchronised the device each call).
//   - It holds one SM while it runs; Stop() (Finalize) ends it at once.
//   - A copy through a bad address (a pointer tagged GPU that is not device memory) ends the
//     kernel with a sticky CUDA error: its copies never finish. Check() finds that (a driver
//     call: the caller rates it); from then on Poll() and Submit() return that error, so every
//     waiting copy fails instead of hanging.
//
// Mailbox protocol (host memory, written through the CPU's cache-coherent view and read by the
// GPU over PCIe):
//   - slot[(t - 1) % kSlots] holds copy number t in "LL" words: each aligned 8-byte word carries
//     32 bits of the descriptor and the low 32 bits of t. The host writes each word with one
//     8-byte store; the kernel's warp reads every word (and `stop`) at once and takes the slot
//     only when all words carry t. No fence is needed between fields and a flag: every word
//     proves itself, and one PCIe round trip both polls and fetches the descriptor.
//   - `done` = the last copy number finished; the kernel stores it after its copies and a system
//     fence, so the data is in place when the host sees it (acquire fence on the host). A copy's
//     notify word is stored after the same fence, before `done`.
//   - The descriptor is twelve 32-bit values (so a slot is 96 bytes: a full 128-byte slot was
//     1.1 us slower per copy on one H200, 2026-11-24): addresses take two, pitches, width and
//     height one each (Submit refuses larger ones), the notify index and value one each.
//   - Leaving: the kernel stores `exiting = 1`, fences, and reads the next slot once more; the
//     host stores a slot's words, fences, and reads `exiting`. Of these two store-fence-load
//     pairs at least one sees the other's store (Dekker), so a submitted copy is never stranded:
//     either the kernel sees all its words and stays, or the host sees `exiting` and relaunches.
//   - `stop`: the host asks the kernel to leave now; `release`: to leave once idle (the idle
//     timeout cut short). Both are read in the same round trip as the slot.
// One thread of one process uses a DeviceCopier.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "memcopy/status.h"

namespace mpigpu::transport {

constexpr uint32_t kNoNotifyIndex = ~0u;

// One strided copy: `height` rows of `width` bytes; rows `dpitch` / `spitch` bytes apart. With a
// `notify_index`, the copier also stores `notify_value` into that word of its notify region
// (DeviceCopier::Init) once the copy is done; copy engines ignore both.
struct CopyDesc {
  void* dst;
  const void* src;
  size_t dpitch;
  size_t spitch;
  size_t width;
  size_t height;
  uint32_t notify_index = kNoNotifyIndex;
  uint32_t notify_value = 0;
};

struct CopierMailbox;

class DeviceCopier {
 public:
  static constexpr int kSlots = 64;

  DeviceCopier() = default;
  ~DeviceCopier();
  DeviceCopier(const DeviceCopier&) = delete;
  DeviceCopier& operator=(const DeviceCopier&) = delete;

  // Sets up the mailbox and stream for `device` (the kernel starts on the first Submit).
  // `notify_words` / `notify_count`: the notify region, 32-bit words of pinned host memory as
  // this device addresses them (null: copies carry no notify index). kNoGpu without a device.
  Status Init(int device, uint64_t idle_us, uint32_t* notify_words = nullptr,
              uint32_t notify_count = 0);
  bool ready() const { return mailbox_ != nullptr; }
  int device() const { return device_; }

  // Queues a copy between device-accessible addresses (device memory of this GPU or mapped from
  // a peer). *queued = false (and nothing done) when every slot is in flight, or a pitch, the
  // width or the height exceeds 32 bits: use another path. kInvalidArg: a notify index outside
  // the region; the kernel's fault once Check() found one.
  Status Submit(const CopyDesc& d, uint64_t* ticket, bool* queued);
  // True once copy `ticket` and every earlier one finished.
  bool Done(uint64_t ticket) const;
  // Done(ticket) as *done; if not done and the kernel faulted (Check), that error.
  Status Poll(uint64_t ticket, bool* done) const;
  // Asks the driver whether the running kernel faulted; the fault, kept for good, or Ok.
  Status Check();
  // Asks the kernel to leave once it has no copy to do (does not wait); the next Submit
  // relaunches it if it left.
  void Release();
  // Ends the kernel (waits for it).
  Status Stop();

  struct Stats {
    uint64_t copies = 0;
    uint64_t launches = 0;
  };
  Stats stats() const { return stats_; }

 private:
  Status EnsureRunning();
  Status Launch();

  int device_ = -1;
  uint64_t idle_ns_ = 0;
  uint32_t* notify_words_ = nullptr;  // device addresses
  uint32_t notify_count_ = 0;
  CopierMailbox* mailbox_ = nullptr;  // pinned, mapped host memory
  cudaStream_t stream_ = nullptr;
  uint64_t submitted_ = 0;  // last copy number handed out
  bool running_ = false;
  Status fault_;  // the kernel's sticky error, once seen
  Stats stats_;
};

}  // namespace mpigpu::transport

#include "transport/lmt/device_copier.h"

#include <atomic>
#include <cstddef>
#include <new>
#include <string>

#include "memcopy/device_scope.h"
#include "memcopy/memcopy.h"

namespace mpigpu::transport {

// Pinned, mapped host memory shared by this process's CPU thread and its copier kernel.
//
// A slot is written in "LL" form (NCCL's low-latency protocol): each 8-byte word carries 32 bits
// of the descriptor in its low half and the copy number's low 32 bits in its high half. An
// aligned 8-byte store (CPU) and load (GPU) is single-copy atomic, so a word whose high half
// equals the copy number holds that copy's bits, whatever order the words arrive in. The kernel
// reads all words and `stop` with parallel lanes: one PCIe round trip both polls and fetches the
// descriptor (a seq word, a fence and a second read of the fields cost two more).
//
// The descriptor: twelve 32-bit values, dst and src (two each, low half first), dpitch, spitch,
// width, height, notify index, notify value, and two zero words (a 16-word slot, one whole
// 128-byte line, made every copy about 1.2 us slower on one H200, 2026-11-24).
constexpr int kSlotWords = 12;
struct alignas(128) CopierSlot {
  volatile uint64_t word[kSlotWords];
};

struct CopierMailbox {
  CopierSlot slots[DeviceCopier::kSlots];
  alignas(64) volatile uint64_t done;     // kernel: last copy number finished
  alignas(64) volatile uint32_t exiting;  // kernel: 1 while leaving (or gone)
  alignas(64) volatile uint32_t stop;     // host: 1 = leave now
  // host: 1 = leave as soon as idle, without waiting out idle_ns (Release); 0 again at the next
  // Submit. The kernel leaves through the same exiting handshake as on its idle timeout.
  alignas(64) volatile uint32_t release;
};

namespace {

// The block: warp 0 polls the mailbox, kWorkerThreads threads (the warps after it) copy.
constexpr int kWorkerThreads = 512;
constexpr int kThreads = 32 + kWorkerThreads;

__device__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The largest power-of-two unit (<= 16 bytes) that divides every address, pitch and width.
__device__ unsigned UnitOf(uint64_t dst, uint64_t src, uint64_t dp, uint64_t sp, uint64_t w) {
  uint64_t bits = dst | src | w | (dp) | (sp);
  if ((bits & 15) == 0) return 16;
  if ((bits & 7) == 0) return 8;
  if ((bits & 3) == 0) return 4;
  return 1;
}

// Element i of a width x height copy (per_row elements of T per row), from its row's start.
template <typename T>
__device__ T* RowElem(char* base, uint64_t pitch, uint64_t per_row, uint64_t i) {
  return reinterpret_cast<T*>(base + (i / per_row) * pitch) + i % per_row;
}

// Worker `tid` of kWorkerThreads copies its share. Each loads kBatch elements before it stores
// any: the source is often a peer GPU's memory, where every load waits a round trip over NVLink
// (about a microsecond), so a halo column of 2050 rows costs one round trip instead of one per
// 512 rows.
template <typename T>
__device__ void CopyRows(unsigned tid, char* dst, const char* src, uint64_t dp, uint64_t sp,
                         uint64_t width, uint64_t height) {
  constexpr int kBatch = sizeof(T) == 16 ? 4 : 8;  // 16-byte elements: 4 fill the registers
  const uint64_t per_row = width / sizeof(T);
  const uint64_t total = per_row * height;
  constexpr uint64_t step = kWorkerThreads;
  char* from = const_cast<char*>(src);
  for (uint64_t first = tid; first < total; first += step * kBatch) {
    T v[kBatch];
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const uint64_t i = first + k * step;
      if (i < total)
        v[k] = height == 1 ? reinterpret_cast<const T*>(src)[i] : *RowElem<T>(from, sp, per_row, i);
    }
#pragma unroll
    for (int k = 0; k < kBatch; ++k) {
      const uint64_t i = first + k * step;
      if (i < total) {
        if (height == 1) reinterpret_cast<T*>(dst)[i] = v[k];
        else *RowElem<T>(dst, dp, per_row, i) = v[k];
      }
    }
  }
}

// What one warp read of a slot and `stop` in one round trip.
struct SlotRead {
  bool ready;     // every word carries copy number t: `half` is this lane's 32 bits of it
  bool stop;      // the host asked the kernel to leave
  bool release;   // the host asked the kernel to leave once idle
  uint32_t half;  // lanes < kSlotWords: word `lane`'s low half
};

__device__ SlotRead ReadSlot(const CopierMailbox* m, uint64_t t) {
  const unsigned lane = threadIdx.x % 32;
  const CopierSlot& slot = m->slots[(t - 1) % DeviceCopier::kSlots];
  uint64_t w = 0;
  bool stop = false, release = false;
  if (lane < kSlotWords) w = slot.word[lane];
  else if (lane == kSlotWords) stop = m->stop != 0;
  else if (lane == kSlotWords + 1) release = m->release != 0;
  const bool mine = lane >= kSlotWords || static_cast<uint32_t>(w >> 32) == static_cast<uint32_t>(t);
  return {__all_sync(0xffffffffu, mine) != 0, __any_sync(0xffffffffu, stop) != 0,
          __any_sync(0xffffffffu, release) != 0, static_cast<uint32_t>(w)};
}

// The block's shared state, between the poller and the workers:
//   - the poller, having read copy t = seen + 1 complete, writes its fields into f[t % 2], then
//     `seen = t` after a block fence; workers read f after they see `seen` (block fence again).
//   - f[t % 2] held copy t - 2: the poller looks for t only once `finished` >= t - 2, i.e. once
//     every worker has taken copy t - 2's fields (they do before the workers' barrier that
//     precedes `finished`).
//   - `leave` (stop, or idle): set by the poller after its last `seen`, so every worker sees the
//     same final `seen`, runs the copies up to it and returns; none waits at the workers'
//     barrier for one that left.
struct BlockState {
  volatile uint64_t seen;          // poller: last copy number whose fields are in f
  volatile uint64_t finished;      // worker 0: last copy number done (and stored to the mailbox)
  volatile uint64_t last_work_ns;  // worker 0: when the last copy finished
  volatile int leave;              // poller: 1 = return once the copies seen are done
  volatile uint32_t f[2][kSlotWords];
};

// The polling warp.
__device__ void Poll(CopierMailbox* m, BlockState& s, uint64_t idle_ns) {
  const unsigned lane = threadIdx.x;
  // Conditions on what worker 0 writes (finished, last_work_ns) are read by lane 0 alone and
  // broadcast: lanes reading different values would split the warp before its next vote.
  for (;;) {
    const uint64_t t = s.seen + 1;  // written by lane 0 before the loop's __syncwarp
    if (__shfl_sync(0xffffffffu, lane == 0 && t > s.finished + 2, 0))
      continue;  // both field buffers in use: wait for the workers
    SlotRead r = ReadSlot(m, t);
    const bool idle = lane == 0 && !r.ready && !r.stop && s.finished == s.seen &&
                      (r.release || GlobalTimerNs() - s.last_work_ns > idle_ns);
    if (__shfl_sync(0xffffffffu, idle, 0)) {
      // Leaving: store `exiting`, fence, look at the slot once more (Dekker with the host's
      // slot stores, fence, `exiting` load): a copy the host submitted meanwhile is either seen
      // here, or the host sees `exiting` and relaunches.
      if (lane == 0) m->exiting = 1;
      __syncwarp();
      __threadfence_system();
      r = ReadSlot(m, t);
      if (!r.ready) r.stop = true;
      else if (lane == 0) m->exiting = 0;  // staying for copy t
    }
    if (r.stop) {
      if (lane == 0) {
        __threadfence_block();  // the last `seen`, then `leave`
        s.leave = 1;
      }
      return;
    }
    if (!r.ready) continue;
    if (lane < kSlotWords) s.f[t % 2][lane] = r.half;
    __syncwarp();
    if (lane == 0) {
      __threadfence_block();  // the fields, then `seen`
      s.seen = t;
    }
    __syncwarp();
  }
}

// Worker `tid`: runs copies next, next + 1, ... as the poller publishes them.
__device__ void Work(CopierMailbox* m, uint32_t* notify_words, BlockState& s, unsigned tid,
                     uint64_t next) {
  for (;; ++next) {
    while (s.seen < next) {
      if (!s.leave) continue;
      __threadfence_block();  // `leave`, then the final `seen`
      if (s.seen < next) return;
    }
    __threadfence_block();  // `seen`, then the fields
    const volatile uint32_t* f = s.f[next % 2];
    const uint64_t dst_bits = uint64_t{f[0]} | (uint64_t{f[1]} << 32);
    const uint64_t src_bits = uint64_t{f[2]} | (uint64_t{f[3]} << 32);
    char* dst = reinterpret_cast<char*>(dst_bits);
    const char* src = reinterpret_cast<const char*>(src_bits);
    const uint64_t dp = f[4], sp = f[5], w = f[6], h = f[7];
    const uint32_t notify_index = f[8], notify_value = f[9];
    switch (UnitOf(dst_bits, src_bits, h > 1 ? dp : 0, h > 1 ? sp : 0, w)) {
      case 16: CopyRows<uint4>(tid, dst, src, dp, sp, w, h); break;
      case 8: CopyRows<uint2>(tid, dst, src, dp, sp, w, h); break;
      case 4: CopyRows<unsigned>(tid, dst, src, dp, sp, w, h); break;
      default: CopyRows<unsigned char>(tid, dst, src, dp, sp, w, h); break;
    }
    asm volatile("bar.sync 1, %0;" ::"r"(kWorkerThreads) : "memory");  // the workers only
    if (tid == 0) {
      __threadfence_system();  // the copy is visible before `done` (or the notify word) says so
      if (notify_index != kNoNotifyIndex)
        *static_cast<volatile uint32_t*>(notify_words + notify_index) = notify_value;
      m->done = next;
      s.last_work_ns = GlobalTimerNs();
      s.finished = next;
    }
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    CopierKernel(CopierMailbox* m, uint32_t* notify_words, uint64_t next, uint64_t idle_ns) {
  __shared__ BlockState s;
  if (threadIdx.x == 0) {
    s.seen = s.finished = next - 1;
    s.last_work_ns = GlobalTimerNs();
    s.leave = 0;
  }
  __syncthreads();
  if (threadIdx.x < 32) Poll(m, s, idle_ns);
  else Work(m, notify_words, s, threadIdx.x - 32, next);
}

}  // namespace

DeviceCopier::~DeviceCopier() {
  (void)Stop();
  if (stream_) cudaStreamDestroy(stream_);
  if (mailbox_) cudaFreeHost(mailbox_);
}

Status DeviceCopier::Init(int device, uint64_t idle_us, uint32_t* notify_words,
                          uint32_t notify_count) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    return Status(Err::kNoGpu, "no CUDA device for the resident copier");
  }
  if (device < 0 || device >= n)
    return Status(Err::kInvalidArg, "copier device " + std::to_string(device) + " is not in [0, " +
                                        std::to_string(n) + ")");
  device_ = device;
  idle_ns_ = idle_us * 1000;
  notify_words_ = notify_words;
  notify_count_ = notify_words ? notify_count : 0;
  void* p = nullptr;
  cudaError_t e = cudaHostAlloc(&p, sizeof(CopierMailbox), cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) return CudaFailure("cudaHostAlloc (copier mailbox)", e);
  mailbox_ = new (p) CopierMailbox();
  for (CopierSlot& s : mailbox_->slots)
    for (int i = 0; i < kSlotWords; ++i) s.word[i] = 0;  // copy numbers start at 1
  mailbox_->done = 0;
  mailbox_->exiting = 1;  // not running yet
  mailbox_->stop = 0;
  mailbox_->release = 0;
  DeviceScope scope(device_);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  if (e != cudaSuccess) return CudaFailure("cudaStreamCreateWithFlags (copier)", e);
  return Status::Ok();
}

Status DeviceCopier::Launch() {
  mailbox_->exiting = 0;
  mailbox_->stop = 0;
  mailbox_->release = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  CopierMailbox* dev_mailbox = nullptr;
  cudaError_t e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_mailbox), mailbox_, 0);
  if (e != cudaSuccess) return CudaFailure("cudaHostGetDevicePointer (copier mailbox)", e);
  uint64_t next = mailbox_->done + 1;
  uint64_t idle_ns = idle_ns_;
  // cudaLaunchKernel returns this launch's own result (cudaGetLastError after <<<>>> could
  // return an older error of the application's and make a running kernel look failed).
  uint32_t* notify_words = notify_words_;
  void* args[] = {&dev_mailbox, &notify_words, &next, &idle_ns};
  DeviceScope scope(device_);
  MPIGPU_RETURN_IF_ERROR(scope.status());
  e = cudaLaunchKernel(reinterpret_cast<const void*>(&CopierKernel), dim3(1), dim3(kThreads), args,
                       0, stream_);
  if (e != cudaSuccess) return CudaFailure("copier kernel launch", e);
  running_ = true;
  ++stats_.launches;
  return Status::Ok();
}

// After a slot was published: make sure a kernel will see it.
Status DeviceCopier::EnsureRunning() {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the slot stores, then the exiting load
  if (running_ && mailbox_->exiting == 0) return Status::Ok();
  if (running_) {
    // It is leaving, or has seen our copy and cleared `exiting` again: wait until we know which.
    for (;;) {
      cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) return fault_ = CudaFailure("copier kernel", q);
      if (mailbox_->exiting == 0) return Status::Ok();
    }
    running_ = false;
  }
  if (mailbox_->done >= submitted_) return Status::Ok();  // it finished everything before leaving
  return Launch();
}

Status DeviceCopier::Submit(const CopyDesc& d, uint64_t* ticket, bool* queued) {
  *queued = false;
  if (!mailbox_) return Status(Err::kInternal, "copier used before Init");
  if (!fault_.ok()) return fault_;
  if (d.notify_index != kNoNotifyIndex && d.notify_index >= notify_count_)
    return Status(Err::kInvalidArg, "copier notify index " + std::to_string(d.notify_index) +
                                        " outside its region of " + std::to_string(notify_count_));
  constexpr uint64_t kMax32 = UINT32_MAX;
  if (d.dpitch > kMax32 || d.spitch > kMax32 || d.width > kMax32 || d.height > kMax32)
    return Status::Ok();  // beyond the descriptor's 32-bit fields: another path
  if (submitted_ - mailbox_->done >= static_cast<uint64_t>(kSlots)) return Status::Ok();  // full
  const uint64_t t = submitted_ + 1;
  CopierSlot& slot = mailbox_->slots[(t - 1) % kSlots];
  const uint64_t dst = reinterpret_cast<uint64_t>(d.dst), src = reinterpret_cast<uint64_t>(d.src);
  const uint32_t values[kSlotWords] = {
      static_cast<uint32_t>(dst), static_cast<uint32_t>(dst >> 32),
      static_cast<uint32_t>(src), static_cast<uint32_t>(src >> 32),
      static_cast<uint32_t>(d.dpitch), static_cast<uint32_t>(d.spitch),
      static_cast<uint32_t>(d.width), static_cast<uint32_t>(d.height),
      d.notify_index, d.notify_value, 0, 0};
  const uint64_t tag = static_cast<uint64_t>(static_cast<uint32_t>(t)) << 32;
  // Stay for this copy and after it (a Release before it no longer holds). The kernel may still
  // read the old 1 and start to leave: the exiting handshake below then keeps it or relaunches.
  if (mailbox_->release != 0) mailbox_->release = 0;
  for (int i = 0; i < kSlotWords; ++i) slot.word[i] = tag | values[i];  // each seen whole or not
  submitted_ = t;
  ++stats_.copies;
  *ticket = t;
  *queued = true;
  return EnsureRunning();
}

bool DeviceCopier::Done(uint64_t ticket) const {
  const bool done = mailbox_->done >= ticket;
  std::atomic_thread_fence(std::memory_order_acquire);  // the copy's bytes after `done`
  return done;
}

Status DeviceCopier::Poll(uint64_t ticket, bool* done) const {
  *done = Done(ticket);
  return *done ? Status::Ok() : fault_;
}

Status DeviceCopier::Check() {
  if (!fault_.ok() || !running_) return fault_;
  const cudaError_t q = cudaStreamQuery(stream_);
  if (q != cudaSuccess && q != cudaErrorNotReady) fault_ = CudaFailure("copier kernel", q);
  return fault_;
}

void DeviceCopier::Release() {
  if (mailbox_ != nullptr && running_) mailbox_->release = 1;
}

Status DeviceCopier::Stop() {
  if (!mailbox_ || !running_) return Status::Ok();
  mailbox_->stop = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  cudaError_t e = cudaStreamSynchronize(stream_);
  running_ = false;
  mailbox_->exiting = 1;
  return e == cudaSuccess ? Status::Ok() : CudaFailure("copier kernel", e);
}

}  // namespace mpigpu::transport

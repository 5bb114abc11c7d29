#include "transport/device_copier.h"

#include <atomic>
#include <cstddef>
#include <new>
#include <string>

namespace mpigpu::transport {

// Pinned, mapped host memory shared by this process's CPU thread and its copier kernel.
struct alignas(64) CopierSlot {
  volatile uint64_t seq;  // the copy number this slot holds; written last by the host
  // dst .. height are read as six consecutive words.
  uint64_t dst;
  uint64_t src;
  uint64_t dpitch;
  uint64_t spitch;
  uint64_t width;
  uint64_t height;
};

static_assert(offsetof(CopierSlot, height) == offsetof(CopierSlot, dst) + 5 * sizeof(uint64_t),
              "the kernel reads the fields as six consecutive words");

struct CopierMailbox {
  CopierSlot slots[DeviceCopier::kSlots];
  alignas(64) volatile uint64_t done;     // kernel: last copy number finished
  alignas(64) volatile uint32_t exiting;  // kernel: 1 while leaving (or gone)
  alignas(64) volatile uint32_t stop;     // host: 1 = leave now
};

namespace {

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

template <typename T>
__device__ void CopyRows(char* dst, const char* src, uint64_t dp, uint64_t sp, uint64_t width,
                         uint64_t height) {
  const uint64_t per_row = width / sizeof(T);
  const uint64_t total = per_row * height;
  for (uint64_t i = threadIdx.x; i < total; i += blockDim.x) {
    const uint64_t r = i / per_row, c = i % per_row;
    reinterpret_cast<T*>(dst + r * dp)[c] = reinterpret_cast<const T*>(src + r * sp)[c];
  }
}

__global__ void CopierKernel(CopierMailbox* m, uint64_t next, uint64_t idle_ns) {
  __shared__ int cmd;  // 0 poll again, 1 copy, 2 leave
  __shared__ uint64_t f[6];  // the slot's fields: dst, src, dpitch, spitch, width, height
  uint64_t last_work = GlobalTimerNs();
  for (;;) {
    if (threadIdx.x == 0) {
      const CopierSlot& slot = m->slots[(next - 1) % DeviceCopier::kSlots];
      if (slot.seq == next) {
        cmd = 1;
      } else if (m->stop) {
        cmd = 2;
      } else if (GlobalTimerNs() - last_work > idle_ns) {
        m->exiting = 1;
        __threadfence_system();  // store exiting, then load seq: pairs with the host's fence
        cmd = slot.seq == next ? 1 : 2;
        if (cmd == 1) m->exiting = 0;
      } else {
        cmd = 0;
      }
      if (cmd == 1) __threadfence_system();  // the fields were written before seq
    }
    __syncthreads();
    if (cmd == 2) return;
    if (cmd == 1) {
      // Six lanes read the six fields at once: one PCIe round trip instead of six.
      if (threadIdx.x < 6) {
        const volatile uint64_t* v = &m->slots[(next - 1) % DeviceCopier::kSlots].dst;
        f[threadIdx.x] = v[threadIdx.x];
      }
      __syncthreads();
      const uint64_t dp = f[2], sp = f[3], w = f[4], h = f[5];
      char* dst = reinterpret_cast<char*>(f[0]);
      const char* src = reinterpret_cast<const char*>(f[1]);
      switch (UnitOf(f[0], f[1], h > 1 ? dp : 0, h > 1 ? sp : 0, w)) {
        case 16: CopyRows<uint4>(dst, src, dp, sp, w, h); break;
        case 8: CopyRows<uint2>(dst, src, dp, sp, w, h); break;
        case 4: CopyRows<unsigned>(dst, src, dp, sp, w, h); break;
        default: CopyRows<unsigned char>(dst, src, dp, sp, w, h); break;
      }
      __syncthreads();
      if (threadIdx.x == 0) {
        __threadfence_system();  // the copy is visible before `done` says so
        m->done = next;
      }
      ++next;
      last_work = GlobalTimerNs();
    } else {
      __nanosleep(200);
    }
    __syncthreads();  // `cmd` and `s` are rewritten next round
  }
}

Status CudaError(const char* what, cudaError_t e) {
  return Status(Err::kCuda, std::string(what) + ": " + cudaGetErrorString(e));
}

// Runs `fn` with `device` current, restoring the caller's device.
template <typename Fn>
cudaError_t OnDevice(int device, Fn fn) {
  int old = -1;
  cudaError_t e = cudaGetDevice(&old);
  if (e == cudaSuccess && old != device) e = cudaSetDevice(device);
  if (e != cudaSuccess) return e;
  e = fn();
  if (old != device) cudaSetDevice(old);
  return e;
}

}  // namespace

DeviceCopier::~DeviceCopier() {
  (void)Stop();
  if (stream_) cudaStreamDestroy(stream_);
  if (mailbox_) cudaFreeHost(mailbox_);
}

Status DeviceCopier::Init(int device, uint64_t idle_us) {
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
  void* p = nullptr;
  cudaError_t e = cudaHostAlloc(&p, sizeof(CopierMailbox), cudaHostAllocMapped | cudaHostAllocPortable);
  if (e != cudaSuccess) return CudaError("cudaHostAlloc (copier mailbox)", e);
  mailbox_ = new (p) CopierMailbox();
  for (CopierSlot& s : mailbox_->slots) s.seq = 0;
  mailbox_->done = 0;
  mailbox_->exiting = 1;  // not running yet
  mailbox_->stop = 0;
  e = OnDevice(device_, [&] { return cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking); });
  if (e != cudaSuccess) return CudaError("cudaStreamCreateWithFlags (copier)", e);
  return Status::Ok();
}

Status DeviceCopier::Launch() {
  mailbox_->exiting = 0;
  mailbox_->stop = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  CopierMailbox* dev_mailbox = nullptr;
  cudaError_t e = cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_mailbox), mailbox_, 0);
  if (e != cudaSuccess) return CudaError("cudaHostGetDevicePointer (copier mailbox)", e);
  const uint64_t next = mailbox_->done + 1;
  e = OnDevice(device_, [&] {
    CopierKernel<<<1, 512, 0, stream_>>>(dev_mailbox, next, idle_ns_);
    return cudaGetLastError();
  });
  if (e != cudaSuccess) return CudaError("copier kernel launch", e);
  running_ = true;
  ++stats_.launches;
  return Status::Ok();
}

// After a slot was published: make sure a kernel will see it.
Status DeviceCopier::EnsureRunning() {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the seq store, then the exiting load
  if (running_ && mailbox_->exiting == 0) return Status::Ok();
  if (running_) {
    // It is leaving, or has seen our copy and cleared `exiting` again: wait until we know which.
    for (;;) {
      cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) return CudaError("copier kernel", q);
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
  if (submitted_ - mailbox_->done >= static_cast<uint64_t>(kSlots)) return Status::Ok();  // full
  const uint64_t t = submitted_ + 1;
  CopierSlot& slot = mailbox_->slots[(t - 1) % kSlots];
  slot.dst = reinterpret_cast<uint64_t>(d.dst);
  slot.src = reinterpret_cast<uint64_t>(d.src);
  slot.dpitch = d.dpitch;
  slot.spitch = d.spitch;
  slot.width = d.width;
  slot.height = d.height;
  std::atomic_thread_fence(std::memory_order_seq_cst);  // fields before seq
  slot.seq = t;
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

Status DeviceCopier::Stop() {
  if (!mailbox_ || !running_) return Status::Ok();
  mailbox_->stop = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  cudaError_t e = cudaStreamSynchronize(stream_);
  running_ = false;
  mailbox_->exiting = 1;
  return e == cudaSuccess ? Status::Ok() : CudaError("copier kernel", e);
}

}  // namespace mpigpu::transport

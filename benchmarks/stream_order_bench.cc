// What ordering a device message after the program's default-stream work costs, per message, for
// the candidates: each is timed alone over many calls with the stream idle (the common case: the
// program's fill is done by the time it sends), and once behind a 1 ms kernel to show it really
// waits. DefaultStreamOrder (what the engine calls) times two of them on its first use and keeps
// the cheaper: its choice is printed too. With `--copier`, the table is taken again while the
// resident copy kernel (transport/lmt/device_copier.h) runs on its own stream, as it does in a D->D
// ping-pong (one H200, 2026-11-24: each default-stream check then cost ~2 us under MPS), with what
// an 8-byte copy on that kernel costs. The cuStreamWriteValue32 rows price GPU-side ordering (a
// word the legacy stream writes behind the program's work, waited for by the reader on the GPU): on
// one H200 on 2026-11-25 its enqueue was as dear as the host-side checks (1.2-1.8 us), so it was
// not built (benchmarks/results/2026-11-25-stream-order-h200/).
//   bazel run -c opt //benchmarks:stream_order_bench     (needs a GPU)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

#include "memcopy/driver_entry.h"
#include "memcopy/memcopy.h"
#include "memcopy/stream_order.h"
#include "transport/lmt/device_copier.h"

namespace {

double MicrosPerCall(int calls, const std::function<void()>& f) {
  for (int i = 0; i < 100; ++i) f();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
         calls;
}

// Default-stream work that takes about a millisecond.
void CUDART_CB SleepOneMs(void*) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

// The candidates, each timed over `n` calls with the default stream idle.
void Table(int n, mpigpu::MemLoc dev, cudaStream_t mine, cudaEvent_t ev, const char* when) {
  std::printf("%-58s %10s\n", (std::string("candidate (legacy default stream idle)") + when).c_str(), "us/call");
  std::printf("%-58s %10.3f\n", "cudaStreamQuery(cudaStreamLegacy)",
              MicrosPerCall(n, [] { (void)cudaStreamQuery(cudaStreamLegacy); }));
  mpigpu::DefaultStreamOrder order;
  const double used = MicrosPerCall(n, [&] { (void)order.Wait(dev); });
  using Way = mpigpu::DefaultStreamOrder::Way;
  std::printf("%-58s %10.3f\n",
              ("DefaultStreamOrder [used], chose: " +
               std::string(mpigpu::DefaultStreamOrder::Name(order.way())))
                  .c_str(),
              used);
  std::printf("%-58s %.3f / %.3f / %.3f\n", "  its timing at the choice: query / sync / event",
              order.cost_us(Way::kQuery), order.cost_us(Way::kSync), order.cost_us(Way::kEvent));
  std::printf("%-58s %10.3f\n", "cudaStreamSynchronize(cudaStreamLegacy)",
              MicrosPerCall(n, [] { (void)cudaStreamSynchronize(cudaStreamLegacy); }));
  std::printf("%-58s %10.3f\n", "cudaEventRecord(legacy) + cudaEventSynchronize",
              MicrosPerCall(n, [&] {
                (void)cudaEventRecord(ev, cudaStreamLegacy);
                (void)cudaEventSynchronize(ev);
              }));
  std::printf("%-58s %10.3f\n", "cudaEventRecord(legacy) + cudaStreamWaitEvent(own stream)",
              MicrosPerCall(n, [&] {
                (void)cudaEventRecord(ev, cudaStreamLegacy);
                (void)cudaStreamWaitEvent(mine, ev, 0);
              }));
  std::printf("%-58s %10.3f\n", "cudaEventRecord(legacy) + cudaEventQuery until done",
              MicrosPerCall(n, [&] {
                (void)cudaEventRecord(ev, cudaStreamLegacy);
                while (cudaEventQuery(ev) == cudaErrorNotReady) {
                }
              }));
}

// GPU-side ordering: a word written by the legacy stream behind the program's work
// (cuStreamWriteValue32), which a reader waits for on the GPU instead of the sender asking the
// host runtime. What enqueueing the write costs the sender, and how long until the word shows
// in host memory when the stream is idle (what a waiting copy would add).
void StreamWriteRows(int n) {
  PFN_cuStreamWriteValue32_v11070 write = nullptr;
  mpigpu::Status st = mpigpu::FindDriverEntry("cuStreamWriteValue32", 12000, &write);
  if (!st.ok()) {
    std::printf("%-58s %s\n", "cuStreamWriteValue32", st.ToString().c_str());
    return;
  }
  uint32_t* host_word = nullptr;
  void* dev_of_host = nullptr;
  uint32_t* dev_word = nullptr;
  if (cudaHostAlloc(reinterpret_cast<void**>(&host_word), 64, cudaHostAllocMapped) != cudaSuccess ||
      cudaHostGetDevicePointer(&dev_of_host, host_word, 0) != cudaSuccess ||
      cudaMalloc(reinterpret_cast<void**>(&dev_word), 64) != cudaSuccess) {
    std::printf("cuStreamWriteValue32: no mapped word\n");
    return;
  }
  *static_cast<volatile uint32_t*>(host_word) = 0;
  uint32_t v = 0;
  const auto legacy = reinterpret_cast<CUstream>(cudaStreamLegacy);
  std::printf("%-58s %10.3f\n", "cuStreamWriteValue32(legacy, device word) enqueue",
              MicrosPerCall(n, [&] {
                (void)write(legacy, reinterpret_cast<CUdeviceptr>(dev_word), ++v, 0);
              }));
  (void)cudaStreamSynchronize(cudaStreamLegacy);
  std::printf("%-58s %10.3f\n", "cuStreamWriteValue32(legacy, mapped host word) enqueue",
              MicrosPerCall(n, [&] {
                (void)write(legacy, reinterpret_cast<CUdeviceptr>(dev_of_host), ++v, 0);
              }));
  (void)cudaStreamSynchronize(cudaStreamLegacy);
  std::printf("%-58s %10.3f\n", "  + until the host sees the word (idle stream)",
              MicrosPerCall(n / 4, [&] {
                const uint32_t want = ++v;
                (void)write(legacy, reinterpret_cast<CUdeviceptr>(dev_of_host), want, 0);
                while (*static_cast<volatile uint32_t*>(host_word) != want) {
                }
              }));
  cudaFree(dev_word);
  cudaFreeHost(host_word);
}

}  // namespace

int main(int argc, char** argv) {
  if (mpigpu::CudaDeviceCount() < 1) {
    std::printf("stream_order_bench: no CUDA device\n");
    return 0;
  }
  cudaSetDevice(0);
  cudaFree(nullptr);
  cudaStream_t mine;
  cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking);
  cudaEvent_t ev;
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  const int n = 20000;
  const mpigpu::MemLoc dev = mpigpu::MemLoc::Device(0);
  Table(n, dev, mine, ev, "");
  StreamWriteRows(n);
  if (argc > 1 && std::string(argv[1]) == "--copier") {
    // The table again while the copier is resident, with what an 8-byte copy on it costs then
    // (submit until done).
    void* buf = nullptr;
    cudaMalloc(&buf, 2 * 4096);
    mpigpu::transport::DeviceCopier copier;
    uint64_t ticket = 0;
    bool queued = false;
    // One copy keeps the kernel resident for its idle time (1 s here).
    const mpigpu::transport::CopyDesc d{buf, static_cast<char*>(buf) + 4096, 4096, 4096, 4096, 1};
    if (!copier.Init(0, 1000000).ok() || !copier.Submit(d, &ticket, &queued).ok() || !queued) {
      std::printf("stream_order_bench: the resident copier did not start\n");
      return 1;
    }
    while (!copier.Done(ticket)) {
    }
    Table(n / 10, dev, mine, ev, " (resident copier running)");
    StreamWriteRows(n / 10);
    const mpigpu::transport::CopyDesc small{buf, static_cast<char*>(buf) + 4096, 8, 8, 8, 1};
    std::printf("%-58s %10.3f\n", "8-byte copy on the copier, submit to done",
                MicrosPerCall(n / 10, [&] {
                  uint64_t t = 0;
                  bool q = false;
                  (void)copier.Submit(small, &t, &q);
                  while (q && !copier.Done(t)) {
                  }
                }));
    (void)copier.Stop();
    cudaFree(buf);
  }
  cudaStreamSynchronize(mine);
  mpigpu::DefaultStreamOrder order;
  (void)order.Wait(dev);  // chosen before the work goes in
  (void)cudaLaunchHostFunc(cudaStreamLegacy, SleepOneMs, nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  (void)order.Wait(dev);
  const double waited =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%-58s %10.1f\n", "DefaultStreamOrder behind 1 ms of default-stream work", waited);
  return 0;
}

// What ordering a device message after the program's default-stream work costs, per message,
// for the candidates (issue 15): each is timed alone over many calls with the stream idle (the
// common case: the program's fill is done by the time it sends), and once behind a 1 ms kernel
// to show it really waits. DefaultStreamOrder (what the engine calls) times two of them on its
// first use and keeps the cheaper: its choice is printed too. With `--copier`, the table is taken
// again while the resident copy kernel (transport/lmt/device_copier.h) runs on its own stream, as it
// does in a D->D ping-pong (run 43: each default-stream check then cost ~2 us under MPS).
//   bazel run -c opt //benchmarks:stream_order_bench     (needs a GPU)
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <thread>

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
  if (argc > 1 && std::string(argv[1]) == "--copier") {
    // One copy keeps the kernel resident for its idle time (1 s here).
    mpigpu::transport::DeviceCopier copier;
    void* buf = nullptr;
    cudaMalloc(&buf, 2 * 4096);
    uint64_t ticket = 0;
    bool queued = false;
    const mpigpu::transport::CopyDesc d{buf, static_cast<char*>(buf) + 4096, 4096, 4096, 4096, 1};
    if (!copier.Init(0, 1000000).ok() || !copier.Submit(d, &ticket, &queued).ok() || !queued) {
      std::printf("stream_order_bench: the resident copier did not start\n");
      return 1;
    }
    while (!copier.Done(ticket)) {
    }
    Table(n / 10, dev, mine, ev, " (resident copier running)");
    (void)copier.Stop();
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

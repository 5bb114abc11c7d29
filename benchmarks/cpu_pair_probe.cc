// cpu_pair_probe: how fast two CPUs of this machine hand data to each other right now, to tell
// a machine's state apart from a library's behaviour when a TCP benchmark between two hosts
// (network namespaces pinned to CPU A and B) changes mode from one run to the next.
//   line: a cache line bounced between a thread on A and one on B (round trip, ns);
//   pass: A writes 256 KiB chunks into a 4 MiB ring (a socket buffer's size), B copies each into
//         a 16 MiB destination, as a TCP receiver copies what the sender's CPU wrote (GB/s);
//   local: B copies 16 MiB within its own caches and memory (GB/s), for scale.
// Prints one CSV line: line_ns,pass_gbs,local_gbs (with --header, the names first).
//   cpu_pair_probe [--cpus A,B] [--header]
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "perf/cpu_line.h"

namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

bool Pin(int cpu) { return mpigpu::perf::PinThisThread(cpu); }

// A producer on A fills ring slots; a consumer on B copies each out. Slot i is free when
// done[i] (released by B after its copy) equals the number of times A has filled it.
double PassGbs(int a, int b, size_t total) {
  constexpr size_t kChunk = 256 << 10, kSlots = 16;
  constexpr size_t kDest = 16 << 20;
  std::vector<unsigned char> ring(kChunk * kSlots), dest(kDest);
  std::memset(dest.data(), 0, kDest);
  std::vector<std::atomic<size_t>> filled(kSlots), done(kSlots);
  for (size_t i = 0; i < kSlots; ++i) {
    filled[i].store(0, std::memory_order_relaxed);
    done[i].store(0, std::memory_order_relaxed);
  }
  const size_t chunks = total / kChunk;
  std::thread consumer([&] {
    Pin(b);
    for (size_t c = 0; c < chunks; ++c) {
      const size_t s = c % kSlots, round = c / kSlots + 1;
      while (filled[s].load(std::memory_order_acquire) != round) {
      }
      std::memcpy(dest.data() + (c * kChunk) % kDest, ring.data() + s * kChunk, kChunk);
      asm volatile("" : : "r"(dest.data()) : "memory");
      done[s].store(round, std::memory_order_release);
    }
  });
  Pin(a);
  const auto t0 = Clock::now();
  for (size_t c = 0; c < chunks; ++c) {
    const size_t s = c % kSlots, round = c / kSlots + 1;
    while (done[s].load(std::memory_order_acquire) != round - 1) {
    }
    std::memset(ring.data() + s * kChunk, static_cast<int>(c), kChunk);
    filled[s].store(round, std::memory_order_release);
  }
  consumer.join();
  return total / SecondsSince(t0) / 1e9;
}

double LocalGbs(int b) {
  Pin(b);
  constexpr size_t kBytes = 16 << 20;
  std::vector<unsigned char> from(kBytes, 1), to(kBytes, 0);
  constexpr int kReps = 16;
  const auto t0 = Clock::now();
  for (int r = 0; r < kReps; ++r) {
    from[static_cast<size_t>(r)] = static_cast<unsigned char>(r);
    std::memcpy(to.data(), from.data(), kBytes);
    asm volatile("" : : "r"(to.data()) : "memory");  // the copy is used
  }
  const double s = SecondsSince(t0);
  return kBytes * double{kReps} / s / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  int a = 0, b = 1;
  bool header = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--header") {
      header = true;
    } else if (arg == "--cpus" && i + 1 < argc &&
               std::sscanf(argv[++i], "%d,%d", &a, &b) == 2 && a >= 0 && b >= 0 && a != b &&
               a < CPU_SETSIZE && b < CPU_SETSIZE) {
    } else {
      std::fprintf(stderr, "usage: cpu_pair_probe [--cpus A,B] [--header]  (A != B)\n");
      return 2;
    }
  }
  if (!Pin(a) || !Pin(b)) {
    std::fprintf(stderr, "cpu_pair_probe: cannot run on CPUs %d and %d\n", a, b);
    return 1;
  }
  if (header) std::printf("line_ns,pass_gbs,local_gbs\n");
  // A first short pass wakes both CPUs (an idle vCPU's first transfers are slow): not counted.
  (void)PassGbs(a, b, size_t{64} << 20);
  const double line = mpigpu::perf::LineRoundTripNs(a, b);
  const double pass = PassGbs(a, b, size_t{1} << 30);
  const double local = LocalGbs(b);
  std::printf("%.1f,%.3f,%.3f\n", line, pass, local);
  return 0;
}

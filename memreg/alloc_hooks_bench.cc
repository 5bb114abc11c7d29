// The cost of the interposed malloc family on small blocks (malloc(64) + free, the common case)
// and on large ones (a mapping of its own), per pair, in one thread and in several at once.
// Built twice (BUILD): alloc_hooks_bench with the hooks, malloc_plain_bench with glibc's malloc
// alone; run each with MPIGPU_PIN_CACHE=1 (tracking) and =0. Prints; asserts nothing. With an
// argument N: N small pairs once (perf stat -e instructions counts what a pair costs).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

double NsPerPair(size_t n, long iters, int threads) {
  auto body = [n, iters] {
    void* volatile sink;  // keeps the compiler from pairing malloc with free away
    for (long i = 0; i < iters; ++i) {
      sink = std::malloc(n);
      std::free(sink);
    }
  };
  body();  // warm: tcache, thresholds
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t) ts.emplace_back(body);
  for (auto& t : ts) t.join();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(iters);
}

double Best(size_t n, long iters, int threads) {
  double best = 1e30;
  for (int r = 0; r < 5; ++r) {
    const double v = NsPerPair(n, iters, threads);
    if (v < best) best = v;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {  // one run of N small pairs in one thread (for perf stat -e instructions)
    std::printf("malloc(64), 1 thread: %.2f ns per pair\n", NsPerPair(64, std::atol(argv[1]), 1));
    return 0;
  }
  const char* pin = std::getenv("MPIGPU_PIN_CACHE");
  std::printf("MPIGPU_PIN_CACHE=%s; best of 5 runs, ns per malloc+free pair (wall time per "
              "thread's pair when several run at once)\n", pin ? pin : "(unset)");
  std::printf("malloc(64),  1 thread : %7.2f\n", Best(64, 20000000, 1));
  std::printf("malloc(64),  2 threads: %7.2f\n", Best(64, 10000000, 2));
  std::printf("malloc(40M), 1 thread : %7.0f\n", Best(40u << 20, 20000, 1));
  return 0;
}

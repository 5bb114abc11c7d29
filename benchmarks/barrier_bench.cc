// Barrier time under load (MPIGPU_YIELD): N barriers, each timed; prints the
// mean, median and 90th percentile in microseconds from rank 0.
//   mpigpurun -n 2 bazel-bin/benchmarks/barrier_bench [N]
// Run it beside outside load (e.g. one busy loop per core) with MPIGPU_YIELD=off|auto|on.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mpigpu_api/mpigpu.h"

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 2000;
  if (MPIGPU_Init(&argc, &argv) != MPIGPU_SUCCESS || n < 1) return 1;
  int rank = 0;
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  std::vector<double> us(n);
  for (int i = 0; i < n; ++i) {
    const double t0 = MPIGPU_Wtime();
    MPIGPU_Barrier(MPIGPU_COMM_WORLD);
    us[i] = (MPIGPU_Wtime() - t0) * 1e6;
  }
  double sum = 0;
  for (double u : us) sum += u;
  std::sort(us.begin(), us.end());
  if (rank == 0)
    std::printf("barriers %d  mean %.2f us  median %.2f us  p90 %.2f us  max %.1f us\n", n,
                sum / n, us[n / 2], us[n * 9 / 10], us[n - 1]);
  return MPIGPU_Finalize() == MPIGPU_SUCCESS ? 0 : 1;
}

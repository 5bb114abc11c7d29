// The MPI interface's cost over the core's buffer-type API (issue 19's performance check).
//   mpi_overhead_bench lookup              ns per buffer-location lookup (BufType): NULL, host
//                                           (malloc), and with a GPU pinned, managed and device
//                                           pointers. One process, no MPI_Init needed.
//   mpigpurun -n 2 mpi_overhead_bench pingpong [--device] [--rounds R] [--iters N]
//                                           half round-trip latency, 1 B .. 64 KiB (and 1 MiB
//                                           bandwidth-sized messages), through MPI_Send/Recv and
//                                           through MPIGPU_Send/Recv with the tag given, the two
//                                           interleaved in ABBA order over R rounds; medians.
//                                           --device: buffers in device memory (D->D).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpi/mpi_internal.h"

namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ns per BufType(p) over `n` calls (the result is summed so the calls are not optimized away).
double LookupNs(const void* p, int n) {
  volatile long sink = mpigpu::mpi::BufType(p);  // the first call counts the devices (slow)
  const double t0 = Now();
  for (int i = 0; i < n; ++i) sink = sink + mpigpu::mpi::BufType(p);
  return (Now() - t0) * 1e9 / n;
}

int Lookup() {
  const int n = 2000000;
  std::vector<char> host(4096);          // brk heap: never queried
  std::vector<char> big(8 << 20);        // mmap'd by malloc: queried when a device exists
  char stack[256];
  std::printf("buffer-location lookup (mpigpu::mpi::BufType), ns per call, %d calls each\n", n);
  std::printf("  NULL                    %8.1f\n", LookupNs(nullptr, n));
  std::printf("  host stack              %8.1f\n", LookupNs(stack, n));
  std::printf("  host malloc 4 KiB (brk) %8.1f\n", LookupNs(host.data(), n));
  std::printf("  host malloc 8 MiB (mmap)%8.1f\n", LookupNs(big.data(), n));
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    (void)cudaGetLastError();
    std::printf("  (no CUDA device: host pointers are never looked up; device rows skipped)\n");
    return 0;
  }
  void *pinned = nullptr, *managed = nullptr, *dev = nullptr;
  if (cudaMallocHost(&pinned, 4096) != cudaSuccess || cudaMallocManaged(&managed, 4096) != cudaSuccess ||
      cudaMalloc(&dev, 4096) != cudaSuccess) {
    std::fprintf(stderr, "CUDA allocation failed\n");
    return 1;
  }
  const int m = n / 10;
  std::printf("  host malloc 4 KiB, CUDA context up %8.1f\n", LookupNs(host.data(), m));
  std::printf("  host malloc 8 MiB, CUDA context up %8.1f\n", LookupNs(big.data(), m));
  std::printf("  pinned host    %8.1f  -> tag %d\n", LookupNs(pinned, m), mpigpu::mpi::BufType(pinned));
  std::printf("  managed        %8.1f  -> tag %d\n", LookupNs(managed, m), mpigpu::mpi::BufType(managed));
  std::printf("  device         %8.1f  -> tag %#x\n", LookupNs(dev, m), mpigpu::mpi::BufType(dev));
  cudaFree(dev);
  cudaFree(managed);
  cudaFreeHost(pinned);
  return 0;
}

// One timed run: `iters` round trips of `bytes` between ranks 0 and 1; half round trip in us.
double RoundTrips(bool mpi, void* buf, MPIGPU_Buftype bt, int bytes, int iters, int rank) {
  const int peer = 1 - rank;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = Now();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      if (mpi) {
        MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPIGPU_Send(buf, bt, bytes, MPIGPU_BYTE, peer, 1, MPIGPU_COMM_WORLD);
        MPIGPU_Recv(buf, bt, bytes, MPIGPU_BYTE, peer, 1, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE);
      }
    } else {
      if (mpi) {
        MPI_Recv(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      } else {
        MPIGPU_Recv(buf, bt, bytes, MPIGPU_BYTE, peer, 1, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE);
        MPIGPU_Send(buf, bt, bytes, MPIGPU_BYTE, peer, 1, MPIGPU_COMM_WORLD);
      }
    }
  }
  return (Now() - t0) * 1e6 / (2.0 * iters);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int PingPong(bool device, int rounds, int iters) {
  int rank = 0, size = 0;
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (rank == 0) std::fprintf(stderr, "pingpong needs 2 ranks (mpigpurun -n 2)\n");
    MPI_Finalize();
    return 2;
  }
  const int max = 1 << 20;
  void* buf = nullptr;
  MPIGPU_Buftype bt = MPIGPU_BUF_HOST;
  std::vector<char> host(max);
  if (device) {
    if (cudaMalloc(&buf, max) != cudaSuccess) {
      std::fprintf(stderr, "rank %d: cudaMalloc failed (no GPU?)\n", rank);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    bt = MPIGPU_BUF_GPU;
  } else {
    buf = host.data();
  }
  if (rank == 0)
    std::printf("half round trip (us), %s buffers, median of %d rounds x %d iterations, ABBA\n"
                "%10s %12s %12s %8s\n",
                device ? "device" : "host", rounds, iters, "bytes", "mpigpu.h", "mpi.h", "mpi/core");
  for (int bytes = 1; bytes <= max; bytes *= (bytes < 65536 ? 4 : 16)) {
    const int n = bytes >= 65536 ? std::max(10, iters / 10) : iters;
    RoundTrips(false, buf, bt, bytes, n / 4 + 1, rank);  // warm-up
    RoundTrips(true, buf, bt, bytes, n / 4 + 1, rank);
    std::vector<double> a, b;
    for (int r = 0; r < rounds; ++r) {
      const bool mpi_first = r % 2 == 1;  // A B B A ...
      for (int k = 0; k < 2; ++k) {
        const bool mpi = (k == 0) == mpi_first;
        (mpi ? b : a).push_back(RoundTrips(mpi, buf, bt, bytes, n, rank));
      }
    }
    if (rank == 0)
      std::printf("%10d %12.3f %12.3f %8.3f\n", bytes, Median(a), Median(b), Median(b) / Median(a));
  }
  if (device) cudaFree(buf);
  MPI_Finalize();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  bool device = false;
  int rounds = 9, iters = 2000;
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--device")) device = true;
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  if (rounds < 1 || iters < 1) {
    std::fprintf(stderr, "--rounds and --iters must be >= 1\n");
    return 2;
  }
  if (mode == "lookup") return Lookup();
  if (mode == "pingpong") return PingPong(device, rounds, iters);
  std::fprintf(stderr, "usage: mpi_overhead_bench lookup | pingpong [--device] [--rounds R] [--iters N]\n");
  return 2;
}

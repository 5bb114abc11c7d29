// The MPI interface's cost over the core's buffer-type API (its target: within 5% of mpigpu.h).
//   mpi_overhead_bench lookup              ns per buffer-location lookup (BufType): NULL, host
//                                           (malloc), and with a GPU pinned, managed and device
//                                           pointers. One process, no MPI_Init needed.
//   mpi_overhead_bench parts               the lookup's parts (runtime vs driver queries, context
//                                           state queries), ns per call; needs a GPU.
//   valgrind --tool=callgrind mpi_overhead_bench self [--iters N]
//                                           instructions per message of each interface (one
//                                           rank sending to itself; see Self).
//   mpigpurun -n 2 mpi_overhead_bench pingpong [--device] [--rounds R] [--iters N]
//                                           half round-trip latency, 1 B .. 64 KiB (and 1 MiB
//                                           bandwidth-sized messages), through MPI_Send/Recv and
//                                           through MPIGPU_Send/Recv with the tag given, the two
//                                           interleaved in ABBA order over R rounds; medians.
//                                           --device: buffers in device memory (D->D).
#include <cuda.h>
#include <cudaTypedefs.h>
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

// The lookup's parts, each on its own (ns per call): the runtime's cudaPointerGetAttributes, the
// driver's cuPointerGetAttribute (memory type only), cuPointerGetAttributes (type + ordinal), and
// the context queries a "no context, no device memory" fast path would need. Needs a device.
template <typename F>
double PerCallNs(int n, F f) {
  volatile long sink = f();
  const double t0 = Now();
  for (int i = 0; i < n; ++i) sink = sink + f();
  return (Now() - t0) * 1e9 / n;
}

template <typename Fn>
Fn Driver(const char* name) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(p);
}

int LookupParts() {
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::printf("lookup parts: no CUDA device\n");
    return 0;
  }
  auto get1 = Driver<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute");
  auto getn = Driver<PFN_cuPointerGetAttributes_v7000>("cuPointerGetAttributes");
  auto ctxstate = Driver<PFN_cuDevicePrimaryCtxGetState_v7000>("cuDevicePrimaryCtxGetState");
  auto ctxcur = Driver<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent");
  if (!get1 || !getn || !ctxstate || !ctxcur) {
    std::fprintf(stderr, "driver entry points missing\n");
    return 1;
  }
  const int n = 500000;
  unsigned flags = 0;
  int active = -1;
  ctxstate(0, &flags, &active);
  std::printf("lookup parts, ns per call (%d calls); primary context active before any "
              "allocation: %d\n", n, active);
  std::printf("  cuDevicePrimaryCtxGetState %8.1f\n", PerCallNs(n, [&] {
                ctxstate(0, &flags, &active);
                return active;
              }));
  std::printf("  cuCtxGetCurrent            %8.1f\n", PerCallNs(n, [&] {
                CUcontext c = nullptr;
                ctxcur(&c);
                return c != nullptr;
              }));
  std::vector<char> big(8 << 20);
  char stack[64];
  // cuPointerGetAttributes with n of (memory type, managed, ordinal) on p.
  auto attrs = [&](int n, const void* p) {
    unsigned t = 0, managed = 0;
    int ord = -1;
    CUpointer_attribute at[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                 CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void* v[3] = {&t, &managed, &ord};
    getn(n, at, v, reinterpret_cast<CUdeviceptr>(p));
    return static_cast<long>(t) + managed + ord;
  };
  std::printf("  before any CUDA context, malloc 8 MiB: cuPGAs(1) %.1f, cuPGAs(3) %.1f, "
              "BufType %.1f\n",
              PerCallNs(n, [&] { return attrs(1, big.data()); }),
              PerCallNs(n, [&] { return attrs(3, big.data()); }),
              PerCallNs(n, [&] { return static_cast<long>(mpigpu::mpi::BufType(big.data())); }));
  void *pinned = nullptr, *managed = nullptr, *dev = nullptr;
  if (cudaMallocHost(&pinned, 4096) != cudaSuccess || cudaMallocManaged(&managed, 4096) != cudaSuccess ||
      cudaMalloc(&dev, 4096) != cudaSuccess) {
    std::fprintf(stderr, "CUDA allocation failed\n");
    return 1;
  }
  struct Kind {
    const char* name;
    void* p;
  } kinds[] = {{"stack", stack}, {"malloc 8 MiB", big.data()}, {"pinned", pinned},
               {"managed", managed}, {"device", dev}};
  std::printf("  %-14s %10s %10s %10s %10s %10s %10s  (type)\n", "pointer", "cudaPGA", "cuPGA(1)",
              "cuPGAs(2)", "cuPGAs(1)", "cuPGAs(3)", "BufType");
  for (const Kind& k : kinds) {
    const CUdeviceptr d = reinterpret_cast<CUdeviceptr>(k.p);
    unsigned type = 0;
    const double rt = PerCallNs(n, [&] {
      cudaPointerAttributes a{};
      if (cudaPointerGetAttributes(&a, k.p) != cudaSuccess) (void)cudaGetLastError();
      return static_cast<long>(a.type);
    });
    const double one = PerCallNs(n, [&] {
      type = 0;
      get1(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, d);
      return static_cast<long>(type);
    });
    const double two = PerCallNs(n, [&] {
      unsigned t = 0;
      int ord = -1;
      CUpointer_attribute at[2] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
      void* v[2] = {&t, &ord};
      getn(2, at, v, d);
      return static_cast<long>(t) + ord;
    });
    const double bt = PerCallNs(n, [&] { return static_cast<long>(mpigpu::mpi::BufType(k.p)); });
    const double a1 = PerCallNs(n, [&] { return attrs(1, k.p); });
    const double a3 = PerCallNs(n, [&] { return attrs(3, k.p); });
    std::printf("  %-14s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f  (%u)\n", k.name, rt, one, two,
                a1, a3, bt, type);
  }
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

// One rank sends to itself (eager, so each call returns at once and no time is spent waiting):
// the instructions per iteration are the same every run, so `valgrind --tool=callgrind` shows
// each interface's cost per message exactly (inclusive cost of SelfMpi vs SelfCore, divided by
// the iterations). Blocking Send+Recv, then Isend+Irecv+Wait+Wait (and below: + Waitall,
// + Test, Sendrecv).
__attribute__((noinline)) void SelfMpi(void* buf, int bytes, int iters) {
  for (int i = 0; i < iters; ++i) {
    MPI_Send(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF);
    MPI_Recv(buf, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  }
}
__attribute__((noinline)) void SelfCore(void* buf, int bytes, int iters) {
  for (int i = 0; i < iters; ++i) {
    MPIGPU_Send(buf, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF);
    MPIGPU_Recv(buf, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF,
                MPIGPU_STATUS_IGNORE);
  }
}
__attribute__((noinline)) void SelfMpiNb(void* buf, int bytes, int iters) {
  char* b = static_cast<char*>(buf);
  for (int i = 0; i < iters; ++i) {
    MPI_Request r[2];
    MPI_Irecv(b + bytes, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[0]);
    MPI_Isend(b, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[1]);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
  }
}
__attribute__((noinline)) void SelfCoreNb(void* buf, int bytes, int iters) {
  char* b = static_cast<char*>(buf);
  for (int i = 0; i < iters; ++i) {
    MPIGPU_Request r[2];
    MPIGPU_Irecv(b + bytes, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF, &r[0]);
    MPIGPU_Isend(b, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF, &r[1]);
    MPIGPU_Wait(&r[1], MPIGPU_STATUS_IGNORE);
    MPIGPU_Wait(&r[0], MPIGPU_STATUS_IGNORE);
  }
}

// Irecv + Isend completed by one Waitall, and by Test (each until its flag is set).
__attribute__((noinline)) void SelfMpiWaitall(void* buf, int bytes, int iters) {
  char* b = static_cast<char*>(buf);
  for (int i = 0; i < iters; ++i) {
    MPI_Request r[2];
    MPI_Irecv(b + bytes, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[0]);
    MPI_Isend(b, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
}
__attribute__((noinline)) void SelfCoreWaitall(void* buf, int bytes, int iters) {
  char* b = static_cast<char*>(buf);
  for (int i = 0; i < iters; ++i) {
    MPIGPU_Request r[2];
    MPIGPU_Irecv(b + bytes, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF, &r[0]);
    MPIGPU_Isend(b, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF, &r[1]);
    MPIGPU_Waitall(2, r, MPIGPU_STATUSES_IGNORE);
  }
}
__attribute__((noinline)) void SelfMpiTest(void* buf, int bytes, int iters) {
  char* b = static_cast<char*>(buf);
  for (int i = 0; i < iters; ++i) {
    MPI_Request r[2];
    MPI_Irecv(b + bytes, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[0]);
    MPI_Isend(b, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[1]);
    for (int k : {1, 0})
      for (int flag = 0; !flag;) MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE);
  }
}
__attribute__((noinline)) void SelfCoreTest(void* buf, int bytes, int iters) {
  char* b = static_cast<char*>(buf);
  for (int i = 0; i < iters; ++i) {
    MPIGPU_Request r[2];
    MPIGPU_Irecv(b + bytes, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF, &r[0]);
    MPIGPU_Isend(b, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF, &r[1]);
    for (int k : {1, 0})
      for (int flag = 0; !flag;) MPIGPU_Test(&r[k], &flag, MPIGPU_STATUS_IGNORE);
  }
}
// Sendrecv to itself (the receive is posted first, so it matches its own send).
__attribute__((noinline)) void SelfMpiSendrecv(void* buf, int bytes, int iters) {
  char* b = static_cast<char*>(buf);
  for (int i = 0; i < iters; ++i)
    MPI_Sendrecv(b, bytes, MPI_BYTE, 0, 1, b + bytes, bytes, MPI_BYTE, 0, 1, MPI_COMM_SELF,
                 MPI_STATUS_IGNORE);
}
__attribute__((noinline)) void SelfCoreSendrecv(void* buf, int bytes, int iters) {
  char* b = static_cast<char*>(buf);
  for (int i = 0; i < iters; ++i)
    MPIGPU_Sendrecv(b, MPIGPU_BUF_HOST, bytes, MPIGPU_BYTE, 0, 1, b + bytes, MPIGPU_BUF_HOST,
                    bytes, MPIGPU_BYTE, 0, 1, MPIGPU_COMM_SELF, MPIGPU_STATUS_IGNORE);
}

int Self(int iters) {
  MPI_Init(nullptr, nullptr);
  std::vector<char> host(1 << 20);  // malloc'd by mmap, as the ping-pong's buffer
  {  // one-time costs (tables made on first use) land here, not in the loops callgrind reports
    MPI_Request r[2];
    MPI_Irecv(host.data() + 1, 1, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[0]);
    MPI_Isend(host.data(), 1, MPI_BYTE, 0, 1, MPI_COMM_SELF, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  }
  for (int bytes : {1, 1024}) {
    SelfMpi(host.data(), bytes, iters);
    SelfCore(host.data(), bytes, iters);
    SelfMpiNb(host.data(), bytes, iters);
    SelfCoreNb(host.data(), bytes, iters);
    SelfMpiWaitall(host.data(), bytes, iters);
    SelfCoreWaitall(host.data(), bytes, iters);
    SelfMpiTest(host.data(), bytes, iters);
    SelfCoreTest(host.data(), bytes, iters);
    SelfMpiSendrecv(host.data(), bytes, iters);
    SelfCoreSendrecv(host.data(), bytes, iters);
  }
  std::printf("self: %d iterations of each loop at 1 and 1024 bytes\n", iters);
  MPI_Finalize();
  return 0;
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
  // Device buffers up to 16 MiB: device bandwidth is compared through both interfaces.
  const int max = device ? 16 << 20 : 1 << 20;
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
  if (rank == 0) {  // whether MPI_Init made a CUDA context (a "no context" fast path's premise)
    int active = -1, ndev = 0;
    unsigned flags = 0;
    if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0)
      if (auto st = Driver<PFN_cuDevicePrimaryCtxGetState_v7000>("cuDevicePrimaryCtxGetState"))
        st(0, &flags, &active);
    std::printf("devices %d, primary context of device 0 active after MPI_Init: %d\n", ndev, active);
  }
  if (rank == 0)
    std::printf("half round trip (us), %s buffers, median of %d rounds x %d iterations, ABBA; "
                "GB/s = bytes / half round trip\n%10s %12s %12s %8s %10s %10s\n",
                device ? "device" : "host", rounds, iters, "bytes", "mpigpu.h", "mpi.h", "mpi/core",
                "GB/s core", "GB/s mpi");
  for (int bytes = 1; bytes <= max; bytes *= (bytes < 65536 ? 4 : device ? 4 : 16)) {
    const int n = bytes >= (4 << 20) ? std::max(10, iters / 40)
                  : bytes >= 65536   ? std::max(10, iters / 10)
                                     : iters;
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
      std::printf("%10d %12.3f %12.3f %8.3f %10.2f %10.2f\n", bytes, Median(a), Median(b),
                  Median(b) / Median(a), bytes / (Median(a) * 1e3), bytes / (Median(b) * 1e3));
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
  if (mode == "parts") return LookupParts();
  if (mode == "self") return Self(iters);
  if (mode == "pingpong") return PingPong(device, rounds, iters);
  std::fprintf(stderr, "usage: mpi_overhead_bench lookup | parts | self [--iters N] | pingpong [--device] [--rounds R] [--iters N]\n");
  return 2;
}

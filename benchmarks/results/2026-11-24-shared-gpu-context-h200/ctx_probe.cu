// Probe (the work in this folder): what one operation costs when two processes, each with its own CUDA context
// on the same GPU (no MPS), take turns, against one process doing both turns alone. Two ranks on
// one GPU measured ~150 us per message for mpigpu and staging alike up to 16 KiB (measurement `2026-11-24-copier-polling-h200/be`); this
// asks which CUDA operations pay that price. Each turn: one op on the process's stream, then
// spin on an event (as mpigpu's progress does), then hand the turn over through shared memory.
//   nvcc -O2 -arch=sm_90 -o ctx_probe ctx_probe.cu && ./ctx_probe
#include <cuda_runtime.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

__global__ void Empty() {}

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

enum Op { kD2D, kD2H, kH2D, kD2HSync, kKernel, kD2DBatch, kH2DBatch, kH2DPageable, kD2HPageable,
          kNone, kOps };
const char* kNames[kOps] = {"D2D async", "D2H async (pinned)", "H2D async (pinned)",
                            "D2H cudaMemcpy (pinned)", "empty kernel", "D2D batch+overlap",
                            "H2D batch+overlap", "H2D async (pageable)", "D2H async (pageable)",
                            "no GPU op"};

// One copy through cudaMemcpyBatchAsync with the hint to leave the SMs to compute.
void BatchCopy(void* dst, const void* src, size_t n, cudaStream_t s) {
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
  size_t idx = 0;
  void* dsts[1] = {dst};
  const void* srcs[1] = {src};
  size_t sizes[1] = {n};
  CK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 1, &attr, &idx, 1, s));
}

struct Turn {
  std::atomic<int> who;
};


struct Bufs {
  void *d1, *d2, *h, *pageable;
  cudaStream_t s;
  cudaEvent_t ev;
};

void DoOp(Op op, size_t n, Bufs& b) {
  switch (op) {
    case kD2D: CK(cudaMemcpyAsync(b.d2, b.d1, n, cudaMemcpyDeviceToDevice, b.s)); break;
    case kD2H: CK(cudaMemcpyAsync(b.h, b.d1, n, cudaMemcpyDeviceToHost, b.s)); break;
    case kH2D: CK(cudaMemcpyAsync(b.d1, b.h, n, cudaMemcpyHostToDevice, b.s)); break;
    case kD2HSync: CK(cudaMemcpy(b.h, b.d1, n, cudaMemcpyDeviceToHost)); return;
    case kKernel: Empty<<<1, 32, 0, b.s>>>(); break;
    case kD2DBatch: BatchCopy(b.d2, b.d1, n, b.s); break;
    case kH2DBatch: BatchCopy(b.d1, b.h, n, b.s); break;
    case kH2DPageable: CK(cudaMemcpyAsync(b.d1, b.pageable, n, cudaMemcpyHostToDevice, b.s)); break;
    case kD2HPageable: CK(cudaMemcpyAsync(b.pageable, b.d1, n, cudaMemcpyDeviceToHost, b.s)); break;
    default: return;
  }
  CK(cudaEventRecord(b.ev, b.s));
  while (cudaEventQuery(b.ev) == cudaErrorNotReady) {
  }
}

// Rank `me` of `procs` (1: alone, doing both turns; 2: alternating). The other rank does `other`
// (kNone: it holds a context but does no GPU work). Returns us per turn pair, median of 5.
void Rank(int me, int procs, Turn* t, Op op, Op other, size_t n, double* out) {
  Bufs b;
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&b.d1, n));
  CK(cudaMalloc(&b.d2, n));
  CK(cudaHostAlloc(&b.h, n, cudaHostAllocDefault));
  b.pageable = std::calloc(1, n);
  CK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
  CK(cudaEventCreateWithFlags(&b.ev, cudaEventDisableTiming));
  const Op mine = me == 0 ? op : other;
  const int iters = 400;
  std::vector<double> reps;
  for (int rep = 0; rep < 6; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      if (procs == 1) {
        DoOp(op, n, b);
        DoOp(other, n, b);
        continue;
      }
      while (t->who.load(std::memory_order_acquire) != me) {
      }
      DoOp(mine, n, b);
      t->who.store(1 - me, std::memory_order_release);
    }
    if (procs == 2 && me == 0) {  // let the last turn of rank 1 finish
      while (t->who.load(std::memory_order_acquire) != 0) {
      }
    }
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (rep > 0) reps.push_back(us / iters);
  }
  std::sort(reps.begin(), reps.end());
  *out = reps[reps.size() / 2];
}

// Arguments: the op numbers to run (default: all).
int main(int argc, char** argv) {
  std::vector<int> ops;
  for (int i = 1; i < argc; ++i) ops.push_back(std::atoi(argv[i]));
  if (ops.empty())
    for (int op = 0; op < kNone; ++op) ops.push_back(op);
  const size_t sizes[] = {8, 16 << 10, 32 << 10, 64 << 10, 1 << 20};
  std::printf("%-26s %-18s %9s %12s %12s\n", "op (rank 0)", "rank 1 does", "bytes", "alone_us",
              "two_ctx_us");
  for (int op : ops)
    for (Op other : {static_cast<Op>(op), kNone})
      for (size_t n : sizes) {
        if (op == kKernel && n != 8) continue;
        double res[2] = {0, 0};
        for (int procs : {1, 2}) {
          auto* t = static_cast<Turn*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
                                            MAP_SHARED | MAP_ANONYMOUS, -1, 0));
          auto* r = static_cast<double*>(static_cast<void*>(reinterpret_cast<char*>(t) + 64));
          new (t) Turn{};
          t->who.store(0);
          std::vector<pid_t> kids;
          for (int me = 0; me < procs; ++me) {
            pid_t p = fork();
            if (p == 0) {
              Rank(me, procs, t, static_cast<Op>(op), other, n, r);
              std::_Exit(0);
            }
            kids.push_back(p);
          }
          for (pid_t p : kids) waitpid(p, nullptr, 0);
          res[procs - 1] = *r;
          munmap(t, 4096);
        }
        std::printf("%-26s %-18s %9zu %12.2f %12.2f\n", kNames[op], kNames[other], n, res[0], res[1]);
        std::fflush(stdout);
      }
}

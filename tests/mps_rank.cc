// A 2-rank program on the public API for launcher_mps_gpu_test: device-to-device round trips of
// 1 B, 8 B, 4 KiB and 1 MiB between the two ranks (on one GPU when the launcher gives them one),
// every received byte checked. Prints "mps_rank: rank R pipe=<CUDA_MPS_PIPE_DIRECTORY or ->" and,
// on rank 0, the mean one-way time per size (for the log; the test asserts no time). Exit 0,
// 3 on a wrong or failed message. alarm(60) bounds it.
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "memcopy/pattern.h"
#include "mpigpu_api/mpigpu.h"

namespace {

int Fail(int rank, const char* what) {
  std::fprintf(stderr, "mps_rank: rank %d: %s\n", rank, what);
  return 3;
}

}  // namespace

int main(int argc, char** argv) {
  alarm(60);
  if (MPIGPU_Init(&argc, &argv) != MPIGPU_SUCCESS) return Fail(-1, "MPIGPU_Init failed");
  int rank = -1, size = 0;
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &size);
  if (size != 2) return Fail(rank, "needs exactly 2 ranks");
  const char* pipe = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  std::printf("mps_rank: rank %d pipe=%s\n", rank, pipe != nullptr ? pipe : "-");
  std::fflush(stdout);
  const int peer = 1 - rank;
  constexpr int kRounds = 200;
  uint32_t seed = 7;
  for (const size_t bytes : {size_t{1}, size_t{8}, size_t{4096}, size_t{1} << 20}) {
    std::vector<unsigned char> host(bytes), got(bytes);
    void* dev = nullptr;
    if (cudaMalloc(&dev, bytes) != cudaSuccess) return Fail(rank, "cudaMalloc");
    ++seed;  // both ranks: rank 0 sends this pattern, rank 1 checks it
    if (rank == 0) {
      mpigpu::testing::FillPattern(host.data(), bytes, seed);
      if (cudaMemcpy(dev, host.data(), bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
          cudaDeviceSynchronize() != cudaSuccess)
        return Fail(rank, "cudaMemcpy H2D");
    }
    const int n = static_cast<int>(bytes);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kRounds; ++i) {
      if (rank == 0) {
        if (MPIGPU_Send(dev, MPIGPU_BUF_GPU, n, MPIGPU_BYTE, peer, 1, MPIGPU_COMM_WORLD) ||
            MPIGPU_Recv(dev, MPIGPU_BUF_GPU, n, MPIGPU_BYTE, peer, 2, MPIGPU_COMM_WORLD,
                        MPIGPU_STATUS_IGNORE))
          return Fail(rank, "a send or receive failed");
      } else {
        if (MPIGPU_Recv(dev, MPIGPU_BUF_GPU, n, MPIGPU_BYTE, peer, 1, MPIGPU_COMM_WORLD,
                        MPIGPU_STATUS_IGNORE) ||
            MPIGPU_Send(dev, MPIGPU_BUF_GPU, n, MPIGPU_BYTE, peer, 2, MPIGPU_COMM_WORLD))
          return Fail(rank, "a send or receive failed");
      }
    }
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
            .count();
    if (cudaMemcpy(got.data(), dev, bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
      return Fail(rank, "cudaMemcpy D2H");
    cudaFree(dev);
    // Both ends hold rank 0's bytes after the round trips.
    if (mpigpu::testing::FirstMismatch(got.data(), bytes, seed) != -1)
      return Fail(rank, "wrong bytes after the round trips");
    if (rank == 0) std::printf("mps_rank: %zu B D->D %.2f us one way\n", bytes, us / kRounds / 2);
  }
  std::fflush(stdout);
  if (MPIGPU_Finalize() != MPIGPU_SUCCESS) return Fail(rank, "MPIGPU_Finalize failed");
  return 0;
}

/* The seed paper's baseline (its Listing 1) over a real MPI library: a device buffer is staged
 * with cudaMemcpy into pinned host memory, sent with MPI_Send / MPI_Recv, and copied back to the
 * device with cudaMemcpy. The same tests as `mpigpu-sweep ... D D` (its "staged" column stages
 * through mpigpu's own host path instead), so the two baselines and mpigpu are measured in one run:
 * half round-trip latency, and bandwidth of a window of W messages then a 1-byte ack.
 *   mpicc -O2 -I$CUDA/include mpi_staged.c -L$CUDA/lib64 -lcudart_static -ldl -lpthread -lrt \
 *     -o mpi_staged
 *   mpirun -n 2 ./mpi_staged [min_bytes] [max_bytes] [window] [iters]
 * Rank r uses device r mod the device count. Each size's received bytes are checked. */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CUDA(call)                                                                   \
  do {                                                                               \
    cudaError_t e_ = (call);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      fprintf(stderr, "mpi_staged: %s: %s\n", #call, cudaGetErrorString(e_));        \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                  \
    }                                                                                \
  } while (0)

static char *dev, *pinned;

static void Send(size_t n, int peer, int tag) {
  CUDA(cudaMemcpy(pinned, dev, n, cudaMemcpyDeviceToHost));
  MPI_Send(pinned, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
}

static void Recv(size_t n, int peer, int tag) {
  MPI_Recv(pinned, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  CUDA(cudaMemcpy(dev, pinned, n, cudaMemcpyHostToDevice));
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, ndev = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  size_t min_bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
  size_t max_bytes = argc > 2 ? strtoull(argv[2], NULL, 10) : ((size_t)256 << 20);
  int window = argc > 3 ? atoi(argv[3]) : 8;
  int bw_iters = argc > 4 ? atoi(argv[4]) : 10;
  if (min_bytes < 1 || max_bytes < min_bytes || max_bytes > ((size_t)1 << 30) || window < 1 ||
      bw_iters < 1) {
    if (rank == 0) fprintf(stderr, "mpi_staged: bad arguments\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  CUDA(cudaGetDeviceCount(&ndev));
  CUDA(cudaSetDevice(rank % ndev));
  CUDA(cudaMalloc((void**)&dev, max_bytes));
  CUDA(cudaMallocHost((void**)&pinned, max_bytes));
  int peer = 1 - rank;
  char ack = 0;
  if (rank == 0)
    printf("# Open MPI manual staging D->D, window %d  (bytes, latency us, bandwidth GB/s, check)\n",
           window);
  for (size_t n = min_bytes; n <= max_bytes; n *= 2) {
    /* Rank 0's device buffer holds a pattern of this size; what rank 1 ends with is checked. */
    unsigned char seed = (unsigned char)(n * 7 + 3);
    if (rank == 0) {
      memset(pinned, seed, n);
      CUDA(cudaMemcpy(dev, pinned, n, cudaMemcpyHostToDevice));
    }
    int iters = n <= 65536 ? 1000 : n <= (1 << 22) ? 100 : 20, warm = iters / 10 + 2;
    double t0 = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < iters + warm; ++i) {
      if (i == warm) t0 = MPI_Wtime();
      if (rank == 0) {
        Send(n, peer, 1);
        Recv(n, peer, 1);
      } else {
        Recv(n, peer, 1);
        Send(n, peer, 1);
      }
    }
    double lat = (MPI_Wtime() - t0) / iters / 2 * 1e6;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < bw_iters + 2; ++i) {
      if (i == 2) t0 = MPI_Wtime();
      for (int w = 0; w < window; ++w) {
        if (rank == 0) Send(n, peer, 2);
        else Recv(n, peer, 2);
      }
      if (rank == 0) MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else MPI_Send(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    }
    double bw = (double)n * window * bw_iters / (MPI_Wtime() - t0) / 1e9;
    int ok = 1;
    if (rank == 1) {
      CUDA(cudaMemcpy(pinned, dev, n, cudaMemcpyDeviceToHost));
      for (size_t k = 0; k < n && ok; ++k) ok = (unsigned char)pinned[k] == seed;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (rank == 0) printf("%12zu %12.2f %12.2f %s\n", n, lat, bw, ok ? "ok" : "WRONG");
    fflush(stdout);
    if (!ok) MPI_Abort(MPI_COMM_WORLD, 1);
  }
  CUDA(cudaFreeHost(pinned));
  CUDA(cudaFree(dev));
  MPI_Finalize();
  return 0;
}

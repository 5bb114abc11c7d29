/* Device pointers straight through mpi.h (2 ranks): device->device, host->device and
 * device->host sends, a nonblocking exchange, Sendrecv_replace, Bcast and Allreduce on device
 * buffers, managed and pinned memory. Without a CUDA device it prints "SKIPPED: ..." and exits 0
 * (the test script reports the skip). */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

#define N 4096

static void fill(int* v, int n, int base) {
  int i;
  for (i = 0; i < n; ++i) v[i] = base + i;
}
static int same(const int* v, int n, int base) {
  int i;
  for (i = 0; i < n; ++i)
    if (v[i] != base + i) return 0;
  return 1;
}
static int devsame(const int* d, int n, int base) {
  int* h = malloc(n * sizeof(int));
  int ok = cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess &&
           same(h, n, base);
  free(h);
  return ok;
}
static void devfill(int* d, int n, int base) {
  int* h = malloc(n * sizeof(int));
  fill(h, n, base);
  cudaMemcpy(d, h, n * sizeof(int), cudaMemcpyHostToDevice);
  free(h);
}

int main(int argc, char** argv) {
  int rank, size, peer, ndev = 0, host[N];
  int *d = NULL, *d2 = NULL, *managed = NULL, *pinned = NULL;
  MPI_Request r[2];
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIPPED: no CUDA device\n");
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  peer = 1 - rank;
  CHECK(size == 2);
  CHECK(cudaMalloc((void**)&d, N * sizeof(int)) == cudaSuccess);
  CHECK(cudaMalloc((void**)&d2, N * sizeof(int)) == cudaSuccess);
  CHECK(cudaMallocManaged((void**)&managed, N * sizeof(int), cudaMemAttachGlobal) == cudaSuccess);
  CHECK(cudaMallocHost((void**)&pinned, N * sizeof(int)) == cudaSuccess);

  /* device -> device */
  if (rank == 0) {
    devfill(d, N, 10);
    CHECK_OK(MPI_Send(d, N, MPI_INT, peer, 1, MPI_COMM_WORLD));
  } else {
    cudaMemset(d, 0, N * sizeof(int));
    CHECK_OK(MPI_Recv(d, N, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(devsame(d, N, 10));
  }
  /* host -> device, device -> host */
  if (rank == 0) {
    fill(host, N, 20);
    CHECK_OK(MPI_Send(host, N, MPI_INT, peer, 2, MPI_COMM_WORLD));
    memset(host, 0, sizeof host);
    CHECK_OK(MPI_Recv(host, N, MPI_INT, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(same(host, N, 30));
  } else {
    CHECK_OK(MPI_Recv(d, N, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(devsame(d, N, 20));
    devfill(d, N, 30);
    CHECK_OK(MPI_Send(d, N, MPI_INT, peer, 3, MPI_COMM_WORLD));
  }
  /* nonblocking exchange between device buffers, Sendrecv_replace on a device buffer */
  devfill(d, N, 100 * rank);
  CHECK_OK(MPI_Irecv(d2, N, MPI_INT, peer, 4, MPI_COMM_WORLD, &r[0]));
  CHECK_OK(MPI_Isend(d, N, MPI_INT, peer, 4, MPI_COMM_WORLD, &r[1]));
  CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
  CHECK(devsame(d2, N, 100 * peer));
  CHECK_OK(MPI_Sendrecv_replace(d, N, MPI_INT, peer, 5, peer, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(devsame(d, N, 100 * peer));
  /* collectives on device buffers */
  devfill(d, N, rank == 0 ? 7 : 0);
  CHECK_OK(MPI_Bcast(d, N, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK(devsame(d, N, 7));
  /* managed and pinned memory go as host memory */
  fill(managed, N, 40 + rank);
  fill(pinned, N, 0);
  CHECK_OK(MPI_Sendrecv(managed, N, MPI_INT, peer, 6, pinned, N, MPI_INT, peer, 6,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(same(pinned, N, 40 + peer));
  cudaFree(d);
  cudaFree(d2);
  cudaFree(managed);
  cudaFreeHost(pinned);
  return mt_finish();
}

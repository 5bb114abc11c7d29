/* One-sided calls on device memory through mpi.h (2 or more ranks, rank r on device
 * r % device count): MPI_Win_allocate with the info key mpi_memory_alloc_kinds = cuda:device
 * returns device memory; Put and Get (under fence and lock + flush) and Accumulate SUM from
 * every rank reach it. Without a CUDA device it prints "SKIPPED: ..." and exits 0 (the test
 * script reports the skip). */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

enum { N = 20000 }; /* 80000 bytes: above the 64 KiB eager limit */

static int devsame(const int* d, int n, int base, int step) {
  int i, ok;
  int* h = malloc(n * sizeof(int));
  ok = cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
  for (i = 0; ok && i < n; ++i) ok = h[i] == base + step * i;
  free(h);
  return ok;
}

int main(int argc, char** argv) {
  int rank, size, ndev = 0, i, flag = 0, right, left;
  int *base = NULL, *src = NULL, *back = NULL, *flavor = NULL;
  struct cudaPointerAttributes attr;
  MPI_Info info;
  MPI_Win win;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    printf("SKIPPED: no CUDA device\n");
    return 0;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(cudaSetDevice(rank % ndev) == cudaSuccess);
  right = (rank + 1) % size;
  left = (rank + size - 1) % size;
  src = malloc(N * sizeof(int));
  back = malloc(N * sizeof(int));
  for (i = 0; i < N; ++i) src[i] = rank * 100000 + i;

  CHECK_OK(MPI_Info_create(&info));
  CHECK_OK(MPI_Info_set(info, "mpi_memory_alloc_kinds", "cuda:device"));
  CHECK_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win));
  CHECK_OK(MPI_Info_free(&info));
  memset(&attr, 0, sizeof attr);
  CHECK(cudaPointerGetAttributes(&attr, base) == cudaSuccess);
  CHECK(attr.type == cudaMemoryTypeDevice && attr.device == rank % ndev);
  CHECK(cudaMemset(base, 0, N * sizeof(int)) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);

  /* Put into the right neighbour under fence; Get it back. */
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK(devsame(base, N, left * 100000, 1));
  memset(back, 0, N * sizeof(int));
  CHECK_OK(MPI_Get(back, N, MPI_INT, right, 0, N, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (i = 0; i < N; ++i) CHECK(back[i] == rank * 100000 + i);

  /* Lock + flush: overwrite the first half, read one word back. */
  for (i = 0; i < N; ++i) src[i] = -(rank * 100000 + i);
  CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win));
  CHECK_OK(MPI_Put(src, N / 2, MPI_INT, right, 0, N / 2, MPI_INT, win));
  CHECK_OK(MPI_Win_flush(right, win));
  back[0] = 1;
  CHECK_OK(MPI_Get(back, 1, MPI_INT, right, N / 2 - 1, 1, MPI_INT, win));
  CHECK_OK(MPI_Win_unlock(right, win));
  CHECK(back[0] == -(rank * 100000 + N / 2 - 1));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(devsame(base, N / 2, -(left * 100000), -1));
  CHECK(devsame(base + N / 2, N / 2, left * 100000 + N / 2, 1));

  /* Accumulate SUM from every rank into rank 0. */
  CHECK(cudaMemset(base, 0, N * sizeof(int)) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  for (i = 0; i < N; ++i) src[i] = i + rank;
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Accumulate(src, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win));
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  if (rank == 0) CHECK(devsame(base, N, size * (size - 1) / 2, size));
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_ALLOCATE);
  CHECK_OK(MPI_Win_free(&win));
  free(src);
  free(back);
  return mt_finish();
}

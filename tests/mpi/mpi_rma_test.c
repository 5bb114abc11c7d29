/* One-sided calls through mpi.h: the windows OSU's benchmarks make (Win_create, Win_allocate,
 * Win_create_dynamic + Win_attach, Win_free), Put/Get/Accumulate under fence and lock + flush,
 * window attributes, names, info and a user error handler on a window. */
#include <stdlib.h>
#include <string.h>

#include "mpi_test.h"

static int handled = 0;
static void on_error(MPI_Win* win, int* code, ...) {
  (void)win;
  handled = *code;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  enum { N = 20000 };
  int* mem = calloc(N, sizeof(int));
  int* src = malloc(N * sizeof(int));
  for (int i = 0; i < N; ++i) src[i] = rank * 100000 + i;
  MPI_Win win;
  CHECK_OK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_OK(MPI_Win_fence(0, win));
  CHECK_OK(MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win));
  CHECK_OK(MPI_Win_fence(0, win));
  for (int i = 0; i < N; ++i) CHECK(mem[i] == left * 100000 + i);
  void* base = NULL;
  MPI_Aint* wsize = NULL;
  int* unit = NULL;
  int* flavor = NULL;
  int* model = NULL;
  int flag = 0;
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag));
  CHECK(flag && base == mem);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag));
  CHECK(flag && *wsize == (MPI_Aint)(N * sizeof(int)));
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag));
  CHECK(flag && *unit == (int)sizeof(int));
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag));
  CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE);
  CHECK_OK(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag));
  CHECK(flag && *model == MPI_WIN_UNIFIED);
  char name[MPI_MAX_OBJECT_NAME];
  int len = 0;
  CHECK_OK(MPI_Win_set_name(win, "halo"));
  CHECK_OK(MPI_Win_get_name(win, name, &len));
  CHECK(len == 4 && strcmp(name, "halo") == 0);
  MPI_Errhandler eh;
  CHECK_OK(MPI_Win_create_errhandler(on_error, &eh));
  CHECK_OK(MPI_Win_set_errhandler(win, eh));
  CHECK(MPI_Put(src, 1, MPI_INT, right, N, 1, MPI_INT, win) == MPI_ERR_RMA_RANGE);
  CHECK(handled == MPI_ERR_RMA_RANGE);
  CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
  CHECK(MPI_Put(src, 1, MPI_INT, right, 0, 1, MPI_INT, win) == MPI_ERR_RMA_SYNC);
  CHECK_OK(MPI_Win_free(&win));
  CHECK(win == MPI_WIN_NULL);

  /* Win_allocate, lock + accumulate + flush, as OSU's acc_latency. */
  double* abuf = NULL;
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "accumulate_ordering", "none");
  CHECK_OK(MPI_Win_allocate(8 * sizeof(double), sizeof(double), info, MPI_COMM_WORLD, &abuf, &win));
  MPI_Info_free(&info);
  MPI_Info used;
  char v[32];
  CHECK_OK(MPI_Win_get_info(win, &used));
  CHECK_OK(MPI_Info_get(used, "accumulate_ordering", sizeof v - 1, v, &flag));
  CHECK(flag && strcmp(v, "none") == 0);
  MPI_Info_free(&used);
  for (int i = 0; i < 8; ++i) abuf[i] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double one[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
  CHECK_OK(MPI_Accumulate(one, 8, MPI_DOUBLE, 0, 0, 8, MPI_DOUBLE, MPI_SUM, win));
  CHECK_OK(MPI_Win_flush(0, win));
  CHECK_OK(MPI_Win_unlock(0, win));
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    for (int i = 0; i < 8; ++i) CHECK(abuf[i] == size);
  CHECK_OK(MPI_Win_free(&win));

  /* Win_create_dynamic + Win_attach. */
  long long cell = -1, got = 0;
  CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
  CHECK_OK(MPI_Win_attach(win, &cell, sizeof cell));
  MPI_Aint addr = 0, *addrs = malloc(size * sizeof(MPI_Aint));
  MPI_Get_address(&cell, &addr);
  MPI_Allgather(&addr, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
  long long mine = rank;
  CHECK_OK(MPI_Win_lock_all(0, win));
  CHECK_OK(MPI_Put(&mine, 1, MPI_LONG_LONG, right, addrs[right], 1, MPI_LONG_LONG, win));
  CHECK_OK(MPI_Win_flush_all(win));
  CHECK_OK(MPI_Get(&got, 1, MPI_LONG_LONG, right, addrs[right], 1, MPI_LONG_LONG, win));
  CHECK_OK(MPI_Win_unlock_all(win));
  CHECK(got == rank);
  MPI_Barrier(MPI_COMM_WORLD);
  CHECK(cell == left);
  CHECK_OK(MPI_Win_detach(win, &cell));
  CHECK_OK(MPI_Win_free(&win));
  free(addrs);
  free(mem);
  free(src);
  return mt_finish();
}

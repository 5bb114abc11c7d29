/* The same ping-pong as benchmarks/pingpong.cc over MPI (Open MPI on the GPU machine), so both
 * are measured in one run: half round-trip latency and a 64-message window then an ack.
 *   mpicc -O2 -o mpi_pingpong mpi_pingpong.c && mpirun -n 2 ./mpi_pingpong [max_bytes] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  size_t max_bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : ((size_t)64 << 20);
  char* buf = malloc(max_bytes);
  memset(buf, 1, max_bytes);
  int peer = 1 - rank;
  char ack = 0;
  MPI_Request reqs[64];
  if (rank == 0) printf("# Open MPI pingpong H->H  (bytes, latency us, bandwidth GB/s)\n");
  for (size_t n = 1; n <= max_bytes; n *= 4) {
    int iters = n <= 65536 ? 2000 : n <= (1 << 22) ? 200 : 20, warm = iters / 10 + 2;
    double t0 = 0;
    for (int i = 0; i < iters + warm; ++i) {
      if (i == warm) t0 = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      }
    }
    double lat = (MPI_Wtime() - t0) / iters / 2 * 1e6;
    int bw_iters = n <= (1 << 20) ? 20 : 4;
    for (int i = 0; i < bw_iters + 2; ++i) {
      if (i == 2) t0 = MPI_Wtime();
      for (int w = 0; w < 64; ++w) {
        if (rank == 0) MPI_Isend(buf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[w]);
        else MPI_Irecv(buf, (int)n, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &reqs[w]);
      }
      MPI_Waitall(64, reqs, MPI_STATUSES_IGNORE);
      if (rank == 0) MPI_Recv(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      else MPI_Send(&ack, 1, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
    }
    double bw = (double)n * 64 * bw_iters / (MPI_Wtime() - t0) / 1e9;
    if (rank == 0) printf("%12zu %12.2f %12.2f\n", n, lat, bw);
    fflush(stdout);
  }
  free(buf);
  MPI_Finalize();
  return 0;
}

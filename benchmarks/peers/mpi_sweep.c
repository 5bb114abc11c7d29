/* mpigpu-sweep's host-buffer latency and bw tests over MPI, for a comparison in one run
 * (benchmarks/netns_bench.sh runs it under Open MPI's TCP BTL): the same message pattern, the
 * same timing and the same defaults as tools/sweep_mpigpu.cc and tools/sweep_options.cc, so the
 * two differ only in the library under them.
 *   latency: rank 0 sends and receives, rank 1 receives and sends; value = time / iters / 2 (us)
 *   bw:      a window of messages rank 0 -> rank 1, then a 1-byte ack; value = GB/s (1e9 B/s)
 * Timing (OSU's, as sweep_series.h TimedLoop): a barrier, `warm` untimed runs, `iters` timed.
 * Defaults: latency 10000 iterations (100 warm-up) up to 8 KiB, 1000 (10) above; bw 100 (10) up
 * to 8 KiB, 20 (2) above; window 64. Sizes MIN, 2*MIN, ..., MAX. Buffers: page-aligned malloc.
 *
 *   mpi_sweep latency|bw [-m [MIN:]MAX] [-i N] [-x N] [-W N]
 * Rank 0 prints "test,size,value,unit" lines (CSV, with that header). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kLargeMessage = 8192, kTagData = 1, kTagAck = 2 };

static int Usage(int rank, const char* why) {
  if (rank == 0)
    fprintf(stderr, "mpi_sweep: %s\nusage: mpi_sweep latency|bw [-m [MIN:]MAX] [-i N] [-x N] [-W N]\n",
            why);
  return 2;
}

/* A size with an optional K/M/G suffix (powers of 1024); 0 when malformed. */
static size_t ParseSize(const char* s) {
  char* end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return 0;
  if (*end == 'K') v <<= 10, ++end;
  else if (*end == 'M') v <<= 20, ++end;
  else if (*end == 'G') v <<= 30, ++end;
  return *end == '\0' ? (size_t)v : 0;
}

static int ParseCount(const char* s, int* out) {
  char* end = NULL;
  long v = strtol(s, &end, 10);
  if (end == s || *end != '\0' || v < 0 || v > 100000000) return 0;
  *out = (int)v;
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int bw = -1, iters_opt = -1, warm_opt = -1, window = 64, rc = 0;
  size_t min_size = 1, max_size = (size_t)4 << 20;
  for (int i = 1; i < argc && rc == 0; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "latency")) bw = 0;
    else if (!strcmp(a, "bw")) bw = 1;
    else if (v == NULL) rc = Usage(rank, "an option lacks its value");
    else if (!strcmp(a, "-m")) {
      char text[64];
      snprintf(text, sizeof text, "%s", v);
      char* colon = strchr(text, ':');
      if (colon) *colon = '\0', min_size = ParseSize(text);
      max_size = ParseSize(colon ? colon + 1 : text);
      if (min_size == 0 || max_size < min_size || max_size > ((size_t)1 << 30))
        rc = Usage(rank, "bad -m");
      ++i;
    } else if (!strcmp(a, "-i")) rc = ParseCount(v, &iters_opt) && iters_opt > 0 ? 0 : Usage(rank, "bad -i"), ++i;
    else if (!strcmp(a, "-x")) rc = ParseCount(v, &warm_opt) ? 0 : Usage(rank, "bad -x"), ++i;
    else if (!strcmp(a, "-W")) rc = ParseCount(v, &window) && window >= 1 && window <= 4096 ? 0 : Usage(rank, "bad -W"), ++i;
    else rc = Usage(rank, "unknown argument");
  }
  if (rc == 0 && bw < 0) rc = Usage(rank, "name the test: latency or bw");
  if (rc == 0 && size != 2) rc = Usage(rank, "needs exactly 2 ranks");
  char *sbuf = NULL, *rbuf = NULL;
  MPI_Request* reqs = NULL;
  if (rc == 0 && (posix_memalign((void**)&sbuf, 4096, max_size) != 0 ||
                  posix_memalign((void**)&rbuf, 4096, max_size) != 0 ||
                  (reqs = malloc(sizeof *reqs * (size_t)window)) == NULL)) {
    fprintf(stderr, "mpi_sweep: out of memory\n");
    rc = 1;
  }
  if (rc != 0) {
    MPI_Finalize();
    return rc;
  }
  memset(sbuf, rank + 1, max_size);
  memset(rbuf, 0, max_size);
  const int peer = 1 - rank;
  if (rank == 0) printf("test,size,value,unit\n");
  for (size_t n = min_size; n <= max_size; n *= 2) {
    const int large = n > kLargeMessage;
    const int iters = iters_opt > 0 ? iters_opt : bw ? (large ? 20 : 100) : (large ? 1000 : 10000);
    const int warm = warm_opt >= 0 ? warm_opt : bw ? (large ? 2 : 10) : (large ? 10 : 100);
    const int count = (int)n;
    char ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < warm + iters; ++i) {
      if (i == warm) t0 = MPI_Wtime();
      if (!bw && rank == 0) {
        MPI_Send(sbuf, count, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD);
        MPI_Recv(rbuf, count, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (!bw) {
        MPI_Recv(rbuf, count, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(sbuf, count, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD);
      } else if (rank == 0) {
        for (int w = 0; w < window; ++w)
          MPI_Isend(sbuf, count, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, &reqs[w]);
        MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_BYTE, peer, kTagAck, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        for (int w = 0; w < window; ++w)
          MPI_Irecv(rbuf, count, MPI_BYTE, peer, kTagData, MPI_COMM_WORLD, &reqs[w]);
        MPI_Waitall(window, reqs, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, peer, kTagAck, MPI_COMM_WORLD);
      }
    }
    const double seconds = MPI_Wtime() - t0;
    const double value = bw ? (double)n * window * iters / seconds / 1e9
                            : seconds / iters / 2 * 1e6;
    if (rank == 0) printf("%s,%zu,%.6g,%s\n", bw ? "bw" : "latency", n, value, bw ? "GB/s" : "us");
    fflush(stdout);
  }
  free(reqs);
  free(sbuf);
  free(rbuf);
  MPI_Finalize();
  return 0;
}

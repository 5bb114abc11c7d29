// A rank program on the public API for pmix_launch_test, started by a PMIx launcher (Open MPI's
// mpirun):
//
//   pmix_rank pairs        every ordered pair of ranks exchanges messages of 1 B, 1000 B (eager),
//                          64 KiB + 3 and 1 MiB + 1 (large) each way (every shift of a ring, by
//                          Sendrecv), each byte checked; Barrier; prints
//                          "pmix_rank R/N local L/M launcher X" (L of M: its rank among its
//                          node's ranks, by Comm_split_type SHARED; X: the launcher's own word
//                          for it, SLURM_LOCALID or OMPI_COMM_WORLD_LOCAL_RANK, "?" if neither)
//                          and "pmix_rank R/N ok";
//                          Finalize; exit 0 (3 on a wrong or failed message)
//   pmix_rank die R        after Init and a Barrier, every other rank sends rank R a word and
//                          blocks receiving from it; rank R, once it has every word (so nobody
//                          still needs a message of its from the Barrier), prints "pmix_rank R
//                          dies at T" (T: CLOCK_MONOTONIC's seconds, one clock for every process
//                          of a host and its network namespaces) and SIGKILLs itself. The others'
//                          receive ends (by the launcher or by the peer's failure, never a hang):
//                          they print "pmix_rank: rank r: the receive from the killed rank ended
//                          with C at T: <MPIGPU_Error_string>"
//   pmix_rank die-unseen R rank R SIGKILLs itself right after Init, before any message, first
//                          printing "pmix_rank R dies at T"; the others call MPIGPU_Finalize at
//                          once and print "pmix_rank r: finalize returned C at T: <its error
//                          string>" (if their launcher has not ended them first)
//   pmix_rank block DIR    writes DIR/rank-<rank>.pid, then blocks receiving from the next rank
//                          (which never sends): only its launcher's end ends it
//   pmix_rank late R S     rank R (PMIX_RANK) sleeps S seconds before MPIGPU_Init, then as
//                          pairs: the others' start-up exchange must time out, not wait
// alarm(60) bounds every run.
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "mpigpu_api/mpigpu.h"

namespace {

int Fail(int rank, const std::string& what) {
  std::fprintf(stderr, "pmix_rank: rank %d: %s\n", rank, what.c_str());
  return 3;
}

unsigned char Byte(int from, int to, size_t i) {
  return static_cast<unsigned char>(from * 131 + to * 31 + i * 7 + (i >> 8));
}

// "" or what went wrong.
std::string AllPairs(int rank, int size) {
  for (const size_t n : {size_t{1}, size_t{1000}, size_t{65536 + 3}, size_t{(1 << 20) + 1}}) {
    std::vector<unsigned char> out(n), in(n);
    for (int d = 1; d < size; ++d) {
      const int to = (rank + d) % size, from = (rank - d + size) % size;
      for (size_t i = 0; i < n; ++i) out[i] = Byte(rank, to, i);
      std::fill(in.begin(), in.end(), 0);
      if (MPIGPU_Sendrecv(out.data(), MPIGPU_BUF_HOST, static_cast<int>(n), MPIGPU_BYTE, to, d,
                          in.data(), MPIGPU_BUF_HOST, static_cast<int>(n), MPIGPU_BYTE, from, d,
                          MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE) != MPIGPU_SUCCESS)
        return "Sendrecv of " + std::to_string(n) + " B with " + std::to_string(to) + "/" +
               std::to_string(from) + " failed";
      for (size_t i = 0; i < n; ++i)
        if (in[i] != Byte(from, rank, i))
          return "byte " + std::to_string(i) + " of " + std::to_string(n) + " from rank " +
                 std::to_string(from) + " is wrong";
    }
  }
  return "";
}

double Now() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + t.tv_nsec * 1e-9;
}

[[noreturn]] void Die(int rank) {
  std::fprintf(stderr, "pmix_rank %d dies at %.6f\n", rank, Now());
  std::fflush(stderr);
  raise(SIGKILL);
  _exit(9);
}

// " at T: <the error's detail>" for an API error code.
std::string When(int rc) {
  char text[MPIGPU_MAX_ERROR_STRING] = "";
  int n = 0;
  MPIGPU_Error_string(rc, text, &n);
  char at[64];
  std::snprintf(at, sizeof at, " at %.6f: ", Now());
  return at + std::string(text);
}

}  // namespace

int main(int argc, char** argv) {
  alarm(60);
  if (argc < 2) {
    std::fprintf(stderr, "usage: pmix_rank pairs | die R | die-unseen R | block DIR | late R S\n");
    return 100;
  }
  std::string mode = argv[1];
  if (mode == "late" && argc == 4) {
    const char* me = std::getenv("PMIX_RANK");
    if (me != nullptr && std::atoi(me) == std::atoi(argv[2])) sleep(std::atoi(argv[3]));
    mode = "pairs";
  }
  if (MPIGPU_Init(&argc, &argv) != MPIGPU_SUCCESS) return Fail(-1, "MPIGPU_Init failed");
  int rank = -1, size = 0;
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &size);
  if (mode == "pairs") {
    const std::string bad = AllPairs(rank, size);
    if (!bad.empty()) return Fail(rank, bad);
    if (MPIGPU_Barrier(MPIGPU_COMM_WORLD) != MPIGPU_SUCCESS) return Fail(rank, "barrier failed");
    MPIGPU_Comm node;
    int local = -1, local_size = 0;
    if (MPIGPU_Comm_split_type(MPIGPU_COMM_WORLD, MPIGPU_COMM_TYPE_SHARED, rank, MPIGPU_INFO_NULL,
                               &node) != MPIGPU_SUCCESS)
      return Fail(rank, "Comm_split_type failed");
    MPIGPU_Comm_rank(node, &local);
    MPIGPU_Comm_size(node, &local_size);
    MPIGPU_Comm_free(&node);
    const char* said = std::getenv("SLURM_LOCALID");
    if (said == nullptr) said = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    std::printf("pmix_rank %d/%d local %d/%d launcher %s\n", rank, size, local, local_size,
                said ? said : "?");
    std::printf("pmix_rank %d/%d ok\n", rank, size);
    std::fflush(stdout);
  } else if (mode == "die" && argc == 3) {
    const int victim = std::atoi(argv[2]);
    if (MPIGPU_Barrier(MPIGPU_COMM_WORLD) != MPIGPU_SUCCESS) return Fail(rank, "barrier failed");
    int x = 0;
    if (rank == victim) {
      for (int r = 0; r < size; ++r)
        if (r != victim &&
            MPIGPU_Recv(&x, MPIGPU_BUF_HOST, 1, MPIGPU_INT, r, 6, MPIGPU_COMM_WORLD,
                        MPIGPU_STATUS_IGNORE) != MPIGPU_SUCCESS)
          return Fail(rank, "no word from rank " + std::to_string(r));
      Die(rank);
    }
    if (MPIGPU_Send(&x, MPIGPU_BUF_HOST, 1, MPIGPU_INT, victim, 6, MPIGPU_COMM_WORLD) !=
        MPIGPU_SUCCESS)
      return Fail(rank, "the word to rank " + std::to_string(victim) + " failed");
    MPIGPU_Comm_set_errhandler(MPIGPU_COMM_WORLD, MPIGPU_ERRORS_RETURN);
    const int rc = MPIGPU_Recv(&x, MPIGPU_BUF_HOST, 1, MPIGPU_INT, victim, 7, MPIGPU_COMM_WORLD,
                               MPIGPU_STATUS_IGNORE);
    return Fail(rank, "the receive from the killed rank ended with " + std::to_string(rc) +
                          When(rc));
  } else if (mode == "die-unseen" && argc == 3) {
    if (rank == std::atoi(argv[2])) Die(rank);
    MPIGPU_Comm_set_errhandler(MPIGPU_COMM_WORLD, MPIGPU_ERRORS_RETURN);
    const int rc = MPIGPU_Finalize();
    std::fprintf(stderr, "pmix_rank %d: finalize returned %d%s\n", rank, rc, When(rc).c_str());
    return 0;
  } else if (mode == "block" && argc == 3) {
    const std::string path = std::string(argv[2]) + "/rank-" + std::to_string(rank) + ".pid";
    if (FILE* f = std::fopen(path.c_str(), "w")) {
      std::fprintf(f, "%d\n", static_cast<int>(getpid()));
      std::fclose(f);
    }
    int x = 0;
    MPIGPU_Recv(&x, MPIGPU_BUF_HOST, 1, MPIGPU_INT, (rank + 1) % size, 99, MPIGPU_COMM_WORLD,
                MPIGPU_STATUS_IGNORE);
    return Fail(rank, "the receive ended");
  } else {
    return Fail(rank, "bad arguments");
  }
  if (MPIGPU_Finalize() != MPIGPU_SUCCESS) return Fail(rank, "MPIGPU_Finalize failed");
  return 0;
}

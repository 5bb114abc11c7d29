// A rank program on the public API for the launcher's end-to-end tests (launcher_e2e_test):
//
//   launcher_rank ok                  Init, Barrier, Finalize, exit 0
//   launcher_rank no-finalize R       as ok, but rank R returns 0 from main without Finalize (the
//                                     others exit 0 whatever their Finalize returns)
//   launcher_rank pairs               Init, then every pair of ranks exchanges a small and a large
//                                     message (every shift of a ring, by Sendrecv), each byte
//                                     checked; Finalize, exit 0 (3 on a wrong or failed message)
//   launcher_rank recv-forever DIR    Init, make /dev/shm/mpigpu-<uid>-<jobid>-test-<rank>, write
//                                     "<pid> <jobid>" to DIR/rank-<rank>.pid, then block in
//                                     MPIGPU_Recv from a peer that never sends (ended only by
//                                     its launcher's death)
//   launcher_rank die-unseen R        Init, then rank R kills itself (SIGKILL) before any message;
//                                     the others wait 0.3 s, finalize without ever talking to
//                                     it, print what MPIGPU_Finalize returned and exit 0 (the
//                                     launcher's report is the test)
//   launcher_rank secret-gone         as pairs, after checking that MPIGPU_Init took the job's
//                                     secret out of the environment: getenv finds no
//                                     MPIGPU_JOB_SECRET, nor does a child shell (exit 4 if either
//                                     does)
// alarm(60) bounds every run, so nothing outlives a broken test for long.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mpigpu_api/mpigpu.h"

namespace {

int Fail(int rank, const char* what) {
  std::fprintf(stderr, "launcher_rank: rank %d: %s\n", rank, what);
  return 3;
}

bool Record(const std::string& dir, int rank) {
  const char* jobid = std::getenv("MPIGPU_JOBID");
  if (jobid == nullptr) return false;
  std::string shm = "/dev/shm/mpigpu-" + std::to_string(getuid()) + "-" + jobid + "-test-" +
                    std::to_string(rank);
  int fd = open(shm.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  std::string path = dir + "/rank-" + std::to_string(rank) + ".pid";
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return false;
  std::fprintf(f, "%d %s\n", static_cast<int>(getpid()), jobid);
  return std::fclose(f) == 0 && std::rename(tmp.c_str(), path.c_str()) == 0;
}

// What rank `from` sends rank `to` as its i-th int.
int Word(int from, int to, int i) { return from * 1000003 + to * 7919 + i; }

// Every ordered pair of ranks, a small (eager) and a large message each way; false on an error
// or a wrong value.
bool AllPairs(int rank, int size) {
  for (const int count : {16, 1 << 18}) {
    std::vector<int> out(static_cast<size_t>(count)), in(static_cast<size_t>(count));
    for (int d = 1; d < size; ++d) {
      const int to = (rank + d) % size, from = (rank - d + size) % size;
      for (int i = 0; i < count; ++i) out[static_cast<size_t>(i)] = Word(rank, to, i);
      if (MPIGPU_Sendrecv(out.data(), MPIGPU_BUF_HOST, count, MPIGPU_INT, to, d, in.data(),
                          MPIGPU_BUF_HOST, count, MPIGPU_INT, from, d, MPIGPU_COMM_WORLD,
                          MPIGPU_STATUS_IGNORE) != MPIGPU_SUCCESS)
        return false;
      for (int i = 0; i < count; ++i)
        if (in[static_cast<size_t>(i)] != Word(from, rank, i)) return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  alarm(60);
  if (argc < 2) {
    std::fprintf(stderr, "usage: launcher_rank ok | pairs | no-finalize R | recv-forever DIR | "
                         "die-unseen R\n");
    return 100;
  }
  const std::string mode = argv[1];
  if (MPIGPU_Init(&argc, &argv) != MPIGPU_SUCCESS) return Fail(-1, "MPIGPU_Init failed");
  int rank = -1, size = 0;
  MPIGPU_Comm_rank(MPIGPU_COMM_WORLD, &rank);
  MPIGPU_Comm_size(MPIGPU_COMM_WORLD, &size);
  if (mode == "recv-forever" && argc == 3) {
    if (!Record(argv[2], rank)) return Fail(rank, "cannot record itself");
    int x = 0;
    MPIGPU_Recv(&x, MPIGPU_BUF_HOST, 1, MPIGPU_INT, (rank + 1) % size, 99, MPIGPU_COMM_WORLD,
                MPIGPU_STATUS_IGNORE);
    return Fail(rank, "the receive ended");
  }
  if (mode == "die-unseen" && argc == 3) {
    if (rank == std::atoi(argv[2])) raise(SIGKILL);
    usleep(300 * 1000);
    MPIGPU_Comm_set_errhandler(MPIGPU_COMM_WORLD, MPIGPU_ERRORS_RETURN);
    const int rc = MPIGPU_Finalize();
    std::fprintf(stderr, "launcher_rank: rank %d: MPIGPU_Finalize returned %d\n", rank, rc);
    return 0;
  }
  if (mode == "secret-gone") {
    if (std::getenv("MPIGPU_JOB_SECRET") != nullptr) {
      Fail(rank, "MPIGPU_JOB_SECRET is still in the environment after MPIGPU_Init");
      return 4;
    }
    if (std::system("test -z \"$MPIGPU_JOB_SECRET\"") != 0) {
      Fail(rank, "a child process inherited MPIGPU_JOB_SECRET");
      return 4;
    }
  }
  if ((mode == "pairs" || mode == "secret-gone") && !AllPairs(rank, size))
    return Fail(rank, "a message between a pair failed");
  if (MPIGPU_Barrier(MPIGPU_COMM_WORLD) != MPIGPU_SUCCESS) return Fail(rank, "barrier failed");
  if (mode == "no-finalize" && argc == 3) {
    if (rank == std::atoi(argv[2])) return 0;
    // The others finalize after a peer that left without it: whatever MPIGPU_Finalize says about
    // that, they exit 0, so the launcher's report is about the rank that skipped it alone.
    MPIGPU_Comm_set_errhandler(MPIGPU_COMM_WORLD, MPIGPU_ERRORS_RETURN);
    MPIGPU_Finalize();
    return 0;
  }
  if (mode != "ok" && mode != "pairs" && mode != "secret-gone") return Fail(rank, "bad arguments");
  if (MPIGPU_Finalize() != MPIGPU_SUCCESS) return Fail(rank, "MPIGPU_Finalize failed");
  return 0;
}

// A rank program for the launcher's end-to-end tests.
//
//   launcher_probe OUTDIR ACTION [ARGS]
//
// Every rank first creates /dev/shm/mpigpu-<uid>-<jobid>-test-<rank> (so the tests can check the
// launcher's sweep), then writes OUTDIR/rank-<rank>.env: its whole environment plus
// "probe.pid=<pid>" and "probe.affinity=<cpu,cpu,...>" (written to a temporary name and renamed,
// so a file that exists is complete). Then ACTION:
//   ok                      exit 0
//   exit R CODE             rank R exits with CODE once every rank wrote its file; others sleep
//   exit-stubborn R CODE    as exit, but the sleeping ranks ignore SIGTERM (forces SIGKILL)
//   kill R SIG              rank R raises SIG once every rank wrote its file; others sleep
//   sleep                   every rank sleeps (until the launcher ends it)
//   exit-now R CODE         rank R exits with CODE at once (without waiting for the others); the
//                           others busy-wait on 8 threads each, as ranks waiting for a creator
//                           that never comes do, crowding the launcher out of the CPUs
//   foreign                 every rank also makes /dev/shm/mpigpu-<uid>-<jobid>-foreign-<rank>
//                           owned by uid 65534 (another user's name with the job's prefix; needs
//                           root), then exits 0
//   joined-only R           every rank tells the launcher it joined the job (as MPIGPU_Init does,
//                           through transport/launcher_link.h); rank R then exits 0 without
//                           saying it finalized, the others sleep
//   chatter N               N lines to stdout and N to stderr, each written in three pieces with
//                           pauses between (so ranks' pieces meet in the launcher), "rank R out|err
//                           I " and a run of (I * 131) % 5000 letters; then "rank R tail" on
//                           stdout without a newline; exit 0 (tests of --tag-output)
// Sleeps and busy waits are bounded (60 s) so nothing outlives a broken test for long.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "transport/launcher_link.h"

extern char** environ;

namespace {

int EnvInt(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : -1;
}

std::string Affinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return "error";
  std::string list;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    if (!list.empty()) list += ",";
    list += std::to_string(c);
  }
  return list;
}

bool CreateShmFile(int rank) {
  const char* jobid = std::getenv("MPIGPU_JOBID");
  if (jobid == nullptr) return false;
  std::string path = "/dev/shm/mpigpu-" + std::to_string(getuid()) + "-" + jobid + "-test-" +
                     std::to_string(rank);
  int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  close(fd);
  return true;
}

// Another user's name with the job's prefix (root only: creates it, then gives it away).
bool CreateForeignShmFile(int rank) {
  const char* jobid = std::getenv("MPIGPU_JOBID");
  if (jobid == nullptr) return false;
  std::string path = "/dev/shm/mpigpu-" + std::to_string(getuid()) + "-" + jobid + "-foreign-" +
                     std::to_string(rank);
  int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  bool ok = fchown(fd, 65534, 65534) == 0;
  close(fd);
  return ok;
}

// Spins on `threads` threads for at most 60 s, then exits 0.
[[noreturn]] void BusyWait(int threads) {
  const time_t until = time(nullptr) + 60;
  auto spin = [until] {
    volatile unsigned long n = 0;
    while (time(nullptr) < until) ++n;
    std::_Exit(0);
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back(spin);
  spin();
  std::_Exit(0);
}

bool WriteEnvFile(const std::string& dir, int rank) {
  std::string path = dir + "/rank-" + std::to_string(rank) + ".env";
  std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return false;
  for (char** e = environ; *e; ++e) std::fprintf(f, "%s\n", *e);
  std::fprintf(f, "probe.pid=%d\nprobe.affinity=%s\n", static_cast<int>(getpid()),
               Affinity().c_str());
  bool ok = std::fclose(f) == 0;
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Waits (at most 10 s) until `size` ranks have written their files.
void WaitForAllFiles(const std::string& dir, int size) {
  for (int tries = 0; tries < 1000; ++tries) {
    int n = 0;
    if (DIR* d = opendir(dir.c_str())) {
      while (struct dirent* e = readdir(d)) {
        size_t len = std::strlen(e->d_name);
        n += std::strncmp(e->d_name, "rank-", 5) == 0 && len > 4 &&
             std::strcmp(e->d_name + len - 4, ".env") == 0;
      }
      closedir(d);
    }
    if (n >= size) return;
    usleep(10000);
  }
}

// Every byte of `text` to `fd`, in three pieces with a pause between.
void WriteInPieces(int fd, const std::string& text) {
  const size_t cuts[] = {0, text.size() / 3, text.size() * 2 / 3, text.size()};
  for (int i = 0; i < 3; ++i) {
    size_t at = cuts[i];
    while (at < cuts[i + 1]) {
      const ssize_t w = write(fd, text.data() + at, cuts[i + 1] - at);
      if (w <= 0) return;
      at += static_cast<size_t>(w);
    }
    usleep(100);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: launcher_probe OUTDIR ok|exit|exit-stubborn|kill|sleep|exit-now|foreign|joined-only|chatter [args]\n");
    return 100;
  }
  const std::string dir = argv[1];
  const std::string action = argv[2];
  const int rank = EnvInt("MPIGPU_RANK");
  const int size = EnvInt("MPIGPU_SIZE");
  if (action == "exit-stubborn") signal(SIGTERM, SIG_IGN);  // before the file: see WaitForAllFiles
  if (rank < 0 || size < 1 || !CreateShmFile(rank) || !WriteEnvFile(dir, rank)) {
    std::fprintf(stderr, "launcher_probe: rank %d cannot record itself\n", rank);
    return 101;
  }

  if (action == "ok") return 0;
  if ((action == "exit" || action == "exit-stubborn" || action == "kill") && argc == 5) {
    if (rank == std::atoi(argv[3])) {
      WaitForAllFiles(dir, size);
      if (action == "kill") raise(std::atoi(argv[4]));
      return std::atoi(argv[4]);
    }
    sleep(60);
    return 0;
  }
  if (action == "exit-now" && argc == 5) {
    if (rank == std::atoi(argv[3])) return std::atoi(argv[4]);
    BusyWait(8);
  }
  if (action == "joined-only" && argc == 4) {
    mpigpu::transport::LauncherLinkJoined(rank);
    if (rank == std::atoi(argv[3])) return 0;
    sleep(60);
    return 0;
  }
  if (action == "foreign") {
    if (!CreateForeignShmFile(rank)) {
      std::fprintf(stderr, "launcher_probe: rank %d cannot make a foreign name\n", rank);
      return 102;
    }
    return 0;
  }
  if (action == "chatter" && argc == 4) {
    const int lines = std::atoi(argv[3]);
    for (int i = 0; i < lines; ++i) {
      const std::string run(static_cast<size_t>(i * 131 % 5000),
                            static_cast<char>('a' + rank % 26));
      const std::string head = "rank " + std::to_string(rank);
      const std::string tail = " " + std::to_string(i) + " " + run + "\n";
      WriteInPieces(1, head + " out" + tail);
      WriteInPieces(2, head + " err" + tail);
    }
    WriteInPieces(1, "rank " + std::to_string(rank) + " tail");
    return 0;
  }
  if (action == "sleep") {
    sleep(60);
    return 0;
  }
  std::fprintf(stderr, "launcher_probe: bad action '%s'\n", action.c_str());
  return 100;
}

// A rank for pmix_launch_test's secret check, on the engine (the API does not show the secret):
// started by a PMIx launcher with MPIGPU_SHM=0 (so the job exchanges cards and its secret through
// PMIx), each rank joins, takes the job's secret and looks for it, raw and as hex, in
//   every file under the directories named on the command line (the launcher's session
//     directory, which holds PMIx's store, and /dev/shm) that other users may read, and
//   every process's command line (/proc/*/cmdline, readable by anyone).
// Prints "pmix_secret_rank R: F world-readable files, C command lines, clean"; exit 3 when the
// secret is found (the place named, never the secret), 2 when the job has no 16-byte secret.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "transport/core/job_secret.h"
#include "transport/engine.h"
#include "wiring/job_source.h"
#include "wiring/start.h"

namespace {

std::string Slurp(const std::string& path, size_t max) {
  std::ifstream in(path, std::ios::binary);
  std::string s;
  char buf[65536];
  while (in && s.size() < max) {
    in.read(buf, sizeof buf);
    s.append(buf, static_cast<size_t>(in.gcount()));
  }
  return s;
}

bool Holds(const std::string& text, const std::vector<std::string>& needles) {
  for (const std::string& n : needles)
    if (text.find(n) != std::string::npos) return true;
  return false;
}

// Walks `dir`; counts the files others may read, and names the ones holding a needle.
void Scan(const std::string& dir, const std::vector<std::string>& needles, int* files,
          std::vector<std::string>* found) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string path = dir + "/" + name;
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      Scan(path, needles, files, found);
    } else if (S_ISREG(st.st_mode) && (st.st_mode & S_IROTH)) {
      ++*files;
      if (Holds(Slurp(path, 64u << 20), needles)) found->push_back(path);
    }
  }
  closedir(d);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mpigpu;
  transport::JobInfo job;
  Status st = wiring::JobFromLauncher(&job);
  std::unique_ptr<transport::Engine> e;
  if (st.ok()) st = wiring::StartEngine(job, &e);
  if (!st.ok()) {
    std::fprintf(stderr, "pmix_secret_rank: %s\n", st.ToString().c_str());
    return 1;
  }
  const std::string secret = e->boot().secret();
  if (secret.size() != transport::kJobSecretBytes) {
    std::fprintf(stderr, "pmix_secret_rank %d: the job has no secret\n", job.rank);
    return 2;
  }
  const std::vector<std::string> needles = {secret, transport::JobSecretHex(secret)};
  int files = 0, cmdlines = 0;
  std::vector<std::string> found;
  for (int i = 1; i < argc; ++i) Scan(argv[i], needles, &files, &found);
  if (DIR* d = opendir("/proc")) {
    while (dirent* p = readdir(d)) {
      if (p->d_name[0] < '0' || p->d_name[0] > '9') continue;
      const std::string path = std::string("/proc/") + p->d_name + "/cmdline";
      ++cmdlines;
      if (Holds(Slurp(path, 1u << 20), needles)) found.push_back(path);
    }
    closedir(d);
  }
  (void)e->Finalize();
  for (const std::string& f : found)
    std::fprintf(stderr, "pmix_secret_rank %d: the job's secret is in %s\n", job.rank, f.c_str());
  if (!found.empty()) return 3;
  std::printf("pmix_secret_rank %d: %d world-readable files, %d command lines, clean\n", job.rank,
              files, cmdlines);
  return 0;
}

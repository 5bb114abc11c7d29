// mpigpu ranks started by PRRTE's prterun, the PMIx reference runtime: the cases every PMIx
// launcher's test runs (tests/pmix_launcher.h: 2 and 4 ranks by shared memory with every pair's
// bytes checked, MPIGPU_SHM=0 by tcp with cards and secret through PMIx, the secret in no
// world-readable file, a libpmix that cannot be loaded, a killed rank, a killed prterun).
// Debian 12 has no PRRTE package: tests/prrte/build.sh builds PRRTE 2.0.2 against Debian's
// libpmix 4.2.2. Looked for in $MPIGPU_TEST_PRRTE (an installation prefix), /opt/prrte and PATH;
// skips with the reason where none is installed (CI).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/e2e_util.h"
#include "tests/pmix_launcher.h"

namespace {

using mpigpu::testing::PmixLauncherCases;
using mpigpu::testing::RunOptions;

// prterun's path, or "" when no PRRTE is installed.
std::string FindPrterun() {
  std::vector<std::string> candidates;
  if (const char* prefix = std::getenv("MPIGPU_TEST_PRRTE"))
    candidates.push_back(std::string(prefix) + "/bin/prterun");
  candidates.push_back("/opt/prrte/bin/prterun");
  if (const char* path = std::getenv("PATH")) {
    std::string p = path;
    for (size_t start = 0; start <= p.size();) {
      const size_t end = std::min(p.find(':', start), p.size());
      if (end > start) candidates.push_back(p.substr(start, end - start) + "/prterun");
      start = end + 1;
    }
  }
  for (const std::string& c : candidates)
    if (access(c.c_str(), X_OK) == 0) return c;
  return "";
}

class PrrteLauncher final : public mpigpu::testing::PmixLauncher {
 public:
  std::string name() const override { return "prterun"; }
  std::string Prepare(std::string* skip) override {
    prterun_ = FindPrterun();
    if (prterun_.empty())
      *skip = "PRRTE is not installed (no Debian 12 package; tests/prrte/build.sh builds it; "
              "looked in $MPIGPU_TEST_PRRTE, /opt/prrte and PATH)";
    return "";
  }
  // --allow-run-as-root: CI runs as root. --map-by :OVERSUBSCRIBE: more ranks than cores here.
  // --bind-to none: PRRTE 2.0.2 with Debian's libpmix 4.2.2 and hwloc 2.9 crashes (SIGSEGV in
  // hwloc_get_depth_type, making a bound process's locality string) in most runs here.
  std::vector<std::string> Argv(int n, const std::vector<std::string>& vars,
                                const std::vector<std::string>& program) const override {
    std::vector<std::string> argv = {prterun_, "--allow-run-as-root", "--map-by", ":OVERSUBSCRIBE",
                                     "--bind-to", "none", "-n", std::to_string(n)};
    // Through env(1): PRRTE 2.0.2's `-x NAME=VALUE` crashes prterun (SIGSEGV, seen here), and it
    // does not pass the launcher's environment on by itself.
    if (!vars.empty()) {
      argv.push_back("/usr/bin/env");
      argv.insert(argv.end(), vars.begin(), vars.end());
    }
    argv.insert(argv.end(), program.begin(), program.end());
    return argv;
  }
  // PRRTE's session directory (PMIx's store among it) in the test's scratch, as with mpirun.
  RunOptions Options() const override {
    RunOptions o;
    o.timeout_ms = 60000;
    o.own_group = true;  // a hang kills prterun and its ranks
    o.unset = {"MPIGPU_RANK", "MPIGPU_SIZE", "MPIGPU_JOBID", "MPIGPU_NODE_MAP"};
    o.env["TMPDIR"] = mpigpu::testing::MakeTempDir("prte");
    o.env["HOME"] = o.env["TMPDIR"];  // prterun 2.0.2 crashes without HOME (Bazel runs tests so)
    return o;
  }
  std::string StoreDir(const RunOptions& o) const override { return o.env.at("TMPDIR"); }
  // prterun's report ("prterun noticed that process rank 1 ... exited on signal 9") goes to
  // stdout among the ranks' lines, where the case does not look.
  std::string KilledReport(int) const override { return ""; }
  bool SaysLocalRank() const override { return false; }
  bool StoreHasWorldReadableFiles() const override { return false; }

 private:
  std::string prterun_;
};

PrrteLauncher prrte_launcher;
INSTANTIATE_TEST_SUITE_P(Prterun, PmixLauncherCases,
                         ::testing::Values(&prrte_launcher), mpigpu::testing::LauncherName);

}  // namespace

// The cases every PMIx launcher's test runs alike (pmix_launch_test under Open MPI's mpirun,
// srun_test under Slurm's srun --mpi=pmix), parametrized over a PmixLauncher: each test binary
// defines its launcher and instantiates the suite with it:
//
//   INSTANTIATE_TEST_SUITE_P(Mpirun, PmixLauncherCases, ::testing::Values(&launcher),
//                            mpigpu::testing::LauncherName);
//
// The cases (pmix_launcher_cases.cc), on one host, with tests/pmix_rank: 2 and 4 ranks by shared
// memory with every pair's bytes checked; MPIGPU_SHM=0, where the TCP netmod's cards and the
// job's secret go through PMIx; the secret in no world-readable file and on no command line; a
// libpmix that cannot be loaded; a rank killed while the others wait for it; the launcher itself
// killed while its ranks block.
#pragma once

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/e2e_util.h"

namespace mpigpu::testing {

class PmixLauncher {
 public:
  virtual ~PmixLauncher() = default;
  // Its name in test names and messages: "mpirun", "srun".
  virtual std::string name() const = 0;
  // Before each case: "" when it can run here; else *skip says why it cannot exist here (the
  // case skips), or the return says why it did not start where it should have (the case fails).
  // It may start what it needs on first call (Slurm's cluster).
  virtual std::string Prepare(std::string* skip) = 0;
  // The command running `program` on n ranks on this host, with `vars` (NAME=VALUE) in their
  // environment, and the options of its run (a fresh PMIx store where the launcher makes one).
  virtual std::vector<std::string> Argv(int n, const std::vector<std::string>& vars,
                                        const std::vector<std::string>& program) const = 0;
  virtual RunOptions Options() const = 0;
  // The directory that holds the PMIx server's store for a run with these options.
  virtual std::string StoreDir(const RunOptions& options) const = 0;
  // What the launcher prints once rank r was killed by a signal; "" where it may name another
  // (mpirun names the first rank that ended badly: a survivor that exited first, at times).
  virtual std::string KilledReport(int r) const = 0;
  // Whether it tells each rank its node-local rank in a variable of its own (mpirun's
  // OMPI_COMM_WORLD_LOCAL_RANK, srun's SLURM_LOCALID; PRRTE sets none), which pmix_rank prints.
  virtual bool SaysLocalRank() const { return true; }
  // Whether its PMIx store holds world-readable files for the secret check to read (PRRTE keeps
  // every one private: nothing world-readable to look into).
  virtual bool StoreHasWorldReadableFiles() const { return true; }
};

// The suite's test names: the launcher's.
std::string LauncherName(const ::testing::TestParamInfo<PmixLauncher*>& info);

class PmixLauncherCases : public ::testing::TestWithParam<PmixLauncher*> {
 protected:
  void SetUp() override;
  PmixLauncher& launcher() const { return *GetParam(); }
};

// tests/pmix_rank's programs.
std::string PmixRank();
std::string PmixSecretRank();
// "[mpigpu R] info: ", the start of an MPIGPU_DEBUG=info line of rank R.
std::string Info(int rank);

// Every rank of an n-rank job reached the end with its bytes right, and its node-local rank (by
// MPIGPU_Comm_split_type) among its node's `per_node` ranks is the one its launcher says.
// Where its launcher gives no local rank of its own (`says_local` false), pmix_rank prints "?".
void ExpectPairsOk(const Result& r, int n, int per_node, bool says_local = true);

// The process runs (a zombie does not).
bool Running(int pid);

}  // namespace mpigpu::testing

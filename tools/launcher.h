// The pieces of `mpigpurun` that need no processes: the command line parsed into a struct, each
// rank's environment, the job id, the job's shared-memory names and the sweep that removes them,
// and the wording of a rank's end. mpigpurun.cc puts them together; tests check them one by one.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "memcopy/status.h"

namespace mpigpu {
namespace launcher {

inline constexpr const char* kVersion = "0.1.0";
inline constexpr int kMaxRanks = 4096;  // a bound so a typo (-n 40000) cannot fork-bomb the node

// How ranks are pinned to CPUs.
enum class BindTo {
  kAuto,  // not given: none if N > cores, else numa when GPUs are visible, else core
  kNone,
  kCore,  // rank r -> core (r mod cores)
  kNuma,  // rank r -> NUMA node nearest its GPU (local rank mod GPUs); round robin without GPUs
};

const char* BindToName(BindTo b);

struct Options {
  bool help = false;     // -h / --help: print UsageText() and exit 0
  bool version = false;  // --version
  int nranks = 0;
  BindTo bind_to = BindTo::kAuto;
  bool report_bindings = false;
  double timeout_s = 0;  // 0: no limit
  // -x: variables to set in every rank, already resolved (-x VAR takes the launcher's value).
  std::vector<std::pair<std::string, std::string>> exports;
  std::vector<std::string> program;  // program and its arguments (program[0] searched in PATH)
};

// Parses argv[1..]. Options come first; the first word that is not an option (or the word after
// "--") is the program, and everything after it belongs to the program. `getenv` resolves
// "-x VAR" (tests pass their own). Returns kInvalidArg with a message naming the bad word.
// With --help or --version nothing else is required.
Status ParseArgs(const std::vector<std::string>& args,
                 const std::function<const char*(const char*)>& getenv, Options* out);

// The --help text (documents every option and the default binding).
std::string UsageText();

// What a rank is told about its place in the job. One node, so local = world for now.
struct RankInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
};

// The variables the launcher sets for a rank (MPIGPU_*, PMI_*, OMPI_COMM_WORLD_*, ...), in order.
std::vector<std::pair<std::string, std::string>> RankVariables(const RankInfo& info,
                                                               const std::string& jobid);

// True for the names RankVariables sets (so -x cannot override them).
bool IsLauncherVariable(const std::string& name);

// A rank's full environment: `base` ("NAME=value" strings, e.g. environ) with the -x exports and
// then the rank variables put over it (a name already in `base` is replaced, not duplicated).
// CUDA_VISIBLE_DEVICES is left as `base` has it: the program picks its GPU.
std::vector<std::string> BuildRankEnv(const std::vector<std::string>& base,
                                      const std::vector<std::pair<std::string, std::string>>& exports,
                                      const RankInfo& info, const std::string& jobid);



// Unlinks every entry of `dir` (normally /dev/shm) whose name starts with `prefix`. Returns how
// many were removed; names it could not remove are appended to `failed` when given.
int SweepShm(const std::string& dir, const std::string& prefix,
             std::vector<std::string>* failed = nullptr);

// How a rank ended, from a waitpid status.
struct RankEnd {
  bool failed = false;  // a signal or a non-zero exit
  int exit_code = 0;    // what the launcher exits with for it: the status, or 128 + signal
  std::string what;     // "exited with status 3", "was killed by signal 9 (Killed)"
};
RankEnd DescribeWaitStatus(int wait_status);

}  // namespace launcher
}  // namespace mpigpu

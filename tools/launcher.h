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
#include "tools/hosts.h"
#include "tools/mps_plan.h"

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
  bool tag_output = false;  // --tag-output: "[R]<stdout>:" before each line (tools/tag_output.h)
  MpsMode mps = MpsMode::kAuto;  // --mps: a job-private MPS daemon (tools/mps_plan.h)
  double timeout_s = 0;  // 0: no limit
  // -x: variables to set in every rank, already resolved (-x VAR takes the launcher's value).
  std::vector<std::pair<std::string, std::string>> exports;
  std::vector<std::string> program;  // program and its arguments (program[0] searched in PATH)
  // --host / --hostfile: where ranks run (filled host by host); empty: all on this node.
  std::vector<HostSlots> hosts;
  // --launch-agent: the command that runs a command on another host, as `agent... host cmd`.
  std::vector<std::string> launch_agent = {"ssh"};
};

// Parses argv[1..]. Options come first; the first word that is not an option (or the word after
// "--") is the program, and everything after it belongs to the program. `getenv` resolves
// "-x VAR" (tests pass their own). Returns kInvalidArg with a message naming the bad word.
// With --help or --version nothing else is required. With hosts, -n defaults to their slots.
Status ParseArgs(const std::vector<std::string>& args,
                 const std::function<const char*(const char*)>& getenv, Options* out);

// The --help text (documents every option and the default binding).
std::string UsageText();

// Internal launcher variables (set by mpigpurun for the library, not for programs):
//   MPIGPU_LAUNCHER_FD  the rank's end of its link to the launcher (transport/launcher_link.h)
//   MPIGPU_CREATOR_PID  the pid of local rank 0, which creates the job segment (ranks waiting to
//                       attach can tell that it died)
inline constexpr const char* kLauncherFdVar = "MPIGPU_LAUNCHER_FD";
inline constexpr const char* kCreatorPidVar = "MPIGPU_CREATOR_PID";
// The CPUs the job may use (the launcher's affinity mask before it binds ranks): waits yield
// when the node's ranks outnumber them (mpigpu_api/wait_policy.h).
inline constexpr const char* kJobCpusVar = "MPIGPU_JOB_CPUS";
// A job on more than one node (internode/boot/boot_client.h, transport/local_job.h): each rank's
// node, the launcher's boot server and the job's secret (never on a command line).
inline constexpr const char* kNodeMapVar = "MPIGPU_NODE_MAP";
inline constexpr const char* kBootAddrVar = "MPIGPU_BOOT_ADDR";
inline constexpr const char* kJobSecretVar = "MPIGPU_JOB_SECRET";
// A rank on another host than the launcher: its link is a TCP connection to this address (the
// launcher's link server, tools/link_server.h; transport/launcher_link.h).
inline constexpr const char* kLauncherAddrVar = "MPIGPU_LAUNCHER_ADDR";
// The value of MPIGPU_CREATOR_PID in local rank 0's environment before fork: the child writes
// its own pid over it (WriteSelfPid), as the launcher cannot know it earlier.
inline constexpr char kSelfPidPlaceholder[] = "..........";  // room for any pid

// What a rank is told about its place in the job (local: among its node's ranks).
struct RankInfo {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  // The pid of local rank 0: > 0 known, 0 this rank is local rank 0 (kSelfPidPlaceholder),
  // < 0 not set.
  pid_t creator_pid = -1;
  int launcher_fd = -1;  // the link's fd in the rank, < 0 not set
  int job_cpus = 0;      // CPUs the job may use, 0 not set
  // A job on more than one node: MPIGPU_NODE_MAP, MPIGPU_BOOT_ADDR, MPIGPU_JOB_SECRET ("": unset).
  std::string node_map;
  std::string boot_addr;
  std::string job_secret;
  std::string launcher_addr;  // MPIGPU_LAUNCHER_ADDR ("": unset)
};

// The variables the launcher sets for a rank (MPIGPU_*, PMI_*, OMPI_COMM_WORLD_*, ...), in order;
// then MPIGPU_NODE_MAP, MPIGPU_BOOT_ADDR, MPIGPU_JOB_SECRET, MPIGPU_CREATOR_PID,
// MPIGPU_LAUNCHER_FD, MPIGPU_JOB_CPUS and MPIGPU_LAUNCHER_ADDR, where RankInfo has them.
std::vector<std::pair<std::string, std::string>> RankVariables(const RankInfo& info,
                                                               const std::string& jobid);

// True for the names RankVariables may set (so -x cannot override them).
bool IsLauncherVariable(const std::string& name);

// Writes `pid` in decimal and a NUL over `value` (which has room for kSelfPidPlaceholder).
// Async-signal-safe: the child calls it between fork and exec.
void WriteSelfPid(char* value, pid_t pid);

// A rank's full environment: `base` ("NAME=value" strings, e.g. environ) with the -x exports and
// then the rank variables put over it (a name already in `base` is replaced, not duplicated;
// a launcher variable that RankVariables does not set is dropped from `base`: it belonged to an
// outer job). CUDA_VISIBLE_DEVICES is left as `base` has it: the program picks its GPU.
std::vector<std::string> BuildRankEnv(const std::vector<std::string>& base,
                                      const std::vector<std::pair<std::string, std::string>>& exports,
                                      const RankInfo& info, const std::string& jobid);

// Sets NAME=value in `env` ("NAME=value" strings): replaces the entry of that name, else appends.
void SetEnvVar(std::vector<std::string>* env, const std::string& name, const std::string& value);

// An entry of the shared-memory directory that another user owns.
struct ForeignEntry {
  std::string name;
  uid_t uid = 0;
};

// Unlinks every entry of `dir` (normally /dev/shm) whose name starts with `prefix` and that this
// process's effective uid owns. Returns how many were removed; names it could not remove are
// appended to `failed` ("name: reason") when given. Entries another user owns (someone who made
// names with our prefix first) are never touched: they are appended to `foreign` when given.
int SweepShm(const std::string& dir, const std::string& prefix,
             std::vector<std::string>* failed = nullptr,
             std::vector<ForeignEntry>* foreign = nullptr);

// One line (no newline) about `foreign` entries of `dir`, naming their owners (user name, else
// uid), how many there are and the first few; "" when there are none.
std::string DescribeForeignEntries(const std::string& dir, const std::vector<ForeignEntry>& foreign);

// A record from a rank on the launcher link: "J <rank>\n" (joined the job) or "F <rank>\n"
// (finalized). False for anything else, or a rank outside [0, size).
bool ParseLinkRecord(const char* data, size_t len, int size, char* kind, int* rank);

// How a rank ended, from a waitpid status.
struct RankEnd {
  bool failed = false;  // a signal or a non-zero exit
  int exit_code = 0;    // what the launcher exits with for it: the status, or 128 + signal
  std::string what;     // "exited with status 3", "was killed by signal 9 (Killed)"
};
RankEnd DescribeWaitStatus(int wait_status);

}  // namespace launcher
}  // namespace mpigpu

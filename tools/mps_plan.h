// mpigpurun --mps auto|on|off: whether the launcher starts a job-private MPS control daemon for
// this host's ranks, decided from facts gathered beforehand (no processes, no CUDA here: tests
// give their own facts). tools/mps_daemon.h starts and stops it.
//
// Ranks pick GPU (local rank mod visible GPUs), as the library does by default
// (mpigpu_api/api_env.cc); two or more on one GPU share it. One control daemon serves every GPU it
// sees, so one is started per host (with the launcher's CUDA_VISIBLE_DEVICES, keeping the ranks'
// device numbering) when at least one GPU is shared, and only this host's ranks get it: ranks on
// other hosts (--host) run as they would without --mps, though a daemon there (a site's) is still
// detected by the library.
#pragma once

#include <string>
#include <vector>

namespace mpigpu {
namespace launcher {

enum class MpsMode {
  kAuto,  // start one when this host's ranks share a GPU and MPS does not serve it already
  kOn,    // start one for this host's ranks on GPUs (shared or not); the job fails if it cannot
  kOff,   // never
};
const char* MpsModeName(MpsMode m);
bool ParseMpsMode(const std::string& text, MpsMode* out);

// What the launcher knows of one visible GPU before any rank starts.
struct GpuFacts {
  enum class Mode { kDefault, kExclusiveProcess, kProhibited, kUnknown };
  Mode compute_mode = Mode::kDefault;
  bool mig = false;         // a MIG slice (CUDA_VISIBLE_DEVICES names a MIG- device)
  bool mps_served = false;  // MPS serves it already (memcopy/mps.h from the launcher)
  std::string served_how;
};

struct MpsInputs {
  MpsMode mode = MpsMode::kAuto;
  int local_ranks = 0;          // this host's ranks
  std::vector<GpuFacts> gpus;   // visible to the launcher, in CUDA's order
  bool have_control = false;    // nvidia-cuda-mps-control found in PATH
};

struct MpsPlan {
  bool start = false;            // start a job-private daemon
  bool fail = false;             // --mps on and it cannot be: the job must not run
  std::vector<int> gpus;         // the GPUs it is for (shared ones; with on, every GPU in use)
  std::string why_not;           // one line: why none is started though ranks share a GPU
  std::string info;              // one line for --report-bindings ("" when nothing to say)
};

// How many of `local_ranks` ranks use each of `ngpus` GPUs (local rank mod ngpus).
std::vector<int> RanksPerGpu(int local_ranks, int ngpus);

MpsPlan PlanMps(const MpsInputs& in);

}  // namespace launcher
}  // namespace mpigpu

// The host side of mpigpurun --mps (tools/mps_plan.h decides): what the launcher learns of its
// GPUs, and a job-private MPS control daemon's life.
//
// The daemon lives in a job folder, /tmp/mpigpu-mps-XXXXXX (mode 0700, made before the janitor is
// forked, so the janitor knows it): pipe/ is its CUDA_MPS_PIPE_DIRECTORY, log/ its
// CUDA_MPS_LOG_DIRECTORY (short paths: its UNIX sockets live there). It is started with
// `nvidia-cuda-mps-control -d` (which forks the daemon and returns) and counts as up once
// pipe/control exists while the daemon's process runs (nothing connects to it). It is stopped by
// `echo quit | nvidia-cuda-mps-control` with the same pipe directory; its processes
// (nvidia-cuda-mps-* with that CUDA_MPS_PIPE_DIRECTORY in their environment, and their
// nvidia-cuda-mps-* children: the server) get SIGKILL if they are still there a few seconds
// later; then the folder goes. The launcher stops it when the job ends (whatever ended it); the
// janitor does when the launcher died (tools/janitor.h).
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "memcopy/status.h"
#include "tools/mps_plan.h"

namespace mpigpu {
namespace launcher {

inline constexpr const char* kMpsControl = "nvidia-cuda-mps-control";
// How long quit gets before the daemon's processes are killed, and how long a start may take.
inline constexpr double kMpsQuitGraceSeconds = 3.0;
inline constexpr double kMpsStartSeconds = 10.0;
// For tests without a GPU: "default,exclusive,prohibited,mig,served,unknown", one word per GPU,
// stands for what CUDA would say of the launcher's visible GPUs.
inline constexpr const char* kTestGpusVar = "MPIGPURUN_TEST_GPUS";

// The visible GPUs' compute mode, MIG and whether MPS serves them already (the CUDA runtime, the
// driver's MPS attribute or the control pipe: memcopy/mps.h), or kTestGpusVar's words.
std::vector<GpuFacts> GatherGpuFacts();

// Whether `name` is an executable file in the directories of `path` (PATH's syntax).
bool InPath(const std::string& name, const char* path);

// Makes the job folder (its pipe/ and log/ too).
Status MakeMpsFolder(std::string* dir);

// What a client of the daemon of folder `dir` needs: CUDA_MPS_PIPE_DIRECTORY and
// CUDA_MPS_LOG_DIRECTORY.
std::vector<std::pair<std::string, std::string>> MpsClientVariables(const std::string& dir);

// Starts the daemon of folder `dir` with `base_env` (NAME=value strings) and the client variables
// over it; waits (at most `timeout_s`) until it is up (see the top of this file). On failure says why, with
// the control program's own first line of output, and stops whatever started (the folder stays:
// StopMpsDaemon removes it).
Status StartMpsDaemon(const std::string& dir, const std::vector<std::string>& base_env,
                      double timeout_s);

// Stops the daemon of folder `dir` (if any runs) and removes the folder: quit, then after
// `grace_s` SIGKILL to its processes left. Returns "" when quit was enough (or nothing ran), else
// one line saying what it had to do.
std::string StopMpsDaemon(const std::string& dir, const std::vector<std::string>& base_env,
                          double grace_s);

// The daemon's processes (see the top of this file), by /proc.
std::vector<pid_t> MpsDaemonProcesses(const std::string& pipe_dir);

}  // namespace launcher
}  // namespace mpigpu

// mpigpu-sweep: latency and bandwidth of every buffer pair, beside the limits and the peers.
//
//   under mpigpurun -n 2 (MPIGPU_RANK set)  -> rank mode: measure, rank 0 writes the outputs
//   started directly                        -> launcher mode: exec mpigpurun -n 2 on itself, or
//                                              (--lmt with several back-ends, --tune) run it once
//                                              per configuration and merge the ranks' results
//   --replot FILE.json                      -> no ranks: print and write a report measured earlier
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "memcopy/memcopy.h"
#include "mpigpu_api/mpigpu.h"
#include "perf/api_check.h"
#include "perf/launch_env.h"
#include "tools/sweep_launch.h"
#include "tools/sweep_measure.h"
#include "tools/sweep_options.h"
#include "tools/sweep_plot.h"
#include "tools/sweep_report.h"
#include "tools/sweep_tune.h"

namespace mpigpu {
namespace sweep {
namespace {

int Fail(int code, const std::string& msg) {
  std::fprintf(stderr, "mpigpu-sweep: %s\n", msg.c_str());
  return code;
}

bool NeedsGpu(const Options& o) {
  for (const Pair& p : o.pairs)
    if (p.has_device()) return true;
  return false;
}

constexpr const char* kNoGpu =
    "buffer location D needs a GPU, but no CUDA device is visible (use H H)";

// The report's text (only its tail when the tables were printed as they were measured), then
// the files the options ask for. 0, or 1 when a file could not be written.
int WriteOutputs(const Options& o, const Report& r, bool tables_printed = false) {
  std::fputs((tables_printed ? FormatReportTail(r) : FormatReport(r)).c_str(), stdout);
  std::fflush(stdout);
  int rc = 0;
  auto report = [&rc](const Status& st) {
    if (!st.ok()) rc = Fail(1, st.message());
  };
  if (!o.csv.empty()) report(WriteFile(o.csv, ToCsv(r)));
  if (!o.json.empty()) report(WriteFile(o.json, DumpJson(ToJson(r)) + "\n"));
  if (!o.plot.empty()) report(Plot(r, o.plot));
  return rc;
}

// ---- --replot: a report measured earlier, nothing launched ----

int ReplotMain(const Options& o) {
  std::string text;
  Json j;
  Report report;
  Status st = ReadFile(o.replot, &text);
  if (!st.ok()) return Fail(kExitUsage, "--replot: " + st.message());
  st = ParseJson(text, &j);
  if (st.ok()) st = FromJson(j, &report);
  if (!st.ok())
    return Fail(kExitUsage, "--replot: '" + o.replot + "' is not a mpigpu-sweep --json report: " +
                                st.message());
  return WriteOutputs(o, report);
}

// ---- rank mode ----

int RankMain(const Options& o, int argc, char** argv) {
  const perf::LaunchEnv env = perf::ReadLaunchEnv();
  const int rank = env.rank;
  const int size = env.size;
  auto usage_error = [&](const std::string& msg) { return rank == 0 ? Fail(kExitUsage, msg) : kExitUsage; };
  if (size != 2)
    return usage_error("needs exactly 2 ranks (mpigpurun -n 2 mpigpu-sweep ...), got " +
                       std::to_string(size));
  if (o.tune && !o.launched)
    return usage_error("--tune launches its ranks once per setting: run mpigpu-sweep without "
                       "mpigpurun");

  RankSetup setup;
  setup.rank = rank;
  setup.same_node = env.local_size == size;  // mpigpurun --host: each host's own count
  const bool gpu = NeedsGpu(o);
  setup.device_count = gpu ? CudaDeviceCount() : 0;
  if (gpu && setup.device_count == 0) return usage_error(kNoGpu);
  if (setup.device_count > 0) {
    const int local = env.local_rank;
    setup.device = local % setup.device_count;
    if (setup.same_node) setup.peer_device = (1 - local % 2) % setup.device_count;
    cudaError_t e = cudaSetDevice(setup.device);  // before MPIGPU_Init: it uses this device
    if (e != cudaSuccess)
      return Fail(1, "cudaSetDevice(" + std::to_string(setup.device) + "): " +
                         cudaGetErrorString(e));
  }
  const char* lmt = std::getenv("MPIGPU_LMT");
  setup.lmt = lmt && *lmt ? lmt : "auto";

  int rc = MPIGPU_Init(&argc, &argv);
  if (rc != MPIGPU_SUCCESS) return Fail(1, "MPIGPU_Init failed: " + perf::ApiErrorString(rc));
  Report report;
  Status st = RunSweep(o, setup, &report, o.quiet ? nullptr : stdout);
  if (rank == 0 && !o.lmt.empty() && !o.launched)
    report.AddNote("under an external mpigpurun only the environment's MPIGPU_LMT=" + setup.lmt +
                   " is measured (--lmt relaunches the ranks per back-end when mpigpu-sweep is "
                   "started without mpigpurun)");
  MPIGPU_Finalize();
  if (!st.ok()) return usage_error(st.message());
  if (rank != 0) return 0;
  if (!o.result_file.empty()) {
    Status w = WriteFile(o.result_file, DumpJson(ToJson(report)) + "\n");
    if (!w.ok()) return Fail(1, w.message());
  }
  return o.quiet ? 0 : WriteOutputs(o, report, /*tables_printed=*/true);
}

// ---- launcher mode ----

// One launch of the ranks with `exports` and `rank_opts`; their results in `out`. Returns the
// launcher's exit status (-1 when it could not run or the results could not be read).
int LaunchOnce(const std::string& launcher, const std::string& exe,
               const std::vector<std::string>& exports, const Options& rank_opts, Report* out,
               std::string* error) {
  char path[] = "/tmp/mpigpu-sweep-result-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    *error = "mkstemp for a result file failed";
    return -1;
  }
  close(fd);
  std::vector<std::string> args = RankArgs(rank_opts);
  args.insert(args.end(), {"--quiet", "--launched", "--result-file", path});
  int rc = RunArgv(LauncherArgv(launcher, exports, exe, args), error);
  if (rc == 0) {
    std::string text;
    Json j;
    Status st = ReadFile(path, &text);
    if (st.ok()) st = ParseJson(text, &j);
    if (st.ok()) st = FromJson(j, out);
    if (!st.ok()) {
      *error = "reading the ranks' results: " + st.message();
      rc = -1;
    }
  }
  unlink(path);
  return rc;
}

// Adds one back-end's run: its mpigpu series renamed "mpigpu[lmt]"; limit and peer series
// only where the table does not have them yet.
void MergeRun(Report* into, Report run, const std::string& lmt) {
  for (Table& t : run.tables) {
    Table* have = into->FindTable(t.test, t.pair);
    std::vector<Series> keep;
    for (Series& s : t.series) {
      if (s.kind == kKindMpigpu) s.name = "mpigpu[" + lmt + "]";
      if (have == nullptr || have->Find(s.name) == nullptr) keep.push_back(std::move(s));
    }
    t.series = std::move(keep);
  }
  Status st = MergeReports(into, run);
  if (!st.ok()) into->AddNote(st.message());
}

int RunLmtAll(const Options& o, const std::string& launcher, const std::string& exe) {
  Report merged;
  std::vector<Pair> with_baselines;
  for (const std::string& lmt : o.lmt) {
    Options ro = o;
    ro.pairs.clear();
    bool baselines = false;
    for (const Pair& p : o.pairs) {
      if (!LmtApplies(lmt, p)) continue;
      ro.pairs.push_back(p);
      if (std::find(with_baselines.begin(), with_baselines.end(), p) == with_baselines.end()) {
        with_baselines.push_back(p);
        baselines = true;
      }
    }
    if (ro.pairs.empty()) {
      merged.AddNote("MPIGPU_LMT=" + lmt + " not run: it moves " +
                     (lmt == "cma" ? "host->host" : "device") + " buffers only");
      continue;
    }
    ro.limits = o.limits && baselines;
    ro.peers = o.peers && baselines;
    if (isatty(STDERR_FILENO)) std::fprintf(stderr, "mpigpu-sweep: MPIGPU_LMT=%s ...\n", lmt.c_str());
    Report run;
    std::string error;
    int rc = LaunchOnce(launcher, exe, {"MPIGPU_LMT=" + lmt}, ro, &run, &error);
    if (rc == kExitUsage || rc == kExitCheckFailed) return rc;  // the ranks said why
    if (rc != 0) {
      merged.AddNote("MPIGPU_LMT=" + lmt + ": the run failed (" +
                     (error.empty() ? "exit status " + std::to_string(rc) : error) + ")");
      continue;
    }
    MergeRun(&merged, std::move(run), lmt);
  }
  // mpigpu columns first, then the limit and the peers.
  for (Table& t : merged.tables)
    std::stable_partition(t.series.begin(), t.series.end(),
                          [](const Series& s) { return s.kind == kKindMpigpu; });
  return WriteOutputs(o, merged);
}

int RunTune(const Options& o, const std::string& launcher, const std::string& exe) {
  Options ro = o;
  ro.tests = {Test::kBw};
  ro.limits = false;
  ro.peers = false;
  Report report;
  const std::vector<TuneSetting> grid = TuneGrid();
  for (size_t i = 0; i < grid.size(); ++i) {
    const TuneSetting& s = grid[i];
    if (isatty(STDERR_FILENO))
      std::fprintf(stderr, "\rmpigpu-sweep: --tune %zu/%zu: %zu units of %s   ", i + 1,
                   grid.size(), s.units, SizeText(s.unit).c_str());
    Report run;
    std::string error;
    int rc = LaunchOnce(launcher, exe, TuneExports(s), ro, &run, &error);
    if (rc == kExitUsage || rc == kExitCheckFailed) return rc;
    TuneTrial trial;
    trial.unit = s.unit;
    trial.units = s.units;
    for (const Pair& p : o.pairs) {
      trial.pairs.push_back(PairName(p));
      const Table* t = rc == 0 ? run.FindTable(Test::kBw, p) : nullptr;
      trial.scores.push_back(t ? TuneScore(*t) : std::nan(""));
    }
    if (rc != 0)
      report.AddNote("--tune " + std::to_string(s.units) + " x " + SizeText(s.unit) +
                     ": the run failed (" +
                     (error.empty() ? "exit status " + std::to_string(rc) : error) + ")");
    report.tune.push_back(std::move(trial));
  }
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
  report.AddNote("--tune: bw test, sizes " + SizeText(o.min_size) + ".." + SizeText(o.max_size) +
                 ", MPIGPU_LMT=ring forced");
  report.exports = BestExports(report.tune);
  if (report.exports.empty()) report.AddNote("--tune: no setting produced a result");
  return WriteOutputs(o, report);
}

int ParentMain(const Options& o, const std::vector<std::string>& args, const char* argv0) {
  if (NeedsGpu(o) && CudaDeviceCount() == 0) return Fail(kExitUsage, kNoGpu);
  const std::string launcher = FindLauncher(argv0);
  const std::string exe = SelfExe(argv0);
  if (launcher.empty())
    return Fail(1, "cannot find mpigpurun next to " + exe +
                       " or in the Bazel runfiles; start the sweep as `mpigpurun -n 2 "
                       "mpigpu-sweep ...`");
  if (o.tune) return RunTune(o, launcher, exe);
  if (o.lmt.size() > 1) return RunLmtAll(o, launcher, exe);
  // One job: the ranks do everything, the launcher takes this process's place.
  std::vector<std::string> exports;
  if (o.lmt.size() == 1) exports.push_back("MPIGPU_LMT=" + o.lmt[0]);
  std::vector<std::string> rank_args = args;
  rank_args.push_back("--launched");
  Status st = ExecArgv(LauncherArgv(launcher, exports, exe, rank_args));
  return Fail(1, st.message());
}

}  // namespace
}  // namespace sweep
}  // namespace mpigpu

int main(int argc, char** argv) {
  using namespace mpigpu::sweep;
  const std::vector<std::string> args(argv + 1, argv + argc);
  Options o;
  mpigpu::Status st = ParseOptions(args, &o);
  if (!st.ok()) {
    std::fprintf(stderr, "mpigpu-sweep: %s\n(mpigpu-sweep --help lists the options)\n",
                 st.message().c_str());
    return kExitUsage;
  }
  if (o.help) {
    std::fputs(UsageText().c_str(), stdout);
    return 0;
  }
  // `bazel run` starts programs in their runfiles: relative output names mean the user's
  // directory.
  if (const char* wd = std::getenv("BUILD_WORKING_DIRECTORY")) {
    for (std::string* path : {&o.csv, &o.json, &o.plot, &o.replot})
      if (!path->empty() && (*path)[0] != '/') *path = std::string(wd) + "/" + *path;
  }
  if (!o.plot.empty()) {
    st = CheckGnuplot();
    if (!st.ok()) return Fail(kExitUsage, st.message());
  }
  if (!o.replot.empty()) return ReplotMain(o);
  if (!mpigpu::perf::ReadLaunchEnv().launched) return ParentMain(o, args, argv[0]);
  return RankMain(o, argc, argv);
}

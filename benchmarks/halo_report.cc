#include "benchmarks/halo_report.h"

#include <algorithm>

#include "benchmarks/halo_stencil.h"

namespace mpigpu::halo {
namespace {

const RunResult* Find(const std::vector<RunResult>& results, Mode m) {
  for (const RunResult& r : results)
    if (r.mode == m) return &r;
  return nullptr;
}

// "RxC" -> "R,C" for the CSV's two columns.
std::string SplitDims(std::string d) {
  std::replace(d.begin(), d.end(), 'x', ',');
  return d;
}

// The CSV's four speedup fields of mpigpu's row (total and communication, over staged and nccl).
std::string SpeedupCsv(const std::vector<RunResult>& results, const RunResult& mine) {
  std::string s;
  for (Mode other : {Mode::kStaged, Mode::kNccl}) {
    const RunResult* o = Find(results, other);
    char text[64] = ",,";
    if (o != nullptr)
      std::snprintf(text, sizeof text, ",%.4f,%.4f", o->total_s / mine.total_s,
                    o->comm_s / mine.comm_s);
    s += text;
  }
  return s.substr(1);  // the row's format already has the separating comma
}

}  // namespace

std::string Dims(int64_t r, int64_t c) { return std::to_string(r) + "x" + std::to_string(c); }

Report::~Report() {
  if (csv_) std::fclose(csv_);
}

Status Report::OpenCsv() {
  if (opt_.csv.empty()) return Status::Ok();
  csv_ = std::fopen(opt_.csv.c_str(), "w");
  if (csv_ == nullptr) return SysError(("--csv: cannot write '" + opt_.csv + "'").c_str());
  std::fprintf(csv_,
               "mode,type,ranks,grid,global_rows,global_cols,local_rows,local_cols,halo,iters,"
               "total_s,comm_s,comm_share,gflops,check,speedup_total_vs_staged,"
               "speedup_comm_vs_staged,speedup_total_vs_nccl,speedup_comm_vs_nccl,"
               "exchange_median_us,exchange_net_median_us\n");
  return Status::Ok();
}

void Report::Header(const std::string& device, const std::string& skipped) const {
  std::printf("# halo: 9-point stencil, %s, %d ranks (grid %s), halo %d, %d iterations (+%d "
              "warm-up), %s\n",
              ElemTypeName(opt_.type), ranks_, Dims(grid_.rows, grid_.cols).c_str(),
              opt_.halo, opt_.iters, opt_.warmup, device.c_str());
  std::printf("# %d flops/point/iteration (SHOC's count) over the global domain; fixed "
              "boundary; times: slowest rank\n",
              kFlopsPerPoint);
  if (!skipped.empty()) std::printf("# %s\n", skipped.c_str());
  std::printf("# %-7s %-12s %-11s %11s %11s %6s %9s %9s %9s  %s\n", "mode", "global", "local",
              "total_ms", "comm_ms", "comm%", "GFLOP/s", "xchg_us", "net_us", "check");
  std::fflush(stdout);
}

void Report::PrintProblem(const Problem& p, const std::vector<RunResult>& results) const {
  const std::string global = Dims(p.global_rows, p.global_cols);
  const std::string local = Dims((p.global_rows + grid_.rows - 1) / grid_.rows,
                                 (p.global_cols + grid_.cols - 1) / grid_.cols);
  const double points = double(p.global_rows) * p.global_cols;
  const RunResult* mine = Find(results, Mode::kMpigpu);
  for (const RunResult& r : results) {
    const double gflops =
        r.total_s > 0 ? kFlopsPerPoint * points * opt_.iters / r.total_s / 1e9 : 0;
    const double share = r.total_s > 0 ? r.comm_s / r.total_s : 0;
    std::printf("  %-7s %-12s %-11s %11.3f %11.3f %6.1f %9.2f %9.2f %9.2f  %s\n",
                ModeName(r.mode), global.c_str(), local.c_str(), r.total_s * 1e3,
                r.comm_s * 1e3, share * 100, gflops, r.exchange_median_s * 1e6,
                r.exchange_net_median_s * 1e6, r.checked ? "ok" : "-");
    if (csv_) {
      std::string speedups = ",,,";
      if (opt_.all_modes && r.mode == Mode::kMpigpu) speedups = SpeedupCsv(results, *mine);
      std::fprintf(csv_, "%s,%s,%d,%s,%d,%d,%s,%d,%d,%.9g,%.9g,%.6f,%.4f,%s,%s,%.3f,%.3f\n",
                   ModeName(r.mode), ElemTypeName(opt_.type), ranks_,
                   Dims(grid_.rows, grid_.cols).c_str(), p.global_rows, p.global_cols,
                   SplitDims(local).c_str(), p.halo, opt_.iters,
                   r.total_s, r.comm_s, share, gflops, r.checked ? "ok" : "",
                   speedups.c_str(), r.exchange_median_s * 1e6,
                   r.exchange_net_median_s * 1e6);
      std::fflush(csv_);
    }
  }
  if (opt_.all_modes && mine != nullptr) {
    for (Mode other : {Mode::kStaged, Mode::kNccl}) {
      const RunResult* o = Find(results, other);
      if (o == nullptr) continue;
      std::printf("# speedup of mpigpu over %s at %s: total %.2fx, communication %.2fx\n",
                  ModeName(other), global.c_str(), o->total_s / mine->total_s,
                  o->comm_s / mine->comm_s);
    }
  }
  std::fflush(stdout);
}

}  // namespace mpigpu::halo

#include "tools/mps_plan.h"

namespace mpigpu {
namespace launcher {
namespace {

std::string GpuList(const std::vector<int>& gpus) {
  std::string s = gpus.size() == 1 ? "GPU " : "GPUs ";
  for (size_t i = 0; i < gpus.size(); ++i) s += (i ? "," : "") + std::to_string(gpus[i]);
  return s;
}

// Why MPS cannot serve `g` ("" when it can).
std::string Blocker(int index, const GpuFacts& g) {
  const std::string gpu = "GPU " + std::to_string(index);
  if (g.mig) return gpu + " is a MIG slice";
  if (g.compute_mode == GpuFacts::Mode::kProhibited)
    return gpu + " is in the prohibited compute mode";
  return "";
}

}  // namespace

const char* MpsModeName(MpsMode m) {
  switch (m) {
    case MpsMode::kAuto: return "auto";
    case MpsMode::kOn: return "on";
    case MpsMode::kOff: return "off";
  }
  return "?";
}

bool ParseMpsMode(const std::string& text, MpsMode* out) {
  if (text == "auto") *out = MpsMode::kAuto;
  else if (text == "on") *out = MpsMode::kOn;
  else if (text == "off") *out = MpsMode::kOff;
  else return false;
  return true;
}

std::vector<int> RanksPerGpu(int local_ranks, int ngpus) {
  std::vector<int> n(static_cast<size_t>(ngpus > 0 ? ngpus : 0), 0);
  for (int r = 0; r < local_ranks && ngpus > 0; ++r) ++n[static_cast<size_t>(r % ngpus)];
  return n;
}

MpsPlan PlanMps(const MpsInputs& in) {
  MpsPlan plan;
  if (in.mode == MpsMode::kOff) return plan;
  const bool on = in.mode == MpsMode::kOn;
  const int ngpus = static_cast<int>(in.gpus.size());
  auto cannot = [&](const std::string& why) {
    plan.start = false;
    plan.fail = on;
    plan.why_not = "MPS not started: " + why +
                   (on ? " (--mps on)" : "; ranks sharing a GPU run without it (time-sliced)");
    return plan;
  };
  if (in.local_ranks == 0) {
    if (on) return cannot("no rank of this job runs on this host (MPS is started for this "
                          "host's ranks only)");
    return plan;
  }
  if (ngpus == 0) {
    if (on) return cannot("mpigpurun sees no GPU");
    return plan;
  }
  const std::vector<int> per_gpu = RanksPerGpu(in.local_ranks, ngpus);
  for (int g = 0; g < ngpus; ++g)
    if (per_gpu[static_cast<size_t>(g)] >= (on ? 1 : 2)) plan.gpus.push_back(g);
  if (plan.gpus.empty()) return plan;  // auto: no GPU shared

  std::vector<int> served;
  for (int g : plan.gpus)
    if (in.gpus[static_cast<size_t>(g)].mps_served) served.push_back(g);
  if (!served.empty()) {
    // A daemon that serves one of them serves the ranks (they inherit its pipe directory): a
    // second one would split them.
    plan.info = "MPS already serves " + GpuList(served) + " (" +
                in.gpus[static_cast<size_t>(served[0])].served_how + "): not starting another";
    plan.gpus.clear();
    return plan;
  }
  for (int g : plan.gpus) {
    const std::string why = Blocker(g, in.gpus[static_cast<size_t>(g)]);
    if (!why.empty()) return cannot(why);
  }
  if (!in.have_control) return cannot("nvidia-cuda-mps-control is not in PATH");
  plan.start = true;
  plan.info = "starting a job-private MPS control daemon for " + GpuList(plan.gpus) +
              (on ? " (--mps on)" : " (shared by this host's ranks)");
  return plan;
}

}  // namespace launcher
}  // namespace mpigpu

// RunSweep: the table of series and the one loop that runs them over every pair and test.
#include "tools/sweep_measure.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "perf/api_check.h"
#include "tools/sweep_check.h"
#include "tools/sweep_cuda.h"
#include "tools/sweep_rule.h"
#include "tools/sweep_series.h"

namespace mpigpu {
namespace sweep {
namespace {

constexpr size_t kNameBytes = 256;

bool Always(const Options&, const RankSetup&, const Pair&) { return true; }
// The limits and floors are one node's: they say nothing about a path between two hosts.
bool WithLimits(const Options& o, const RankSetup& s, const Pair&) { return o.limits && s.same_node; }
bool HostFloor(const Options& o, const RankSetup& s, const Pair& p) {
  return WithLimits(o, s, p) && !p.has_device();
}
bool DeviceFloor(const Options& o, const RankSetup& s, const Pair& p) {
  return WithLimits(o, s, p) && p.has_device();
}
bool DeviceToDeviceFloor(const Options& o, const RankSetup& s, const Pair& p) {
  return WithLimits(o, s, p) && p.src == Loc::kDevice && p.dst == Loc::kDevice;
}
// NCCL runs D->D only.
bool DeviceToDevice(const Options& o, const RankSetup&, const Pair& p) {
  return o.peers && p.src == Loc::kDevice && p.dst == Loc::kDevice;
}
// Manual staging needs a device side.
bool WithDevice(const Options& o, const RankSetup&, const Pair& p) {
  return o.peers && p.has_device();
}

bool AnyTest(Test) { return true; }
bool LatencyTest(Test t) { return t == Test::kLatency; }
bool BandwidthTest(Test t) { return t != Test::kLatency; }

// The columns of every table, in order: name, kind, the pairs (and options) and the tests it
// applies to, and its runner (sweep_series.h). Bandwidth has the copy limit; latency has
// floors instead (sweep_report.h), each named.
struct SeriesSpec {
  const char* name;
  const char* kind;
  bool (*applies)(const Options& o, const RankSetup& s, const Pair& p);
  bool (*in_test)(Test t);
  std::unique_ptr<SeriesRunner> (*make)();
};
const SeriesSpec kSeries[] = {
    {"mpigpu", kKindMpigpu, Always, AnyTest, MakeMpigpuSeries},
    {"limit", kKindLimit, WithLimits, BandwidthTest, MakeLimitSeries},
    {kFloorCacheLine, kKindFloor, HostFloor, LatencyTest, MakeCacheLineFloor},
    {kFloorGpuFlag, kKindFloor, DeviceToDeviceFloor, LatencyTest, MakeGpuFlagFloor},
    {kFloorCopy, kKindFloor, DeviceFloor, LatencyTest, MakeLimitSeries},
    {"nccl", kKindPeer, DeviceToDevice, AnyTest, MakeNcclSeries},
    {"staged", kKindPeer, WithDevice, AnyTest, MakeStagedSeries},
};
constexpr size_t kNumSeries = sizeof kSeries / sizeof kSeries[0];

// A failure on the measured path ends the job.
void OrDie(const Status& st) {
  if (!st.ok()) Die(1, st.message());
}

// Rank 0's name for each rank's device (the peer sends its own).
Status ExchangeNames(const RankSetup& s, std::string names[2]) {
  char mine[kNameBytes] = {}, theirs[kNameBytes] = {};
  std::snprintf(mine, sizeof mine, "%s", DeviceName(s.device).c_str());
  const int peer = 1 - s.rank;
  PERF_API(MPIGPU_Sendrecv(mine, MPIGPU_BUF_HOST, static_cast<int>(kNameBytes), MPIGPU_BYTE, peer,
                           kTagSetup, theirs, MPIGPU_BUF_HOST, static_cast<int>(kNameBytes),
                           MPIGPU_BYTE, peer, kTagSetup, MPIGPU_COMM_WORLD, MPIGPU_STATUS_IGNORE));
  theirs[kNameBytes - 1] = '\0';
  names[s.rank] = mine;
  names[peer] = theirs;
  return Status::Ok();
}

// The pair's message buffers (and -c's window slots).
Status AllocBuffers(const Options& o, Ctx* c) {
  MPIGPU_RETURN_IF_ERROR(c->sbuf.Alloc(c->my_loc, o.max_size, o.pinned_host));
  MPIGPU_RETURN_IF_ERROR(c->rbuf.Alloc(c->my_loc, o.max_size, o.pinned_host));
  if (o.check) {
    MPIGPU_RETURN_IF_ERROR(c->check_s.Alloc(c->my_loc, CheckBufferBytes(o), o.pinned_host));
    MPIGPU_RETURN_IF_ERROR(c->check_r.Alloc(c->my_loc, CheckBufferBytes(o), o.pinned_host));
  }
  return Status::Ok();
}

// Rank 0's live output: the tables' text as it is measured, off the progress line.
class LiveTables {
 public:
  LiveTables(std::FILE* out, Progress* progress) : out_(out), progress_(progress) {}
  void Write(const std::string& text) {
    if (out_ == nullptr) return;
    progress_->Clear();
    std::fputs(text.c_str(), out_);
    std::fflush(out_);
  }
  void Head(const Table& t) {
    Write((tables_++ ? "\n" : "") + FormatTableHead(t));
  }

 private:
  std::FILE* out_;
  Progress* progress_;
  int tables_ = 0;
};

}  // namespace

Status RunSweep(const Options& o, const RankSetup& setup, Report* report, std::FILE* live) {
  const int rank = setup.rank;
  const std::vector<size_t> sizes = MessageSizes(o.min_size, o.max_size);
  std::string names[2];
  OrDie(ExchangeNames(setup, names));
  Progress progress(rank == 0 && !o.quiet && (o.progress || isatty(STDERR_FILENO)),
                    static_cast<int>(o.pairs.size() * o.tests.size() * sizes.size()));
  LiveTables out(rank == 0 ? live : nullptr, &progress);
  std::unique_ptr<SeriesRunner> runners[kNumSeries];
  for (size_t k = 0; k < kNumSeries; ++k) runners[k] = kSeries[k].make();

  for (const Pair& pair : o.pairs) {
    Ctx c;
    c.o = &o;
    c.setup = &setup;
    c.sizes = &sizes;
    c.progress = &progress;
    c.rank = rank;
    c.peer = 1 - rank;
    c.pair = pair;
    c.my_loc = rank == 0 ? pair.src : pair.dst;
    if (pair.has_device() && setup.device_count == 0)
      return Status(Err::kNoGpu, "buffer location D needs a GPU, but no CUDA device is visible");
    OrDie(AllocBuffers(o, &c));
    std::vector<size_t> active;  // the series that apply to this pair, in table order
    for (size_t k = 0; k < kNumSeries; ++k) {
      if (!kSeries[k].applies(o, setup, pair)) continue;
      if (std::none_of(o.tests.begin(), o.tests.end(), kSeries[k].in_test)) continue;
      OrDie(runners[k]->StartPair(c));
      active.push_back(k);
    }

    for (Test test : o.tests) {
      c.test = test;
      Table t;
      t.test = test;
      t.pair = pair;
      const char* host = o.pinned_host ? "pinned host" : "host";
      t.src_name = pair.src == Loc::kDevice ? names[0] : host;
      t.dst_name = pair.dst == Loc::kDevice ? names[1] : host;
      t.sizes = sizes;
      t.rule = IterationRuleText(o, test);
      t.iters_column = RuleApplies(o);
      std::vector<size_t> here;  // the active series of this test
      for (size_t k : active) {
        if (!kSeries[k].in_test(test)) continue;
        here.push_back(k);
        t.series.push_back(Series{kSeries[k].name, kSeries[k].kind, {}, "", {}});
        OrDie(runners[k]->StartTest(c, &t.series.back()));
      }
      out.Head(t);
      const std::string label = std::string(TestName(test)) + " " + PairName(pair) + " ";
      for (size_t i = 0; i < sizes.size(); ++i) {
        progress.Row(label + std::to_string(sizes[i]) + " B");
        c.row = RowPlan{};
        for (size_t j = 0; j < here.size(); ++j) {
          Series& s = t.series[j];
          if (j > 0) progress.Detail(s.name);
          double v = kNaN;
          int iters = 0;
          OrDie(runners[here[j]]->MeasureSize(c, i, sizes[i], &v, &iters));
          s.values.push_back(v);
          s.iterations.push_back(std::isnan(v) ? 0 : iters);
        }
        out.Write(FormatTableRow(t, i));
      }
      for (size_t j = 0; j < here.size(); ++j) runners[here[j]]->EndTest(c, &t.series[j]);
      out.Write(FormatTableTail(t));
      if (rank == 0) report->tables.push_back(std::move(t));
    }
    for (size_t k : active) runners[k]->EndPair();
  }
  progress.Clear();
  if (rank == 0 && o.peers) {
    bool any_host_only = false;
    for (const Pair& p : o.pairs) any_host_only |= !p.has_device();
    if (any_host_only)
      report->AddNote("peers: NCCL runs D->D only and manual staging needs a device side; host "
                      "pairs have no peer column");
  }
  if (rank == 0 && o.limits && !setup.same_node)
    report->AddNote("limit and floors: not measured: the ranks are on different hosts, and they "
                    "are one node's copies and round trips");
  if (rank == 1) *report = Report();
  return Status::Ok();
}

}  // namespace sweep
}  // namespace mpigpu

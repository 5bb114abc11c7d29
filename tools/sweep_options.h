// mpigpu-sweep's command line: OSU-style flags parsed into one struct, checked before anything
// runs, so a typo costs a message and exit status 2, never a half-run job.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "memcopy/status.h"

namespace mpigpu {
namespace sweep {

inline constexpr int kExitUsage = 2;       // bad command line or a request this node cannot serve
inline constexpr int kExitCheckFailed = 3; // -c found a wrong byte
inline constexpr size_t kMaxMessage = size_t{1} << 30;  // counts are ints: 1 GiB is the largest
inline constexpr size_t kLargeMessage = 8192;  // OSU: fewer iterations above this size
// --time-per-size's default: the timed seconds a series may spend on one size before the
// iteration rule (sweep_rule.h) gives it fewer runs.
inline constexpr double kDefaultTimePerSize = 0.2;

enum class Test { kLatency, kBw, kBibw };
const char* TestName(Test t);
bool ParseTest(const std::string& word, Test* out);

// Where one side's buffer lives.
enum class Loc { kHost, kDevice };

// A buffer pair: rank 0's buffer (the sender of bw), rank 1's buffer (the receiver of bw).
struct Pair {
  Loc src = Loc::kHost;
  Loc dst = Loc::kHost;
  bool operator==(const Pair& o) const { return src == o.src && dst == o.dst; }
  bool has_device() const { return src == Loc::kDevice || dst == Loc::kDevice; }
};
std::string PairName(const Pair& p);  // "HH", "HD", "DH", "DD"
bool ParsePair(const std::string& word, Pair* out);  // "HD" or "hd"

// Every LMT back-end that MPIGPU_LMT names.
inline const std::vector<std::string>& LmtNames() {
  static const std::vector<std::string> names = {"auto", "ring", "cma", "ipc"};
  return names;
}
// Whether forcing back-end `lmt` changes anything for `pair` (cma moves host buffers only, ipc
// device buffers only; auto and ring apply everywhere).
bool LmtApplies(const std::string& lmt, const Pair& pair);

struct Options {
  bool help = false;
  std::vector<Test> tests = {Test::kLatency};  // positional test names (default latency)
  size_t min_size = 1;
  size_t max_size = size_t{4} << 20;
  int iterations = 0;     // -i; 0: OSU-like defaults per test and size (Iterations())
  int warmup = -1;        // -x; -1: defaults (Warmup())
  int window = 64;        // -W
  double time_per_size = kDefaultTimePerSize;  // --time-per-size; 0: OSU's fixed counts
  bool progress = false;  // --progress: the progress line also when stderr is not a terminal
  bool cuda = false;      // -d cuda given (accepted for OSU compatibility; D works without it)
  std::vector<Pair> pairs = {Pair{}};  // positional H|D H|D, --all-pairs or --pairs
  bool check = false;     // -c
  std::string csv, json, plot;
  // --replot: a JSON report written earlier by --json; nothing is launched, the report is
  // printed and written to --csv / --json / --plot (only those and -h may be combined).
  std::string replot;
  std::vector<std::string> lmt;  // --lmt: back-ends to run in turn; empty: the environment's
  bool tune = false;
  bool peers = true;      // --no-peers turns the NCCL and staging columns off
  bool limits = true;     // --no-limits turns the copy-engine limit column off
  bool pinned_host = false;  // --host-mem pinned: H buffers from MPIGPU_Alloc_mem
  int nranks = 2;         // -n (must be 2)
  // Internal (the launcher-mode parent to its ranks): write the results as JSON here and print
  // nothing on stdout.
  std::string result_file;
  bool quiet = false;
  bool launched = false;  // --launched: the sweep started these ranks itself (not mpigpurun)
  bool sizes_given = false;  // -m was given (--tune picks its own range otherwise)
};

// Parses argv[1..]. A bad word gives kInvalidArg with a message that names it.
Status ParseOptions(const std::vector<std::string>& args, Options* out);

// The --help text.
std::string UsageText();

// Message sizes: MIN, 2*MIN, 4*MIN, ... up to MAX (MIN 0 gives 0, 1, 2, 4, ...).
std::vector<size_t> MessageSizes(size_t min_size, size_t max_size);

// "64K", "2M", ... for sizes that are whole KiB / MiB / GiB, else the number.
std::string SizeText(size_t bytes);

// OSU-like defaults when -i / -x are not given: more iterations for small messages.
int Iterations(const Options& o, Test t, size_t size);
int Warmup(const Options& o, Test t, size_t size);

// The command line that gives a rank the same options (used by the launcher-mode parent).
// Options that only the parent acts on (--csv, --json, --plot, --lmt, --tune) are left out.
std::vector<std::string> RankArgs(const Options& o);

}  // namespace sweep
}  // namespace mpigpu

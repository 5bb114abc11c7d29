#include "tools/sweep_options.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <utility>

#include <CLI/CLI.hpp>

#include "memcopy/config.h"

namespace mpigpu {
namespace sweep {
namespace {

Status Bad(const std::string& msg) { return Status(Err::kInvalidArg, msg); }

bool ParseInt(const std::string& text, int min_value, int* out) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < min_value || v > INT_MAX) return false;
  *out = static_cast<int>(v);
  return true;
}

// --time-per-size: seconds from 0 to an hour.
bool ParseSeconds(const std::string& text, double* out) {
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || *end != '\0' || !(v >= 0) || v > 3600) return false;
  *out = v;
  return true;
}

// "-m [MIN:]MAX" with K/M/G suffixes.
Status ParseRange(const std::string& text, size_t* min_size, size_t* max_size) {
  const std::string bad = "bad -m '" + text + "': ";
  size_t colon = text.find(':');
  std::string lo = colon == std::string::npos ? "" : text.substr(0, colon);
  std::string hi = colon == std::string::npos ? text : text.substr(colon + 1);
  size_t min_v = 1, max_v = 0;
  if (!lo.empty() && !ParseSize(lo.c_str(), &min_v))
    return Bad(bad + "MIN '" + lo + "' is not a size (bytes, with K, M or G)");
  if (hi.empty() || !ParseSize(hi.c_str(), &max_v))
    return Bad(bad + "MAX '" + hi + "' is not a size (bytes, with K, M or G)");
  if (max_v > kMaxMessage) return Bad(bad + "the largest message size is 1G");
  if (min_v > max_v)
    return Bad(bad + "MIN " + SizeText(min_v) + " is larger than MAX " + SizeText(max_v));
  *min_size = min_v;
  *max_size = max_v;
  return Status::Ok();
}

Status ParsePairList(const std::string& text, std::vector<Pair>* out) {
  out->clear();
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    Pair p;
    std::string word = text.substr(start, comma - start);
    if (!ParsePair(word, &p))
      return Bad("bad --pairs '" + text + "': '" + word + "' is not HH, HD, DH or DD");
    if (std::find(out->begin(), out->end(), p) == out->end()) out->push_back(p);
    start = comma + 1;
  }
  return Status::Ok();
}

Status ParseLmtList(const std::string& text, std::vector<std::string>* out) {
  out->clear();
  if (text == "all") {
    *out = LmtNames();
    return Status::Ok();
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string word = text.substr(start, comma - start);
    const auto& names = LmtNames();
    if (std::find(names.begin(), names.end(), word) == names.end())
      return Bad("bad --lmt '" + text + "': '" + word +
                 "' is not a back-end (all, auto, ring, cma, ipc)");
    if (std::find(out->begin(), out->end(), word) == out->end()) out->push_back(word);
    start = comma + 1;
  }
  return Status::Ok();
}

}  // namespace

const char* TestName(Test t) {
  switch (t) {
    case Test::kLatency: return "latency";
    case Test::kBw: return "bw";
    case Test::kBibw: return "bibw";
  }
  return "?";
}

bool ParseTest(const std::string& word, Test* out) {
  for (Test t : {Test::kLatency, Test::kBw, Test::kBibw}) {
    if (word == TestName(t) || word == std::string("osu_") + TestName(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

std::string PairName(const Pair& p) {
  std::string s;
  s += p.src == Loc::kHost ? 'H' : 'D';
  s += p.dst == Loc::kHost ? 'H' : 'D';
  return s;
}

bool ParsePair(const std::string& word, Pair* out) {
  if (word.size() != 2) return false;
  Loc locs[2];
  for (int i = 0; i < 2; ++i) {
    char c = word[static_cast<size_t>(i)];
    if (c == 'H' || c == 'h') locs[i] = Loc::kHost;
    else if (c == 'D' || c == 'd') locs[i] = Loc::kDevice;
    else return false;
  }
  *out = Pair{locs[0], locs[1]};
  return true;
}

bool LmtApplies(const std::string& lmt, const Pair& pair) {
  if (lmt == "cma") return !pair.has_device();
  if (lmt == "ipc") return pair.has_device();
  return true;
}

namespace {

// The word that gave `op` on the command line ("-m" or "--message-size"; for the positional
// option, its first word): --replot's message names it as typed.
std::string Spelling(const CLI::Option* op, const CLI::Option* words,
                     const std::vector<std::string>& args) {
  if (op == words) return op->results().front();
  for (const std::string& w : args) {
    if (w == "--") break;
    const std::string name = w.substr(0, w.find('='));
    if (op->check_name(name)) return name;
  }
  return op->get_name();
}

}  // namespace

// CLI11 splits the words into options, their values and positional words, and finds unknown
// options; the values are checked here, with messages that name the option and the bad value.
Status ParseOptions(const std::vector<std::string>& args, Options* out) {
  *out = Options();
  CLI::App app("mpigpu-sweep");
  app.set_help_flag();  // -h, --help below: UsageText, not CLI11's
  app.allow_extras();   // unknown options are named below, as the user typed them
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  std::string sizes, iters, warmup, window, budget, accel, nranks, pairs, host_mem, lmt;
  bool all_pairs = false;
  std::vector<std::string> words;
  std::vector<const CLI::Option*> output_only = {
      app.add_flag("-h,--help", out->help),
      app.add_option("--replot", out->replot)->type_name("FILE"),
      app.add_option("--csv", out->csv)->type_name("FILE"),
      app.add_option("--json", out->json)->type_name("FILE"),
      app.add_option("--plot", out->plot)->type_name("FILE"),
      app.add_flag("--progress", out->progress)};
  CLI::Option* m = app.add_option("-m,--message-size", sizes);
  CLI::Option* i = app.add_option("-i,--iterations", iters);
  CLI::Option* x = app.add_option("-x,--warmup", warmup);
  CLI::Option* w = app.add_option("-W,--window-size", window);
  CLI::Option* t = app.add_option("--time-per-size", budget);
  CLI::Option* d = app.add_option("-d,--accelerator", accel);
  CLI::Option* n = app.add_option("-n", nranks);
  CLI::Option* p = app.add_option("--pairs", pairs);
  CLI::Option* hm = app.add_option("--host-mem", host_mem);
  CLI::Option* l = app.add_option("--lmt", lmt);
  app.add_flag("--all-pairs", all_pairs);
  app.add_flag("-c,--validation", out->check);
  app.add_flag("--tune", out->tune);
  app.add_flag("--peers,!--no-peers", out->peers);
  app.add_flag("--limits,!--no-limits", out->limits);
  app.add_option("--result-file", out->result_file);
  app.add_flag("--launched", out->launched);
  app.add_flag("--quiet", out->quiet);
  const CLI::Option* positional = app.add_option("words", words);

  // "--name=": CLI11 would take the next word as the value; "--flag=value": it would accept
  // true/false. Both are mistakes here.
  for (const std::string& word : args) {
    if (word == "--") break;
    const size_t eq = word.find('=');
    if (word.rfind("--", 0) != 0 || eq == std::string::npos) continue;
    const std::string name = word.substr(0, eq);
    const CLI::Option* op = app.get_option_no_throw(name);
    if (op == nullptr) continue;  // unknown: below
    if (op->get_items_expected_max() == 0) return Bad("option " + name + " takes no value");
    if (eq + 1 == word.size())
      return Bad(op->get_type_name() == "FILE" ? name + " needs a file name"
                                               : "option " + name + " needs a value");
  }
  try {
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));  // CLI11 pops from the back
  } catch (const CLI::ArgumentMismatch&) {
    // A value can only be missing after the last word.
    return Bad("option " + args.back().substr(0, args.back().find('=')) + " needs a value");
  } catch (const CLI::ParseError& e) {
    return Bad(e.what());
  }
  const std::vector<std::string> unknown = app.remaining();
  if (!unknown.empty()) return Bad("unknown option '" + unknown.front() + "'");
  if (out->help) return Status::Ok();

  // --replot draws a report measured earlier: the first word that only applies to measuring.
  std::string measuring;
  for (const CLI::Option* op : app.parse_order()) {
    if (std::find(output_only.begin(), output_only.end(), op) == output_only.end()) {
      measuring = Spelling(op, positional, args);
      break;
    }
  }
  if (!out->replot.empty() && !measuring.empty())
    return Bad("--replot draws a report measured earlier: '" + measuring +
               "' only applies to measuring (--replot takes --csv, --json and --plot)");
  for (const auto& [name, value] : {std::pair<const char*, const std::string*>{"--replot", &out->replot},
                                    {"--csv", &out->csv}, {"--json", &out->json},
                                    {"--plot", &out->plot}})
    if (app.count(name) > 0 && value->empty()) return Bad(std::string(name) + " needs a file name");

  if (m->count() > 0) {
    MPIGPU_RETURN_IF_ERROR(ParseRange(sizes, &out->min_size, &out->max_size));
    out->sizes_given = true;
  }
  if (i->count() > 0 && !ParseInt(iters, 1, &out->iterations))
    return Bad("bad -i '" + iters + "': expected a number of iterations >= 1");
  if (x->count() > 0 && !ParseInt(warmup, 0, &out->warmup))
    return Bad("bad -x '" + warmup + "': expected a number of warmup iterations >= 0");
  if (w->count() > 0 && (!ParseInt(window, 1, &out->window) || out->window > 4096))
    return Bad("bad -W '" + window + "': expected a window of 1 to 4096 messages");
  if (t->count() > 0 && !ParseSeconds(budget, &out->time_per_size))
    return Bad("bad --time-per-size '" + budget + "': expected seconds from 0 to 3600");
  if (d->count() > 0 && accel != "cuda")
    return Bad("bad -d '" + accel + "': only 'cuda' is supported");
  out->cuda = d->count() > 0;
  if (n->count() > 0 && (!ParseInt(nranks, 1, &out->nranks) || out->nranks != 2))
    return Bad("bad -n '" + nranks + "': mpigpu-sweep runs exactly 2 ranks");
  if (hm->count() > 0 && host_mem != "pageable" && host_mem != "pinned")
    return Bad("bad --host-mem '" + host_mem + "': expected pageable or pinned");
  out->pinned_host = host_mem == "pinned";
  if (l->count() > 0) MPIGPU_RETURN_IF_ERROR(ParseLmtList(lmt, &out->lmt));
  const bool pairs_given = all_pairs || p->count() > 0;
  if (all_pairs)
    out->pairs = {{Loc::kHost, Loc::kHost}, {Loc::kHost, Loc::kDevice},
                  {Loc::kDevice, Loc::kHost}, {Loc::kDevice, Loc::kDevice}};
  else if (p->count() > 0)
    MPIGPU_RETURN_IF_ERROR(ParsePairList(pairs, &out->pairs));

  // Positional words: tests, "all", and the buffer locations H|D H|D.
  std::vector<Test> tests;
  std::vector<Loc> locs;
  for (const std::string& word : words) {
    if (word == "H" || word == "h" || word == "D" || word == "d") {
      locs.push_back(word == "H" || word == "h" ? Loc::kHost : Loc::kDevice);
    } else if (word == "all") {
      tests = {Test::kLatency, Test::kBw, Test::kBibw};
    } else {
      Test test;
      if (!ParseTest(word, &test))
        return Bad("unknown test '" + word + "' (expected latency, bw or bibw)");
      if (std::find(tests.begin(), tests.end(), test) == tests.end()) tests.push_back(test);
    }
  }
  if (!tests.empty()) out->tests = tests;
  if (!locs.empty()) {
    if (locs.size() != 2)
      return Bad("buffer locations come in a pair (H|D H|D: rank 0's, then rank 1's); got " +
                 std::to_string(locs.size()));
    if (pairs_given) return Bad("give buffer locations either as H|D H|D or with --all-pairs/--pairs");
    out->pairs = {Pair{locs[0], locs[1]}};
  }
  if (out->tune && !out->lmt.empty())
    return Bad("--tune and --lmt cannot be combined (--tune forces MPIGPU_LMT=ring: the unit "
               "sizes only matter to the ring)");
  if (out->tune && !out->sizes_given) {
    // Unit sizes matter only to messages that go through the ring.
    out->min_size = size_t{256} << 10;
    out->max_size = size_t{16} << 20;
  }
  return Status::Ok();
}

std::string UsageText() {
  std::string t;
  t += "usage: mpigpu-sweep [options] [latency|bw|bibw|all ...] [H|D H|D]\n";
  t += "\n";
  t += "Measures mpigpu between two ranks, beside the node's copy limits and the peers (NCCL,\n";
  t += "manual staging through host memory). Started directly, it launches its two ranks with\n";
  t += "mpigpurun; it also runs under `mpigpurun -n 2`.\n";
  t += "\n";
  t += "Tests (default latency; several may be given):\n";
  t += "  latency                 ping-pong; one-way latency = half a round trip (us)\n";
  t += "  bw                      a window of messages rank 0 -> rank 1, then a 1-byte ack (GB/s)\n";
  t += "  bibw                    windows in both directions at once (GB/s, both directions)\n";
  t += "Buffer locations: H|D H|D = rank 0's buffer, rank 1's buffer (default H H).\n";
  t += "  D is device memory of GPU (local rank mod visible GPUs).\n";
  t += "\n";
  t += "Options:\n";
  t += "  -m, --message-size [MIN:]MAX  sizes MIN, 2*MIN, ... up to MAX (K, M, G suffixes;\n";
  t += "                          default 1:4M; largest 1G)\n";
  t += "  -i, --iterations N      timed iterations per size (default: latency 10000 up to 8K,\n";
  t += "                          1000 above; bw/bibw 100 up to 8K, 20 above)\n";
  t += "  -x, --warmup N          untimed iterations first (default: latency 100/10, bw 10/2)\n";
  t += "  -W, --window-size N     messages per window in bw/bibw (default 64)\n";
  t += "  --time-per-size SEC     fewer timed runs for a size whose runs would take longer than\n";
  t += "                          SEC (default 0.2; at least 10 latency / 2 bw runs; warmup in\n";
  t += "                          proportion; the iters column says how many); 0 or -i: fixed\n";
  t += "                          counts as above\n";
  t += "  -d cuda                 accepted for OSU compatibility (D buffers need no flag)\n";
  t += "  -n 2                    the number of ranks (always 2)\n";
  t += "  --all-pairs             run HH, HD, DH and DD\n";
  t += "  --pairs LIST            run these pairs, e.g. HH,DD\n";
  t += "  --host-mem KIND         H buffers: pageable (posix_memalign, default) or pinned\n";
  t += "                          (MPIGPU_Alloc_mem: page-locked where a GPU is usable)\n";
  t += "  -c, --validation        fill every size's messages with a pattern and verify them;\n";
  t += "                          a wrong byte ends the run with exit status 3\n";
  t += "  --csv FILE              write every point as CSV\n";
  t += "  --json FILE             write the results as JSON\n";
  t += "  --plot FILE.png         log-log plot (gnuplot), one panel per test, one line per series\n";
  t += "  --progress              a progress line with the time left on stderr also when it is\n";
  t += "                          not a terminal (on a terminal it is always shown)\n";
  t += "  --replot FILE.json      measure nothing: read a report written by --json, print its\n";
  t += "                          tables, write --csv / --json / --plot from it (to plot a sweep\n";
  t += "                          measured where gnuplot is missing); takes no other option\n";
  t += "  --lmt all|LIST          run each large-message back-end in turn (auto, ring, cma, ipc;\n";
  t += "                          MPIGPU_LMT is read at init, so ranks are launched once per\n";
  t += "                          back-end). Under an external mpigpurun only the environment's\n";
  t += "                          MPIGPU_LMT is measured.\n";
  t += "  --tune                  try MPIGPU_LMT_UNIT_HOST/_GPU 64K..8M and MPIGPU_LMT_UNITS 2..16\n";
  t += "                          (ring back-end, bw test; default sizes 256K:16M) and print the\n";
  t += "                          best as export lines\n";
  t += "  --peers / --no-peers    NCCL (D->D) and manual-staging columns (default on)\n";
  t += "  --limits / --no-limits  copy-limit (bandwidth) and floor (latency) columns (default on)\n";
  t += "  -h, --help              this text\n";
  t += "\n";
  t += "Bandwidth limit column (rank 0 alone, CUDA runtime): a window of copies, then one wait:\n";
  t += "D->D cudaMemcpyPeerAsync GPU0->GPU1 (same-device copy with one GPU), H->D / D->H pinned\n";
  t += "cudaMemcpyAsync, H->H host memcpy.\n";
  t += "Latency floor columns, one way, each named in the table:\n";
  t += "  cacheline  H->H: half a cache line's round trip between the two ranks' cores\n";
  t += "  gpuflag    D->D: half a flag's round trip between kernels on the two GPUs\n";
  t += "  copy       H<->D, D->D: one host-driven copy (cudaMemcpyAsync) issued and waited for\n";
  t += "Ratios are mpigpu / column. Bandwidth in GB/s = 1e9 bytes/s.\n";
  t += "\n";
  t += "Exit status: 0 ok, 2 bad command line or a request the node cannot serve (D without a\n";
  t += "GPU, not 2 ranks), 3 data check failed, else the failing rank's status.\n";
  return t;
}

std::string SizeText(size_t bytes) {
  if (bytes >= (size_t{1} << 30) && bytes % (size_t{1} << 30) == 0)
    return std::to_string(bytes >> 30) + "G";
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + "M";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + "K";
  return std::to_string(bytes);
}

std::vector<size_t> MessageSizes(size_t min_size, size_t max_size) {
  std::vector<size_t> sizes;
  for (size_t s = min_size; s <= max_size; s = s == 0 ? 1 : s * 2) sizes.push_back(s);
  return sizes;
}

int Iterations(const Options& o, Test t, size_t size) {
  if (o.iterations > 0) return o.iterations;
  const bool large = size > kLargeMessage;
  if (t == Test::kLatency) return large ? 1000 : 10000;
  return large ? 20 : 100;
}

int Warmup(const Options& o, Test t, size_t size) {
  if (o.warmup >= 0) return o.warmup;
  const bool large = size > kLargeMessage;
  if (t == Test::kLatency) return large ? 10 : 100;
  return large ? 2 : 10;
}

std::vector<std::string> RankArgs(const Options& o) {
  std::vector<std::string> a;
  for (Test t : o.tests) a.push_back(TestName(t));
  a.push_back("-m");
  a.push_back(std::to_string(o.min_size) + ":" + std::to_string(o.max_size));
  if (o.iterations > 0) {
    a.push_back("-i");
    a.push_back(std::to_string(o.iterations));
  }
  if (o.warmup >= 0) {
    a.push_back("-x");
    a.push_back(std::to_string(o.warmup));
  }
  a.push_back("-W");
  a.push_back(std::to_string(o.window));
  if (o.time_per_size != kDefaultTimePerSize) {
    char budget[32];
    std::snprintf(budget, sizeof budget, "%.17g", o.time_per_size);
    a.push_back("--time-per-size");
    a.push_back(budget);
  }
  if (o.progress) a.push_back("--progress");
  std::string pairs;
  for (const Pair& p : o.pairs) pairs += (pairs.empty() ? "" : ",") + PairName(p);
  a.push_back("--pairs");
  a.push_back(pairs);
  if (o.check) a.push_back("-c");
  if (o.pinned_host) {
    a.push_back("--host-mem");
    a.push_back("pinned");
  }
  if (!o.peers) a.push_back("--no-peers");
  if (!o.limits) a.push_back("--no-limits");
  return a;
}

}  // namespace sweep
}  // namespace mpigpu

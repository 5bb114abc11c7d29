#include "tools/sweep_plot.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern char** environ;

namespace mpigpu {
namespace sweep {
namespace {

// Runs argv with stdout and stderr sent to /dev/null unless `show_errors`; returns the exit
// status (-1 when it could not run or was killed).
int RunQuiet(const std::vector<std::string>& args, bool show_errors) {
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (std::string& a : copy) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  if (!show_errors)
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

}  // namespace

std::string FindInPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t colon = p.find(':', start);
    if (colon == std::string::npos) colon = p.size();
    std::string dir = p.substr(start, colon - start);
    if (dir.empty()) dir = ".";
    std::string full = dir + "/" + program;
    struct stat st;
    if (stat(full.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(full.c_str(), X_OK) == 0)
      return full;
    start = colon + 1;
  }
  return "";
}

Status CheckGnuplot() {
  if (FindInPath("gnuplot").empty())
    return Status(Err::kInvalidArg, "--plot needs gnuplot (apt-get install gnuplot-nox)");
  return Status::Ok();
}

std::string GnuplotScript(const Report& r, const std::string& png, const std::string& terminal) {
  std::vector<Test> tests;
  for (const Table& t : r.tables) {
    bool seen = false;
    for (Test x : tests) seen |= x == t.test;
    if (!seen) tests.push_back(t.test);
  }
  const int panels = tests.empty() ? 1 : static_cast<int>(tests.size());
  std::string s;
  s += "set terminal " + terminal + " size " + std::to_string(640 * panels) + ",520\n";
  s += "set output " + Quote(png) + "\n";
  // Data blocks: one per series of every table.
  std::vector<std::vector<std::string>> plots(tests.size());
  int block = 0;
  for (const Table& t : r.tables) {
    size_t panel = 0;
    while (tests[panel] != t.test) ++panel;
    for (const Series& ser : t.series) {
      std::string rows;
      for (size_t i = 0; i < t.sizes.size() && i < ser.values.size(); ++i) {
        if (t.sizes[i] == 0 || !std::isfinite(ser.values[i]) || ser.values[i] <= 0) continue;
        char line[64];
        std::snprintf(line, sizeof line, "%zu %.6g\n", t.sizes[i], ser.values[i]);
        rows += line;
      }
      if (rows.empty()) continue;  // n/a everywhere: no line
      const std::string name = "$s" + std::to_string(block++);
      s += name + " << EOD\n" + rows + "EOD\n";
      const char* style = ser.kind == kKindMpigpu ? "linespoints lw 2"
                          : ser.kind == kKindLimit || ser.kind == kKindFloor ? "lines dt 2 lw 2"
                                                   : "linespoints dt 3";
      plots[panel].push_back(name + " using 1:2 with " + style + " title " +
                             Quote(PairName(t.pair) + " " + ser.name));
    }
  }
  s += "set logscale xy\n";
  s += "set grid\n";
  s += "set key font \",9\"\n";
  s += "set format x \"%.0s%cB\"\n";
  s += "set xlabel \"message size (bytes)\"\n";
  s += "set multiplot layout 1," + std::to_string(panels) + " title \"mpigpu-sweep\"\n";
  for (size_t p = 0; p < tests.size(); ++p) {
    s += "set title " + Quote(std::string(TestName(tests[p])) + ": " + QuantityName(tests[p])) +
         "\n";
    s += std::string("set ylabel ") + Quote(Unit(tests[p])) + "\n";
    s += tests[p] == Test::kLatency ? "set key left top\n" : "set key right bottom\n";
    if (plots[p].empty()) {
      s += "set label 1 \"no data\" at graph 0.5,0.5 center\nplot [1:2] [1:2] NaN notitle\n"
           "unset label 1\n";
      continue;
    }
    s += "plot ";
    for (size_t k = 0; k < plots[p].size(); ++k) s += (k ? ", \\\n     " : "") + plots[p][k];
    s += "\n";
  }
  if (tests.empty()) s += "set label 1 \"no data\" at graph 0.5,0.5 center\nplot [1:2] [1:2] NaN notitle\n";
  s += "unset multiplot\n";
  return s;
}

Status Plot(const Report& r, const std::string& png) {
  MPIGPU_RETURN_IF_ERROR(CheckGnuplot());
  const std::string gnuplot = FindInPath("gnuplot");
  const std::string terminal =
      RunQuiet({gnuplot, "-e", "set terminal pngcairo"}, false) == 0 ? "pngcairo" : "png";
  char path[] = "/tmp/mpigpu-sweep-plot-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return SysError("mkstemp for the gnuplot script");
  const std::string script = GnuplotScript(r, png, terminal);
  bool written = write(fd, script.data(), script.size()) == static_cast<ssize_t>(script.size());
  close(fd);
  int rc = written ? RunQuiet({gnuplot, path}, true) : -1;
  unlink(path);
  if (!written) return Status(Err::kSystem, "cannot write the gnuplot script");
  if (rc != 0)
    return Status(Err::kSystem, "gnuplot failed (exit " + std::to_string(rc) + ") drawing '" +
                                    png + "'");
  struct stat st;
  if (stat(png.c_str(), &st) != 0 || st.st_size == 0)
    return Status(Err::kSystem, "gnuplot wrote no image to '" + png + "'");
  return Status::Ok();
}

}  // namespace sweep
}  // namespace mpigpu

#include "tests/pmix_rank_report.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace mpigpu::testing {
namespace {

// The text after `prefix` up to the end of its line, or false when no line has it.
bool LineAfter(const std::string& err, const std::string& prefix, std::string* rest) {
  const size_t at = err.find(prefix);
  if (at == std::string::npos) return false;
  const size_t from = at + prefix.size();
  const size_t end = err.find('\n', from);
  *rest = err.substr(from, end == std::string::npos ? std::string::npos : end - from);
  return true;
}

// "C at T: D"
SurvivorWord Parse(const std::string& err, const std::string& prefix) {
  SurvivorWord w;
  std::string rest;
  if (!LineAfter(err, prefix, &rest)) return w;
  char* end = nullptr;
  w.code = static_cast<int>(std::strtol(rest.c_str(), &end, 10));
  const std::string at = " at ";
  if (rest.compare(static_cast<size_t>(end - rest.c_str()), at.size(), at) != 0) return w;
  w.at = std::strtod(end + at.size(), &end);
  const size_t colon = rest.find(": ", static_cast<size_t>(end - rest.c_str()));
  if (colon != std::string::npos) w.detail = rest.substr(colon + 2);
  w.found = true;
  return w;
}

}  // namespace

double DeathTime(const std::string& err, int victim) {
  std::string rest;
  if (!LineAfter(err, "pmix_rank " + std::to_string(victim) + " dies at ", &rest)) return -1;
  return std::strtod(rest.c_str(), nullptr);
}

SurvivorWord ReceiveWord(const std::string& err, int rank) {
  return Parse(err, "pmix_rank: rank " + std::to_string(rank) +
                        ": the receive from the killed rank ended with ");
}

SurvivorWord FinalizeWord(const std::string& err, int rank) {
  return Parse(err, "pmix_rank " + std::to_string(rank) + ": finalize returned ");
}

std::string DescribeWords(const std::vector<int>& survivors, double died,
                          SurvivorWord (*word)(const std::string&, int), const std::string& err) {
  std::string out;
  for (int r : survivors) {
    const SurvivorWord w = word(err, r);
    char line[768];
    if (!w.found)
      std::snprintf(line, sizeof line, "rank %d: no word (its launcher ended it first)\n", r);
    else
      std::snprintf(line, sizeof line, "rank %d: code %d, %.3f s after the death: %s\n", r,
                    w.code, died >= 0 ? w.at - died : -1.0, w.detail.c_str());
    out += line;
  }
  return out;
}

double MonotonicNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace mpigpu::testing

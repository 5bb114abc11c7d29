#include "tools/config_markdown.h"

#include <algorithm>
#include <set>
#include <vector>

#include "memcopy/params.h"

namespace mpigpu {
namespace {

constexpr char kHead[] =
    "# Configuration\n"
    "\n"
    "<!-- Generated from the settings registry by `mpigpu-info --config --markdown`; do not edit.\n"
    "     //docs:configuration_page_test fails when this page and the registry differ. -->\n"
    "\n"
    "Every setting is an environment variable, declared by the component that uses it. "
    "`MPIGPU_Init`\nchecks them all: a malformed value, one outside its range, or a broken "
    "combination (below) makes it\nreturn `MPIGPU_ERR_ARG` with a message naming the variable, "
    "the value and what is allowed.\n`mpigpu-info --config` prints each variable with the value "
    "in effect, marks refused ones with `!`\nand exits with status 1 then. An `MPIGPU_*` name "
    "that no component reads is reported as a warning.\n"
    "\n"
    "Values: numbers are plain decimal digits (no spaces, signs, `0x` or decimal points). Sizes "
    "in bytes\nmay end in `K`, `M` or `G` (powers of 1024; `64KiB` and `64KB` also work); counts "
    "and times take no\nsuffix. Booleans take `0`/`1`, `no`/`yes`, `off`/`on`. \"0 (off) or "
    "A..B\": 0 turns the feature off.\n"
    "\n"
    "Combinations checked at `MPIGPU_Init`:\n"
    "- `MPIGPU_LMT_UNIT_GPU_MIN` must not exceed `MPIGPU_LMT_UNIT_GPU`.\n"
    "- One pair's ring, `MPIGPU_LMT_UNITS` x the larger of `MPIGPU_LMT_UNIT_HOST` and\n"
    "  `MPIGPU_LMT_UNIT_GPU`, is at most 64 GiB, holds at most 65536 of the smallest GPU units "
    "and fits in\n  `/dev/shm` (rings are made per pair at the first large message; "
    "`mpigpu-info` prints the size).\n"
    "- One rank's cells, `MPIGPU_CELLS_PER_RANK` x `MPIGPU_CELL_SIZE`, are at most 64 GiB.\n";

// A table cell: '|' would end the cell, a newline the row.
std::string Cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string Code(const std::string& text) { return text.empty() ? "(empty)" : "`" + text + "`"; }

}  // namespace

std::string ConfigMarkdown() {
  // Components of equal order are listed by name: registration order follows the link order.
  std::vector<const ParamSection*> sections = ParamSections();
  std::stable_sort(sections.begin(), sections.end(), [](const ParamSection* a, const ParamSection* b) {
    if (a->order() != b->order()) return a->order() < b->order();
    return std::string(a->component()) < b->component();
  });
  std::string md = kHead;
  std::set<std::string> launcher_names;
  for (const ParamSection* s : sections) {
    md += "\n## ";
    md += s->component();
    md += "\n\n| variable | default | allowed | meaning |\n|---|---|---|---|\n";
    for (const ParamInfo& p : s->Infos()) {
      const std::string def = p.doc_default ? p.doc_default : Code(p.default_value);
      md += "| `" + std::string(p.name) + "` | " + Cell(def) + " | " +
            Cell(params::RangeText(p)) + " | " + Cell(p.help) + " |\n";
    }
    for (const char* n : s->extra_names()) launcher_names.insert(n);
  }
  md += "\n## Set by the launchers\n\nNot settings: `mpigpurun` sets "
        "these for each rank and the library reads them (a rank\nthat a PMIx launcher started learns the same from PMIx).\n\n";
  bool first = true;
  for (const std::string& n : launcher_names) {
    md += (first ? "`" : ", `") + n + "`";
    first = false;
  }
  md += "\n";
  return md;
}

}  // namespace mpigpu

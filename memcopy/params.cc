#include "memcopy/params.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "memcopy/log.h"

extern char** environ;

namespace mpigpu {
namespace {

constexpr size_t kK = size_t{1} << 10;
constexpr size_t kM = size_t{1} << 20;
constexpr size_t kG = size_t{1} << 30;

enum class NumberError { kOk, kMalformed, kTooLarge };

// Strict: digits only, then (sizes) one of K M G in either case, optionally followed by "i"
// and/or "B". No spaces, signs, "0x" or decimal points; overflow is reported as kTooLarge.
NumberError ParseNumber(const char* text, bool suffix_allowed, size_t* out) {
  if (text == nullptr || *text < '0' || *text > '9') return NumberError::kMalformed;
  const char* p = text;
  while (*p >= '0' && *p <= '9') ++p;
  unsigned shift = 0;
  if (suffix_allowed) {
    switch (*p) {
      case 'k': case 'K': shift = 10; ++p; break;
      case 'm': case 'M': shift = 20; ++p; break;
      case 'g': case 'G': shift = 30; ++p; break;
      default: break;
    }
    if (shift != 0 && *p == 'i') ++p;  // "64Ki", "64KiB"
    if (shift != 0 && *p == 'B') ++p;  // "64KB"
  }
  if (*p != '\0') return NumberError::kMalformed;
  // Only digits (and a checked suffix) are left: strtoull's sign and space handling never apply.
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno == ERANGE) return NumberError::kTooLarge;
  if (errno != 0 || end == text) return NumberError::kMalformed;
  if (v > (static_cast<unsigned long long>(SIZE_MAX) >> shift)) return NumberError::kTooLarge;
  *out = static_cast<size_t>(v << shift);
  return NumberError::kOk;
}

// Registered components, in registration order: made on first use (before the first component
// registers, whatever the order of static initialisation) and never destroyed, as the components.
std::vector<const ParamSection*>& Registry() {
  static auto* sections = new std::vector<const ParamSection*>();
  return *sections;
}

}  // namespace

bool ParseBool(const char* text, bool* out) {
  if (!std::strcmp(text, "1") || !std::strcmp(text, "yes") || !std::strcmp(text, "on")) {
    *out = true;
    return true;
  }
  if (!std::strcmp(text, "0") || !std::strcmp(text, "no") || !std::strcmp(text, "off")) {
    *out = false;
    return true;
  }
  return false;
}

bool ParseEnum(const char* text, const char* const* names, int n, int* out) {
  for (int i = 0; i < n; ++i) {
    if (std::strcmp(text, names[i]) == 0) {
      *out = i;
      return true;
    }
  }
  return false;
}

namespace params {

std::string SizeText(uint64_t v) {
  if (v != 0 && v % kG == 0) return std::to_string(v / kG) + "G";
  if (v != 0 && v % kM == 0) return std::to_string(v / kM) + "M";
  if (v != 0 && v % kK == 0) return std::to_string(v / kK) + "K";
  return std::to_string(v);
}

std::string RangeText(const ParamInfo& p) {
  if (p.kind == ParamKind::kChoice) return p.choices;
  auto num = [&](size_t v) { return p.kind == ParamKind::kBytes ? SizeText(v) : std::to_string(v); };
  std::string r = num(p.min) + ".." + num(p.max);
  if (p.zero_allowed && p.min > 0) r = "0 (off) or " + r;
  if (p.unit[0] != '\0') r += std::string(" ") + p.unit;
  return r;
}

std::string ParseNumeric(const ParamInfo& p, const char* text, size_t* out) {
  const std::string what = std::string(p.name) + "='" + text + "'";
  const std::string range = RangeText(p);
  size_t v = 0;
  switch (ParseNumber(text, p.kind == ParamKind::kBytes, &v)) {
    case NumberError::kOk:
      break;
    case NumberError::kTooLarge:
      return what + " is too large (allowed " + range + ")";
    case NumberError::kMalformed:
      return what +
             (p.kind == ParamKind::kBytes
                  ? " is not a size: decimal digits with an optional K, M or G suffix, no spaces "
                    "or signs (allowed "
                  : " is not a number: decimal digits only, no spaces or signs (allowed ") +
             range + ")";
  }
  if ((v < p.min && !(v == 0 && p.zero_allowed)) || v > p.max)
    return what + " is out of range (allowed " + range + ")";
  *out = v;
  return "";
}

void AddProblem(Status* all, const std::string& msg) {
  if (msg.empty()) return;
  *all = Status(Err::kInvalidArg, all->ok() ? msg : all->message() + "; " + msg);
}

uint64_t SatMul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

uint64_t SatAdd(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void ReportLoaded(const char* component, const Status& verdict) {
  if (!verdict.ok())
    MPIGPU_WARN("%s: MPIGPU_Init refuses this configuration (%s settings; mpigpu-info shows every "
                "variable with its allowed values)",
                verdict.message().c_str(), component);
  static std::once_flag once;
  std::call_once(once, [] {
    for (const std::string& name : UnknownConfigNames(environ))
      MPIGPU_WARN("unknown variable %s is ignored (mpigpu-info lists the known ones)", name.c_str());
  });
}

}  // namespace params

ParamSection::ParamSection(const char* component, int order, std::vector<const char*> extra_names)
    : component_(component), order_(order), extra_names_(std::move(extra_names)) {
  Registry().push_back(this);
}

std::vector<const ParamSection*> ParamSections() {
  std::vector<const ParamSection*> sections = Registry();
  std::stable_sort(sections.begin(), sections.end(),
                   [](const ParamSection* a, const ParamSection* b) { return a->order() < b->order(); });
  return sections;
}

Status ConfigStatus() {
  Status all;  // joined anew each time: a component registered later counts too
  for (const ParamSection* s : ParamSections())
    if (!s->EnvStatus().ok()) params::AddProblem(&all, s->EnvStatus().message());
  return all;
}

std::vector<ConfigEntry> DescribeConfig(Status* verdict) {
  std::vector<ConfigEntry> entries;
  Status all;
  for (const ParamSection* s : ParamSections()) {
    Status st = s->Describe([](const char* n) { return std::getenv(n); }, &entries);
    if (!st.ok()) params::AddProblem(&all, st.message());
  }
  if (verdict) *verdict = std::move(all);
  return entries;
}

std::vector<ConfigLimits> NumericConfigLimits() {
  std::vector<ConfigLimits> limits;
  for (const ParamSection* s : ParamSections())
    for (const ParamInfo& p : s->Infos())
      if (p.kind != ParamKind::kChoice)
        limits.push_back({p.name, p.min, p.max, p.zero_allowed, p.kind == ParamKind::kBytes});
  return limits;
}

std::vector<std::string> UnknownConfigNames(char** envp) {
  std::vector<std::string> unknown;
  const std::vector<const ParamSection*> sections = ParamSections();
  for (char** e = envp; e && *e; ++e) {
    if (std::strncmp(*e, "MPIGPU_", 7) != 0) continue;
    const char* eq = std::strchr(*e, '=');
    std::string name(*e, eq ? static_cast<size_t>(eq - *e) : std::strlen(*e));
    bool known = false;
    for (const ParamSection* s : sections) {
      for (const ParamInfo& p : s->Infos()) known = known || name == p.name;
      for (const char* n : s->extra_names()) known = known || name == n;
    }
    if (!known) unknown.push_back(name);
  }
  return unknown;
}

bool ParseSize(const char* text, size_t* out) {
  size_t v = 0;
  if (ParseNumber(text, /*suffix_allowed=*/true, &v) != NumberError::kOk) return false;
  *out = v;
  return true;
}

int LauncherInt(const char* name) {
  size_t v = 0;
  if (ParseNumber(std::getenv(name), /*suffix_allowed=*/false, &v) != NumberError::kOk ||
      v > (size_t{1} << 30))
    return -1;
  return static_cast<int>(v);
}

}  // namespace mpigpu

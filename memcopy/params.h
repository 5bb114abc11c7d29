// Params: the MPIGPU_* settings, each declared by the component that uses it, in one registry.
//
// A component (memcopy, transport, the API) defines its settings struct, a table of ParamVar
// rows (name, default, meaning, allowed values, the field) and one Params<Struct> object built
// from it on first use and never destroyed (a static flag uses it at start-up, so it is there
// whatever the order of static initialisation, and still there for static destructors). The
// object registers itself, so `mpigpu-info` prints and checks every component's variables and
// MPIGPU_Init refuses what any of them refuses, while no component knows another's knobs. (The
// library that holds a Params object is `alwayslink`, so the registration is linked into every
// program, mpigpu-info included.)
//
// Values are read from the environment once per component (Params::Get, thread-safe). Numbers
// are plain decimal digits: no spaces, no sign, no hex; sizes in bytes may end in K, M or G
// (powers of 1024; "KiB" and "KB" spellings too). Every numeric variable has a range, and a
// component may check combinations; a value outside them, or one that does not parse, keeps its
// default in Get() (tools still run) but is an error in ConfigStatus(), which MPIGPU_Init
// returns. Unknown MPIGPU_* variables are reported once as a warning (a typo must not pass
// silently).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "memcopy/status.h"

namespace mpigpu {

using EnvLookup = std::function<const char*(const char*)>;

enum class ParamKind {
  kChoice,  // a word from a list (enums, booleans): `parse` stores it
  kBytes,   // a size: digits with an optional K/M/G suffix, within [min, max] (or 0)
  kCount,   // a count or a time: plain digits, within [min, max] (or 0)
};

// A variable without its component's type: what printing and range checks need.
struct ParamInfo {
  const char* name;
  const char* default_value;
  const char* help;
  ParamKind kind;
  const char* choices;  // kChoice: the allowed words, as printed
  size_t min;           // kBytes, kCount: the range; 0 too when zero_allowed (0 = off)
  size_t max;
  bool zero_allowed;
  const char* unit;  // after a count's range ("s", "us"); "" for none
  // The default as the documentation states it, where it depends on the build (debug or -c opt);
  // nullptr: default_value, the same in every build.
  const char* doc_default = nullptr;
};

// One row of a component's table: the variable and where it goes in the component's struct C.
template <class C>
struct ParamVar {
  ParamInfo info;
  bool (*parse)(const char* text, C* c);  // kChoice: stores a valid word, false on other text
  size_t C::*field;                       // kBytes, kCount
};

template <class C>
constexpr ParamVar<C> ChoiceParam(const char* name, const char* def, const char* help,
                                  const char* choices, bool (*parse)(const char*, C*)) {
  return ParamVar<C>{{name, def, help, ParamKind::kChoice, choices, 0, 0, false, ""}, parse,
                     nullptr};
}
template <class C>
constexpr ParamVar<C> BytesParam(const char* name, const char* def, const char* help,
                                 size_t C::*field, size_t min, size_t max,
                                 bool zero_allowed = false) {
  return ParamVar<C>{{name, def, help, ParamKind::kBytes, "", min, max, zero_allowed, ""}, nullptr,
                     field};
}
template <class C>
constexpr ParamVar<C> CountParam(const char* name, const char* def, const char* help,
                                 size_t C::*field, size_t min, size_t max, const char* unit = "") {
  return ParamVar<C>{{name, def, help, ParamKind::kCount, "", min, max, false, unit}, nullptr,
                     field};
}

// `var` with its default as the documentation states it (see ParamInfo::doc_default).
template <class C>
constexpr ParamVar<C> WithDocDefault(ParamVar<C> var, const char* doc_default) {
  var.info.doc_default = doc_default;
  return var;
}

constexpr char kBoolChoices[] = "0 | 1 (also no | yes, off | on)";
bool ParseBool(const char* text, bool* out);
// `text` among names[0..n): its index in *out.
bool ParseEnum(const char* text, const char* const* names, int n, int* out);

// Table rows for booleans and enums: MPIGPU_PARAM_BOOL(Struct, field), and
// MPIGPU_PARAM_ENUM(Struct, field, EnumType, "word0", "word1", ...) in the enum's order.
#define MPIGPU_PARAM_BOOL(C, field) [](const char* t, C* c) { return ::mpigpu::ParseBool(t, &c->field); }
#define MPIGPU_PARAM_ENUM(C, field, type, ...)                                     \
  [](const char* t, C* c) {                                                        \
    static const char* const names[] = {__VA_ARGS__};                              \
    int v;                                                                         \
    if (!::mpigpu::ParseEnum(t, names, sizeof names / sizeof names[0], &v)) return false; \
    c->field = static_cast<type>(v);                                               \
    return true;                                                                   \
  }

struct ConfigEntry {
  std::string name;
  std::string value;          // in effect (the environment's, or the default if that is refused)
  std::string default_value;
  std::string help;
  std::string range;          // what it accepts: "2..4096", "0 (off) or 64K..1G", "auto | on | off"
  bool from_env = false;      // the environment's value is in effect
  std::string error;          // why the environment's value was refused; "" if it was not
};

// A numeric variable's allowed values: min..max, and 0 as well when zero_allowed (0 then turns
// the feature off). `bytes`: a size, which takes K/M/G suffixes.
struct ConfigLimits {
  std::string name;
  size_t min = 0;
  size_t max = 0;
  bool zero_allowed = false;
  bool bytes = false;
};

// The type-independent parsing every component's table shares.
namespace params {
// `text` for a numeric variable: "" and *out set when valid, else why not (name, value, range).
std::string ParseNumeric(const ParamInfo& p, const char* text, size_t* out);
// What `p` accepts, as printed: "2..4096", "0 (off) or 64K..1G", "auto | on | off".
std::string RangeText(const ParamInfo& p);
// Adds `msg` to the kInvalidArg status that lists every problem ("; " between them).
void AddProblem(Status* all, const std::string& msg);
// 65536 -> "64K", 1073741824 -> "1G", 1000 -> "1000".
std::string SizeText(uint64_t v);
// Overflow-safe arithmetic for size checks: saturates at UINT64_MAX.
uint64_t SatMul(uint64_t a, uint64_t b);
uint64_t SatAdd(uint64_t a, uint64_t b);
// After a component read the environment: warns about its refusal, if any, and (once per
// process) about MPIGPU_* names that no component declares.
void ReportLoaded(const char* component, const Status& verdict);
}  // namespace params

// A component's settings, registered by its constructor (see the top of this file).
class ParamSection {
 public:
  // `order`: where mpigpu-info lists it (lower layers first). `extra_names`: MPIGPU_* names the
  // component reads that are not settings (the launcher's), so they do not warn as unknown.
  ParamSection(const char* component, int order, std::vector<const char*> extra_names = {});
  virtual ~ParamSection() = default;
  ParamSection(const ParamSection&) = delete;
  ParamSection& operator=(const ParamSection&) = delete;

  const char* component() const { return component_; }
  int order() const { return order_; }
  const std::vector<const char*>& extra_names() const { return extra_names_; }
  virtual std::vector<ParamInfo> Infos() const = 0;
  // Every variable as `lookup` gives it, and the verdict (values, combinations, the node).
  virtual Status Describe(const EnvLookup& lookup, std::vector<ConfigEntry>* entries) const = 0;
  // The verdict on the environment, as read once.
  virtual const Status& EnvStatus() const = 0;

 private:
  const char* component_;
  int order_;
  std::vector<const char*> extra_names_;
};

// Component C's settings: its table, its combination checks (on the values alone, and on the
// node: /dev/shm's size, say) and, optionally, what to do once they are read.
template <class C>
class Params final : public ParamSection {
 public:
  using Check = Status (*)(const C&);
  Params(const char* component, int order, const ParamVar<C>* vars, size_t n, Check check,
         Check node_check = nullptr, void (*on_load)(const C&) = nullptr,
         std::vector<const char*> extra_names = {})
      : ParamSection(component, order, std::move(extra_names)),
        vars_(vars),
        n_(n),
        check_(check),
        node_check_(node_check),
        on_load_(on_load) {}

  // The environment's values (defaults where refused), read once.
  const C& Get() const { return Load().values; }
  const Status& EnvStatus() const override { return Load().status; }

  // Parses from `lookup` into *out and runs the combination check (not the node's). Returns
  // kInvalidArg naming every refused value (name='value', what is wrong, the allowed range);
  // `out` still holds a default for each refused entry.
  Status Parse(const EnvLookup& lookup, C* out, std::vector<ConfigEntry>* entries = nullptr) const {
    Status all;
    for (size_t i = 0; i < n_; ++i) {
      const ParamVar<C>& var = vars_[i];
      (void)Apply(var, var.info.default_value, out);  // defaults are valid (tested)
      const char* text = lookup(var.info.name);
      std::string error;
      bool from_env = text != nullptr;
      if (from_env && !(error = Apply(var, text, out)).empty()) {
        (void)Apply(var, var.info.default_value, out);
        params::AddProblem(&all, error);
        from_env = false;
      }
      if (entries)
        entries->push_back({var.info.name, from_env ? text : var.info.default_value,
                            var.info.default_value, var.info.help, params::RangeText(var.info),
                            from_env, error});
    }
    if (check_) {
      Status combos = check_(*out);
      if (!combos.ok()) params::AddProblem(&all, combos.message());
    }
    return all;
  }

  std::vector<ParamInfo> Infos() const override {
    std::vector<ParamInfo> infos;
    for (size_t i = 0; i < n_; ++i) infos.push_back(vars_[i].info);
    return infos;
  }

  Status Describe(const EnvLookup& lookup, std::vector<ConfigEntry>* entries) const override {
    C values;
    return ParseForNode(lookup, &values, entries);
  }

 private:
  struct Loaded {
    C values;
    Status status;
  };

  // Parse, then the node's check (what the environment's verdict covers).
  Status ParseForNode(const EnvLookup& lookup, C* out, std::vector<ConfigEntry>* entries) const {
    Status st = Parse(lookup, out, entries);
    if (node_check_) {
      Status node = node_check_(*out);
      if (!node.ok()) params::AddProblem(&st, node.message());
    }
    return st;
  }

  static std::string Apply(const ParamVar<C>& var, const char* text, C* c) {
    if (var.info.kind == ParamKind::kChoice)
      return var.parse(text, c) ? ""
                                : std::string(var.info.name) + "='" + text +
                                      "' is not valid (allowed " + params::RangeText(var.info) + ")";
    size_t v = 0;
    std::string error = params::ParseNumeric(var.info, text, &v);
    if (error.empty()) c->*var.field = v;
    return error;
  }

  const Loaded& Load() const {
    std::call_once(once_, [this] {
      loaded_.status =
          ParseForNode([](const char* n) { return std::getenv(n); }, &loaded_.values, nullptr);
      if (on_load_) on_load_(loaded_.values);
      params::ReportLoaded(component(), loaded_.status);
    });
    return loaded_;
  }

  const ParamVar<C>* vars_;
  size_t n_;
  Check check_;
  Check node_check_;
  void (*on_load_)(const C&);
  mutable std::once_flag once_;
  mutable Loaded loaded_;
};

// Every registered component, lower layers first.
std::vector<const ParamSection*> ParamSections();

// The environment's verdict over every component: ok, or kInvalidArg naming each refused
// variable with its value and allowed range, and each broken combination. MPIGPU_Init returns it.
// Each component's refusal is also logged once as a warning.
Status ConfigStatus();

// Every variable of every component with its value in effect, default, help and range, and the
// reason for each refused value (what mpigpu-info prints). `verdict`, if given, gets what
// ConfigStatus() would say for the environment now.
std::vector<ConfigEntry> DescribeConfig(Status* verdict = nullptr);

// Every numeric variable's range (for tests and documentation).
std::vector<ConfigLimits> NumericConfigLimits();

// MPIGPU_* names set in `envp` that no component reads.
std::vector<std::string> UnknownConfigNames(char** envp);

// A number the launcher sets (MPIGPU_RANK, MPIGPU_SIZE, MPIGPU_CREATOR_PID, ...): its value, or -1
// when it is unset, empty, not plain decimal digits (the rule of every MPIGPU_* number) or above
// 2^30.
int LauncherInt(const char* name);

// "64K" / "1M" / "123" -> bytes. False on garbage (spaces, signs, "0x", "1.5M"), or a value
// over SIZE_MAX; `out` is untouched then.
bool ParseSize(const char* text, size_t* out);

}  // namespace mpigpu

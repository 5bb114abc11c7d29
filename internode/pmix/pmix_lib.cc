#include "internode/pmix/pmix_lib.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "memcopy/params.h"

namespace mpigpu::internode {
namespace {

struct PmixConfig {
  char lib[256] = "libpmix.so.2";
};

// A file name or path: no spaces or control characters (it goes to dlopen as it is).
bool ParseLib(const char* text, PmixConfig* c) {
  const size_t n = std::strlen(text);
  if (n == 0 || n >= sizeof c->lib) return false;
  for (size_t i = 0; i < n; ++i)
    if (static_cast<unsigned char>(text[i]) <= ' ') return false;
  std::memcpy(c->lib, text, n + 1);
  return true;
}

constexpr ParamVar<PmixConfig> kVars[] = {
    ChoiceParam<PmixConfig>("MPIGPU_PMIX_LIB", "libpmix.so.2",
           "the PMIx client library a rank started by a PMIx launcher (Open MPI's mpirun, srun "
           "--mpi=pmix, prterun) loads; only such a rank loads it",
           "a library name or path", ParseLib),
};

const Params<PmixConfig>& PmixParams() {
  static const auto* params =
      new Params<PmixConfig>("pmix", 26, kVars, sizeof kVars / sizeof kVars[0], nullptr);
  return *params;
}
[[maybe_unused]] const bool kRegistered = (PmixParams(), true);

template <class F>
bool Find(void* h, const char* name, F* out) {
  *out = reinterpret_cast<F>(::dlsym(h, name));
  return *out != nullptr;
}

Status DoLoad(PmixLib* lib) {
  const char* name = PmixParams().Get().lib;
  // RTLD_GLOBAL: libpmix opens its plugins (pmix_mca_*.so), which resolve against it.
  void* h = ::dlopen(name, RTLD_NOW | RTLD_GLOBAL);
  if (h == nullptr) {
    const char* why = ::dlerror();
    return Status(Err::kSystem, std::string("cannot load the PMIx library ") + name + " (" +
                                    (why ? why : "?") +
                                    "): install libpmix2 or name the library in MPIGPU_PMIX_LIB");
  }
  lib->path = name;
  link_map* map = nullptr;
  if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name && *map->l_name)
    lib->path = map->l_name;
  const char* missing = nullptr;
  if (!Find(h, "PMIx_Init", &lib->Init)) missing = "PMIx_Init";
  else if (!Find(h, "PMIx_Finalize", &lib->Finalize)) missing = "PMIx_Finalize";
  else if (!Find(h, "PMIx_Get", &lib->Get)) missing = "PMIx_Get";
  else if (!Find(h, "PMIx_Put", &lib->Put)) missing = "PMIx_Put";
  else if (!Find(h, "PMIx_Commit", &lib->Commit)) missing = "PMIx_Commit";
  else if (!Find(h, "PMIx_Fence_nb", &lib->FenceNb)) missing = "PMIx_Fence_nb";
  else if (!Find(h, "PMIx_Register_event_handler", &lib->RegisterEventHandler))
    missing = "PMIx_Register_event_handler";
  else if (!Find(h, "PMIx_Query_info_nb", &lib->QueryInfoNb)) missing = "PMIx_Query_info_nb";
  else if (!Find(h, "PMIx_Proc_state_string", &lib->ProcStateString))
    missing = "PMIx_Proc_state_string";
  else if (!Find(h, "PMIx_Value_destruct", &lib->ValueDestruct)) missing = "PMIx_Value_destruct";
  else if (!Find(h, "PMIx_Error_string", &lib->ErrorString)) missing = "PMIx_Error_string";
  else if (!Find(h, "PMIx_Get_version", &lib->GetVersion)) missing = "PMIx_Get_version";
  if (missing != nullptr)
    return Status(Err::kSystem, lib->path + " has no " + missing + ": not a PMIx client library "
                                            "(PMIx 3 or later)");
  const char* v = lib->GetVersion();
  lib->version = v ? v : "?";
  return Status::Ok();
}

}  // namespace

Status PmixLib::Load(const PmixLib** out) {
  static PmixLib lib;
  static Status status;
  static std::once_flag once;
  std::call_once(once, [] { status = DoLoad(&lib); });
  *out = status.ok() ? &lib : nullptr;
  return status;
}

void PmixLib::Release(pmix_value_t* v) const {
  if (v == nullptr) return;
  ValueDestruct(v);
  std::free(v);  // PMIx_Get allocated it with malloc (PMIX_VALUE_RELEASE's pmix_free)
}

std::string PmixLib::Error(pmix_status_t rc) const {
  const char* s = ErrorString(rc);
  return std::string(s ? s : "?") + " (" + std::to_string(rc) + ")";
}

std::string DescribePmixLibrary() {
  const PmixLib* lib = nullptr;
  Status st = PmixLib::Load(&lib);
  if (!st.ok()) return "not loadable: " + st.message();
  return lib->version + " (" + lib->path + ")";
}

}  // namespace mpigpu::internode

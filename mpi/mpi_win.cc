// The MPI calls that make, free and describe windows, thin over the core's (mpigpu_api/win.cc):
// buffer locations found at this boundary, MPI's window attributes (WIN_BASE, WIN_SIZE,
// WIN_DISP_UNIT, WIN_CREATE_FLAVOR, WIN_MODEL: always MPI_WIN_UNIFIED) and user attributes,
// info hints (accepted and stored, none changes behaviour yet), and window error handlers.
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {
namespace {

struct Keyval {
  MPI_Win_copy_attr_function* copy = nullptr;
  MPI_Win_delete_attr_function* del = nullptr;
  void* extra = nullptr;
  bool live = false;
};

// What this layer keeps per window.
struct WinRec {
  void* base = nullptr;
  MPI_Aint size = 0;
  int disp_unit = 1;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  MPI_Info info = MPI_INFO_NULL;
  std::map<int, void*> attrs;
};

struct WinTables {
  std::mutex mu;
  std::map<MPI_Win, WinRec> wins;
  std::vector<Keyval> keyvals;  // keyval k is kFirstKeyval + index
};
WinTables& W() {
  static auto* t = new WinTables;  // never destroyed: calls may come during exit
  return *t;
}
constexpr int kFirstKeyval = 0x67000000;

Keyval* FindKeyval(int k) {
  const int i = k - kFirstKeyval;
  if (i < 0 || static_cast<size_t>(i) >= W().keyvals.size() || !W().keyvals[i].live) return nullptr;
  return &W().keyvals[i];
}

// Records the new window and gives it MPI's default handler (ERRORS_ARE_FATAL).
int Registered(MPI_Win win, MPI_Info info) {
  WinRec r;
  int unit = 1, flavor = 0;
  MPIGPU_Aint size = 0;
  if (int rc = MPIGPU_Win_query(win, &r.base, &size, &unit, &flavor); rc != MPI_SUCCESS) return rc;
  r.size = size;
  r.disp_unit = unit;
  r.flavor = flavor;
  if (info != MPI_INFO_NULL) (void)PMPI_Info_dup(info, &r.info);
  MPIGPU_Win_set_errhandler(win, ErrhandlerToCore(MPI_ERRORS_ARE_FATAL));
  std::lock_guard<std::mutex> g(W().mu);
  W().wins[win] = r;
  return MPI_SUCCESS;
}

int CheckInfo(const char* fn, MPI_Comm comm, MPI_Info info) {
  if (info == MPI_INFO_NULL) return MPI_SUCCESS;
  int n = 0;
  if (PMPI_Info_get_nkeys(info, &n) != MPI_SUCCESS)
    return FailWith(fn, comm, MPI_ERR_INFO, "not an info object");
  return MPI_SUCCESS;
}

}  // namespace

int WinDone(const char* fn, MPI_Win win, int rc) {
  if (rc == MPI_SUCCESS) return rc;
  int v = 0;
  if (MPIGPU_Win_get_errhandler(win, &v) != MPIGPU_SUCCESS) return Fail(fn, MPI_COMM_WORLD, rc);
  return ApplyErrhandler(fn, v, win, MPI_COMM_WORLD, rc);
}

}  // namespace mpigpu::mpi

using mpigpu::mpi::BufType;
using mpigpu::mpi::Done;
using mpigpu::mpi::W;
using mpigpu::mpi::WinDone;

extern "C" int PMPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info,
                               MPI_Comm comm, MPI_Win* win) {
  if (int rc = mpigpu::mpi::CheckInfo("MPI_Win_create", comm, info); rc != MPI_SUCCESS) return rc;
  int rc = MPIGPU_Win_create(base, BufType(base), size, disp_unit, MPIGPU_INFO_NULL, comm, win);
  if (rc == MPI_SUCCESS) rc = mpigpu::mpi::Registered(*win, info);
  return Done("MPI_Win_create", comm, rc);
}
MPIGPU_MPI_ALIAS(Win_create)

extern "C" int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                                 void* baseptr, MPI_Win* win) {
  if (int rc = mpigpu::mpi::CheckInfo("MPI_Win_allocate", comm, info); rc != MPI_SUCCESS) return rc;
  // MPI 4.1's memory kinds: "mpi_memory_alloc_kinds" = "cuda:device" allocates device memory.
  MPIGPU_Buftype bt = MPIGPU_BUF_HOST;
  if (info != MPI_INFO_NULL) {
    char v[64] = {0};
    int flag = 0;
    if (PMPI_Info_get(info, "mpi_memory_alloc_kinds", sizeof v - 1, v, &flag) == MPI_SUCCESS &&
        flag && std::string(v).find("cuda:device") != std::string::npos)
      bt = MPIGPU_BUF_GPU;
  }
  int rc = MPIGPU_Win_allocate(size, disp_unit, bt, MPIGPU_INFO_NULL, comm, baseptr, win);
  if (rc == MPI_SUCCESS) rc = mpigpu::mpi::Registered(*win, info);
  return Done("MPI_Win_allocate", comm, rc);
}
MPIGPU_MPI_ALIAS(Win_allocate)

extern "C" int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  if (int rc = mpigpu::mpi::CheckInfo("MPI_Win_create_dynamic", comm, info); rc != MPI_SUCCESS)
    return rc;
  int rc = MPIGPU_Win_create_dynamic(MPIGPU_INFO_NULL, comm, win);
  if (rc == MPI_SUCCESS) rc = mpigpu::mpi::Registered(*win, info);
  return Done("MPI_Win_create_dynamic", comm, rc);
}
MPIGPU_MPI_ALIAS(Win_create_dynamic)

extern "C" int PMPI_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  return WinDone("MPI_Win_attach", win, MPIGPU_Win_attach(win, base, BufType(base), size));
}
MPIGPU_MPI_ALIAS(Win_attach)

extern "C" int PMPI_Win_detach(MPI_Win win, const void* base) {
  return WinDone("MPI_Win_detach", win, MPIGPU_Win_detach(win, base));
}
MPIGPU_MPI_ALIAS(Win_detach)

extern "C" int PMPI_Win_free(MPI_Win* win) {
  if (win == nullptr)
    return mpigpu::mpi::FailWith("MPI_Win_free", MPI_COMM_WORLD, MPI_ERR_ARG, "null win");
  const MPI_Win h = *win;
  // Attributes go first (their delete callbacks may still use the window).
  std::map<int, void*> attrs;
  MPI_Info info = MPI_INFO_NULL;
  {
    std::lock_guard<std::mutex> g(W().mu);
    auto it = W().wins.find(h);
    if (it != W().wins.end()) {
      attrs = it->second.attrs;
      info = it->second.info;
    }
  }
  for (const auto& [k, v] : attrs) {
    MPI_Win_delete_attr_function* del = nullptr;
    void* extra = nullptr;
    {
      std::lock_guard<std::mutex> g(W().mu);
      if (k - mpigpu::mpi::kFirstKeyval >= 0 &&
          static_cast<size_t>(k - mpigpu::mpi::kFirstKeyval) < W().keyvals.size()) {
        del = W().keyvals[k - mpigpu::mpi::kFirstKeyval].del;
        extra = W().keyvals[k - mpigpu::mpi::kFirstKeyval].extra;
      }
    }
    if (del != nullptr) {
      if (int rc = del(h, k, v, extra); rc != MPI_SUCCESS) return WinDone("MPI_Win_free", h, rc);
    }
  }
  int rc = MPIGPU_Win_free(win);
  if (rc != MPI_SUCCESS) return WinDone("MPI_Win_free", h, rc);
  if (info != MPI_INFO_NULL) PMPI_Info_free(&info);
  std::lock_guard<std::mutex> g(W().mu);
  W().wins.erase(h);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Win_free)

extern "C" int PMPI_Win_get_group(MPI_Win win, MPI_Group* group) {
  return WinDone("MPI_Win_get_group", win, MPIGPU_Win_get_group(win, group));
}
MPIGPU_MPI_ALIAS(Win_get_group)

extern "C" int PMPI_Win_set_name(MPI_Win win, const char* name) {
  return WinDone("MPI_Win_set_name", win, MPIGPU_Win_set_name(win, name));
}
MPIGPU_MPI_ALIAS(Win_set_name)

extern "C" int PMPI_Win_get_name(MPI_Win win, char* name, int* resultlen) {
  return WinDone("MPI_Win_get_name", win, MPIGPU_Win_get_name(win, name, resultlen));
}
MPIGPU_MPI_ALIAS(Win_get_name)

extern "C" int PMPI_Win_set_info(MPI_Win win, MPI_Info info) {
  MPI_Info copy = MPI_INFO_NULL;
  if (info != MPI_INFO_NULL) {
    if (int rc = PMPI_Info_dup(info, &copy); rc != MPI_SUCCESS) return WinDone("MPI_Win_set_info", win, rc);
  }
  std::unique_lock<std::mutex> g(W().mu);
  auto it = W().wins.find(win);
  if (it == W().wins.end()) {
    g.unlock();
    if (copy != MPI_INFO_NULL) PMPI_Info_free(&copy);
    mpigpu::mpi::Detail(MPI_ERR_WIN, "not a window");
    return WinDone("MPI_Win_set_info", win, MPI_ERR_WIN);
  }
  MPI_Info old = it->second.info;
  it->second.info = copy;
  g.unlock();
  if (old != MPI_INFO_NULL) PMPI_Info_free(&old);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Win_set_info)

extern "C" int PMPI_Win_get_info(MPI_Win win, MPI_Info* info_used) {
  if (info_used == nullptr)
    return WinDone("MPI_Win_get_info", win, mpigpu::mpi::Detail(MPI_ERR_ARG, "null info_used"));
  MPI_Info stored = MPI_INFO_NULL;
  {
    std::lock_guard<std::mutex> g(W().mu);
    auto it = W().wins.find(win);
    if (it == W().wins.end())
      return WinDone("MPI_Win_get_info", win, mpigpu::mpi::Detail(MPI_ERR_WIN, "not a window"));
    stored = it->second.info;
  }
  const int rc = stored != MPI_INFO_NULL ? PMPI_Info_dup(stored, info_used)
                                         : PMPI_Info_create(info_used);
  return WinDone("MPI_Win_get_info", win, rc);
}
MPIGPU_MPI_ALIAS(Win_get_info)

// ---- error handlers ----

extern "C" int PMPI_Win_create_errhandler(MPI_Win_errhandler_function* function,
                                          MPI_Errhandler* errhandler) {
  // The same table as communicators' handlers: both take (int* handle, int* code, ...).
  return PMPI_Comm_create_errhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(function),
                                     errhandler);
}
MPIGPU_MPI_ALIAS(Win_create_errhandler)

extern "C" int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler) {
  if (!mpigpu::mpi::ValidErrhandler(errhandler))
    return WinDone("MPI_Win_set_errhandler", win,
                   mpigpu::mpi::Detail(MPI_ERR_ARG, "not an error handler"));
  return WinDone("MPI_Win_set_errhandler", win,
                 MPIGPU_Win_set_errhandler(win, mpigpu::mpi::ErrhandlerToCore(errhandler)));
}
MPIGPU_MPI_ALIAS(Win_set_errhandler)

extern "C" int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler* errhandler) {
  int v = 0;
  const int rc = MPIGPU_Win_get_errhandler(win, errhandler ? &v : nullptr);
  if (rc == MPI_SUCCESS) *errhandler = mpigpu::mpi::ErrhandlerFromCore(v);
  return WinDone("MPI_Win_get_errhandler", win, rc);
}
MPIGPU_MPI_ALIAS(Win_get_errhandler)

extern "C" int PMPI_Win_call_errhandler(MPI_Win win, int errorcode) {
  int v = 0;
  if (int rc = MPIGPU_Win_get_errhandler(win, &v); rc != MPI_SUCCESS)
    return WinDone("MPI_Win_call_errhandler", win, rc);
  mpigpu::mpi::ApplyErrhandler("MPI_Win_call_errhandler", v, win, MPI_COMM_WORLD, errorcode);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Win_call_errhandler)

// ---- attributes ----

extern "C" int PMPI_Win_create_keyval(MPI_Win_copy_attr_function* copy_fn,
                                      MPI_Win_delete_attr_function* delete_fn, int* keyval,
                                      void* extra_state) {
  if (keyval == nullptr)
    return mpigpu::mpi::FailWith("MPI_Win_create_keyval", MPI_COMM_WORLD, MPI_ERR_ARG, "null keyval");
  std::lock_guard<std::mutex> g(W().mu);
  W().keyvals.push_back({copy_fn, delete_fn, extra_state, true});
  *keyval = mpigpu::mpi::kFirstKeyval + static_cast<int>(W().keyvals.size()) - 1;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Win_create_keyval)

extern "C" int PMPI_Win_free_keyval(int* keyval) {
  std::unique_lock<std::mutex> g(W().mu);
  mpigpu::mpi::Keyval* k = keyval ? mpigpu::mpi::FindKeyval(*keyval) : nullptr;
  if (k == nullptr) {
    g.unlock();
    return mpigpu::mpi::FailWith("MPI_Win_free_keyval", MPI_COMM_WORLD, MPI_ERR_KEYVAL,
                                 "not a window keyval");
  }
  k->live = false;  // attributes already set keep their delete callback
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Win_free_keyval)

extern "C" int PMPI_Win_set_attr(MPI_Win win, int keyval, void* value) {
  std::unique_lock<std::mutex> g(W().mu);
  auto it = W().wins.find(win);
  if (it == W().wins.end()) {
    g.unlock();
    return WinDone("MPI_Win_set_attr", win, mpigpu::mpi::Detail(MPI_ERR_WIN, "not a window"));
  }
  mpigpu::mpi::Keyval* k = mpigpu::mpi::FindKeyval(keyval);
  if (k == nullptr) {
    g.unlock();
    return WinDone("MPI_Win_set_attr", win, mpigpu::mpi::Detail(MPI_ERR_KEYVAL, "not a window keyval"));
  }
  auto old = it->second.attrs.find(keyval);
  if (old != it->second.attrs.end() && k->del != nullptr) {
    void* ov = old->second;
    auto* del = k->del;
    void* extra = k->extra;
    g.unlock();
    if (int rc = del(win, keyval, ov, extra); rc != MPI_SUCCESS) return WinDone("MPI_Win_set_attr", win, rc);
    g.lock();
    it = W().wins.find(win);
    if (it == W().wins.end()) return MPI_ERR_WIN;
  }
  it->second.attrs[keyval] = value;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Win_set_attr)

extern "C" int PMPI_Win_get_attr(MPI_Win win, int keyval, void* value, int* flag) {
  if (value == nullptr || flag == nullptr)
    return WinDone("MPI_Win_get_attr", win, mpigpu::mpi::Detail(MPI_ERR_ARG, "null value or flag"));
  std::unique_lock<std::mutex> g(W().mu);
  auto it = W().wins.find(win);
  if (it == W().wins.end()) {
    g.unlock();
    return WinDone("MPI_Win_get_attr", win, mpigpu::mpi::Detail(MPI_ERR_WIN, "not a window"));
  }
  mpigpu::mpi::WinRec& r = it->second;
  void* out = nullptr;
  *flag = 1;
  switch (keyval) {
    case MPI_WIN_BASE: out = r.base; break;
    case MPI_WIN_SIZE: out = &r.size; break;
    case MPI_WIN_DISP_UNIT: out = &r.disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: out = &r.flavor; break;
    case MPI_WIN_MODEL: out = &r.model; break;
    default: {
      if (mpigpu::mpi::FindKeyval(keyval) == nullptr) {
        g.unlock();
        return WinDone("MPI_Win_get_attr", win,
                       mpigpu::mpi::Detail(MPI_ERR_KEYVAL, "not a window keyval"));
      }
      auto a = r.attrs.find(keyval);
      *flag = a != r.attrs.end();
      if (*flag) out = a->second;
    }
  }
  if (*flag) *static_cast<void**>(value) = out;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Win_get_attr)

extern "C" int PMPI_Win_delete_attr(MPI_Win win, int keyval) {
  std::unique_lock<std::mutex> g(W().mu);
  auto it = W().wins.find(win);
  mpigpu::mpi::Keyval* k = mpigpu::mpi::FindKeyval(keyval);
  if (it == W().wins.end() || k == nullptr) {
    const bool bad_win = it == W().wins.end();
    g.unlock();
    return WinDone("MPI_Win_delete_attr", win,
                   bad_win ? mpigpu::mpi::Detail(MPI_ERR_WIN, "not a window")
                           : mpigpu::mpi::Detail(MPI_ERR_KEYVAL, "not a window keyval"));
  }
  auto a = it->second.attrs.find(keyval);
  if (a == it->second.attrs.end()) return MPI_SUCCESS;
  void* v = a->second;
  auto* del = k->del;
  void* extra = k->extra;
  it->second.attrs.erase(a);
  g.unlock();
  if (del != nullptr) return WinDone("MPI_Win_delete_attr", win, del(win, keyval, v, extra));
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Win_delete_attr)

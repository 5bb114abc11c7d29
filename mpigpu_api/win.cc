// Windows: creation (over user memory, allocated host or device memory, dynamic), attach and
// detach, free, queries (base, size, unit, flavor, group, name, error handler), and the
// optional progress thread (MPIGPU_ASYNC_PROGRESS) that applies one-sided operations while
// the process computes.
#include <cuda_runtime_api.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "memcopy/device_scope.h"
#include "mpigpu_api/api_entry.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/win_internal.h"

namespace mpigpu::api {

std::vector<WinPtr>& Windows() {
  static auto* w = new std::vector<WinPtr>(1);  // handle 0 is WIN_NULL
  return *w;
}

WinData* LookupWin(MPIGPU_Win win) {
  const std::vector<WinPtr>& ws = Windows();
  if (win > 0 && static_cast<size_t>(win) < ws.size() && ws[win]) return ws[win].get();
  SetLastError(MPIGPU_ERR_WIN, "window handle " + std::to_string(win) + " names no window");
  return nullptr;
}

int FinishWin(const char* fn, MPIGPU_Win win, int rc) {
  if (rc == MPIGPU_SUCCESS) return rc;
  const std::vector<WinPtr>& ws = Windows();
  const MPIGPU_Errhandler h = win > 0 && static_cast<size_t>(win) < ws.size() && ws[win]
                                  ? ws[win]->errhandler
                                  : HandlerOf(MPIGPU_COMM_WORLD);
  return FinishWith(fn, h, rc);
}

// ---- the progress thread ----
namespace {

struct ProgressThread {
  std::thread thread;
  std::atomic<bool> stop{false};
  bool running = false;
};
ProgressThread& Progress() {
  static auto* p = new ProgressThread;  // never destroyed: a running thread outlives exit
  return *p;
}

// Rounds of progress with the lock held, a pause without it: origins are served within about
// the pause, and the application's own calls get the lock in between.
void ProgressLoop() {
  State& s = GetState();
  const timespec pause{0, 50 * 1000};
  while (!Progress().stop.load(std::memory_order_acquire)) {
    {
      Lock lk(s.mu);
      if (s.initialized && !s.finalized) (void)ProgressOnce();
    }
    nanosleep(&pause, nullptr);
  }
}

}  // namespace

void StartProgressThread() {
  ProgressThread& p = Progress();
  if (p.running || !GetApiConfig().async_progress) return;
  p.stop.store(false, std::memory_order_release);
  p.thread = std::thread(ProgressLoop);
  p.running = true;
}

void StopProgressThreadIfIdle(Lock& lk) {
  ProgressThread& p = Progress();
  if (!p.running) return;
  for (const WinPtr& w : Windows())
    if (w) return;
  p.stop.store(true, std::memory_order_release);
  p.running = false;
  std::thread t = std::move(p.thread);
  lk.unlock();  // it takes the lock every round
  t.join();
  lk.lock();
}

namespace {

// Memory a window allocates: host (page-aligned) or device (cudaMalloc on the tag's device).
int AllocWindowMemory(size_t size, MemLoc loc, void** out) {
  if (loc.is_host()) {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, std::max<size_t>(size, 1)) != 0)
      return SetLastError(MPIGPU_ERR_NO_MEM, "no host memory for a window of " +
                                                 std::to_string(size) + " bytes");
    *out = p;
    return MPIGPU_SUCCESS;
  }
  DeviceScope scope(loc);
  if (!scope.ok()) return ReturnCode(scope.status(), MPIGPU_ERR_OTHER);
  if (cudaMalloc(out, std::max<size_t>(size, 1)) != cudaSuccess) {
    (void)cudaGetLastError();
    return SetLastError(MPIGPU_ERR_NO_MEM, "cudaMalloc of " + std::to_string(size) +
                                               " bytes for a window failed");
  }
  return MPIGPU_SUCCESS;
}

void FreeWindowMemory(void* p, MemLoc loc) {
  if (loc.is_host()) {
    std::free(p);
    return;
  }
  DeviceScope scope(loc);
  (void)cudaFree(p);
}

// Collective over comm: a private communicator, the members' sizes and units, the target side.
int MakeWindow(Lock& lk, MPIGPU_Comm comm, int flavor, void* base, MemLoc loc, MPIGPU_Aint size,
               int disp_unit, bool owns, MPIGPU_Win* win) {
  if (win == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null win");
  *win = MPIGPU_WIN_NULL;
  CommPtr parent = LookupComm(comm);
  if (!parent) return MPIGPU_ERR_COMM;
  if (parent->inter) return SetLastError(MPIGPU_ERR_COMM, "windows need an intracommunicator");
  auto w = std::make_shared<WinData>();
  if (int rc = SplitComm(lk, comm, 0, parent->rank, &w->comm_handle, &w->comm);
      rc != MPIGPU_SUCCESS)
    return rc;
  w->comm->errhandler = MPIGPU_ERRORS_RETURN;
  const uint64_t sz = static_cast<uint64_t>(size);
  std::vector<int> all;
  if (int rc = AllgatherInts(lk, w->comm,
                             {static_cast<int>(sz & 0x7fffffff), static_cast<int>(sz >> 31),
                              disp_unit},
                             &all);
      rc != MPIGPU_SUCCESS)
    return rc;
  const int n = w->comm->size();
  w->peers.resize(n);
  for (int r = 0; r < n; ++r) {
    w->peers[r].size = static_cast<uint64_t>(all[3 * r]) | static_cast<uint64_t>(all[3 * r + 1]) << 31;
    w->peers[r].disp_unit = all[3 * r + 2];
  }
  w->flavor = flavor;
  w->base = base;
  w->size = static_cast<size_t>(size);
  w->disp_unit = disp_unit;
  w->loc = loc;
  w->owns_memory = owns;
  w->dirty.assign(n, false);
  w->lock_type.assign(n, 0);
  w->nocheck.assign(n, false);
  if (int rc = StartTarget(*w); rc != MPIGPU_SUCCESS) return rc;
  std::vector<WinPtr>& ws = Windows();
  w->handle = static_cast<MPIGPU_Win>(ws.size());
  ws.push_back(w);
  *win = w->handle;
  GetState().rma_active = true;
  StartProgressThread();
  return MPIGPU_SUCCESS;
}

int CheckSizeUnit(MPIGPU_Aint size, int disp_unit) {
  if (size < 0) return SetLastError(MPIGPU_ERR_SIZE, "negative window size");
  if (disp_unit <= 0) return SetLastError(MPIGPU_ERR_DISP, "disp_unit must be positive");
  return MPIGPU_SUCCESS;
}

int DoCreate(Lock& lk, void* base, MPIGPU_Buftype bt, MPIGPU_Aint size, int disp_unit,
             MPIGPU_Comm comm, MPIGPU_Win* win) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckSizeUnit(size, disp_unit); rc != MPIGPU_SUCCESS) return rc;
  MemLoc loc;
  if (int rc = ResolveBuftype(bt, &loc); rc != MPIGPU_SUCCESS) return rc;
  if (size > 0 && base == nullptr) return SetLastError(MPIGPU_ERR_BUFFER, "null window base");
  if (size > 0) {
    if (int rc = CheckBufferLocation(base, loc); rc != MPIGPU_SUCCESS) return rc;
  }
  return MakeWindow(lk, comm, MPIGPU_WIN_FLAVOR_CREATE, base, loc, size, disp_unit, false, win);
}

int DoAllocate(Lock& lk, MPIGPU_Aint size, int disp_unit, MPIGPU_Buftype bt, MPIGPU_Comm comm,
               void* baseptr, MPIGPU_Win* win) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckSizeUnit(size, disp_unit); rc != MPIGPU_SUCCESS) return rc;
  if (baseptr == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null baseptr");
  MemLoc loc;
  if (int rc = ResolveBuftype(bt, &loc); rc != MPIGPU_SUCCESS) return rc;
  void* mem = nullptr;
  if (int rc = AllocWindowMemory(static_cast<size_t>(size), loc, &mem); rc != MPIGPU_SUCCESS)
    return rc;
  if (int rc = MakeWindow(lk, comm, MPIGPU_WIN_FLAVOR_ALLOCATE, mem, loc, size, disp_unit, true, win);
      rc != MPIGPU_SUCCESS) {
    FreeWindowMemory(mem, loc);
    return rc;
  }
  std::memcpy(baseptr, &mem, sizeof mem);
  return MPIGPU_SUCCESS;
}

int DoAttach(MPIGPU_Win win, void* base, MPIGPU_Buftype bt, MPIGPU_Aint size) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  WinData* w = LookupWin(win);
  if (w == nullptr) return MPIGPU_ERR_WIN;
  if (w->flavor != MPIGPU_WIN_FLAVOR_DYNAMIC)
    return SetLastError(MPIGPU_ERR_RMA_FLAVOR, "attach to a window that is not dynamic");
  if (size < 0) return SetLastError(MPIGPU_ERR_SIZE, "negative size");
  Region r;
  if (int rc = ResolveBuftype(bt, &r.loc); rc != MPIGPU_SUCCESS) return rc;
  if (size > 0 && base == nullptr) return SetLastError(MPIGPU_ERR_BUFFER, "null base");
  r.base = reinterpret_cast<uintptr_t>(base);
  r.size = static_cast<size_t>(size);
  for (const Region& o : w->regions)
    if (r.base < o.base + o.size && o.base < r.base + r.size)
      return SetLastError(MPIGPU_ERR_RMA_ATTACH, "region overlaps one attached already");
  w->regions.push_back(r);
  return MPIGPU_SUCCESS;
}

int DoDetach(MPIGPU_Win win, const void* base) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  WinData* w = LookupWin(win);
  if (w == nullptr) return MPIGPU_ERR_WIN;
  if (w->flavor != MPIGPU_WIN_FLAVOR_DYNAMIC)
    return SetLastError(MPIGPU_ERR_RMA_FLAVOR, "detach from a window that is not dynamic");
  auto it = std::find_if(w->regions.begin(), w->regions.end(), [base](const Region& r) {
    return r.base == reinterpret_cast<uintptr_t>(base);
  });
  if (it == w->regions.end())
    return SetLastError(MPIGPU_ERR_RMA_ATTACH, "no region is attached at that address");
  w->regions.erase(it);
  return MPIGPU_SUCCESS;
}

int DoFree(Lock& lk, MPIGPU_Win* win) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (win == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null win");
  if (LookupWin(*win) == nullptr) return MPIGPU_ERR_WIN;
  WinPtr w = Windows()[*win];
  if (w->lock_all || w->access || w->exposure ||
      std::any_of(w->lock_type.begin(), w->lock_type.end(), [](int t) { return t; }))
    return SetLastError(MPIGPU_ERR_RMA_SYNC, "window freed inside a lock or PSCW epoch");
  // Operations of a last fence epoch (without a closing fence) complete first.
  int rc = FlushDirty(lk, *w);
  std::vector<int> all;
  if (int brc = AllgatherInts(lk, w->comm, {0}, &all); rc == MPIGPU_SUCCESS) rc = brc;
  StopTarget(lk, *w);
  if (w->owns_memory) FreeWindowMemory(w->base, w->loc);
  State& s = GetState();
  if (w->comm_handle >= 0 && static_cast<size_t>(w->comm_handle) < s.comms.size())
    s.comms[w->comm_handle].reset();
  Windows()[*win].reset();
  *win = MPIGPU_WIN_NULL;
  bool any = false;
  for (const WinPtr& o : Windows()) any = any || o != nullptr;
  s.rma_active = any;
  StopProgressThreadIfIdle(lk);
  return rc;
}

int DoQuery(MPIGPU_Win win, void** base, MPIGPU_Aint* size, int* unit, int* flavor) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  WinData* w = LookupWin(win);
  if (w == nullptr) return MPIGPU_ERR_WIN;
  if (base) *base = w->base;
  if (size) *size = static_cast<MPIGPU_Aint>(w->size);
  if (unit) *unit = w->disp_unit;
  if (flavor) *flavor = w->flavor;
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

namespace api = mpigpu::api;
using api::FinishWin;

extern "C" int MPIGPU_Win_create(void* base, MPIGPU_Buftype bt, MPIGPU_Aint size, int disp_unit,
                                 MPIGPU_Info, MPIGPU_Comm comm, MPIGPU_Win* win) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Win_create", comm, api::DoCreate(lk, base, bt, size, disp_unit, comm, win));
}

extern "C" int MPIGPU_Win_allocate(MPIGPU_Aint size, int disp_unit, MPIGPU_Buftype bt,
                                   MPIGPU_Info, MPIGPU_Comm comm, void* baseptr, MPIGPU_Win* win) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Win_allocate", comm,
                api::DoAllocate(lk, size, disp_unit, bt, comm, baseptr, win));
}

extern "C" int MPIGPU_Win_create_dynamic(MPIGPU_Info, MPIGPU_Comm comm, MPIGPU_Win* win) {
  Lock lk(GetState().mu);
  int rc = CheckActive();
  if (rc == MPIGPU_SUCCESS)
    rc = api::MakeWindow(lk, comm, MPIGPU_WIN_FLAVOR_DYNAMIC, nullptr, mpigpu::MemLoc::Host(), 0, 1,
                         false, win);
  return Finish("MPIGPU_Win_create_dynamic", comm, rc);
}

extern "C" int MPIGPU_Win_attach(MPIGPU_Win win, void* base, MPIGPU_Buftype bt, MPIGPU_Aint size) {
  Lock lk(GetState().mu);
  return FinishWin("MPIGPU_Win_attach", win, api::DoAttach(win, base, bt, size));
}

extern "C" int MPIGPU_Win_detach(MPIGPU_Win win, const void* base) {
  Lock lk(GetState().mu);
  return FinishWin("MPIGPU_Win_detach", win, api::DoDetach(win, base));
}

extern "C" int MPIGPU_Win_free(MPIGPU_Win* win) {
  Lock lk(GetState().mu);
  const MPIGPU_Win h = win ? *win : MPIGPU_WIN_NULL;
  return FinishWin("MPIGPU_Win_free", h, api::DoFree(lk, win));
}

extern "C" int MPIGPU_Win_query(MPIGPU_Win win, void** base, MPIGPU_Aint* size, int* disp_unit,
                                int* flavor) {
  Lock lk(GetState().mu);
  return FinishWin("MPIGPU_Win_query", win, api::DoQuery(win, base, size, disp_unit, flavor));
}

extern "C" int MPIGPU_Win_get_group(MPIGPU_Win win, MPIGPU_Group* group) {
  Lock lk(GetState().mu);
  int rc = CheckActive();
  api::WinData* w = rc == MPIGPU_SUCCESS ? api::LookupWin(win) : nullptr;
  if (rc == MPIGPU_SUCCESS && w == nullptr) rc = MPIGPU_ERR_WIN;
  if (rc == MPIGPU_SUCCESS && group == nullptr) rc = SetLastError(MPIGPU_ERR_ARG, "null group");
  if (rc == MPIGPU_SUCCESS) rc = api::NewGroup(w->comm->group, group);
  return FinishWin("MPIGPU_Win_get_group", win, rc);
}

extern "C" int MPIGPU_Win_set_name(MPIGPU_Win win, const char* name) {
  Lock lk(GetState().mu);
  api::WinData* w = api::LookupWin(win);
  int rc = w == nullptr ? MPIGPU_ERR_WIN : MPIGPU_SUCCESS;
  if (rc == MPIGPU_SUCCESS && name == nullptr) rc = SetLastError(MPIGPU_ERR_ARG, "null name");
  if (rc == MPIGPU_SUCCESS) w->name = std::string(name).substr(0, 127);
  return FinishWin("MPIGPU_Win_set_name", win, rc);
}

extern "C" int MPIGPU_Win_get_name(MPIGPU_Win win, char* name, int* resultlen) {
  Lock lk(GetState().mu);
  api::WinData* w = api::LookupWin(win);
  int rc = w == nullptr ? MPIGPU_ERR_WIN : MPIGPU_SUCCESS;
  if (rc == MPIGPU_SUCCESS && (name == nullptr || resultlen == nullptr))
    rc = SetLastError(MPIGPU_ERR_ARG, "null name or resultlen");
  if (rc == MPIGPU_SUCCESS) {
    std::memcpy(name, w->name.c_str(), w->name.size() + 1);
    *resultlen = static_cast<int>(w->name.size());
  }
  return FinishWin("MPIGPU_Win_get_name", win, rc);
}

extern "C" int MPIGPU_Win_set_errhandler(MPIGPU_Win win, MPIGPU_Errhandler errhandler) {
  Lock lk(GetState().mu);
  api::WinData* w = api::LookupWin(win);
  int rc = w == nullptr ? MPIGPU_ERR_WIN : MPIGPU_SUCCESS;
  if (rc == MPIGPU_SUCCESS && errhandler < 0)
    rc = SetLastError(MPIGPU_ERR_ARG, "negative error handler");
  if (rc == MPIGPU_SUCCESS) w->errhandler = errhandler;
  return FinishWin("MPIGPU_Win_set_errhandler", win, rc);
}

extern "C" int MPIGPU_Win_get_errhandler(MPIGPU_Win win, MPIGPU_Errhandler* errhandler) {
  Lock lk(GetState().mu);
  api::WinData* w = api::LookupWin(win);
  int rc = w == nullptr ? MPIGPU_ERR_WIN : MPIGPU_SUCCESS;
  if (rc == MPIGPU_SUCCESS && errhandler == nullptr) rc = SetLastError(MPIGPU_ERR_ARG, "null errhandler");
  if (rc == MPIGPU_SUCCESS) *errhandler = w->errhandler;
  return FinishWin("MPIGPU_Win_get_errhandler", win, rc);
}

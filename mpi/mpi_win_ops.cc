// The MPI calls of one-sided operations and their synchronisation, thin over the core's
// (mpigpu_api/win_ops.cc, win_sync.cc): each buffer's location is found here; errors go to the
// window's handler.
#include "mpi/mpi_internal.h"

using mpigpu::mpi::BufType;
using mpigpu::mpi::WinDone;

namespace {

// An MPI request around the core request `start` begins (Rput, Rget, ...).
template <class Start>
int WinRequest(const char* fn, MPI_Win win, MPI_Request* request, Start&& start) {
  if (request == nullptr)
    return WinDone(fn, win, mpigpu::mpi::Detail(MPI_ERR_ARG, "null request pointer"));
  mpigpu::mpi::Request* r = nullptr;
  const MPI_Request h = mpigpu::mpi::NewRequest(&r);
  r->comm = MPI_COMM_WORLD;
  if (int rc = start(&r->core); rc != MPI_SUCCESS) {
    mpigpu::mpi::FreeRequest(h);
    *request = MPI_REQUEST_NULL;
    return WinDone(fn, win, rc);
  }
  *request = h;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Put(const void* o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc,
                        MPI_Datatype tt, MPI_Win win) {
  return WinDone("MPI_Put", win, MPIGPU_Put(o, BufType(o), oc, ot, target, disp, tc, tt, win));
}
MPIGPU_MPI_ALIAS(Put)

extern "C" int PMPI_Get(void* o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc,
                        MPI_Datatype tt, MPI_Win win) {
  return WinDone("MPI_Get", win, MPIGPU_Get(o, BufType(o), oc, ot, target, disp, tc, tt, win));
}
MPIGPU_MPI_ALIAS(Get)

extern "C" int PMPI_Accumulate(const void* o, int oc, MPI_Datatype ot, int target, MPI_Aint disp,
                               int tc, MPI_Datatype tt, MPI_Op op, MPI_Win win) {
  return WinDone("MPI_Accumulate", win,
                 MPIGPU_Accumulate(o, BufType(o), oc, ot, target, disp, tc, tt, op, win));
}
MPIGPU_MPI_ALIAS(Accumulate)

extern "C" int PMPI_Get_accumulate(const void* o, int oc, MPI_Datatype ot, void* r, int rc,
                                   MPI_Datatype rt, int target, MPI_Aint disp, int tc,
                                   MPI_Datatype tt, MPI_Op op, MPI_Win win) {
  return WinDone("MPI_Get_accumulate", win,
                 MPIGPU_Get_accumulate(o, BufType(o), oc, ot, r, BufType(r), rc, rt, target, disp,
                                       tc, tt, op, win));
}
MPIGPU_MPI_ALIAS(Get_accumulate)

extern "C" int PMPI_Fetch_and_op(const void* o, void* r, MPI_Datatype type, int target,
                                 MPI_Aint disp, MPI_Op op, MPI_Win win) {
  return WinDone("MPI_Fetch_and_op", win,
                 MPIGPU_Fetch_and_op(o, BufType(o), r, BufType(r), type, target, disp, op, win));
}
MPIGPU_MPI_ALIAS(Fetch_and_op)

extern "C" int PMPI_Compare_and_swap(const void* o, const void* c, void* r, MPI_Datatype type,
                                     int target, MPI_Aint disp, MPI_Win win) {
  return WinDone("MPI_Compare_and_swap", win,
                 MPIGPU_Compare_and_swap(o, BufType(o), c, BufType(c), r, BufType(r), type,
                                         target, disp, win));
}
MPIGPU_MPI_ALIAS(Compare_and_swap)

extern "C" int PMPI_Rput(const void* o, int oc, MPI_Datatype ot, int target, MPI_Aint disp,
                         int tc, MPI_Datatype tt, MPI_Win win, MPI_Request* request) {
  return WinRequest("MPI_Rput", win, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Rput(o, BufType(o), oc, ot, target, disp, tc, tt, win, core);
  });
}
MPIGPU_MPI_ALIAS(Rput)

extern "C" int PMPI_Rget(void* o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc,
                         MPI_Datatype tt, MPI_Win win, MPI_Request* request) {
  return WinRequest("MPI_Rget", win, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Rget(o, BufType(o), oc, ot, target, disp, tc, tt, win, core);
  });
}
MPIGPU_MPI_ALIAS(Rget)

extern "C" int PMPI_Raccumulate(const void* o, int oc, MPI_Datatype ot, int target, MPI_Aint disp,
                                int tc, MPI_Datatype tt, MPI_Op op, MPI_Win win,
                                MPI_Request* request) {
  return WinRequest("MPI_Raccumulate", win, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Raccumulate(o, BufType(o), oc, ot, target, disp, tc, tt, op, win, core);
  });
}
MPIGPU_MPI_ALIAS(Raccumulate)

extern "C" int PMPI_Rget_accumulate(const void* o, int oc, MPI_Datatype ot, void* r, int rc,
                                    MPI_Datatype rt, int target, MPI_Aint disp, int tc,
                                    MPI_Datatype tt, MPI_Op op, MPI_Win win,
                                    MPI_Request* request) {
  return WinRequest("MPI_Rget_accumulate", win, request, [&](MPIGPU_Request* core) {
    return MPIGPU_Rget_accumulate(o, BufType(o), oc, ot, r, BufType(r), rc, rt, target, disp, tc,
                                  tt, op, win, core);
  });
}
MPIGPU_MPI_ALIAS(Rget_accumulate)

// ---- synchronisation ----

#define MPIGPU_WIN_SYNC(name, params, args)                                  \
  extern "C" int PMPI_##name params {                                        \
    return WinDone("MPI_" #name, win, MPIGPU_##name args);                   \
  }                                                                          \
  MPIGPU_MPI_ALIAS(name)

MPIGPU_WIN_SYNC(Win_fence, (int a, MPI_Win win), (a, win))
MPIGPU_WIN_SYNC(Win_lock, (int type, int rank, int a, MPI_Win win), (type, rank, a, win))
MPIGPU_WIN_SYNC(Win_unlock, (int rank, MPI_Win win), (rank, win))
MPIGPU_WIN_SYNC(Win_lock_all, (int a, MPI_Win win), (a, win))
MPIGPU_WIN_SYNC(Win_unlock_all, (MPI_Win win), (win))
MPIGPU_WIN_SYNC(Win_flush, (int rank, MPI_Win win), (rank, win))
MPIGPU_WIN_SYNC(Win_flush_all, (MPI_Win win), (win))
MPIGPU_WIN_SYNC(Win_flush_local, (int rank, MPI_Win win), (rank, win))
MPIGPU_WIN_SYNC(Win_flush_local_all, (MPI_Win win), (win))
MPIGPU_WIN_SYNC(Win_sync, (MPI_Win win), (win))
MPIGPU_WIN_SYNC(Win_post, (MPI_Group group, int a, MPI_Win win), (group, a, win))
MPIGPU_WIN_SYNC(Win_start, (MPI_Group group, int a, MPI_Win win), (group, a, win))
MPIGPU_WIN_SYNC(Win_complete, (MPI_Win win), (win))
MPIGPU_WIN_SYNC(Win_wait, (MPI_Win win), (win))
MPIGPU_WIN_SYNC(Win_test, (MPI_Win win, int* flag), (win, flag))

// The hot public calls (Send, Recv, Sendrecv, Isend, Issend, Irecv) as inline C++ functions:
// the exported MPIGPU_* calls are these, and the MPI layer (mpi/) runs them in its own PMPI_*
// frame instead of calling MPIGPU_*, one call level less (under callgrind that level, a
// 7-argument call with a stack argument and its register saves, cost ~40 instructions per
// call). Each takes the API lock and finishes its errors (named as the MPIGPU_* call, the
// communicator's handler applied) exactly as the exported call does. Only calls whose body is
// a call of its own are here: where GCC inlined the body into MPIGPU_* (Wait, Test), an
// exported body would add the level to the core's call instead.
#pragma once

#include "mpigpu_api/api_internal.h"

namespace mpigpu::api {

// The calls' bodies, lock held (api_p2p.cc). Errors: as the MPIGPU_* call. Hidden: internal
// to the library that holds the core (libmpigpu.so, libmpi.so), so calls to them from the MPI
// layer are direct, not through the PLT.
[[gnu::visibility("hidden")]]
int DoBlocking(Lock& lk, bool recv, const void* buf, MPIGPU_Buftype bt, int count,
               MPIGPU_Datatype dt, int peer, int tag, MPIGPU_Comm comm, MPIGPU_Status* status);
[[gnu::visibility("hidden")]]
int DoSendrecv(Lock& lk, const void* sbuf, MPIGPU_Buftype sbt, int scount, MPIGPU_Datatype stype,
               int dest, int stag, void* rbuf, MPIGPU_Buftype rbt, int rcount,
               MPIGPU_Datatype rtype, int source, int rtag, MPIGPU_Comm comm,
               MPIGPU_Status* status);
// Validates and starts one point-to-point operation on comm's point-to-point context (*out:
// no user handle yet).
[[gnu::visibility("hidden")]]
int StartChecked(bool recv, const void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt,
                 int peer, int tag, MPIGPU_Comm comm, ApiRequest** out, bool sync = false);

// Isend, Issend and Irecv, lock held: the request started, its handle given to the user.
inline int DoNonblocking(bool recv, const void* buf, MPIGPU_Buftype bt, int count,
                         MPIGPU_Datatype dt, int peer, int tag, MPIGPU_Comm comm,
                         MPIGPU_Request* request, bool sync = false) {
  if (request == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null request pointer");
  *request = MPIGPU_REQUEST_NULL;
  ApiRequest* r = nullptr;
  if (int rc = StartChecked(recv, buf, bt, count, dt, peer, tag, comm, &r, sync);
      rc != MPIGPU_SUCCESS)
    return rc;
  r->handle = r->key;  // the user holds it now
  *request = HandleFromValue(r->handle);
  return MPIGPU_SUCCESS;
}

inline int Send(const void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt, int dest,
                int tag, MPIGPU_Comm comm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Send", comm,
                DoBlocking(lk, false, buf, bt, count, dt, dest, tag, comm, nullptr));
}

inline int Recv(void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt, int source,
                int tag, MPIGPU_Comm comm, MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Recv", comm,
                DoBlocking(lk, true, buf, bt, count, dt, source, tag, comm, status));
}

inline int Sendrecv(const void* sbuf, MPIGPU_Buftype sbt, int scount, MPIGPU_Datatype stype,
                    int dest, int stag, void* rbuf, MPIGPU_Buftype rbt, int rcount,
                    MPIGPU_Datatype rtype, int source, int rtag, MPIGPU_Comm comm,
                    MPIGPU_Status* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Sendrecv", comm,
                DoSendrecv(lk, sbuf, sbt, scount, stype, dest, stag, rbuf, rbt, rcount, rtype,
                           source, rtag, comm, status));
}

inline int Isend(const void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt, int dest,
                 int tag, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Isend", comm,
                DoNonblocking(false, buf, bt, count, dt, dest, tag, comm, request));
}

inline int Issend(const void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt, int dest,
                  int tag, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Issend", comm,
                DoNonblocking(false, buf, bt, count, dt, dest, tag, comm, request, true));
}

inline int Irecv(void* buf, MPIGPU_Buftype bt, int count, MPIGPU_Datatype dt, int source,
                 int tag, MPIGPU_Comm comm, MPIGPU_Request* request) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Irecv", comm,
                DoNonblocking(true, buf, bt, count, dt, source, tag, comm, request));
}

}  // namespace mpigpu::api

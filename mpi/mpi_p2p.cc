// Point to point through the MPI interface: each call finds where its buffers live (BufType)
// and calls the core's same-named call (the hot ones inline from api_calls.h: no second frame).
// Also the layer's own pieces: persistent requests, matched probes (Mprobe/Mrecv) and
// Sendrecv_replace.
// Ready sends are standard sends (a correct program has its receive posted already).
#include <climits>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "mpi/mpi_internal.h"
#include "mpigpu_api/api_calls.h"

namespace mpigpu::mpi {
namespace {

// A private duplicate of MPI_COMM_SELF for local copies (LocalCopy): its messages never match
// the program's own receives on MPI_COMM_SELF. Written by MPI_Init, read after it.
MPI_Comm g_self_copy = MPI_COMM_NULL;

// Messages taken off the queue by Mprobe/Improbe, waiting for Mrecv/Imrecv (handle = index+1).
struct Message {
  bool in_use = false;
  std::vector<unsigned char> data;
  MPI_Status status{};
  MPI_Comm comm = MPI_COMM_NULL;
};
struct Messages {
  std::mutex mu;
  std::deque<Message> msgs;
  std::vector<int> free;
};
Messages& Msgs() {
  static Messages* m = new Messages;
  return *m;
}

void ProcNullStatus(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_PROC_NULL;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  st->count_bytes = 0;
  st->cancelled = 0;
}

// Receives the message `st` describes (found by a probe on comm) whole into a new Message.
int TakeMessage(MPI_Comm comm, const MPI_Status& probed, MPI_Message* message, MPI_Status* status) {
  if (probed.count_bytes > static_cast<size_t>(INT_MAX))
    return Detail(MPI_ERR_COUNT, "message longer than INT_MAX bytes");
  Message m;
  m.in_use = true;
  m.comm = comm;
  m.data.resize(probed.count_bytes);
  const int n = static_cast<int>(probed.count_bytes);
  if (int rc = MPIGPU_Recv(m.data.data(), MPIGPU_BUF_HOST, n, MPI_BYTE, probed.MPI_SOURCE,
                           probed.MPI_TAG, comm, Core(&m.status));
      rc != MPI_SUCCESS)
    return rc;
  if (status != MPI_STATUS_IGNORE) *status = m.status;
  Messages& ms = Msgs();
  std::lock_guard<std::mutex> g(ms.mu);
  int i;
  if (!ms.free.empty()) {
    i = ms.free.back();
    ms.free.pop_back();
    ms.msgs[i] = std::move(m);
  } else {
    i = static_cast<int>(ms.msgs.size());
    ms.msgs.push_back(std::move(m));
  }
  *message = i + 1;
  return MPI_SUCCESS;
}

// Delivers message *message into (buf, count, type) and frees it.
int DeliverMessage(const char* fn, void* buf, int count, MPI_Datatype type, MPI_Message* message,
                   MPI_Status* status) {
  if (message == nullptr)
    return FailWith(fn, MPI_COMM_WORLD, MPI_ERR_ARG, "null message pointer");
  if (*message == MPI_MESSAGE_NO_PROC) {
    ProcNullStatus(status);
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  Message m;
  {
    Messages& ms = Msgs();
    std::lock_guard<std::mutex> g(ms.mu);
    const int h = *message;
    if (h <= 0 || static_cast<size_t>(h) > ms.msgs.size() || !ms.msgs[h - 1].in_use)
      return FailWith(fn, MPI_COMM_WORLD, MPI_ERR_REQUEST, "not a matched message");
    m = std::move(ms.msgs[h - 1]);
    ms.msgs[h - 1] = Message();
    ms.free.push_back(h - 1);
  }
  *message = MPI_MESSAGE_NULL;
  size_t bytes = 0;
  int rc = LocalCopy(m.data.data(), static_cast<int>(m.data.size()), MPI_BYTE, buf, count, type,
                     &bytes);
  m.status.MPI_ERROR = rc;
  if (status != MPI_STATUS_IGNORE) *status = m.status;
  return Done(fn, m.comm, rc);
}

}  // namespace

void InitLocalCopies() {
  if (g_self_copy == MPI_COMM_NULL) MPIGPU_Comm_dup(MPI_COMM_SELF, &g_self_copy);
}
void FinalizeLocalCopies() {
  if (g_self_copy != MPI_COMM_NULL) MPIGPU_Comm_free(&g_self_copy);
  g_self_copy = MPI_COMM_NULL;
}

int LocalCopy(const void* src, int count, MPI_Datatype type, void* dst, int dcount,
              MPI_Datatype dtype, size_t* bytes) {
  MPI_Status st;
  const int rc = MPIGPU_Sendrecv(src, BufType(src), count, type, 0, 0, dst, BufType(dst), dcount,
                                 dtype, 0, 0, g_self_copy, Core(&st));
  *bytes = rc == MPI_SUCCESS || rc == MPI_ERR_TRUNCATE ? st.count_bytes : 0;
  return rc;
}

int StartSend(Request::Mode mode, const void* buf, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm, Request* r) {
  r->comm = comm;
  r->recv = false;
  if (mode == Request::Mode::kBsend) {
    // Complete once buffered: the attached buffer holds the copy.
    const int rc = BufferedSend(buf, count, type, dest, tag, comm, r);
    EmptyStatus(&r->status);
    r->status.MPI_ERROR = rc;
    r->done = rc == MPI_SUCCESS;
    return rc;
  }
  if (mode == Request::Mode::kSsend)
    return mpigpu::api::Issend(buf, BufType(buf), count, type, dest, tag, comm, &r->core);
  return mpigpu::api::Isend(buf, BufType(buf), count, type, dest, tag, comm, &r->core);
}

int StartPersistent(Request* r) {
  int rc;
  if (r->pcoll) {
    if ((rc = MPIGPU_Start(&r->pcore)) == MPI_SUCCESS) {
      r->core = r->pcore;
      r->active = true;
    }
    return rc;
  }
  if (r->mode == Request::Mode::kRecv)
    rc = MPIGPU_Irecv(r->buf, BufType(r->buf), r->count, r->type, r->peer, r->tag, r->comm,
                      &r->core);
  else
    rc = StartSend(r->mode, r->buf, r->count, r->type, r->peer, r->tag, r->comm, r);
  if (rc == MPI_SUCCESS) r->active = true;
  return rc;
}

}  // namespace mpigpu::mpi

using mpigpu::mpi::BufType;
using mpigpu::mpi::Done;
using mpigpu::mpi::Request;

namespace {

inline MPIGPU_Status* CoreStatus(MPI_Status* st) { return reinterpret_cast<MPIGPU_Status*>(st); }

int Nonblocking(const char* fn, Request::Mode mode, const void* buf, int count,
                MPI_Datatype type, int peer, int tag, MPI_Comm comm, MPI_Request* request) {
  if (request == nullptr)
    return mpigpu::mpi::FailWith(fn, comm, MPI_ERR_ARG, "null request pointer");
  Request* r = nullptr;
  const MPI_Request h = mpigpu::mpi::NewRequest(&r);
  r->comm = comm;
  int rc;
  if (mode == Request::Mode::kRecv) {
    r->recv = true;
    rc = mpigpu::api::Irecv(const_cast<void*>(buf), BufType(buf), count, type, peer, tag, comm,
                            &r->core);
  } else if (mode == Request::Mode::kSend || mode == Request::Mode::kRsend) {
    rc = mpigpu::api::Isend(buf, BufType(buf), count, type, peer, tag, comm, &r->core);
  } else {
    rc = mpigpu::mpi::StartSend(mode, buf, count, type, peer, tag, comm, r);
  }
  if (rc != MPI_SUCCESS) {
    mpigpu::mpi::FreeRequest(h);
    *request = MPI_REQUEST_NULL;
    return Done(fn, comm, rc);
  }
  *request = h;
  return MPI_SUCCESS;
}

int Persistent(const char* fn, Request::Mode mode, const void* buf, int count, MPI_Datatype type,
               int peer, int tag, MPI_Comm comm, MPI_Request* request) {
  if (request == nullptr)
    return mpigpu::mpi::FailWith(fn, comm, MPI_ERR_ARG, "null request pointer");
  // Validate now (MPI reports bad arguments at init): the core checks the same arguments.
  int size = 0;
  if (int rc = MPIGPU_Comm_size(comm, &size); rc != MPI_SUCCESS) return Done(fn, comm, rc);
  if (count < 0) return mpigpu::mpi::FailWith(fn, comm, MPI_ERR_COUNT, "negative count");
  const bool recv = mode == Request::Mode::kRecv;
  if (!(peer == MPI_PROC_NULL || (peer >= 0 && peer < size) || (recv && peer == MPI_ANY_SOURCE)))
    return mpigpu::mpi::FailWith(fn, comm, MPI_ERR_RANK, "rank out of range");
  if (!((tag >= 0 && tag <= MPIGPU_TAG_UB) || (recv && tag == MPI_ANY_TAG)))
    return mpigpu::mpi::FailWith(fn, comm, MPI_ERR_TAG, "tag out of range");
  if (int rc = MPIGPU_Type_size(type, &size); rc != MPI_SUCCESS) return Done(fn, comm, rc);
  const bool derived = type >= MPIGPU_NUM_PREDEFINED_TYPES;  // valid: Type_size passed
  if (derived)  // a handle of the request's own (Request::owns_type)
    if (int rc = MPIGPU_Type_dup(type, &type); rc != MPI_SUCCESS) return Done(fn, comm, rc);
  Request* r = nullptr;
  *request = mpigpu::mpi::NewRequest(&r);
  r->owns_type = derived;
  r->persistent = true;
  r->mode = mode;
  r->recv = recv;
  r->buf = const_cast<void*>(buf);
  r->count = count;
  r->type = type;
  r->peer = peer;
  r->tag = tag;
  r->comm = comm;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm) {
  return Done("MPI_Send", comm,
              mpigpu::api::Send(buf, BufType(buf), count, datatype, dest, tag, comm));
}
MPIGPU_MPI_ALIAS(Send)

extern "C" int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm) {
  return Done("MPI_Ssend", comm, MPIGPU_Ssend(buf, BufType(buf), count, datatype, dest, tag, comm));
}
MPIGPU_MPI_ALIAS(Ssend)

extern "C" int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm) {
  return Done("MPI_Rsend", comm,
              mpigpu::api::Send(buf, BufType(buf), count, datatype, dest, tag, comm));
}
MPIGPU_MPI_ALIAS(Rsend)

extern "C" int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm) {
  return Done("MPI_Bsend", comm, mpigpu::mpi::BufferedSend(buf, count, datatype, dest, tag, comm));
}
MPIGPU_MPI_ALIAS(Bsend)

extern "C" int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                         MPI_Comm comm, MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  return Done("MPI_Recv", comm,
              mpigpu::api::Recv(buf, BufType(buf), count, datatype, source, tag, comm,
                                CoreStatus(status)));
}
MPIGPU_MPI_ALIAS(Recv)

extern "C" int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm, MPI_Request* request) {
  return Nonblocking("MPI_Isend", Request::Mode::kSend, buf, count, datatype, dest, tag, comm,
                     request);
}
MPIGPU_MPI_ALIAS(Isend)

extern "C" int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request* request) {
  return Nonblocking("MPI_Issend", Request::Mode::kSsend, buf, count, datatype, dest, tag, comm,
                     request);
}
MPIGPU_MPI_ALIAS(Issend)

extern "C" int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request* request) {
  return Nonblocking("MPI_Irsend", Request::Mode::kRsend, buf, count, datatype, dest, tag, comm,
                     request);
}
MPIGPU_MPI_ALIAS(Irsend)

extern "C" int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request* request) {
  return Nonblocking("MPI_Ibsend", Request::Mode::kBsend, buf, count, datatype, dest, tag, comm,
                     request);
}
MPIGPU_MPI_ALIAS(Ibsend)

extern "C" int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Request* request) {
  return Nonblocking("MPI_Irecv", Request::Mode::kRecv, buf, count, datatype, source, tag, comm,
                     request);
}
MPIGPU_MPI_ALIAS(Irecv)

extern "C" int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                             int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                             int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  return Done("MPI_Sendrecv", comm,
              mpigpu::api::Sendrecv(sendbuf, BufType(sendbuf), sendcount, sendtype, dest,
                                    sendtag, recvbuf, BufType(recvbuf), recvcount, recvtype,
                                    source, recvtag, comm, CoreStatus(status)));
}
MPIGPU_MPI_ALIAS(Sendrecv)

// Receives into a host copy, then copies it over the (sent) buffer.
extern "C" int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                     int sendtag, int source, int recvtag, MPI_Comm comm,
                                     MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  int size = 0;
  if (int rc = MPIGPU_Type_size(datatype, &size); rc != MPI_SUCCESS)
    return Done("MPI_Sendrecv_replace", comm, rc);
  if (count < 0)
    return mpigpu::mpi::FailWith("MPI_Sendrecv_replace", comm, MPI_ERR_COUNT, "negative count");
  const long long bytes = static_cast<long long>(size) * count;
  if (bytes > INT_MAX)
    return mpigpu::mpi::FailWith("MPI_Sendrecv_replace", comm, MPI_ERR_COUNT,
                                 "message longer than INT_MAX bytes");
  std::vector<unsigned char> tmp(static_cast<size_t>(bytes));
  MPI_Status st;
  int rc = MPIGPU_Sendrecv(buf, BufType(buf), count, datatype, dest, sendtag, tmp.data(),
                           MPIGPU_BUF_HOST, static_cast<int>(bytes), MPI_BYTE, source, recvtag,
                           comm, CoreStatus(&st));
  if (rc == MPI_SUCCESS && source != MPI_PROC_NULL) {
    size_t moved = 0;
    rc = mpigpu::mpi::LocalCopy(tmp.data(), static_cast<int>(st.count_bytes), MPI_BYTE, buf,
                                count, datatype, &moved);
  }
  if (status != MPI_STATUS_IGNORE) *status = st;
  return Done("MPI_Sendrecv_replace", comm, rc);
}
MPIGPU_MPI_ALIAS(Sendrecv_replace)

// The receive is posted first, as in Sendrecv; the request completes when both halves have.
extern "C" int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                              int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                              int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  if (request == nullptr)
    return mpigpu::mpi::FailWith("MPI_Isendrecv", comm, MPI_ERR_ARG, "null request pointer");
  Request* r = nullptr;
  const MPI_Request h = mpigpu::mpi::NewRequest(&r);
  r->comm = comm;
  r->recv = true;
  r->sendrecv = true;
  int rc = MPIGPU_Irecv(recvbuf, BufType(recvbuf), recvcount, recvtype, source, recvtag, comm,
                        &r->core);
  if (rc == MPI_SUCCESS)
    rc = MPIGPU_Isend(sendbuf, BufType(sendbuf), sendcount, sendtype, dest, sendtag, comm,
                      &r->core_send);
  if (rc != MPI_SUCCESS) {
    if (r->core != MPIGPU_REQUEST_NULL && MPIGPU_Cancel(&r->core) == MPI_SUCCESS)
      (void)MPIGPU_Request_free(&r->core);
    mpigpu::mpi::FreeRequest(h);
    *request = MPI_REQUEST_NULL;
    return Done("MPI_Isendrecv", comm, rc);
  }
  *request = h;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Isendrecv)

extern "C" int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                      int sendtag, int source, int recvtag, MPI_Comm comm,
                                      MPI_Request* request) {
  if (request == nullptr)
    return mpigpu::mpi::FailWith("MPI_Isendrecv_replace", comm, MPI_ERR_ARG, "null request pointer");
  int size = 0;
  if (int rc = MPIGPU_Type_size(datatype, &size); rc != MPI_SUCCESS)
    return Done("MPI_Isendrecv_replace", comm, rc);
  const long long bytes = static_cast<long long>(size) * count;
  if (count < 0 || bytes > INT_MAX)
    return mpigpu::mpi::FailWith("MPI_Isendrecv_replace", comm, MPI_ERR_COUNT,
                                 "negative count or more than INT_MAX bytes");
  Request* r = nullptr;
  const MPI_Request h = mpigpu::mpi::NewRequest(&r);
  r->comm = comm;
  r->recv = true;
  r->sendrecv = true;
  r->replace = true;
  r->replace_tmp.resize(static_cast<size_t>(bytes));
  r->buf = buf;
  r->count = count;
  r->type = datatype;
  r->peer = source;
  int rc = MPIGPU_Irecv(r->replace_tmp.data(), MPIGPU_BUF_HOST, static_cast<int>(bytes), MPI_BYTE,
                        source, recvtag, comm, &r->core);
  if (rc == MPI_SUCCESS)
    rc = MPIGPU_Isend(buf, BufType(buf), count, datatype, dest, sendtag, comm, &r->core_send);
  if (rc != MPI_SUCCESS) {
    if (r->core != MPIGPU_REQUEST_NULL && MPIGPU_Cancel(&r->core) == MPI_SUCCESS)
      (void)MPIGPU_Request_free(&r->core);
    mpigpu::mpi::FreeRequest(h);
    *request = MPI_REQUEST_NULL;
    return Done("MPI_Isendrecv_replace", comm, rc);
  }
  *request = h;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Isendrecv_replace)

extern "C" int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  return Done("MPI_Probe", comm, MPIGPU_Probe(source, tag, comm, CoreStatus(status)));
}
MPIGPU_MPI_ALIAS(Probe)

extern "C" int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  return Done("MPI_Iprobe", comm, MPIGPU_Iprobe(source, tag, comm, flag, CoreStatus(status)));
}
MPIGPU_MPI_ALIAS(Iprobe)

// A matched probe receives the message at once (into host memory), so no other receive can
// match it; Mrecv then copies it into the user's buffer with the user's datatype.
extern "C" int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                           MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  if (message == nullptr)
    return mpigpu::mpi::FailWith("MPI_Mprobe", comm, MPI_ERR_ARG, "null message pointer");
  if (source == MPI_PROC_NULL) {
    int size = 0;
    if (int rc = MPIGPU_Comm_size(comm, &size); rc != MPI_SUCCESS) return Done("MPI_Mprobe", comm, rc);
    mpigpu::mpi::ProcNullStatus(status);
    *message = MPI_MESSAGE_NO_PROC;
    return MPI_SUCCESS;
  }
  MPI_Status probed;
  if (int rc = MPIGPU_Probe(source, tag, comm, CoreStatus(&probed)); rc != MPI_SUCCESS)
    return Done("MPI_Mprobe", comm, rc);
  return Done("MPI_Mprobe", comm, mpigpu::mpi::TakeMessage(comm, probed, message, status));
}
MPIGPU_MPI_ALIAS(Mprobe)

extern "C" int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                            MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  if (message == nullptr || flag == nullptr)
    return mpigpu::mpi::FailWith("MPI_Improbe", comm, MPI_ERR_ARG, "null pointer");
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    return PMPI_Mprobe(source, tag, comm, message, status);
  }
  MPI_Status probed;
  if (int rc = MPIGPU_Iprobe(source, tag, comm, flag, CoreStatus(&probed)); rc != MPI_SUCCESS)
    return Done("MPI_Improbe", comm, rc);
  if (!*flag) return MPI_SUCCESS;
  return Done("MPI_Improbe", comm, mpigpu::mpi::TakeMessage(comm, probed, message, status));
}
MPIGPU_MPI_ALIAS(Improbe)

extern "C" int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                          MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  return mpigpu::mpi::DeliverMessage("MPI_Mrecv", buf, count, datatype, message, status);
}
MPIGPU_MPI_ALIAS(Mrecv)

// The message is here already: the request is complete when it is made.
extern "C" int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                           MPI_Request* request) {
  if (request == nullptr)
    return mpigpu::mpi::FailWith("MPI_Imrecv", MPI_COMM_WORLD, MPI_ERR_ARG, "null request");
  Request* r = nullptr;
  const MPI_Request h = mpigpu::mpi::NewRequest(&r);
  r->recv = true;
  r->comm = MPI_COMM_WORLD;
  const int rc = mpigpu::mpi::DeliverMessage("MPI_Imrecv", buf, count, datatype, message, &r->status);
  if (rc != MPI_SUCCESS && r->status.MPI_ERROR == MPI_SUCCESS) {  // nothing was delivered
    mpigpu::mpi::FreeRequest(h);
    *request = MPI_REQUEST_NULL;
    return rc;
  }
  r->done = true;
  *request = h;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Imrecv)

extern "C" int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                              int tag, MPI_Comm comm, MPI_Request* request) {
  return Persistent("MPI_Send_init", Request::Mode::kSend, buf, count, datatype, dest, tag, comm,
                    request);
}
MPIGPU_MPI_ALIAS(Send_init)

extern "C" int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                               int tag, MPI_Comm comm, MPI_Request* request) {
  return Persistent("MPI_Ssend_init", Request::Mode::kSsend, buf, count, datatype, dest, tag,
                    comm, request);
}
MPIGPU_MPI_ALIAS(Ssend_init)

extern "C" int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                               int tag, MPI_Comm comm, MPI_Request* request) {
  return Persistent("MPI_Rsend_init", Request::Mode::kRsend, buf, count, datatype, dest, tag,
                    comm, request);
}
MPIGPU_MPI_ALIAS(Rsend_init)

extern "C" int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest,
                               int tag, MPI_Comm comm, MPI_Request* request) {
  return Persistent("MPI_Bsend_init", Request::Mode::kBsend, buf, count, datatype, dest, tag,
                    comm, request);
}
MPIGPU_MPI_ALIAS(Bsend_init)

extern "C" int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                              MPI_Comm comm, MPI_Request* request) {
  return Persistent("MPI_Recv_init", Request::Mode::kRecv, buf, count, datatype, source, tag,
                    comm, request);
}
MPIGPU_MPI_ALIAS(Recv_init)

extern "C" MPI_Fint PMPI_Message_c2f(MPI_Message message) { return message; }
MPIGPU_MPI_ALIAS(Message_c2f)
extern "C" MPI_Message PMPI_Message_f2c(MPI_Fint message) { return message; }
MPIGPU_MPI_ALIAS(Message_f2c)

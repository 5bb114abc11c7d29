// What the MPI layer's files share: the alias macro of the profiling interface, buffer-location
// lookup, error handling, the layer's request table and its requests' completion pieces.
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

#include "mpi.h"

// Defines MPI_name as a weak alias of PMPI_name (which the file defines): a program's own
// MPI_name takes precedence and can reach the library through PMPI_name.
#define MPIGPU_MPI_ALIAS(name) \
  extern "C" decltype(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)));

namespace mpigpu::mpi {

// ---- buffers (mpi_buf.cc) ----
// Where `buf` lives, as the core's buffer-type tag: device memory gives
// MPIGPU_BUF_GPU_DEVICE(n); host, pinned, managed and unknown memory give MPIGPU_BUF_HOST.
// Asks CUDA only when the process can have device memory (a device exists) and the pointer is
// not in the brk heap or the main thread's stack; NULL, MPI_BOTTOM and MPI_IN_PLACE are host.
// Inline for a process without devices (every buffer is host memory): every call with a buffer
// asks, and a call costs more than the answer. The rest is hidden: called directly within
// libmpi.so, not through the PLT.
[[gnu::visibility("hidden")]] MPIGPU_Buftype BufTypeLookup(const void* buf);
// How many CUDA devices the process has: -1 until InitBufTypes counts them. Written once by
// InitBufTypes (release: after what BufTypeLookup reads), read by every BufType. Relaxed here:
// 0 is an answer by itself; any other value goes through BufTypeLookup's acquire load.
extern std::atomic<int> g_buf_devices;
inline MPIGPU_Buftype BufType(const void* buf) {
  if (g_buf_devices.load(std::memory_order_relaxed) == 0) return MPIGPU_BUF_HOST;
  return BufTypeLookup(buf);
}
// Called by MPI_Init: decides whether BufType ever asks CUDA (and through which call), reads the
// heap and stack ranges.
void InitBufTypes();
// The tag for what the driver said about a pointer: device memory of a device the tag can name
// gives MPIGPU_BUF_GPU_DEVICE(ordinal); managed memory and everything else give MPIGPU_BUF_HOST.
MPIGPU_Buftype ClassifyPointer(bool device, bool managed, int ordinal);
// BufType through the runtime's cudaPointerGetAttributes, no shortcut (tests compare the two).
MPIGPU_Buftype BufTypeByRuntime(const void* buf);

// ---- errors (mpi_errors.cc) ----
// Applies comm's error handler to the failed call `fn` (rc != MPI_SUCCESS) and returns rc:
// ERRORS_ARE_FATAL prints and aborts the job, ERRORS_RETURN returns, a user handler is called.
// Errors of calls on no communicator go to MPI_COMM_WORLD's handler.
int Fail(const char* fn, MPI_Comm comm, int rc);
inline int Done(const char* fn, MPI_Comm comm, int rc) {
  return rc == MPI_SUCCESS ? rc : Fail(fn, comm, rc);
}
// Applies the handler stored in the core as `core_value` to the failed call `fn` on `object` (a
// communicator or a window: the user function gets its handle); fatal ones abort abort_comm.
int ApplyErrhandler(const char* fn, int core_value, int object, MPI_Comm abort_comm, int rc);
// Applies window win's handler to the failed call `fn` (mpi_win.cc); returns rc.
int WinDone(const char* fn, MPI_Win win, int rc);
// Handlers as the layer stores them in the core (windows keep theirs there too).
bool ValidErrhandler(MPI_Errhandler h);
int ErrhandlerToCore(MPI_Errhandler h);
MPI_Errhandler ErrhandlerFromCore(int v);
// Records `detail` for rc (shown by MPI_Error_string) and applies comm's handler.
int FailWith(const char* fn, MPI_Comm comm, int rc, const char* detail);
// Records `detail` for rc without applying a handler (for helpers whose caller applies it).
int Detail(int rc, const char* detail);
// The largest error code in use (MPI_LASTUSEDCODE's value): MPI_ERR_LASTCODE plus the classes
// and codes MPI_Add_error_class/code made.
int LastUsedCode();
// The call `fn` is not supported (yet): MPI_ERR_UNSUPPORTED_OPERATION naming it.
int Unsupported(const char* fn, MPI_Comm comm);

// Single-completion calls (Recv, Probe, Wait, Test, ...) leave a status's MPI_ERROR as it was
// (MPI 3.1, 3.2.5); the core writes it, so these calls put it back. Except the empty status
// EmptyStatus writes (a null or inactive request's: source MPI_ANY_SOURCE, which no message has;
// MPI_PROC_NULL's names MPI_PROC_NULL): the standard defines it whole, error MPI_SUCCESS
// included (MPI 4.0, 3.7.3), and MPICH's pt2pt/rqstatus checks it. Only that exact status is let
// through: a generalized request's query_fn that leaves the source alone but sets an error still
// has the caller's MPI_ERROR put back.
class KeepStatusError {
 public:
  explicit KeepStatusError(MPI_Status* st) : st_(st), err_(st ? st->MPI_ERROR : 0) {}
  ~KeepStatusError() {
    if (st_ == nullptr) return;
    const bool empty = st_->MPI_SOURCE == MPI_ANY_SOURCE && st_->MPI_TAG == MPI_ANY_TAG &&
                       st_->MPI_ERROR == MPI_SUCCESS && st_->count_bytes == 0 &&
                       st_->cancelled == 0;
    if (!empty) st_->MPI_ERROR = err_;
  }
  KeepStatusError(const KeepStatusError&) = delete;
  KeepStatusError& operator=(const KeepStatusError&) = delete;

 private:
  MPI_Status* st_;
  int err_;
};

// ---- requests (mpi_requests.cc; mpi_requests_many.cc, mpi_request_control.cc) ----
// A request of the MPI layer. Most carry one core request; persistent ones keep their
// arguments and start a core request per MPI_Start; buffered sends and matched receives may be
// complete from the start (`done`, status kept).
struct Request {
  enum class Mode { kSend, kSsend, kRsend, kBsend, kRecv };
  MPIGPU_Request core = MPIGPU_REQUEST_NULL;  // active core operation, or null
  // Isendrecv: the send half (completed first; `core` is the receive, whose status counts).
  MPIGPU_Request core_send = MPIGPU_REQUEST_NULL;
  bool sendrecv = false;
  // Isendrecv_replace: the receive lands in `replace_tmp`, copied over (buf, count, type) once
  // the send half is done too.
  bool replace = false;
  std::vector<unsigned char> replace_tmp;
  // Ibsend / started Bsend_init: its core send out of the attached buffer (the buffer's to
  // complete), claimed as `core` by MPI_Cancel (mpi_bsend.cc, ClaimBuffered).
  MPIGPU_Request bsend_core = MPIGPU_REQUEST_NULL;
  bool bsend_claimed = false;
  bool done = false;                          // complete without a core request; `status` holds
  MPI_Status status{};
  bool recv = false;
  MPI_Comm comm = MPI_COMM_NULL;  // whose error handler applies
  // Persistent requests: inactive until MPI_Start; MPI_Wait leaves them allocated.
  bool persistent = false;
  bool active = false;
  Mode mode = Mode::kSend;
  void* buf = nullptr;
  int count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  // A persistent request's own handle of a derived `type` (a core dup, no attribute callbacks):
  // the user may free theirs while the request lives (MPI), and a freed handle may name another
  // type later. Freed with the request (FreeRequest).
  bool owns_type = false;
  int peer = 0;
  int tag = 0;
  // Persistent collectives (MPI_<coll>_init): the core's persistent request, which keeps its
  // arguments; MPI_Start starts it and `core` names it while it runs (the core leaves a
  // completed persistent request's handle valid, so completion nulls `core` here).
  bool pcoll = false;
  MPIGPU_Request pcore = MPIGPU_REQUEST_NULL;
  // Generalized requests (MPI_Grequest_start): complete once MPI_Grequest_complete is called
  // (by any thread: atomic), then the query function fills the status.
  bool greq = false;
  std::atomic<bool> greq_complete{false};
  MPI_Grequest_query_function* query_fn = nullptr;
  MPI_Grequest_free_function* free_fn = nullptr;
  MPI_Grequest_cancel_function* cancel_fn = nullptr;
  void* extra_state = nullptr;

  Request() = default;
  Request& operator=(const Request& o) = delete;
};
// A new request (handle > 0) and its object; the object stays valid until FreeRequest.
MPI_Request NewRequest(Request** r);
// The request of handle h, or null (not a live handle).
Request* LookupRequest(MPI_Request h);
void FreeRequest(MPI_Request h);
// *request = an MPI request around the core request that start(&core) begins (nonblocking
// collectives, Comm_idup); on failure none is made (*request = MPI_REQUEST_NULL) and comm's
// handler gets the error as `fn`'s.
template <class Start>
int StartCoreRequest(const char* fn, MPI_Comm comm, MPI_Request* request, Start&& start) {
  if (request == nullptr) return FailWith(fn, comm, MPI_ERR_ARG, "null request pointer");
  Request* r = nullptr;
  const MPI_Request h = NewRequest(&r);
  r->comm = comm;
  if (int rc = start(&r->core); rc != MPI_SUCCESS) {
    FreeRequest(h);
    *request = MPI_REQUEST_NULL;
    return Done(fn, comm, rc);
  }
  *request = h;
  return MPI_SUCCESS;
}
// Starts a send of the given mode as a core request in r->core (Bsend: buffered, r->done).
int StartSend(Request::Mode mode, const void* buf, int count, MPI_Datatype type, int dest,
              int tag, MPI_Comm comm, Request* r);
// Starts the persistent request r.
int StartPersistent(Request* r);
// Empty status (null or inactive request): source ANY_SOURCE, tag ANY_TAG, count 0.
void EmptyStatus(MPI_Status* st);

// The completion pieces shared by one request's calls (mpi_requests.cc, where they live), the
// calls on arrays of requests (mpi_requests_many.cc) and Request_free/Cancel
// (mpi_request_control.cc). Hidden: called directly within libmpi.so, not through the PLT.
// An MPI status as the core's (the same layout).
static_assert(sizeof(MPI_Status) == sizeof(MPIGPU_Status) &&
                  offsetof(MPI_Status, MPI_SOURCE) == offsetof(MPIGPU_Status, MPIGPU_SOURCE) &&
                  offsetof(MPI_Status, MPI_TAG) == offsetof(MPIGPU_Status, MPIGPU_TAG) &&
                  offsetof(MPI_Status, MPI_ERROR) == offsetof(MPIGPU_Status, MPIGPU_ERROR) &&
                  offsetof(MPI_Status, count_bytes) == offsetof(MPIGPU_Status, count_bytes) &&
                  offsetof(MPI_Status, cancelled) == offsetof(MPIGPU_Status, cancelled),
              "MPI_Status has MPIGPU_Status's layout");
inline MPIGPU_Status* Core(MPI_Status* st) { return reinterpret_cast<MPIGPU_Status*>(st); }
// A request that is one core request and nothing else (no send half, not a persistent
// collective): Wait and Test complete it through the core's call directly, not WaitOne/TestOne.
inline bool PlainCore(const Request* r) {
  return r->core != MPIGPU_REQUEST_NULL && !r->sendrecv && !r->pcoll;
}
// Gives the CPU away now and then while a some/any wait polls (ranks may share CPUs).
[[gnu::visibility("hidden")]] void PollPause(long round);
// Completes r: for a core request after the core reported it complete, for a `done` or
// inactive one now. Then frees it (or, persistent, makes it inactive) and nulls *h.
[[gnu::visibility("hidden")]] void Retire(MPI_Request* h, Request* r);
// Isendrecv: tests the send half; true once it is done (its error, if any, in *rc).
[[gnu::visibility("hidden")]] bool SendHalfDone(Request* r, int* rc);
// Isendrecv_replace: the received bytes go over the user's buffer; returns rc or the copy's error.
[[gnu::visibility("hidden")]] int FinishReplace(Request* r, int rc, MPI_Status* st);
// Tests one request without blocking. *flag = 1 and *st filled (may be null) when complete;
// returns the operation's error.
[[gnu::visibility("hidden")]] int TestOne(Request* r, int* flag, MPI_Status* st);
// Waits for one request (st may be null); returns the operation's error.
[[gnu::visibility("hidden")]] int WaitOne(Request* r, MPI_Status* st);
// MPI_ERR_REQUEST for `fn`: h is not a live request.
[[gnu::visibility("hidden")]] int BadRequest(const char* fn, MPI_Request h);

// ---- MPI-1 bound markers (mpi_lbub.cc) ----
// "MPI_LB" / "MPI_UB" for the marker handles, else null.
const char* MarkerName(MPI_Datatype t);
// MPIGPU_Type_create_struct, where MPI_LB / MPI_UB entries set the new type's bounds.
int StructWithMarkers(int count, const int blocklens[], const MPI_Aint displs[],
                      const MPI_Datatype types[], MPI_Datatype* newtype);

// ---- buffered sends (mpi_bsend.cc) ----
// Copies (buf, count, type) into the attached buffer and starts its send; the copy's space
// comes back when the send completes. `from`: the Ibsend request it completes (null for
// Bsend), which keeps the core send's handle for MPI_Cancel (from->bsend_core).
// Errors: BUFFER (no room: attach a larger buffer).
int BufferedSend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                 Request* from = nullptr);
// MPI_Cancel of an Ibsend request r: true when its core send (r->bsend_core) is still in the
// buffer's list (no later Bsend or detach reaped it); it is then r's `core` to complete and
// free (its space stays taken meanwhile, and MPI_Buffer_detach completes it into r), after
// which ReleaseClaimed gives the space back; UnclaimBuffered hands it back to the buffer's
// care instead (r was freed). Under the buffer's mutex; r must not be completed by two
// threads at once (as MPI requires).
bool ClaimBuffered(Request* r);
void ReleaseClaimed(Request* r);
void UnclaimBuffered(Request* r);

// ---- local copies (mpi_p2p.cc) ----
// Copies `count` elements of `type` at `src` into `dst` as (dcount, dtype), either side host
// or device, through a private self communicator (the core packs and unpacks).
// *bytes = bytes moved. Errors: as MPI_Sendrecv, TRUNCATE.
int LocalCopy(const void* src, int count, MPI_Datatype type, void* dst, int dcount,
              MPI_Datatype dtype, size_t* bytes);

}  // namespace mpigpu::mpi

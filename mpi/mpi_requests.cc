// The MPI layer's request table (handle = index + 1) over the core's requests, and the completion
// of one request: MPI_Wait, MPI_Test, MPI_Request_get_status and the pieces the other request
// calls share (mpi_internal.h). Arrays of requests: mpi_requests_many.cc; Request_free, Cancel,
// Start: mpi_request_control.cc; status queries and generalized requests: mpi_status.cc.
//
// Most requests hold one core request and complete through the core's Wait/Test (the core
// progresses every request while it waits on any). A request may instead be complete from the
// start (`done`: a buffered send, a matched receive of MPI_MESSAGE_NO_PROC), or be a persistent
// request, inactive between completions.
#include <sched.h>

#include <atomic>
#include <climits>
#include <cstddef>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "mpi/mpi_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::mpi {
namespace {

// Objects live in blocks of kBlock that are never moved or freed (stable addresses) and are
// reused through free lists: each thread's few spares (no lock), then the shared one (under the
// mutex). Who writes what: a block's pointer is published once, under the mutex (release), and
// read by LookupRequest without it (acquire). A slot's `used` flag (beside the object, so that
// resetting the object never touches it) is set by NewRequest (release, after the object is
// reset) in the thread that took the slot, then the only holder of its index; cleared by
// FreeRequest with an exchange (acq_rel: of two racing frees of one handle, a program error, one
// frees); read by LookupRequest (acquire). A request's fields belong to the thread that holds its
// handle. So MPI_Wait/Test find their request without a lock, and a thread that makes and frees
// requests in turn (Isend, Wait, Isend, ...) takes none either.
constexpr int kBlockBits = 8;
constexpr int kBlock = 1 << kBlockBits;
constexpr int kMaxBlocks = 1 << 16;  // 16 Mi requests alive at once
struct Block {
  Request reqs[kBlock];
  std::atomic<bool> used[kBlock] = {};
};
struct Table {
  std::mutex mu;
  std::atomic<Block*> blocks[kMaxBlocks] = {};
  int size = 0;  // slots handed out so far (under mu)
  std::vector<int> free;
};
// Made once, out of line: Tab() below stays a guard check inline in every table operation.
[[gnu::noinline]] Table* MakeTable() { return new Table; }
inline Table& Tab() {
  static Table* t = MakeTable();
  return *t;
}

// A thread's spare slots (indices: not in use, held by no one else); what is left when the
// thread ends goes back to the shared list.
constexpr int kSpares = 8;
struct Spares {
  int n = 0;
  int idx[kSpares];
  ~Spares() {
    if (n == 0) return;
    Table& t = Tab();
    std::lock_guard<std::mutex> g(t.mu);
    t.free.insert(t.free.end(), idx, idx + n);
    n = 0;  // a request freed later on this thread (atexit) starts a new, leaked list
  }
};
thread_local Spares tl_spares;

// Slot i (0-based) of the table: its block, or null when i never named a slot.
inline Block* BlockOf(const Table& t, unsigned i) {
  if ((i >> kBlockBits) >= static_cast<unsigned>(kMaxBlocks)) return nullptr;
  return t.blocks[i >> kBlockBits].load(std::memory_order_acquire);
}

}  // namespace

// Gives the CPU away now and then while a some/any wait polls (ranks may share CPUs).
void PollPause(long round) {
  if (round > 64) sched_yield();
}

// Completes r: for a core request after the core reported it complete, for a `done` or
// inactive one now. Then frees it (or, persistent, makes it inactive) and nulls *h.
void Retire(MPI_Request* h, Request* r) {
  r->done = false;
  if (r->bsend_claimed) ReleaseClaimed(r);  // its core send completed: the space comes back
  r->bsend_core = MPIGPU_REQUEST_NULL;
  if (r->persistent) {
    r->active = false;
    return;
  }
  FreeRequest(*h);
  *h = MPI_REQUEST_NULL;
}

// Isendrecv: tests the send half; true once it is done (its error, if any, in *rc).
bool SendHalfDone(Request* r, int* rc) {
  *rc = MPI_SUCCESS;
  if (r->core_send == MPIGPU_REQUEST_NULL) return true;
  int f = 0;
  *rc = MPIGPU_Test(&r->core_send, &f, nullptr);
  return f || *rc != MPI_SUCCESS;
}

// Isendrecv_replace: the received bytes go over the user's buffer.
int FinishReplace(Request* r, int rc, MPI_Status* st) {
  if (!r->replace) return rc;
  r->replace = false;
  if (rc == MPI_SUCCESS && r->peer != MPI_PROC_NULL) {
    size_t moved = 0;
    rc = LocalCopy(r->replace_tmp.data(), static_cast<int>(st->count_bytes), MPI_BYTE, r->buf,
                   r->count, r->type, &moved);
  }
  r->replace_tmp.clear();
  r->replace_tmp.shrink_to_fit();
  return rc;
}

// Tests one request without blocking. *flag = 1 and *st filled (may be null) when complete;
// returns the operation's error.
int TestOne(Request* r, int* flag, MPI_Status* st) {
  if (r->sendrecv) {
    int src = MPI_SUCCESS;
    if (!SendHalfDone(r, &src)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    MPI_Status tmp;
    MPI_Status* s = st ? st : &tmp;
    int rc = MPI_SUCCESS;
    if (r->core != MPIGPU_REQUEST_NULL) {
      rc = MPIGPU_Test(&r->core, flag, Core(s));
      if (!*flag) return rc;
    } else {
      *flag = 1;
      *s = r->status;
    }
    rc = FinishReplace(r, rc, s);
    r->sendrecv = false;
    return rc != MPI_SUCCESS ? rc : src;
  }
  if (r->core != MPIGPU_REQUEST_NULL) {
    const int rc = MPIGPU_Test(&r->core, flag, Core(st));
    if (r->pcoll && *flag) r->core = MPIGPU_REQUEST_NULL;  // the core's stays valid, inactive
    return rc;
  }
  if (r->greq) {
    if (!r->greq_complete.load(std::memory_order_acquire)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
    *flag = 1;
    MPI_Status tmp;
    MPI_Status* s = st ? st : &tmp;
    EmptyStatus(s);
    int rc = r->query_fn(r->extra_state, s);
    const int frc = r->free_fn(r->extra_state);
    if (rc == MPI_SUCCESS) rc = frc;
    r->greq = false;  // queried and freed once
    r->done = true;
    r->status = *s;
    r->status.MPI_ERROR = rc;
    return rc;
  }
  *flag = 1;
  if (r->done) {
    if (st) *st = r->status;
    return r->status.MPI_ERROR;
  }
  EmptyStatus(st);  // inactive persistent request
  return MPI_SUCCESS;
}

int WaitOne(Request* r, MPI_Status* st) {
  if (r->sendrecv) {
    const int src =
        r->core_send != MPIGPU_REQUEST_NULL ? MPIGPU_Wait(&r->core_send, nullptr) : MPI_SUCCESS;
    MPI_Status tmp;
    MPI_Status* s = st ? st : &tmp;
    int rc = MPI_SUCCESS;
    if (r->core != MPIGPU_REQUEST_NULL) rc = MPIGPU_Wait(&r->core, Core(s));
    else *s = r->status;
    rc = FinishReplace(r, rc, s);
    r->sendrecv = false;
    return rc != MPI_SUCCESS ? rc : src;
  }
  if (r->core != MPIGPU_REQUEST_NULL) {
    const int rc = MPIGPU_Wait(&r->core, Core(st));
    if (r->pcoll) r->core = MPIGPU_REQUEST_NULL;  // the core's stays valid, inactive
    return rc;
  }
  int flag = 0;
  for (long round = 0;; ++round) {  // only a generalized request can be incomplete here
    const int rc = TestOne(r, &flag, st);
    if (flag) return rc;
    PollPause(round + 64);
  }
}

int BadRequest(const char* fn, MPI_Request h) {
  std::string d = "request handle " + std::to_string(h) + " is not a live request";
  return FailWith(fn, MPI_COMM_WORLD, MPI_ERR_REQUEST, d.c_str());
}

MPI_Request NewRequest(Request** r) {
  Table& t = Tab();
  Spares& sp = tl_spares;
  int i;
  bool fresh = false;  // never used: constructed with its block
  if (sp.n > 0) {
    i = sp.idx[--sp.n];
  } else {
    std::lock_guard<std::mutex> g(t.mu);
    if (!t.free.empty()) {
      i = t.free.back();
      t.free.pop_back();
    } else {
      if (t.size >= kMaxBlocks * kBlock) throw std::bad_alloc();  // as a full deque would
      i = t.size++;
      if ((i & (kBlock - 1)) == 0)
        t.blocks[i >> kBlockBits].store(new Block, std::memory_order_release);
      fresh = true;
    }
  }
  Block* b = BlockOf(t, static_cast<unsigned>(i));
  Request* q = &b->reqs[i & (kBlock - 1)];
  if (!fresh) {  // a used slot starts afresh
    q->~Request();
    new (q) Request;  // every member has an initializer: no zero-fill of the whole object first
  }
  b->used[i & (kBlock - 1)].store(true, std::memory_order_release);
  *r = q;
  return i + 1;
}

namespace {
// LookupRequest, inline for Wait and Test (every completion looks its request up).
inline Request* FindRequest(MPI_Request h) {
  if (h <= 0) return nullptr;
  const unsigned i = static_cast<unsigned>(h - 1);
  Block* b = BlockOf(Tab(), i);
  if (b == nullptr || !b->used[i & (kBlock - 1)].load(std::memory_order_acquire)) return nullptr;
  return &b->reqs[i & (kBlock - 1)];
}
}  // namespace

Request* LookupRequest(MPI_Request h) { return FindRequest(h); }

void FreeRequest(MPI_Request h) {
  if (h <= 0) return;
  Table& t = Tab();
  const unsigned i = static_cast<unsigned>(h - 1);
  Block* b = BlockOf(t, i);
  if (b == nullptr || !b->used[i & (kBlock - 1)].exchange(false, std::memory_order_acq_rel))
    return;
  // Ours alone until the index is on a free list: take the type it owns first.
  Request& r = b->reqs[i & (kBlock - 1)];
  MPI_Datatype owned = r.owns_type ? r.type : MPI_DATATYPE_NULL;
  r.owns_type = false;
  Spares& sp = tl_spares;
  if (sp.n < kSpares) {
    sp.idx[sp.n++] = h - 1;
  } else {
    std::lock_guard<std::mutex> g(t.mu);
    t.free.push_back(h - 1);
  }
  // An operation in flight holds the type's definition itself (the core's TypeDesc).
  if (owned != MPI_DATATYPE_NULL) (void)MPIGPU_Type_free(&owned);
}

void EmptyStatus(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->MPI_ERROR = MPI_SUCCESS;
  st->count_bytes = 0;
  st->cancelled = 0;
}

}  // namespace mpigpu::mpi

using mpigpu::mpi::Done;
using mpigpu::mpi::Request;

extern "C" int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  if (request == nullptr)
    return mpigpu::mpi::FailWith("MPI_Wait", MPI_COMM_WORLD, MPI_ERR_ARG, "null request pointer");
  if (*request == MPI_REQUEST_NULL) {
    mpigpu::mpi::EmptyStatus(status);
    return MPI_SUCCESS;
  }
  Request* r = mpigpu::mpi::FindRequest(*request);
  if (r == nullptr) return mpigpu::mpi::BadRequest("MPI_Wait", *request);
  const MPI_Comm comm = r->comm;
  const int rc = mpigpu::mpi::PlainCore(r)
                     ? MPIGPU_Wait(&r->core, mpigpu::mpi::Core(status))
                     : mpigpu::mpi::WaitOne(r, status);
  mpigpu::mpi::Retire(request, r);
  return Done("MPI_Wait", comm, rc);
}
MPIGPU_MPI_ALIAS(Wait)

extern "C" int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  if (request == nullptr || flag == nullptr)
    return mpigpu::mpi::FailWith("MPI_Test", MPI_COMM_WORLD, MPI_ERR_ARG, "null pointer");
  if (*request == MPI_REQUEST_NULL) {
    *flag = 1;
    mpigpu::mpi::EmptyStatus(status);
    return MPI_SUCCESS;
  }
  Request* r = mpigpu::mpi::FindRequest(*request);
  if (r == nullptr) return mpigpu::mpi::BadRequest("MPI_Test", *request);
  const MPI_Comm comm = r->comm;
  *flag = 0;
  const int rc = mpigpu::mpi::PlainCore(r)
                     ? MPIGPU_Test(&r->core, flag, mpigpu::mpi::Core(status))
                     : mpigpu::mpi::TestOne(r, flag, status);
  if (*flag) mpigpu::mpi::Retire(request, r);
  return Done("MPI_Test", comm, rc);
}
MPIGPU_MPI_ALIAS(Test)

extern "C" int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  if (flag == nullptr)
    return mpigpu::mpi::FailWith("MPI_Request_get_status", MPI_COMM_WORLD, MPI_ERR_ARG, "null flag");
  if (request == MPI_REQUEST_NULL) {
    *flag = 1;
    mpigpu::mpi::EmptyStatus(status);
    return MPI_SUCCESS;
  }
  Request* r = mpigpu::mpi::LookupRequest(request);
  if (r == nullptr) return mpigpu::mpi::BadRequest("MPI_Request_get_status", request);
  if (r->core_send != MPIGPU_REQUEST_NULL) {
    int src = MPI_SUCCESS;
    if (!mpigpu::mpi::SendHalfDone(r, &src)) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  if (r->core == MPIGPU_REQUEST_NULL) {
    int f = 0;
    *flag = 1;
    return Done("MPI_Request_get_status", r->comm, mpigpu::mpi::TestOne(r, &f, status));
  }
  // The core's Test would free its request: keep it by completing into the layer's object.
  int f = 0;
  MPI_Status st;
  const int rc = MPIGPU_Test(&r->core, &f, reinterpret_cast<MPIGPU_Status*>(&st));
  *flag = f;
  if (f) {
    if (r->pcoll) r->core = MPIGPU_REQUEST_NULL;
    st.MPI_ERROR = rc;
    r->status = st;
    r->done = true;
    if (status) *status = st;
  }
  return Done("MPI_Request_get_status", r->comm, rc);
}
MPIGPU_MPI_ALIAS(Request_get_status)

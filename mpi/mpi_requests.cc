// The MPI layer's requests: a table of Request objects (handle = index + 1) over the core's
// requests, and the completion calls (Wait/Test and their any/some/all forms), Cancel,
// Request_free/get_status and Start/Startall. Status queries and generalized requests:
// mpi_status.cc.
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
#include <vector>

#include "mpi/mpi_internal.h"
#include "mpigpu_api/errors.h"

static_assert(sizeof(MPI_Status) == sizeof(MPIGPU_Status) &&
                  offsetof(MPI_Status, MPI_SOURCE) == offsetof(MPIGPU_Status, MPIGPU_SOURCE) &&
                  offsetof(MPI_Status, MPI_TAG) == offsetof(MPIGPU_Status, MPIGPU_TAG) &&
                  offsetof(MPI_Status, MPI_ERROR) == offsetof(MPIGPU_Status, MPIGPU_ERROR) &&
                  offsetof(MPI_Status, count_bytes) == offsetof(MPIGPU_Status, count_bytes) &&
                  offsetof(MPI_Status, cancelled) == offsetof(MPIGPU_Status, cancelled),
              "MPI_Status has MPIGPU_Status's layout");

namespace mpigpu::mpi {
namespace {

inline MPIGPU_Status* Core(MPI_Status* st) { return reinterpret_cast<MPIGPU_Status*>(st); }

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

// Tests one request without blocking. *flag = 1 and *st filled (may be null) when complete;
// returns the operation's error.
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

// A request that counts for any/some: live and, if persistent, active.
bool Active(const Request* r) { return r != nullptr && (!r->persistent || r->active); }

int BadRequest(const char* fn, MPI_Request h) {
  std::string d = "request handle " + std::to_string(h) + " is not a live request";
  return FailWith(fn, MPI_COMM_WORLD, MPI_ERR_REQUEST, d.c_str());
}

// The objects of an array of handles: on the stack for the usual few (a vector cost an
// allocation per Waitall).
class RequestList {
 public:
  explicit RequestList(int count) {
    if (count > kInline) heap_.resize(count);
  }
  Request*& operator[](int i) { return heap_.empty() ? inline_[i] : heap_[i]; }

 private:
  static constexpr int kInline = 16;
  Request* inline_[kInline];
  std::vector<Request*> heap_;
};

// Looks up every non-null handle; *bad = index of the first that is not a request, or -1.
void LookupAll(int count, const MPI_Request reqs[], RequestList* out, int* bad) {
  *bad = -1;
  for (int i = 0; i < count; ++i) {
    (*out)[i] = reqs[i] == MPI_REQUEST_NULL ? nullptr : LookupRequest(reqs[i]);
    if ((*out)[i] == nullptr && reqs[i] != MPI_REQUEST_NULL && *bad < 0) *bad = i;
  }
}

}  // namespace

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
// A request that is one core request and nothing else (no send half, not a persistent
// collective): Wait and Test complete it through the core's call directly, not WaitOne/TestOne.
inline bool PlainCore(const Request* r) {
  return r->core != MPIGPU_REQUEST_NULL && !r->sendrecv && !r->pcoll;
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

extern "C" int PMPI_Testany(int count, MPI_Request requests[], int* index, int* flag,
                            MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  if (count < 0 || index == nullptr || flag == nullptr || (count > 0 && requests == nullptr))
    return mpigpu::mpi::FailWith("MPI_Testany", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "negative count or null pointer");
  mpigpu::mpi::RequestList rs(count);
  int bad;
  mpigpu::mpi::LookupAll(count, requests, &rs, &bad);
  if (bad >= 0) return mpigpu::mpi::BadRequest("MPI_Testany", requests[bad]);
  bool any = false;
  for (int i = 0; i < count; ++i) {
    Request* r = rs[i];
    if (!mpigpu::mpi::Active(r)) continue;
    any = true;
    int f = 0;
    const MPI_Comm comm = r->comm;
    const int rc = mpigpu::mpi::TestOne(r, &f, status);
    if (f) {
      mpigpu::mpi::Retire(&requests[i], r);
      *index = i;
      *flag = 1;
      return Done("MPI_Testany", comm, rc);
    }
  }
  *index = MPI_UNDEFINED;
  *flag = any ? 0 : 1;
  if (!any) mpigpu::mpi::EmptyStatus(status);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Testany)

extern "C" int PMPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  mpigpu::mpi::KeepStatusError keep(status);
  if (count < 0 || index == nullptr || (count > 0 && requests == nullptr))
    return mpigpu::mpi::FailWith("MPI_Waitany", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "negative count or null pointer");
  for (long round = 0;; ++round) {
    int flag = 0;
    const int rc = PMPI_Testany(count, requests, index, &flag, status);
    if (rc != MPI_SUCCESS || flag) return rc;
    mpigpu::mpi::PollPause(round);
  }
}
MPIGPU_MPI_ALIAS(Waitany)

// Statuses of a multiple completion: each gets its own MPI_ERROR; a failure makes the call
// return MPI_ERR_IN_STATUS.
extern "C" int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  if (count < 0 || (count > 0 && requests == nullptr))
    return mpigpu::mpi::FailWith("MPI_Waitall", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "negative count or null requests");
  mpigpu::mpi::RequestList rs(count);
  int bad;
  mpigpu::mpi::LookupAll(count, requests, &rs, &bad);
  if (bad >= 0) return mpigpu::mpi::BadRequest("MPI_Waitall", requests[bad]);
  int failed = MPI_SUCCESS;
  MPI_Comm fcomm = MPI_COMM_WORLD;
  for (int i = 0; i < count; ++i) {
    MPI_Status tmp;
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? &tmp : &statuses[i];
    Request* r = rs[i];
    if (r == nullptr) {
      mpigpu::mpi::EmptyStatus(st);
      continue;
    }
    const MPI_Comm comm = r->comm;
    const int rc = mpigpu::mpi::PlainCore(r) ? MPIGPU_Wait(&r->core, mpigpu::mpi::Core(st))
                                             : mpigpu::mpi::WaitOne(r, st);
    st->MPI_ERROR = rc;
    mpigpu::mpi::Retire(&requests[i], r);
    if (rc != MPI_SUCCESS && failed == MPI_SUCCESS) {
      failed = rc;
      fcomm = comm;
    }
  }
  if (failed == MPI_SUCCESS) return MPI_SUCCESS;
  return mpigpu::mpi::Fail("MPI_Waitall", fcomm,
                           statuses == MPI_STATUSES_IGNORE ? failed : MPI_ERR_IN_STATUS);
}
MPIGPU_MPI_ALIAS(Waitall)

extern "C" int PMPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
  if (count < 0 || flag == nullptr || (count > 0 && requests == nullptr))
    return mpigpu::mpi::FailWith("MPI_Testall", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "negative count or null pointer");
  mpigpu::mpi::RequestList rs(count);
  int bad;
  mpigpu::mpi::LookupAll(count, requests, &rs, &bad);
  if (bad >= 0) return mpigpu::mpi::BadRequest("MPI_Testall", requests[bad]);
  // The core's Testall completes its requests all or none; those not on the core are done,
  // but for generalized requests not completed yet.
  for (int i = 0; i < count; ++i) {
    int src = MPI_SUCCESS;
    if (rs[i] && ((rs[i]->greq && !rs[i]->greq_complete.load(std::memory_order_acquire)) ||
                  !mpigpu::mpi::SendHalfDone(rs[i], &src))) {
      *flag = 0;
      return MPI_SUCCESS;
    }
  }
  std::vector<MPIGPU_Request> core(count, MPIGPU_REQUEST_NULL);
  for (int i = 0; i < count; ++i)
    if (rs[i]) core[i] = rs[i]->core;
  std::vector<MPI_Status> st(count);
  int f = 0;
  int rc = MPIGPU_Testall(count, core.data(), &f, reinterpret_cast<MPIGPU_Status*>(st.data()));
  *flag = f;
  if (!f) return Done("MPI_Testall", MPI_COMM_WORLD, rc);  // nothing completed
  int failed = MPI_SUCCESS;
  MPI_Comm fcomm = MPI_COMM_WORLD;
  for (int i = 0; i < count; ++i) {
    Request* r = rs[i];
    if (r == nullptr) {
      mpigpu::mpi::EmptyStatus(&st[i]);
    } else {
      if (r->core != MPIGPU_REQUEST_NULL) {
        // Null once the core completed it (a persistent collective's stays valid: all were
        // completed when f is set).
        r->core = r->pcoll ? MPIGPU_REQUEST_NULL : core[i];
        if (r->core != MPIGPU_REQUEST_NULL) continue;  // left active (the call failed)
        const int rrc = mpigpu::mpi::FinishReplace(r, st[i].MPI_ERROR, &st[i]);
        st[i].MPI_ERROR = rrc;
      } else {
        int one = 0;
        st[i].MPI_ERROR = mpigpu::mpi::TestOne(r, &one, &st[i]);
      }
      if (st[i].MPI_ERROR != MPI_SUCCESS && failed == MPI_SUCCESS) {
        failed = st[i].MPI_ERROR;
        fcomm = r->comm;
      }
      mpigpu::mpi::Retire(&requests[i], r);
    }
    if (statuses != MPI_STATUSES_IGNORE) statuses[i] = st[i];
  }
  *flag = 1;
  if (failed == MPI_SUCCESS && rc != MPI_SUCCESS) failed = rc;
  if (failed == MPI_SUCCESS) return MPI_SUCCESS;
  return mpigpu::mpi::Fail("MPI_Testall", fcomm,
                           statuses == MPI_STATUSES_IGNORE ? failed : MPI_ERR_IN_STATUS);
}
MPIGPU_MPI_ALIAS(Testall)

extern "C" int PMPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                             MPI_Status statuses[]) {
  if (incount < 0 || outcount == nullptr || (incount > 0 && (requests == nullptr || indices == nullptr)))
    return mpigpu::mpi::FailWith("MPI_Testsome", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "negative count or null pointer");
  mpigpu::mpi::RequestList rs(incount);
  int bad;
  mpigpu::mpi::LookupAll(incount, requests, &rs, &bad);
  if (bad >= 0) return mpigpu::mpi::BadRequest("MPI_Testsome", requests[bad]);
  int n = 0;
  bool any = false;
  int failed = MPI_SUCCESS;
  MPI_Comm fcomm = MPI_COMM_WORLD;
  for (int i = 0; i < incount; ++i) {
    Request* r = rs[i];
    if (!mpigpu::mpi::Active(r)) continue;
    any = true;
    MPI_Status tmp;
    MPI_Status* st = statuses == MPI_STATUSES_IGNORE ? &tmp : &statuses[n];
    int f = 0;
    const MPI_Comm comm = r->comm;
    const int rc = mpigpu::mpi::TestOne(r, &f, st);
    if (!f) continue;
    st->MPI_ERROR = rc;
    mpigpu::mpi::Retire(&requests[i], r);
    indices[n++] = i;
    if (rc != MPI_SUCCESS && failed == MPI_SUCCESS) {
      failed = rc;
      fcomm = comm;
    }
  }
  *outcount = any ? n : MPI_UNDEFINED;
  if (failed == MPI_SUCCESS) return MPI_SUCCESS;
  return mpigpu::mpi::Fail("MPI_Testsome", fcomm,
                           statuses == MPI_STATUSES_IGNORE ? failed : MPI_ERR_IN_STATUS);
}
MPIGPU_MPI_ALIAS(Testsome)

extern "C" int PMPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[],
                             MPI_Status statuses[]) {
  for (long round = 0;; ++round) {
    const int rc = PMPI_Testsome(incount, requests, outcount, indices, statuses);
    if (rc != MPI_SUCCESS || outcount == nullptr || *outcount != 0) return rc;
    mpigpu::mpi::PollPause(round);
  }
}
MPIGPU_MPI_ALIAS(Waitsome)

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

extern "C" int PMPI_Request_free(MPI_Request* request) {
  if (request == nullptr || *request == MPI_REQUEST_NULL)
    return mpigpu::mpi::FailWith("MPI_Request_free", MPI_COMM_WORLD, MPI_ERR_REQUEST,
                                 "null request");
  Request* r = mpigpu::mpi::LookupRequest(*request);
  if (r == nullptr) return mpigpu::mpi::BadRequest("MPI_Request_free", *request);
  int rc = MPI_SUCCESS;
  const MPI_Comm comm = r->comm;
  if (r->pcoll) rc = MPIGPU_Request_free(&r->pcore);  // active or not; the core finishes it
  else if (r->bsend_claimed) mpigpu::mpi::UnclaimBuffered(r);  // the attached buffer's care again
  else if (r->core != MPIGPU_REQUEST_NULL) rc = MPIGPU_Request_free(&r->core);  // completes on its own
  mpigpu::mpi::FreeRequest(*request);
  *request = MPI_REQUEST_NULL;
  return Done("MPI_Request_free", comm, rc);
}
MPIGPU_MPI_ALIAS(Request_free)

// A receive no message has matched yet is withdrawn (its status says cancelled); a send's
// message is taken back if its receiver has not matched it yet (the core asks the receiver;
// see MPIGPU_Cancel), a buffered send's too; matched ones complete normally (MPI allows a
// cancel to fail: Test_cancelled says false).
extern "C" int PMPI_Cancel(MPI_Request* request) {
  if (request == nullptr || *request == MPI_REQUEST_NULL)
    return mpigpu::mpi::FailWith("MPI_Cancel", MPI_COMM_WORLD, MPI_ERR_REQUEST, "null request");
  Request* r = mpigpu::mpi::LookupRequest(*request);
  if (r == nullptr) return mpigpu::mpi::BadRequest("MPI_Cancel", *request);
  if (r->greq) {
    const int rc = r->cancel_fn(r->extra_state, r->greq_complete.load(std::memory_order_acquire));
    return Done("MPI_Cancel", r->comm, rc);
  }
  // A buffered send completed when it was copied: its core send, out of the attached buffer,
  // becomes this request's, so that Wait reports how the cancel ended.
  if (r->core == MPIGPU_REQUEST_NULL && r->bsend_core != MPIGPU_REQUEST_NULL && r->done)
    (void)mpigpu::mpi::ClaimBuffered(r);
  if (r->core == MPIGPU_REQUEST_NULL || r->pcoll) return MPI_SUCCESS;  // completes normally
  return Done("MPI_Cancel", r->comm, MPIGPU_Cancel(&r->core));
}
MPIGPU_MPI_ALIAS(Cancel)

extern "C" int PMPI_Start(MPI_Request* request) {
  if (request == nullptr)
    return mpigpu::mpi::FailWith("MPI_Start", MPI_COMM_WORLD, MPI_ERR_ARG, "null request pointer");
  Request* r = mpigpu::mpi::LookupRequest(*request);
  if (r == nullptr || !r->persistent)
    return mpigpu::mpi::FailWith("MPI_Start", MPI_COMM_WORLD, MPI_ERR_REQUEST,
                                 "not a persistent request");
  if (r->active)
    return mpigpu::mpi::FailWith("MPI_Start", r->comm, MPI_ERR_REQUEST,
                                 "persistent request is already active");
  return Done("MPI_Start", r->comm, mpigpu::mpi::StartPersistent(r));
}
MPIGPU_MPI_ALIAS(Start)

extern "C" int PMPI_Startall(int count, MPI_Request requests[]) {
  if (count < 0 || (count > 0 && requests == nullptr))
    return mpigpu::mpi::FailWith("MPI_Startall", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "negative count or null requests");
  for (int i = 0; i < count; ++i)
    if (int rc = PMPI_Start(&requests[i]); rc != MPI_SUCCESS) return rc;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Startall)

// Buffered sends: MPI_Buffer_attach/detach and the copies MPI_Bsend makes into the attached
// buffer. Each send takes its packed size plus MPI_BSEND_OVERHEAD bytes of the buffer (first
// fit among the sends still in flight); the space comes back when its core send completes
// (checked at each new Bsend and at detach). MPI_Cancel of an Ibsend claims its core send
// (ClaimBuffered): the request's Wait then completes and frees it, and gives the space back.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <mutex>
#include <vector>

#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {
namespace {

struct Pending {
  size_t off = 0;
  size_t len = 0;  // with the overhead
  MPIGPU_Request req = MPIGPU_REQUEST_NULL;
  Request* from = nullptr;     // the Ibsend request it completed at once (null: Bsend)
  Request* claimed = nullptr;  // the Ibsend request that completes it (ClaimBuffered): Reap leaves it
};
struct Attached {
  std::mutex mu;
  unsigned char* base = nullptr;
  size_t size = 0;
  bool attached = false;
  std::vector<Pending> pending;  // by offset
};
Attached& A() {
  static Attached* a = new Attached;
  return *a;
}

// Drops the sends that completed (caller holds a.mu). Returns the first failure.
int Reap(Attached& a) {
  int first = MPI_SUCCESS;
  for (size_t i = 0; i < a.pending.size();) {
    if (a.pending[i].claimed) {
      ++i;
      continue;
    }
    int flag = 0;
    const int rc = MPIGPU_Test(&a.pending[i].req, &flag, MPIGPU_STATUS_IGNORE);
    if (rc != MPI_SUCCESS && first == MPI_SUCCESS) first = rc;
    if (flag || rc != MPI_SUCCESS) {
      a.pending.erase(a.pending.begin() + static_cast<long>(i));
    } else {
      ++i;
    }
  }
  return first;
}

// First fit of `len` bytes among the pending sends (caller holds a.mu); SIZE_MAX if none.
size_t Fit(const Attached& a, size_t len) {
  size_t at = 0;
  for (const Pending& p : a.pending) {
    if (p.off >= at + len) return at;
    at = std::max(at, p.off + p.len);
  }
  return a.size >= at + len ? at : SIZE_MAX;
}

// Waits for every buffered send. A claimed one is completed into its request, as
// MPI_Request_get_status does (the request's Wait then returns the status kept there).
int WaitAll(Attached& a) {
  int first = MPI_SUCCESS;
  for (Pending& p : a.pending) {
    int rc;
    if (Request* r = p.claimed) {
      MPI_Status st;
      rc = MPIGPU_Wait(&r->core, reinterpret_cast<MPIGPU_Status*>(&st));
      st.MPI_ERROR = rc;
      r->status = st;
      r->done = true;
      r->bsend_claimed = false;  // its space is given back here
    } else {
      rc = MPIGPU_Wait(&p.req, MPIGPU_STATUS_IGNORE);
    }
    if (rc != MPI_SUCCESS && first == MPI_SUCCESS) first = rc;
  }
  a.pending.clear();
  return first;
}

// r's buffered send, claimed by `by` (null: not claimed). Handles are recycled, and so are
// requests, but a live core handle is unique: with r both name one send.
Pending* FindClaimed(Attached& a, const Request* r, const Request* by) {
  for (Pending& p : a.pending)
    if (p.from == r && p.req == r->bsend_core && p.claimed == by) return &p;
  return nullptr;
}

}  // namespace

bool ClaimBuffered(Request* r) {
  Attached& a = A();
  std::lock_guard<std::mutex> g(a.mu);
  // No Reap first: an eager send completes at once, yet its message can still be taken back.
  // One a later Bsend or detach reaped is gone: too late to cancel.
  Pending* p = FindClaimed(a, r, nullptr);
  if (p == nullptr) return false;
  p->claimed = r;
  r->core = r->bsend_core;
  r->bsend_claimed = true;
  r->done = false;
  return true;
}

void ReleaseClaimed(Request* r) {
  Attached& a = A();
  std::lock_guard<std::mutex> g(a.mu);
  for (size_t i = 0; i < a.pending.size(); ++i)
    if (a.pending[i].claimed == r) {
      a.pending.erase(a.pending.begin() + static_cast<long>(i));
      break;
    }
  r->bsend_claimed = false;
}

void UnclaimBuffered(Request* r) {
  Attached& a = A();
  std::lock_guard<std::mutex> g(a.mu);
  if (Pending* p = FindClaimed(a, r, r)) p->claimed = nullptr;
  r->core = MPIGPU_REQUEST_NULL;
  r->bsend_claimed = false;
}

int BufferedSend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                 Request* from) {
  if (from != nullptr) from->bsend_core = MPIGPU_REQUEST_NULL;
  int size = 0;
  if (count < 0) return Detail(MPI_ERR_COUNT, "negative count");
  if (int rc = MPIGPU_Type_size(type, &size); rc != MPI_SUCCESS) return rc;
  if (dest == MPI_PROC_NULL) return MPIGPU_Send(buf, MPIGPU_BUF_HOST, 0, type, dest, tag, comm);
  const long long bytes = static_cast<long long>(size) * count;
  if (bytes > INT_MAX) return Detail(MPI_ERR_COUNT, "message too long");
  Attached& a = A();
  std::lock_guard<std::mutex> g(a.mu);
  (void)Reap(a);
  const size_t len = static_cast<size_t>(bytes) + MPI_BSEND_OVERHEAD;
  const size_t off = a.attached ? Fit(a, len) : SIZE_MAX;
  if (off == SIZE_MAX) {
    return Detail(MPI_ERR_BUFFER,
                    a.attached ? "the attached buffer has no room for this message "
                                 "(attach a larger one with MPI_Buffer_attach)"
                               : "no buffer attached (MPI_Buffer_attach)");
  }
  unsigned char* dst = a.base + off;
  size_t moved = 0;
  if (int rc = LocalCopy(buf, count, type, dst, static_cast<int>(bytes), MPI_BYTE, &moved);
      rc != MPI_SUCCESS)
    return rc;
  Pending p;
  p.from = from;
  p.off = off;
  p.len = len;
  if (int rc = MPIGPU_Isend(dst, MPIGPU_BUF_HOST, static_cast<int>(bytes), MPI_BYTE, dest, tag,
                            comm, &p.req);
      rc != MPI_SUCCESS)
    return rc;
  a.pending.insert(std::upper_bound(a.pending.begin(), a.pending.end(), p,
                                    [](const Pending& x, const Pending& y) { return x.off < y.off; }),
                   p);
  if (from != nullptr) from->bsend_core = p.req;
  return MPI_SUCCESS;
}

int DetachBufferForFinalize() {
  Attached& a = A();
  std::lock_guard<std::mutex> g(a.mu);
  return WaitAll(a);
}

}  // namespace mpigpu::mpi

extern "C" int PMPI_Buffer_attach(void* buffer, int size) {
  using mpigpu::mpi::FailWith;
  if (size < 0 || (buffer == nullptr && size > 0))
    return FailWith("MPI_Buffer_attach", MPI_COMM_WORLD, MPI_ERR_ARG,
                    "negative size or null buffer");
  auto& a = mpigpu::mpi::A();
  std::lock_guard<std::mutex> g(a.mu);
  if (a.attached)
    return FailWith("MPI_Buffer_attach", MPI_COMM_WORLD, MPI_ERR_BUFFER,
                    "a buffer is attached already (MPI_Buffer_detach it first)");
  a.base = static_cast<unsigned char*>(buffer);
  a.size = static_cast<size_t>(size);
  a.attached = true;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Buffer_attach)

// Waits for the buffered sends, then gives the buffer back (*(void**)buffer_addr, *size).
extern "C" int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  if (buffer_addr == nullptr || size == nullptr)
    return mpigpu::mpi::FailWith("MPI_Buffer_detach", MPI_COMM_WORLD, MPI_ERR_ARG, "null pointer");
  auto& a = mpigpu::mpi::A();
  std::lock_guard<std::mutex> g(a.mu);
  const int rc = mpigpu::mpi::WaitAll(a);
  *static_cast<void**>(buffer_addr) = a.attached ? a.base : nullptr;
  *size = a.attached ? static_cast<int>(a.size) : 0;
  a.base = nullptr;
  a.size = 0;
  a.attached = false;
  return mpigpu::mpi::Done("MPI_Buffer_detach", MPI_COMM_WORLD, rc);
}
MPIGPU_MPI_ALIAS(Buffer_detach)

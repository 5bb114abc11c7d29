// Completion of arrays of requests: MPI_Waitany/Testany, Waitall/Testall, Waitsome/Testsome,
// over one request's completion (mpi_requests.cc). Statuses of a multiple completion: each gets
// its own MPI_ERROR; a failure makes the call return MPI_ERR_IN_STATUS.
#include <atomic>
#include <vector>

#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {
namespace {

// A request that counts for any/some: live and, if persistent, active.
bool Active(const Request* r) { return r != nullptr && (!r->persistent || r->active); }

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
}  // namespace mpigpu::mpi

using mpigpu::mpi::Done;
using mpigpu::mpi::Request;

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

// A request's life besides its completion: MPI_Request_free, MPI_Cancel, and MPI_Start/Startall
// of persistent requests (made in mpi_p2p.cc and mpi_coll_persistent.cc).
#include <atomic>

#include "mpi/mpi_internal.h"

using mpigpu::mpi::Done;
using mpigpu::mpi::Request;

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

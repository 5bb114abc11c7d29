// The MPI layer's status queries and settings (Get_count, Get_elements(_x), Test_cancelled,
// Status_set_*), generalized requests (Grequest_start/complete) and the Fortran handle
// conversions of requests.
#include <atomic>
#include <climits>
#include <cstddef>

#include "mpi/mpi_internal.h"
#include "mpigpu_api/errors.h"

using mpigpu::mpi::Done;
using mpigpu::mpi::Request;

extern "C" int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  if (status == nullptr || flag == nullptr)
    return mpigpu::mpi::FailWith("MPI_Test_cancelled", MPI_COMM_WORLD, MPI_ERR_ARG, "null pointer");
  *flag = status->cancelled != 0;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Test_cancelled)

extern "C" int PMPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return Done("MPI_Get_count", MPI_COMM_WORLD,
              MPIGPU_Get_count(reinterpret_cast<const MPIGPU_Status*>(status), datatype, count));
}
MPIGPU_MPI_ALIAS(Get_count)

// Basic elements, partial elements of derived types included (the core walks the type map).
extern "C" int PMPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  return Done("MPI_Get_elements", MPI_COMM_WORLD,
              MPIGPU_Get_elements(reinterpret_cast<const MPIGPU_Status*>(status), datatype, count));
}
MPIGPU_MPI_ALIAS(Get_elements)

extern "C" int PMPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype,
                                   MPI_Count* count) {
  return Done("MPI_Get_elements_x", MPI_COMM_WORLD,
              MPIGPU_Get_elements_x(reinterpret_cast<const MPIGPU_Status*>(status), datatype,
                                    count));
}
MPIGPU_MPI_ALIAS(Get_elements_x)

extern "C" int PMPI_Status_set_elements_x(MPI_Status* status, MPI_Datatype datatype,
                                          MPI_Count count) {
  int size = 0;
  if (status == nullptr || count < 0)
    return mpigpu::mpi::FailWith("MPI_Status_set_elements", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "null status or negative count");
  if (int rc = MPIGPU_Type_size(datatype, &size); rc != MPI_SUCCESS)
    return Done("MPI_Status_set_elements", MPI_COMM_WORLD, rc);
  status->count_bytes = static_cast<size_t>(count) * static_cast<size_t>(size);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Status_set_elements_x)

extern "C" int PMPI_Status_set_elements(MPI_Status* status, MPI_Datatype datatype, int count) {
  return PMPI_Status_set_elements_x(status, datatype, count);
}
MPIGPU_MPI_ALIAS(Status_set_elements)

extern "C" int PMPI_Status_set_cancelled(MPI_Status* status, int flag) {
  if (status == nullptr)
    return mpigpu::mpi::FailWith("MPI_Status_set_cancelled", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "null status");
  status->cancelled = flag != 0;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Status_set_cancelled)

extern "C" int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn,
                                   MPI_Grequest_free_function* free_fn,
                                   MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                                   MPI_Request* request) {
  if (query_fn == nullptr || free_fn == nullptr || cancel_fn == nullptr || request == nullptr)
    return mpigpu::mpi::FailWith("MPI_Grequest_start", MPI_COMM_WORLD, MPI_ERR_ARG,
                                 "null function or request pointer");
  Request* r = nullptr;
  *request = mpigpu::mpi::NewRequest(&r);
  r->comm = MPI_COMM_WORLD;
  r->greq = true;
  r->query_fn = query_fn;
  r->free_fn = free_fn;
  r->cancel_fn = cancel_fn;
  r->extra_state = extra_state;
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Grequest_start)

extern "C" int PMPI_Grequest_complete(MPI_Request request) {
  Request* r = mpigpu::mpi::LookupRequest(request);
  if (r == nullptr || !r->greq)
    return mpigpu::mpi::FailWith("MPI_Grequest_complete", MPI_COMM_WORLD, MPI_ERR_REQUEST,
                                 "not a generalized request");
  r->greq_complete.store(true, std::memory_order_release);
  return MPI_SUCCESS;
}
MPIGPU_MPI_ALIAS(Grequest_complete)

extern "C" MPI_Fint PMPI_Request_c2f(MPI_Request request) { return request; }
MPIGPU_MPI_ALIAS(Request_c2f)
extern "C" MPI_Request PMPI_Request_f2c(MPI_Fint request) { return request; }
MPIGPU_MPI_ALIAS(Request_f2c)

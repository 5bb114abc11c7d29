// What every virtual topology shares: the topology cached on a communicator (CommData::topo)
// and the communicator a new one gets, MPIGPU_Topo_test. Cartesian grids: topo_cart.cc; graphs
// and distributed graphs: topo_graph.cc. A topology's communicator is a split of the old one that
// keeps rank order (reorder is accepted and ignored), so topology ranks equal the old ranks.
#include <memory>
#include <string>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {

int NullArg(const char* what) { return SetLastError(MPIGPU_ERR_ARG, std::string("null ") + what); }

// The topology of `comm` (kind `kind`, or any when MPIGPU_UNDEFINED), or null (detail recorded,
// class in *rc).
std::shared_ptr<const Topology> TopoOf(MPIGPU_Comm comm, int kind, int* rc, CommPtr* cp) {
  *rc = CheckActive();
  if (*rc != MPIGPU_SUCCESS) return nullptr;
  CommPtr c = LookupComm(comm);
  if (!c) {
    *rc = MPIGPU_ERR_COMM;
    return nullptr;
  }
  if (cp) *cp = c;
  if (!c->topo || (kind != MPIGPU_UNDEFINED && c->topo->kind != kind)) {
    *rc = SetLastError(MPIGPU_ERR_TOPOLOGY,
                       kind == MPIGPU_CART    ? "communicator has no Cartesian topology"
                       : kind == MPIGPU_GRAPH ? "communicator has no graph topology"
                       : kind == MPIGPU_DIST_GRAPH
                           ? "communicator has no distributed graph topology"
                           : "communicator has no topology");
    return nullptr;
  }
  return c->topo;
}

// Makes the topology's communicator: ranks below `n` of comm, in order.
int MakeTopoComm(Lock& lk, MPIGPU_Comm comm, int n, std::shared_ptr<const Topology> topo,
                 MPIGPU_Comm* newcomm) {
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (c->inter) return SetLastError(MPIGPU_ERR_COMM, "topologies need an intracommunicator");
  if (n > c->size())
    return SetLastError(MPIGPU_ERR_ARG, "the topology has " + std::to_string(n) +
                                            " processes; the communicator only " +
                                            std::to_string(c->size()));
  CommPtr made;
  const int color = c->rank < n ? 0 : MPIGPU_UNDEFINED;
  if (int rc = SplitComm(lk, comm, color, c->rank, newcomm, &made); rc != MPIGPU_SUCCESS)
    return rc;
  if (made) made->topo = std::move(topo);
  return MPIGPU_SUCCESS;
}

namespace {

int DoTopoTest(MPIGPU_Comm comm, int* status) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (status == nullptr) return NullArg("status");
  *status = c->topo ? c->topo->kind : MPIGPU_UNDEFINED;
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
namespace api = mpigpu::api;

extern "C" int MPIGPU_Topo_test(MPIGPU_Comm comm, int* status) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Topo_test", comm, api::DoTopoTest(comm, status));
}

// Communicators: rank/size, dup, split, free and error handlers.
//
// A new communicator's two context ids are agreed on by the members of its parent: each brings
// the lowest id it has not used, the largest wins, and every member of the parent moves past it.
// Any communicator a member belongs to uses ids below that member's next free id, so the new
// ids are unused by everyone who could ever exchange messages on them. Split gives every color
// the same ids: their groups are disjoint, so their messages cannot meet.
#include <algorithm>
#include <climits>
#include <string>
#include <tuple>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

int DoRankOrSize(MPIGPU_Comm comm, int* out, bool rank) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (out == nullptr) return SetLastError(MPIGPU_ERR_ARG, rank ? "null rank" : "null size");
  *out = rank ? c->rank : c->size();
  return MPIGPU_SUCCESS;
}

int DoSplit(Lock& lk, MPIGPU_Comm comm, int color, int key, MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr parent = LookupComm(comm);
  if (!parent) return MPIGPU_ERR_COMM;
  if (newcomm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null newcomm");
  if (color < 0 && color != MPIGPU_UNDEFINED)
    return SetLastError(MPIGPU_ERR_ARG, "color " + std::to_string(color) +
                                            " is negative (and not MPIGPU_UNDEFINED)");
  State& s = GetState();
  std::vector<int> all;
  if (int rc = AllgatherInts(lk, parent, {color, key, s.next_context}, &all);
      rc != MPIGPU_SUCCESS)
    return rc;
  const int n = parent->size();
  int ctx = 0;
  for (int r = 0; r < n; ++r) ctx = std::max(ctx, all[3 * r + 2]);
  if (ctx > INT_MAX - 2) return SetLastError(MPIGPU_ERR_INTERN, "out of context ids");
  s.next_context = ctx + 2;
  *newcomm = MPIGPU_COMM_NULL;
  if (color == MPIGPU_UNDEFINED) return MPIGPU_SUCCESS;

  // Members of this color, ordered by key, then by rank in the parent.
  std::vector<std::pair<int, int>> members;  // (key, parent rank)
  for (int r = 0; r < n; ++r)
    if (all[3 * r] == color) members.emplace_back(all[3 * r + 1], r);
  std::sort(members.begin(), members.end());
  auto c = std::make_shared<CommData>();
  c->from_world.assign(parent->from_world.size(), -1);
  for (const auto& [k, r] : members) {
    const int world = parent->group[r];
    if (r == parent->rank) c->rank = c->size();
    c->from_world[world] = c->size();
    c->group.push_back(world);
  }
  c->ctx_p2p = ctx;
  c->ctx_coll = ctx + 1;
  c->errhandler = parent->errhandler;  // a new communicator inherits its parent's handler
  DeclareContexts(*c);
  if (s.comms.size() >= static_cast<size_t>(INT_MAX))
    return SetLastError(MPIGPU_ERR_INTERN, "out of communicator handles");
  s.comms.push_back(std::move(c));
  *newcomm = static_cast<MPIGPU_Comm>(s.comms.size() - 1);
  return MPIGPU_SUCCESS;
}

int DoFree(MPIGPU_Comm* comm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (comm == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null comm");
  if (*comm == MPIGPU_COMM_WORLD || *comm == MPIGPU_COMM_SELF)
    return SetLastError(MPIGPU_ERR_COMM, "MPIGPU_COMM_WORLD and MPIGPU_COMM_SELF cannot be freed");
  if (!LookupComm(*comm)) return MPIGPU_ERR_COMM;
  GetState().comms[*comm].reset();  // requests in flight keep their own reference
  *comm = MPIGPU_COMM_NULL;
  return MPIGPU_SUCCESS;
}

// Error handlers work at any time on WORLD and SELF (they exist before MPIGPU_Init), so a
// program can choose ERRORS_RETURN before its first call.
int DoSetErrhandler(MPIGPU_Comm comm, MPIGPU_Errhandler h) {
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  // Handles from 2 up are the MPI layer's user handlers (mpi/): the core returns their errors
  // as with ERRORS_RETURN and the layer calls the function; kept here so new communicators
  // inherit them.
  if (h < 0)
    return SetLastError(MPIGPU_ERR_ARG, "error handler " + std::to_string(h) +
                                            " is not MPIGPU_ERRORS_ARE_FATAL or MPIGPU_ERRORS_RETURN");
  c->errhandler = h;
  return MPIGPU_SUCCESS;
}

int DoGetErrhandler(MPIGPU_Comm comm, MPIGPU_Errhandler* h) {
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (h == nullptr) return SetLastError(MPIGPU_ERR_ARG, "null errhandler");
  *h = c->errhandler;
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;

extern "C" int MPIGPU_Comm_rank(MPIGPU_Comm comm, int* rank) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_rank", comm, mpigpu::api::DoRankOrSize(comm, rank, true));
}

extern "C" int MPIGPU_Comm_size(MPIGPU_Comm comm, int* size) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_size", comm, mpigpu::api::DoRankOrSize(comm, size, false));
}

extern "C" int MPIGPU_Comm_dup(MPIGPU_Comm comm, MPIGPU_Comm* newcomm) {
  Lock lk(GetState().mu);
  // A dup is a split with one color that keeps the order.
  mpigpu::api::CommPtr c = mpigpu::api::LookupComm(comm);
  const int key = c ? c->rank : 0;
  return Finish("MPIGPU_Comm_dup", comm, mpigpu::api::DoSplit(lk, comm, 0, key, newcomm));
}

extern "C" int MPIGPU_Comm_split(MPIGPU_Comm comm, int color, int key, MPIGPU_Comm* newcomm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_split", comm, mpigpu::api::DoSplit(lk, comm, color, key, newcomm));
}

extern "C" int MPIGPU_Comm_free(MPIGPU_Comm* comm) {
  Lock lk(GetState().mu);
  const MPIGPU_Comm handle = comm ? *comm : MPIGPU_COMM_NULL;
  return Finish("MPIGPU_Comm_free", handle, mpigpu::api::DoFree(comm));
}

extern "C" int MPIGPU_Comm_set_errhandler(MPIGPU_Comm comm, MPIGPU_Errhandler errhandler) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_set_errhandler", comm,
                mpigpu::api::DoSetErrhandler(comm, errhandler));
}

extern "C" int MPIGPU_Comm_get_errhandler(MPIGPU_Comm comm, MPIGPU_Errhandler* errhandler) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Comm_get_errhandler", comm,
                mpigpu::api::DoGetErrhandler(comm, errhandler));
}

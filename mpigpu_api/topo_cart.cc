// Cartesian topologies: MPIGPU_Cart_create and its queries, Cart_sub, Cart_map and
// MPIGPU_Dims_create (its factorization: dims_factor.cc). Ranks in row-major order.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

// Product of dims (ndims >= 0, each >= 1), or -1 past INT_MAX.
long long Product(const std::vector<int>& dims) {
  long long p = 1;
  for (int d : dims) {
    p *= d;
    if (p > INT_MAX) return -1;
  }
  return p;
}

int CheckDims(int ndims, const int dims[], const int periods[], bool need_periods) {
  if (ndims < 0) return SetLastError(MPIGPU_ERR_DIMS, "ndims " + std::to_string(ndims) + " < 0");
  if (ndims > 0 && (dims == nullptr || (need_periods && periods == nullptr)))
    return NullArg("dims or periods");
  for (int i = 0; i < ndims; ++i)
    if (dims[i] < 1)
      return SetLastError(MPIGPU_ERR_DIMS, "dims[" + std::to_string(i) + "] = " +
                                               std::to_string(dims[i]) + " < 1");
  return MPIGPU_SUCCESS;
}

// Coordinates of `rank` in the grid `dims` (row-major: the last dimension varies fastest).
std::vector<int> CoordsOf(const std::vector<int>& dims, int rank) {
  std::vector<int> c(dims.size());
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    c[i] = rank % dims[i];
    rank /= dims[i];
  }
  return c;
}

int RankOf(const std::vector<int>& dims, const std::vector<int>& coords) {
  int r = 0;
  for (size_t i = 0; i < dims.size(); ++i) r = r * dims[i] + coords[i];
  return r;
}

int DoCartCreate(Lock& lk, MPIGPU_Comm comm, int ndims, const int dims[], const int periods[],
                 MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (newcomm == nullptr) return NullArg("comm_cart");
  if (int rc = CheckDims(ndims, dims, periods, true); rc != MPIGPU_SUCCESS) return rc;
  auto t = std::make_shared<Topology>();
  t->kind = MPIGPU_CART;
  t->dims.assign(dims, dims + ndims);
  for (int i = 0; i < ndims; ++i) t->periods.push_back(periods[i] != 0);
  const long long n = Product(t->dims);
  if (n < 0) return SetLastError(MPIGPU_ERR_DIMS, "the grid has more than INT_MAX processes");
  return MakeTopoComm(lk, comm, static_cast<int>(n), std::move(t), newcomm);
}

int DoDimsCreate(int nnodes, int ndims, int dims[]) {
  if (nnodes < 1) return SetLastError(MPIGPU_ERR_ARG, "nnodes " + std::to_string(nnodes) + " < 1");
  if (ndims < 0) return SetLastError(MPIGPU_ERR_DIMS, "ndims " + std::to_string(ndims) + " < 0");
  if (ndims > 0 && dims == nullptr) return NullArg("dims");
  long long fixed = 1;
  int free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0)
      return SetLastError(MPIGPU_ERR_DIMS, "dims[" + std::to_string(i) + "] = " +
                                               std::to_string(dims[i]) + " < 0");
    if (dims[i] == 0) {
      ++free_dims;
    } else {
      fixed *= dims[i];
      if (fixed > nnodes) break;
    }
  }
  if (fixed > nnodes || nnodes % fixed != 0 || (free_dims == 0 && fixed != nnodes))
    return SetLastError(MPIGPU_ERR_DIMS, "nnodes " + std::to_string(nnodes) +
                                             " is not a multiple of the fixed dimensions' product");
  const std::vector<int> f = FactorDims(static_cast<int>(nnodes / fixed), free_dims);
  for (int i = 0, j = 0; i < ndims; ++i)
    if (dims[i] == 0) dims[i] = f[j++];
  return MPIGPU_SUCCESS;
}

int DoCartdimGet(MPIGPU_Comm comm, int* ndims) {
  int rc;
  auto t = TopoOf(comm, MPIGPU_CART, &rc);
  if (!t) return rc;
  if (ndims == nullptr) return NullArg("ndims");
  *ndims = static_cast<int>(t->dims.size());
  return MPIGPU_SUCCESS;
}

int DoCartGet(MPIGPU_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  int rc;
  CommPtr c;
  auto t = TopoOf(comm, MPIGPU_CART, &rc, &c);
  if (!t) return rc;
  const int n = static_cast<int>(t->dims.size());
  if (maxdims < n)
    return SetLastError(MPIGPU_ERR_ARG, "maxdims " + std::to_string(maxdims) + " < ndims " +
                                            std::to_string(n));
  if (n > 0 && (dims == nullptr || periods == nullptr || coords == nullptr))
    return NullArg("dims, periods or coords");
  const std::vector<int> me = CoordsOf(t->dims, c->rank);
  for (int i = 0; i < n; ++i) {
    dims[i] = t->dims[i];
    periods[i] = t->periods[i];
    coords[i] = me[i];
  }
  return MPIGPU_SUCCESS;
}

int DoCartRank(MPIGPU_Comm comm, const int coords[], int* rank) {
  int rc;
  auto t = TopoOf(comm, MPIGPU_CART, &rc);
  if (!t) return rc;
  const int n = static_cast<int>(t->dims.size());
  if (rank == nullptr || (n > 0 && coords == nullptr)) return NullArg("coords or rank");
  std::vector<int> c(coords, coords + n);
  for (int i = 0; i < n; ++i) {
    if (t->periods[i]) {
      c[i] %= t->dims[i];
      if (c[i] < 0) c[i] += t->dims[i];
    } else if (c[i] < 0 || c[i] >= t->dims[i]) {
      return SetLastError(MPIGPU_ERR_ARG, "coords[" + std::to_string(i) + "] = " +
                                              std::to_string(c[i]) +
                                              " is outside non-periodic dimension of size " +
                                              std::to_string(t->dims[i]));
    }
  }
  *rank = RankOf(t->dims, c);
  return MPIGPU_SUCCESS;
}

int DoCartCoords(MPIGPU_Comm comm, int rank, int maxdims, int coords[]) {
  int rc;
  CommPtr c;
  auto t = TopoOf(comm, MPIGPU_CART, &rc, &c);
  if (!t) return rc;
  const int n = static_cast<int>(t->dims.size());
  if (rank < 0 || rank >= c->size()) return PeerError(*c, rank);
  if (maxdims < n)
    return SetLastError(MPIGPU_ERR_ARG, "maxdims " + std::to_string(maxdims) + " < ndims " +
                                            std::to_string(n));
  if (n > 0 && coords == nullptr) return NullArg("coords");
  const std::vector<int> v = CoordsOf(t->dims, rank);
  std::copy(v.begin(), v.end(), coords);
  return MPIGPU_SUCCESS;
}

int DoCartShift(MPIGPU_Comm comm, int direction, int disp, int* source, int* dest) {
  int rc;
  CommPtr c;
  auto t = TopoOf(comm, MPIGPU_CART, &rc, &c);
  if (!t) return rc;
  const int n = static_cast<int>(t->dims.size());
  if (source == nullptr || dest == nullptr) return NullArg("rank_source or rank_dest");
  if (direction < 0 || direction >= n)
    return SetLastError(MPIGPU_ERR_ARG, "direction " + std::to_string(direction) +
                                            " outside 0.." + std::to_string(n - 1));
  const std::vector<int> me = CoordsOf(t->dims, c->rank);
  auto neighbour = [&](long long step) {
    std::vector<int> co = me;
    const long long d = t->dims[direction];
    long long x = co[direction] + step;
    if (t->periods[direction]) {
      x %= d;
      if (x < 0) x += d;
    } else if (x < 0 || x >= d) {
      return MPIGPU_PROC_NULL;
    }
    co[direction] = static_cast<int>(x);
    return RankOf(t->dims, co);
  };
  *dest = neighbour(disp);
  *source = neighbour(-static_cast<long long>(disp));
  return MPIGPU_SUCCESS;
}

int DoCartSub(Lock& lk, MPIGPU_Comm comm, const int remain[], MPIGPU_Comm* newcomm) {
  int rc;
  CommPtr c;
  auto t = TopoOf(comm, MPIGPU_CART, &rc, &c);
  if (!t) return rc;
  const int n = static_cast<int>(t->dims.size());
  if (newcomm == nullptr || (n > 0 && remain == nullptr)) return NullArg("remain_dims or newcomm");
  const std::vector<int> me = CoordsOf(t->dims, c->rank);
  // Color: my position in the dropped dimensions; key: my position in the kept ones.
  int color = 0, key = 0;
  auto sub = std::make_shared<Topology>();
  sub->kind = MPIGPU_CART;
  for (int i = 0; i < n; ++i) {
    if (remain[i]) {
      key = key * t->dims[i] + me[i];
      sub->dims.push_back(t->dims[i]);
      sub->periods.push_back(t->periods[i]);
    } else {
      color = color * t->dims[i] + me[i];
    }
  }
  // Keeping no dimension gives a 0-dimensional grid of one process: rank 0's (as MPICH does;
  // the others get MPIGPU_COMM_NULL).
  if (sub->dims.empty() && c->rank != 0) color = MPIGPU_UNDEFINED;
  CommPtr made;
  if (int rc2 = SplitComm(lk, comm, color, key, newcomm, &made); rc2 != MPIGPU_SUCCESS) return rc2;
  if (made) made->topo = std::move(sub);
  return MPIGPU_SUCCESS;
}

int DoCartMap(MPIGPU_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (newrank == nullptr) return NullArg("newrank");
  if (int rc = CheckDims(ndims, dims, periods, false); rc != MPIGPU_SUCCESS) return rc;
  const long long n = Product(std::vector<int>(dims, dims + ndims));
  if (n < 0 || n > c->size())
    return SetLastError(MPIGPU_ERR_ARG, "the grid has more processes than the communicator");
  *newrank = c->rank < n ? c->rank : MPIGPU_UNDEFINED;
  return MPIGPU_SUCCESS;
}

}  // namespace
}  // namespace mpigpu::api

using mpigpu::api::Finish;
using mpigpu::api::GetState;
using mpigpu::api::Lock;
namespace api = mpigpu::api;

extern "C" int MPIGPU_Cart_create(MPIGPU_Comm comm, int ndims, const int dims[],
                                  const int periods[], int reorder, MPIGPU_Comm* comm_cart) {
  (void)reorder;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Cart_create", comm,
                api::DoCartCreate(lk, comm, ndims, dims, periods, comm_cart));
}
extern "C" int MPIGPU_Dims_create(int nnodes, int ndims, int dims[]) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Dims_create", MPIGPU_COMM_NULL, api::DoDimsCreate(nnodes, ndims, dims));
}
extern "C" int MPIGPU_Cartdim_get(MPIGPU_Comm comm, int* ndims) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Cartdim_get", comm, api::DoCartdimGet(comm, ndims));
}
extern "C" int MPIGPU_Cart_get(MPIGPU_Comm comm, int maxdims, int dims[], int periods[],
                               int coords[]) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Cart_get", comm, api::DoCartGet(comm, maxdims, dims, periods, coords));
}
extern "C" int MPIGPU_Cart_rank(MPIGPU_Comm comm, const int coords[], int* rank) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Cart_rank", comm, api::DoCartRank(comm, coords, rank));
}
extern "C" int MPIGPU_Cart_coords(MPIGPU_Comm comm, int rank, int maxdims, int coords[]) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Cart_coords", comm, api::DoCartCoords(comm, rank, maxdims, coords));
}
extern "C" int MPIGPU_Cart_shift(MPIGPU_Comm comm, int direction, int disp, int* rank_source,
                                 int* rank_dest) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Cart_shift", comm,
                api::DoCartShift(comm, direction, disp, rank_source, rank_dest));
}
extern "C" int MPIGPU_Cart_sub(MPIGPU_Comm comm, const int remain_dims[], MPIGPU_Comm* newcomm) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Cart_sub", comm, api::DoCartSub(lk, comm, remain_dims, newcomm));
}
extern "C" int MPIGPU_Cart_map(MPIGPU_Comm comm, int ndims, const int dims[], const int periods[],
                               int* newrank) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Cart_map", comm, api::DoCartMap(comm, ndims, dims, periods, newrank));
}

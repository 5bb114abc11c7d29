// Virtual topologies: Cartesian grids, graphs and distributed graphs cached on communicators
// (CommData::topo), their queries, and MPIGPU_Dims_create. A topology's communicator is a split
// of the old one that keeps rank order (reorder is accepted and ignored), so topology ranks
// equal the old ranks.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

int NullArg(const char* what) { return SetLastError(MPIGPU_ERR_ARG, std::string("null ") + what); }

// The topology of `comm` (kind `kind`, or any when MPIGPU_UNDEFINED), or null (detail recorded,
// class in *rc).
std::shared_ptr<const Topology> TopoOf(MPIGPU_Comm comm, int kind, int* rc, CommPtr* cp = nullptr) {
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

int CheckGraph(int nnodes, const int index[], const int edges[]) {
  if (nnodes < 0) return SetLastError(MPIGPU_ERR_ARG, "nnodes " + std::to_string(nnodes) + " < 0");
  if (nnodes > 0 && index == nullptr) return NullArg("index");
  for (int i = 0; i < nnodes; ++i)
    if (index[i] < (i > 0 ? index[i - 1] : 0))
      return SetLastError(MPIGPU_ERR_ARG, "index[" + std::to_string(i) + "] = " +
                                              std::to_string(index[i]) + " decreases");
  const int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
  if (nedges > 0 && edges == nullptr) return NullArg("edges");
  for (int e = 0; e < nedges; ++e)
    if (edges[e] < 0 || edges[e] >= nnodes)
      return SetLastError(MPIGPU_ERR_ARG, "edges[" + std::to_string(e) + "] = " +
                                              std::to_string(edges[e]) + " is not a node");
  return MPIGPU_SUCCESS;
}

int DoGraphCreate(Lock& lk, MPIGPU_Comm comm, int nnodes, const int index[], const int edges[],
                  MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  if (newcomm == nullptr) return NullArg("comm_graph");
  if (int rc = CheckGraph(nnodes, index, edges); rc != MPIGPU_SUCCESS) return rc;
  auto t = std::make_shared<Topology>();
  t->kind = MPIGPU_GRAPH;
  t->index.assign(index, index + nnodes);
  if (nnodes > 0) t->edges.assign(edges, edges + index[nnodes - 1]);
  return MakeTopoComm(lk, comm, nnodes, std::move(t), newcomm);
}

int DoGraphdimsGet(MPIGPU_Comm comm, int* nnodes, int* nedges) {
  int rc;
  auto t = TopoOf(comm, MPIGPU_GRAPH, &rc);
  if (!t) return rc;
  if (nnodes == nullptr || nedges == nullptr) return NullArg("nnodes or nedges");
  *nnodes = static_cast<int>(t->index.size());
  *nedges = static_cast<int>(t->edges.size());
  return MPIGPU_SUCCESS;
}

int DoGraphGet(MPIGPU_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  int rc;
  auto t = TopoOf(comm, MPIGPU_GRAPH, &rc);
  if (!t) return rc;
  const int ni = std::min<int>(std::max(maxindex, 0), static_cast<int>(t->index.size()));
  const int ne = std::min<int>(std::max(maxedges, 0), static_cast<int>(t->edges.size()));
  if ((ni > 0 && index == nullptr) || (ne > 0 && edges == nullptr)) return NullArg("index or edges");
  std::copy(t->index.begin(), t->index.begin() + ni, index);
  std::copy(t->edges.begin(), t->edges.begin() + ne, edges);
  return MPIGPU_SUCCESS;
}

int GraphNeighbours(MPIGPU_Comm comm, int rank, std::shared_ptr<const Topology>* t, int* begin,
                    int* end) {
  int rc;
  *t = TopoOf(comm, MPIGPU_GRAPH, &rc);
  if (!*t) return rc;
  const int n = static_cast<int>((*t)->index.size());
  if (rank < 0 || rank >= n)
    return SetLastError(MPIGPU_ERR_RANK, "rank " + std::to_string(rank) +
                                             " is not a node of the graph (" + std::to_string(n) +
                                             " nodes)");
  *begin = rank > 0 ? (*t)->index[rank - 1] : 0;
  *end = (*t)->index[rank];
  return MPIGPU_SUCCESS;
}

int DoGraphNeighborsCount(MPIGPU_Comm comm, int rank, int* count) {
  std::shared_ptr<const Topology> t;
  int b, e;
  if (int rc = GraphNeighbours(comm, rank, &t, &b, &e); rc != MPIGPU_SUCCESS) return rc;
  if (count == nullptr) return NullArg("nneighbors");
  *count = e - b;
  return MPIGPU_SUCCESS;
}

int DoGraphNeighbors(MPIGPU_Comm comm, int rank, int max, int out[]) {
  std::shared_ptr<const Topology> t;
  int b, e;
  if (int rc = GraphNeighbours(comm, rank, &t, &b, &e); rc != MPIGPU_SUCCESS) return rc;
  const int n = std::min(std::max(max, 0), e - b);
  if (n > 0 && out == nullptr) return NullArg("neighbors");
  std::copy(t->edges.begin() + b, t->edges.begin() + b + n, out);
  return MPIGPU_SUCCESS;
}

int DoGraphMap(MPIGPU_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (newrank == nullptr) return NullArg("newrank");
  if (int rc = CheckGraph(nnodes, index, edges); rc != MPIGPU_SUCCESS) return rc;
  if (nnodes > c->size())
    return SetLastError(MPIGPU_ERR_ARG, "the graph has more nodes than the communicator");
  *newrank = c->rank < nnodes ? c->rank : MPIGPU_UNDEFINED;
  return MPIGPU_SUCCESS;
}

int DoTopoTest(MPIGPU_Comm comm, int* status) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (status == nullptr) return NullArg("status");
  *status = c->topo ? c->topo->kind : MPIGPU_UNDEFINED;
  return MPIGPU_SUCCESS;
}

bool Unweighted(const int* w) { return w == MPIGPU_UNWEIGHTED; }

int CheckRanks(const char* what, int n, const int ranks[], int size) {
  if (n < 0) return SetLastError(MPIGPU_ERR_ARG, std::string(what) + " degree < 0");
  if (n > 0 && ranks == nullptr) return NullArg(what);
  for (int i = 0; i < n; ++i)
    if (ranks[i] < 0 || ranks[i] >= size)
      return SetLastError(MPIGPU_ERR_RANK, std::string(what) + "[" + std::to_string(i) + "] = " +
                                               std::to_string(ranks[i]) + " is not a rank");
  return MPIGPU_SUCCESS;
}

int DoDistAdjacent(Lock& lk, MPIGPU_Comm comm, int indegree, const int sources[],
                   const int sw[], int outdegree, const int dests[], const int dw[],
                   MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (newcomm == nullptr) return NullArg("comm_dist_graph");
  if (int rc = CheckRanks("sources", indegree, sources, c->size()); rc != MPIGPU_SUCCESS) return rc;
  if (int rc = CheckRanks("destinations", outdegree, dests, c->size()); rc != MPIGPU_SUCCESS)
    return rc;
  auto t = std::make_shared<Topology>();
  t->kind = MPIGPU_DIST_GRAPH;
  t->weighted = !Unweighted(sw) && !Unweighted(dw);
  t->sources.assign(sources, sources + indegree);
  t->destinations.assign(dests, dests + outdegree);
  if (t->weighted) {
    if ((indegree > 0 && (sw == nullptr || sw == MPIGPU_WEIGHTS_EMPTY)) ||
        (outdegree > 0 && (dw == nullptr || dw == MPIGPU_WEIGHTS_EMPTY)))
      return NullArg("weights");
    t->source_weights.assign(sw, sw + indegree);
    t->dest_weights.assign(dw, dw + outdegree);
  }
  return MakeTopoComm(lk, comm, c->size(), std::move(t), newcomm);
}

int DoDistCreate(Lock& lk, MPIGPU_Comm comm, int n, const int sources[], const int degrees[],
                 const int dests[], const int weights[], MPIGPU_Comm* newcomm) {
  if (int rc = CheckActive(); rc != MPIGPU_SUCCESS) return rc;
  CommPtr c = LookupComm(comm);
  if (!c) return MPIGPU_ERR_COMM;
  if (c->inter) return SetLastError(MPIGPU_ERR_COMM, "topologies need an intracommunicator");
  if (newcomm == nullptr) return NullArg("comm_dist_graph");
  if (int rc = CheckRanks("sources", n, sources, c->size()); rc != MPIGPU_SUCCESS) return rc;
  if (n > 0 && degrees == nullptr) return NullArg("degrees");
  // My edges as (source, destination, weight).
  std::vector<int> mine;
  const bool weighted = !Unweighted(weights);
  for (int i = 0, e = 0; i < n; ++i) {
    if (degrees[i] < 0) return SetLastError(MPIGPU_ERR_ARG, "degrees[i] < 0");
    if (int rc = CheckRanks("destinations", degrees[i], dests + e, c->size());
        rc != MPIGPU_SUCCESS)
      return rc;
    for (int j = 0; j < degrees[i]; ++j, ++e) {
      const bool has_w = weighted && weights != MPIGPU_WEIGHTS_EMPTY && weights != nullptr;
      mine.insert(mine.end(), {sources[i], dests[e], has_w ? weights[e] : 1});
    }
  }
  // Everyone's edges: the counts first, then the lists padded to the longest.
  std::vector<int> counts, all;
  if (int rc = AllgatherInts(lk, c, {static_cast<int>(mine.size()), weighted ? 1 : 0}, &counts);
      rc != MPIGPU_SUCCESS)
    return rc;
  int longest = 0;
  bool any_weighted = false;
  for (int r = 0; r < c->size(); ++r) {
    longest = std::max(longest, counts[2 * r]);
    any_weighted |= counts[2 * r + 1] != 0;
  }
  std::vector<int> padded = mine;
  padded.resize(longest, 0);
  if (longest > 0)
    if (int rc = AllgatherInts(lk, c, padded, &all); rc != MPIGPU_SUCCESS) return rc;
  auto t = std::make_shared<Topology>();
  t->kind = MPIGPU_DIST_GRAPH;
  t->weighted = any_weighted;
  for (int r = 0; r < c->size(); ++r)
    for (int e = 0; e < counts[2 * r]; e += 3) {
      const int* edge = &all[static_cast<size_t>(r) * longest + e];
      if (edge[0] == c->rank) {
        t->destinations.push_back(edge[1]);
        t->dest_weights.push_back(edge[2]);
      }
      if (edge[1] == c->rank) {
        t->sources.push_back(edge[0]);
        t->source_weights.push_back(edge[2]);
      }
    }
  return MakeTopoComm(lk, comm, c->size(), std::move(t), newcomm);
}

int DoDistCount(MPIGPU_Comm comm, int* indegree, int* outdegree, int* weighted) {
  int rc;
  auto t = TopoOf(comm, MPIGPU_DIST_GRAPH, &rc);
  if (!t) return rc;
  if (indegree == nullptr || outdegree == nullptr || weighted == nullptr)
    return NullArg("indegree, outdegree or weighted");
  *indegree = static_cast<int>(t->sources.size());
  *outdegree = static_cast<int>(t->destinations.size());
  *weighted = t->weighted;
  return MPIGPU_SUCCESS;
}

int DoDistNeighbors(MPIGPU_Comm comm, int maxin, int sources[], int sw[], int maxout,
                    int dests[], int dw[]) {
  int rc;
  auto t = TopoOf(comm, MPIGPU_DIST_GRAPH, &rc);
  if (!t) return rc;
  const int ni = std::min(std::max(maxin, 0), static_cast<int>(t->sources.size()));
  const int no = std::min(std::max(maxout, 0), static_cast<int>(t->destinations.size()));
  if ((ni > 0 && sources == nullptr) || (no > 0 && dests == nullptr))
    return NullArg("sources or destinations");
  std::copy(t->sources.begin(), t->sources.begin() + ni, sources);
  std::copy(t->destinations.begin(), t->destinations.begin() + no, dests);
  if (t->weighted) {
    if (ni > 0 && sw != nullptr && !Unweighted(sw) && sw != MPIGPU_WEIGHTS_EMPTY)
      std::copy(t->source_weights.begin(), t->source_weights.begin() + ni, sw);
    if (no > 0 && dw != nullptr && !Unweighted(dw) && dw != MPIGPU_WEIGHTS_EMPTY)
      std::copy(t->dest_weights.begin(), t->dest_weights.begin() + no, dw);
  }
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
extern "C" int MPIGPU_Graph_create(MPIGPU_Comm comm, int nnodes, const int index[],
                                   const int edges[], int reorder, MPIGPU_Comm* comm_graph) {
  (void)reorder;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Graph_create", comm,
                api::DoGraphCreate(lk, comm, nnodes, index, edges, comm_graph));
}
extern "C" int MPIGPU_Graphdims_get(MPIGPU_Comm comm, int* nnodes, int* nedges) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Graphdims_get", comm, api::DoGraphdimsGet(comm, nnodes, nedges));
}
extern "C" int MPIGPU_Graph_get(MPIGPU_Comm comm, int maxindex, int maxedges, int index[],
                                int edges[]) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Graph_get", comm, api::DoGraphGet(comm, maxindex, maxedges, index, edges));
}
extern "C" int MPIGPU_Graph_neighbors_count(MPIGPU_Comm comm, int rank, int* nneighbors) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Graph_neighbors_count", comm,
                api::DoGraphNeighborsCount(comm, rank, nneighbors));
}
extern "C" int MPIGPU_Graph_neighbors(MPIGPU_Comm comm, int rank, int maxneighbors,
                                      int neighbors[]) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Graph_neighbors", comm,
                api::DoGraphNeighbors(comm, rank, maxneighbors, neighbors));
}
extern "C" int MPIGPU_Graph_map(MPIGPU_Comm comm, int nnodes, const int index[], const int edges[],
                                int* newrank) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Graph_map", comm, api::DoGraphMap(comm, nnodes, index, edges, newrank));
}
extern "C" int MPIGPU_Dist_graph_create_adjacent(MPIGPU_Comm comm, int indegree,
                                                 const int sources[], const int sourceweights[],
                                                 int outdegree, const int destinations[],
                                                 const int destweights[], MPIGPU_Info info,
                                                 int reorder, MPIGPU_Comm* newcomm) {
  (void)info;
  (void)reorder;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Dist_graph_create_adjacent", comm,
                api::DoDistAdjacent(lk, comm, indegree, sources, sourceweights, outdegree,
                                    destinations, destweights, newcomm));
}
extern "C" int MPIGPU_Dist_graph_create(MPIGPU_Comm comm, int n, const int sources[],
                                        const int degrees[], const int destinations[],
                                        const int weights[], MPIGPU_Info info, int reorder,
                                        MPIGPU_Comm* newcomm) {
  (void)info;
  (void)reorder;
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Dist_graph_create", comm,
                api::DoDistCreate(lk, comm, n, sources, degrees, destinations, weights, newcomm));
}
extern "C" int MPIGPU_Dist_graph_neighbors_count(MPIGPU_Comm comm, int* indegree, int* outdegree,
                                                 int* weighted) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Dist_graph_neighbors_count", comm,
                api::DoDistCount(comm, indegree, outdegree, weighted));
}
extern "C" int MPIGPU_Dist_graph_neighbors(MPIGPU_Comm comm, int maxindegree, int sources[],
                                           int sourceweights[], int maxoutdegree,
                                           int destinations[], int destweights[]) {
  Lock lk(GetState().mu);
  return Finish("MPIGPU_Dist_graph_neighbors", comm,
                api::DoDistNeighbors(comm, maxindegree, sources, sourceweights, maxoutdegree,
                                     destinations, destweights));
}

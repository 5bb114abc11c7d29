// Graph and distributed graph topologies: MPIGPU_Graph_create, Dist_graph_create(_adjacent),
// their neighbour queries and Graph_map.
#include <algorithm>
#include <string>
#include <vector>

#include "mpigpu_api/api_internal.h"
#include "mpigpu_api/comm_objects.h"
#include "mpigpu_api/errors.h"

namespace mpigpu::api {
namespace {

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

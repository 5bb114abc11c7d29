// The MPI calls of virtual topologies and Dims_create: thin over the core's (mpigpu_api/topo*.cc,
// dims_factor.cc). MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY have the core's values (-2, -3 in both
// mpi.h and mpigpu.h), so they pass through; reorder and info are accepted and ignored (ranks
// keep their order).
#include "mpi/mpi_internal.h"

using mpigpu::mpi::Done;

extern "C" int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  return Done("MPI_Dims_create", MPI_COMM_WORLD, MPIGPU_Dims_create(nnodes, ndims, dims));
}
MPIGPU_MPI_ALIAS(Dims_create)

extern "C" int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                                const int periods[], int reorder, MPI_Comm* comm_cart) {
  return Done("MPI_Cart_create", comm_old,
              MPIGPU_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart));
}
MPIGPU_MPI_ALIAS(Cart_create)

extern "C" int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  return Done("MPI_Cart_coords", comm, MPIGPU_Cart_coords(comm, rank, maxdims, coords));
}
MPIGPU_MPI_ALIAS(Cart_coords)

extern "C" int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  return Done("MPI_Cart_rank", comm, MPIGPU_Cart_rank(comm, coords, rank));
}
MPIGPU_MPI_ALIAS(Cart_rank)

extern "C" int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source,
                               int* rank_dest) {
  return Done("MPI_Cart_shift", comm,
              MPIGPU_Cart_shift(comm, direction, disp, rank_source, rank_dest));
}
MPIGPU_MPI_ALIAS(Cart_shift)

extern "C" int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return Done("MPI_Cart_sub", comm, MPIGPU_Cart_sub(comm, remain_dims, newcomm));
}
MPIGPU_MPI_ALIAS(Cart_sub)

extern "C" int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[],
                             int coords[]) {
  return Done("MPI_Cart_get", comm, MPIGPU_Cart_get(comm, maxdims, dims, periods, coords));
}
MPIGPU_MPI_ALIAS(Cart_get)

extern "C" int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[],
                             int* newrank) {
  return Done("MPI_Cart_map", comm, MPIGPU_Cart_map(comm, ndims, dims, periods, newrank));
}
MPIGPU_MPI_ALIAS(Cart_map)

extern "C" int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  return Done("MPI_Cartdim_get", comm, MPIGPU_Cartdim_get(comm, ndims));
}
MPIGPU_MPI_ALIAS(Cartdim_get)

extern "C" int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                                 const int edges[], int reorder, MPI_Comm* comm_graph) {
  return Done("MPI_Graph_create", comm_old,
              MPIGPU_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph));
}
MPIGPU_MPI_ALIAS(Graph_create)

extern "C" int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[],
                              int edges[]) {
  return Done("MPI_Graph_get", comm, MPIGPU_Graph_get(comm, maxindex, maxedges, index, edges));
}
MPIGPU_MPI_ALIAS(Graph_get)

extern "C" int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[],
                              int* newrank) {
  return Done("MPI_Graph_map", comm, MPIGPU_Graph_map(comm, nnodes, index, edges, newrank));
}
MPIGPU_MPI_ALIAS(Graph_map)

extern "C" int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  return Done("MPI_Graph_neighbors", comm,
              MPIGPU_Graph_neighbors(comm, rank, maxneighbors, neighbors));
}
MPIGPU_MPI_ALIAS(Graph_neighbors)

extern "C" int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  return Done("MPI_Graph_neighbors_count", comm,
              MPIGPU_Graph_neighbors_count(comm, rank, nneighbors));
}
MPIGPU_MPI_ALIAS(Graph_neighbors_count)

extern "C" int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  return Done("MPI_Graphdims_get", comm, MPIGPU_Graphdims_get(comm, nnodes, nedges));
}
MPIGPU_MPI_ALIAS(Graphdims_get)

extern "C" int PMPI_Topo_test(MPI_Comm comm, int* status) {
  return Done("MPI_Topo_test", comm, MPIGPU_Topo_test(comm, status));
}
MPIGPU_MPI_ALIAS(Topo_test)

extern "C" int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                               const int sources[], const int sourceweights[],
                                               int outdegree, const int destinations[],
                                               const int destweights[], MPI_Info info,
                                               int reorder, MPI_Comm* comm_dist_graph) {
  return Done("MPI_Dist_graph_create_adjacent", comm_old,
              MPIGPU_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
                                                outdegree, destinations, destweights, info,
                                                reorder, comm_dist_graph));
}
MPIGPU_MPI_ALIAS(Dist_graph_create_adjacent)

extern "C" int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                      const int degrees[], const int destinations[],
                                      const int weights[], MPI_Info info, int reorder,
                                      MPI_Comm* comm_dist_graph) {
  return Done("MPI_Dist_graph_create", comm_old,
              MPIGPU_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights, info,
                                       reorder, comm_dist_graph));
}
MPIGPU_MPI_ALIAS(Dist_graph_create)

extern "C" int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree,
                                               int* weighted) {
  return Done("MPI_Dist_graph_neighbors_count", comm,
              MPIGPU_Dist_graph_neighbors_count(comm, indegree, outdegree, weighted));
}
MPIGPU_MPI_ALIAS(Dist_graph_neighbors_count)

extern "C" int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                         int sourceweights[], int maxoutdegree,
                                         int destinations[], int destweights[]) {
  return Done("MPI_Dist_graph_neighbors", comm,
              MPIGPU_Dist_graph_neighbors(comm, maxindegree, sources, sourceweights,
                                          maxoutdegree, destinations, destweights));
}
MPIGPU_MPI_ALIAS(Dist_graph_neighbors)

// Placeholders for the topo calls of mpi.h that are not written yet: each returns
// MPI_ERR_UNSUPPORTED_OPERATION naming itself (through the communicator's error handler).
// The area's owner replaces this file with the real calls.
#include "mpi/mpi_internal.h"

extern "C" int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  (void)nnodes;
  (void)ndims;
  (void)dims;
  return mpigpu::mpi::Unsupported("MPI_Dims_create", MPI_COMM_WORLD);
}
MPIGPU_MPI_ALIAS(Dims_create)

extern "C" int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* comm_cart) {
  (void)ndims;
  (void)dims;
  (void)periods;
  (void)reorder;
  (void)comm_cart;
  return mpigpu::mpi::Unsupported("MPI_Cart_create", comm_old);
}
MPIGPU_MPI_ALIAS(Cart_create)

extern "C" int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  (void)rank;
  (void)maxdims;
  (void)coords;
  return mpigpu::mpi::Unsupported("MPI_Cart_coords", comm);
}
MPIGPU_MPI_ALIAS(Cart_coords)

extern "C" int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  (void)coords;
  (void)rank;
  return mpigpu::mpi::Unsupported("MPI_Cart_rank", comm);
}
MPIGPU_MPI_ALIAS(Cart_rank)

extern "C" int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  (void)direction;
  (void)disp;
  (void)rank_source;
  (void)rank_dest;
  return mpigpu::mpi::Unsupported("MPI_Cart_shift", comm);
}
MPIGPU_MPI_ALIAS(Cart_shift)

extern "C" int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  (void)remain_dims;
  (void)newcomm;
  return mpigpu::mpi::Unsupported("MPI_Cart_sub", comm);
}
MPIGPU_MPI_ALIAS(Cart_sub)

extern "C" int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  (void)maxdims;
  (void)dims;
  (void)periods;
  (void)coords;
  return mpigpu::mpi::Unsupported("MPI_Cart_get", comm);
}
MPIGPU_MPI_ALIAS(Cart_get)

extern "C" int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  (void)ndims;
  (void)dims;
  (void)periods;
  (void)newrank;
  return mpigpu::mpi::Unsupported("MPI_Cart_map", comm);
}
MPIGPU_MPI_ALIAS(Cart_map)

extern "C" int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  (void)ndims;
  return mpigpu::mpi::Unsupported("MPI_Cartdim_get", comm);
}
MPIGPU_MPI_ALIAS(Cartdim_get)

extern "C" int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm* comm_graph) {
  (void)nnodes;
  (void)index;
  (void)edges;
  (void)reorder;
  (void)comm_graph;
  return mpigpu::mpi::Unsupported("MPI_Graph_create", comm_old);
}
MPIGPU_MPI_ALIAS(Graph_create)

extern "C" int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  (void)maxindex;
  (void)maxedges;
  (void)index;
  (void)edges;
  return mpigpu::mpi::Unsupported("MPI_Graph_get", comm);
}
MPIGPU_MPI_ALIAS(Graph_get)

extern "C" int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  (void)nnodes;
  (void)index;
  (void)edges;
  (void)newrank;
  return mpigpu::mpi::Unsupported("MPI_Graph_map", comm);
}
MPIGPU_MPI_ALIAS(Graph_map)

extern "C" int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  (void)rank;
  (void)maxneighbors;
  (void)neighbors;
  return mpigpu::mpi::Unsupported("MPI_Graph_neighbors", comm);
}
MPIGPU_MPI_ALIAS(Graph_neighbors)

extern "C" int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  (void)rank;
  (void)nneighbors;
  return mpigpu::mpi::Unsupported("MPI_Graph_neighbors_count", comm);
}
MPIGPU_MPI_ALIAS(Graph_neighbors_count)

extern "C" int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  (void)nnodes;
  (void)nedges;
  return mpigpu::mpi::Unsupported("MPI_Graphdims_get", comm);
}
MPIGPU_MPI_ALIAS(Graphdims_get)

extern "C" int PMPI_Topo_test(MPI_Comm comm, int* status) {
  (void)status;
  return mpigpu::mpi::Unsupported("MPI_Topo_test", comm);
}
MPIGPU_MPI_ALIAS(Topo_test)

extern "C" int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[], int outdegree, const int destinations[], const int destweights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  (void)indegree;
  (void)sources;
  (void)sourceweights;
  (void)outdegree;
  (void)destinations;
  (void)destweights;
  (void)info;
  (void)reorder;
  (void)comm_dist_graph;
  return mpigpu::mpi::Unsupported("MPI_Dist_graph_create_adjacent", comm_old);
}
MPIGPU_MPI_ALIAS(Dist_graph_create_adjacent)

extern "C" int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[], const int destinations[], const int weights[], MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  (void)n;
  (void)sources;
  (void)degrees;
  (void)destinations;
  (void)weights;
  (void)info;
  (void)reorder;
  (void)comm_dist_graph;
  return mpigpu::mpi::Unsupported("MPI_Dist_graph_create", comm_old);
}
MPIGPU_MPI_ALIAS(Dist_graph_create)

extern "C" int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  (void)indegree;
  (void)outdegree;
  (void)weighted;
  return mpigpu::mpi::Unsupported("MPI_Dist_graph_neighbors_count", comm);
}
MPIGPU_MPI_ALIAS(Dist_graph_neighbors_count)

extern "C" int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree, int destinations[], int destweights[]) {
  (void)maxindegree;
  (void)sources;
  (void)sourceweights;
  (void)maxoutdegree;
  (void)destinations;
  (void)destweights;
  return mpigpu::mpi::Unsupported("MPI_Dist_graph_neighbors", comm);
}
MPIGPU_MPI_ALIAS(Dist_graph_neighbors)

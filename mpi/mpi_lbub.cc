// MPI-1's bound markers MPI_LB and MPI_UB (removed in MPI 3.0, still used by old codes and by
// MPICH's *_oldapi tests), thin over the modern calls: the core has no marker types, so a
// struct that names them is built from its other entries (MPIGPU_Type_create_struct) and then
// given the bounds the markers set (MPIGPU_Type_create_resized, which MPI defines as the same
// thing as adding the markers). The marker handles themselves only have names.
#include <algorithm>
#include <vector>

#include "mpi/mpi_internal.h"

namespace mpigpu::mpi {

const char* MarkerName(MPI_Datatype t) {
  if (t == MPI_LB) return "MPI_LB";
  if (t == MPI_UB) return "MPI_UB";
  return nullptr;
}

// MPI 1.1, 3.12.3: lb is the least displacement of an LB marker, if any, else the entries' lb;
// ub the greatest of a UB marker, if any, else the entries' ub. With no other entries both
// start at 0 (the type map { (LB, 10) } has extent -10).
int StructWithMarkers(int count, const int blocklens[], const MPI_Aint displs[],
                      const MPI_Datatype types[], MPI_Datatype* newtype) {
  bool markers = false;
  if (count > 0 && types != nullptr && displs != nullptr && blocklens != nullptr)
    for (int i = 0; i < count; ++i) markers |= MarkerName(types[i]) != nullptr;
  if (!markers)
    return MPIGPU_Type_create_struct(count, blocklens, displs, types, newtype);
  if (newtype == nullptr) return Detail(MPI_ERR_ARG, "null newtype");
  std::vector<int> lens;
  std::vector<MPI_Aint> disps;
  std::vector<MPI_Datatype> real;
  bool has_lb = false, has_ub = false;
  MPI_Aint lb = 0, ub = 0;
  for (int i = 0; i < count; ++i) {
    if (blocklens[i] < 0) return Detail(MPI_ERR_COUNT, "negative block length");
    if (types[i] == MPI_LB) {
      lb = has_lb ? std::min(lb, displs[i]) : displs[i];
      has_lb = true;
    } else if (types[i] == MPI_UB) {
      ub = has_ub ? std::max(ub, displs[i]) : displs[i];
      has_ub = true;
    } else {
      lens.push_back(blocklens[i]);
      disps.push_back(displs[i]);
      real.push_back(types[i]);
    }
  }
  MPI_Datatype base = MPI_DATATYPE_NULL;
  if (int rc = MPIGPU_Type_create_struct(static_cast<int>(real.size()), lens.data(),
                                         disps.data(), real.data(), &base);
      rc != MPI_SUCCESS)
    return rc;
  if (!real.empty()) {
    MPI_Aint blb = 0, bext = 0;
    if (int rc = MPIGPU_Type_get_extent(base, &blb, &bext); rc != MPI_SUCCESS) {
      MPIGPU_Type_free(&base);
      return rc;
    }
    if (!has_lb) lb = blb;
    if (!has_ub) ub = blb + bext;
  }
  const int rc = MPIGPU_Type_create_resized(base, lb, ub - lb, newtype);
  MPIGPU_Type_free(&base);  // the resized type keeps what it was built from
  return rc;
}

}  // namespace mpigpu::mpi

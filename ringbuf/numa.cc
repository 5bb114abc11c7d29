#include "ringbuf/numa.h"

#include <cuda_runtime_api.h>
#include <hwloc.h>
#include <numa.h>
#include <numaif.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "memcopy/log.h"
#include "memcopy/memcopy.h"

namespace mpigpu {

int NumaNodeOfGpu(int cuda_device) {
  if (cuda_device < 0 || cuda_device >= CudaDeviceCount()) return -1;
  char busid[32] = {};
  if (cudaDeviceGetPCIBusId(busid, sizeof busid, cuda_device) != cudaSuccess) {
    cudaGetLastError();  // clear it: a later cudaGetLastError must not report our failure
    return -1;
  }

  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return -1;
  int node = -1;
  // PCI devices are filtered out by default; keep the ones hwloc finds important (GPUs are).
  if (hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) == 0 &&
      hwloc_topology_load(topo) == 0) {
    hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topo, busid);
    hwloc_obj_t parent = pci ? hwloc_get_non_io_ancestor_obj(topo, pci) : nullptr;
    if (parent != nullptr && parent->nodeset != nullptr &&
        hwloc_bitmap_weight(parent->nodeset) == 1) {
      node = hwloc_bitmap_first(parent->nodeset);
    } else {
      MPIGPU_INFO("GPU %d (PCI %s): no single nearest NUMA node found", cuda_device, busid);
    }
  }
  hwloc_topology_destroy(topo);
  return node;
}

Status BindToNumaNode(void* addr, size_t len, int node) {
  if (node < 0) return Status::Ok();
  if (addr == nullptr || len == 0) {
    return Status(Err::kInvalidArg, "BindToNumaNode: empty range (addr " +
                                        std::to_string(reinterpret_cast<uintptr_t>(addr)) +
                                        ", len " + std::to_string(len) + ")");
  }
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  if (reinterpret_cast<uintptr_t>(addr) % page != 0) {
    return Status(Err::kInvalidArg, "BindToNumaNode: address is not page-aligned");
  }
  if (numa_available() < 0) {
    MPIGPU_INFO("NUMA is not available here: memory is not bound to node %d", node);
    return Status::Ok();
  }
  if (node > numa_max_node() || !numa_bitmask_isbitset(numa_all_nodes_ptr, node)) {
    return Status(Err::kInvalidArg, "BindToNumaNode: node " + std::to_string(node) +
                                        " has no memory here (highest node " +
                                        std::to_string(numa_max_node()) + ")");
  }
  struct bitmask* mask = numa_allocate_nodemask();
  numa_bitmask_setbit(mask, static_cast<unsigned>(node));
  // maxnode is the mask's size + 1, as libnuma itself passes it (the kernel drops one bit).
  long rc = mbind(addr, len, MPOL_PREFERRED, mask->maskp, mask->size + 1, MPOL_MF_MOVE);
  int err = errno;
  numa_free_nodemask(mask);
  if (rc != 0) return SysError("mbind(MPOL_PREFERRED)", err);
  return Status::Ok();
}

Status PinHostRange(void* addr, size_t len, bool mapped) {
  if (addr == nullptr || len == 0) {
    return Status(Err::kInvalidArg, "PinHostRange: empty range (len " + std::to_string(len) + ")");
  }
  if (CudaDeviceCount() == 0) return Status(Err::kNoGpu, "PinHostRange: no CUDA device");
  const unsigned flags = cudaHostRegisterPortable | (mapped ? cudaHostRegisterMapped : 0u);
  MPIGPU_CUDA_CHECK(cudaHostRegister(addr, len, flags));
  return Status::Ok();
}

Status UnpinHostRange(void* addr) {
  if (addr == nullptr) return Status(Err::kInvalidArg, "UnpinHostRange: null address");
  if (CudaDeviceCount() == 0) return Status(Err::kNoGpu, "UnpinHostRange: no CUDA device");
  MPIGPU_CUDA_CHECK(cudaHostUnregister(addr));
  return Status::Ok();
}

}  // namespace mpigpu

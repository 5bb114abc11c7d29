#include "tools/binding.h"

#include <cuda_runtime_api.h>
#include <hwloc.h>
#include <hwloc/glibc-sched.h>

#include <cstdlib>
#include <memory>

#include "memcopy/memcopy.h"

namespace mpigpu {
namespace launcher {
namespace {

// Owns a loaded hwloc topology.
struct Topology {
  hwloc_topology_t topo = nullptr;
  ~Topology() {
    if (topo) hwloc_topology_destroy(topo);
  }
};

// Loads this machine's topology (only the CPUs this process may use); with `with_pci`, PCI
// devices too, so a GPU's bus id can be found in it.
Status LoadTopology(bool with_pci, Topology* t) {
  if (hwloc_topology_init(&t->topo) != 0) return SysError("hwloc_topology_init");
  if (with_pci)
    hwloc_topology_set_io_types_filter(t->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  if (hwloc_topology_load(t->topo) != 0) return SysError("hwloc_topology_load");
  return Status::Ok();
}

std::string ListOf(hwloc_const_bitmap_t set) {
  char* text = nullptr;
  if (hwloc_bitmap_list_asprintf(&text, set) < 0 || text == nullptr) return "?";
  std::string s(text);
  std::free(text);
  return s;
}

// The OS index of the first NUMA node under `obj` (-1 when it has none).
int FirstNuma(hwloc_obj_t obj) {
  return obj->nodeset ? hwloc_bitmap_first(obj->nodeset) : -1;
}

void Bind(hwloc_topology_t topo, hwloc_const_cpuset_t set, const std::string& where,
          RankBinding* b) {
  b->bound = true;
  CPU_ZERO(&b->cpus);
  hwloc_cpuset_to_glibc_sched_affinity(topo, set, &b->cpus, sizeof(b->cpus));
  b->cpu_list = ListOf(set);
  b->where = where;
}

// NUMA nodes that have CPUs (memory-only nodes, e.g. HBM or GPU memory, cannot run a rank).
std::vector<hwloc_obj_t> NumaNodesWithCpus(hwloc_topology_t topo) {
  std::vector<hwloc_obj_t> nodes;
  int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(i));
    if (node && node->cpuset && !hwloc_bitmap_iszero(node->cpuset)) nodes.push_back(node);
  }
  return nodes;
}

// The CPUs nearest CUDA device `dev` (its NUMA node's), or nullptr with `why` set.
hwloc_obj_t GpuNuma(hwloc_topology_t topo, int dev, std::string* busid_out, std::string* why) {
  char busid[32] = {};
  if (cudaDeviceGetPCIBusId(busid, sizeof(busid), dev) != cudaSuccess) {
    (void)cudaGetLastError();
    *why = "no PCI bus id for GPU " + std::to_string(dev);
    return nullptr;
  }
  *busid_out = busid;
  hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(topo, busid);
  if (pci == nullptr) {
    *why = std::string("GPU ") + std::to_string(dev) + " (" + busid + ") not in the topology";
    return nullptr;
  }
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, pci);
  int os = anc ? FirstNuma(anc) : -1;
  hwloc_obj_t node = os >= 0 ? hwloc_get_numanode_obj_by_os_index(topo, static_cast<unsigned>(os))
                             : nullptr;
  if (node == nullptr || node->cpuset == nullptr || hwloc_bitmap_iszero(node->cpuset)) {
    *why = std::string("no NUMA node with CPUs near GPU ") + std::to_string(dev);
    return nullptr;
  }
  return node;
}

Status PlanCore(hwloc_topology_t topo, BindingPlan* plan) {
  int ncores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (ncores <= 0) return Status(Err::kSystem, "hwloc found no cores to bind to");
  for (size_t r = 0; r < plan->ranks.size(); ++r) {
    hwloc_obj_t core =
        hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, static_cast<unsigned>(r % ncores));
    std::string where = "core " + std::to_string(core->logical_index) + "; numa " +
                        std::to_string(FirstNuma(core));
    Bind(topo, core->cpuset, where, &plan->ranks[r]);
  }
  return Status::Ok();
}

Status PlanNuma(hwloc_topology_t topo, int ngpus, BindingPlan* plan) {
  std::vector<hwloc_obj_t> nodes = NumaNodesWithCpus(topo);
  if (nodes.empty()) return Status(Err::kSystem, "hwloc found no NUMA node with CPUs");
  for (size_t r = 0; r < plan->ranks.size(); ++r) {
    std::string why;
    if (ngpus > 0) {
      int dev = static_cast<int>(r % static_cast<size_t>(ngpus));  // the library's default GPU
      std::string busid;
      if (hwloc_obj_t node = GpuNuma(topo, dev, &busid, &why)) {
        Bind(topo, node->cpuset,
             "numa " + std::to_string(node->os_index) + " near GPU " + std::to_string(dev) +
                 " (" + busid + ")",
             &plan->ranks[r]);
        continue;
      }
    }
    hwloc_obj_t node = nodes[r % nodes.size()];
    std::string where = "numa " + std::to_string(node->os_index) + ", round robin";
    if (!why.empty()) where += ": " + why;
    Bind(topo, node->cpuset, where, &plan->ranks[r]);
  }
  return Status::Ok();
}

}  // namespace

Status PlanBindings(BindTo requested, int nranks, BindingPlan* plan) {
  plan->policy = BindTo::kNone;
  plan->ranks.assign(static_cast<size_t>(nranks > 0 ? nranks : 0), RankBinding());
  if (requested == BindTo::kNone) return Status::Ok();

  // Ask CUDA only when the answer matters (numa, or auto which may pick numa).
  int ngpus = requested == BindTo::kCore ? 0 : CudaDeviceCount();
  Topology t;
  Status st = LoadTopology(ngpus > 0, &t);
  if (!st.ok()) return requested == BindTo::kAuto ? Status::Ok() : st;

  BindTo policy = requested;
  if (policy == BindTo::kAuto) {
    int ncores = hwloc_get_nbobjs_by_type(t.topo, HWLOC_OBJ_CORE);
    if (nranks > ncores) return Status::Ok();  // oversubscribed: let the scheduler spread them
    policy = ngpus > 0 ? BindTo::kNuma : BindTo::kCore;
  }
  st = policy == BindTo::kCore ? PlanCore(t.topo, plan) : PlanNuma(t.topo, ngpus, plan);
  if (!st.ok()) {
    plan->ranks.assign(plan->ranks.size(), RankBinding());
    return requested == BindTo::kAuto ? Status::Ok() : st;
  }
  plan->policy = policy;
  return Status::Ok();
}

std::string DescribeBinding(const RankBinding& b) {
  if (!b.bound) return "not bound";
  return "bound to cpus " + b.cpu_list + " (" + b.where + ")";
}

}  // namespace launcher
}  // namespace mpigpu

// NUMA placement and pinning of shared host memory.
//
// Shared structures that a GPU reads or writes by DMA belong on the NUMA node nearest that GPU
// (the receiver's, for the LMT rings). NumaNodeOfGpu finds the node with hwloc; BindToNumaNode
// sets the memory policy of a range with libnuma's mbind; PinHostRange page-locks a range for
// the GPU with cudaHostRegister. Placement is a performance hint: where NUMA or the GPU's
// position is unknown these functions say so (info log) and carry on.
#pragma once

#include <cstddef>

#include "memcopy/status.h"

namespace mpigpu {

// The NUMA node (OS index) whose memory is nearest CUDA device `cuda_device`; -1 when there is no
// such device, hwloc cannot place it, or it is equally near several nodes.
int NumaNodeOfGpu(int cuda_device);

// Prefers node `node` for the pages of [addr, addr + len) (MPOL_PREFERRED, not BIND: a full node
// falls back to another one instead of failing a later page fault). addr must be page-aligned.
// For a shared memory object the policy is stored with the object, so pages allocated later
// (by posix_fallocate or by any process's first touch) follow it; pages this process already
// has mapped are moved. node < 0, or a kernel/library without NUMA: nothing is done, Ok.
// A node above the system's highest node: kInvalidArg.
Status BindToNumaNode(void* addr, size_t len, int node);

// Page-locks [addr, addr + len) for every CUDA context (cudaHostRegisterPortable), so copies
// between it and device memory run as DMA without staging; `mapped`: kernels may also load and
// store it (cudaHostRegisterMapped; cudaHostGetDevicePointer gives the address). kNoGpu where
// there is no GPU.
Status PinHostRange(void* addr, size_t len, bool mapped = false);
// Undoes PinHostRange(addr, ...).
Status UnpinHostRange(void* addr);

}  // namespace mpigpu

// GPUDirect RDMA through dma-buf: a device buffer registered with the RDMA device itself, so
// the rendezvous READs GPU memory with no staging (NCCL's net_ib does the same). The GPU driver
// exports the pages of the buffer's allocation as a dma-buf (cuMemGetHandleForAddressRange),
// and ibv_reg_dmabuf_mr registers the buffer's part of it at the buffer's own address (iova), so
// offers name device buffers exactly as host ones.
//
// Where it applies: a provider that takes dma-buf registrations (IbDevice::dmabuf(), probed at
// Open) and a GPU whose driver exports dma-bufs (CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED: the open
// kernel modules on Linux >= 5.12). Anything else answers an error; the caller then stages the
// message through host memory (and logs why once).
//
// What runs where: the export half on the GPU machine (tests/ib_dmabuf_gpu_test.cc); the
// registration only on RDMA hardware that takes dma-bufs, which no machine of this project has
// (rxe answers EOPNOTSUPP, and the Soft-RoCE VM has no GPU).
#pragma once

#include <cstddef>
#include <cstdint>

#include "internode/ib/ib_device.h"
#include "memcopy/status.h"

namespace mpigpu::internode {

// A dma-buf fd for the pages under [ptr, ptr + len) (rounded out to host pages) of one device
// allocation (the caller closes it), and ptr's offset into it. kNoGpu where no driver or GPU
// can export it, kCuda where the export itself failed, kInvalidArg for memory not the device's.
Status ExportDmabuf(const void* ptr, size_t len, int* fd, uint64_t* offset);

// Registers device memory [ptr, ptr + len) for local writes and remote reads and writes through
// its dma-buf; deregister with IbDevice::Deregister. As ExportDmabuf, or kSystem where the RDMA
// device refused the registration.
Status RegisterDeviceMemory(const IbDevice& dev, void* ptr, size_t len, ibv_mr** mr);

// Makes the RDMA writes into `device`'s memory that completed so far visible to its later work
// (cudaDeviceFlushGPUDirectRDMAWrites): called before a receive into device memory completes.
Status FlushRdmaWrites(int device);

}  // namespace mpigpu::internode

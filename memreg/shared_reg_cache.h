// The process's one registration cache (RegCache): every kind of registration a process makes of
// host memory shares its interval map and its memory hooks, each as a client with its own limits
// (clients: the CUDA pins of pinned copies, pin_cache.h; the ibverbs netmod's memory regions,
// internode/ib/ib_reg.h).
#pragma once

#include "memreg/reg_cache.h"

namespace mpigpu::memreg {

// Made on first use, never destroyed: registrations must not be dropped by static destructors
// after the CUDA runtime or an RDMA device went (each client drops its own when its device goes).
RegCache& SharedRegCache();

}  // namespace mpigpu::memreg

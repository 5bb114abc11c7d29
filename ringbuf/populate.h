// Memory for a piece of a sparse shared segment (ShmSegment::Create's sparse tail), before its
// first store: MADV_POPULATE_WRITE faults the pages in, so a full /dev/shm is an error here
// (kNoMemory) instead of a SIGBUS in whichever process touches the page first. Bytes already
// there are not changed (a page may be shared with neighbours in use). On kernels before 5.14,
// each page is faulted in by an atomic add of zero.
#pragma once

#include <cstddef>
#include <string>

#include "memcopy/status.h"

namespace mpigpu {

Status PopulateForWrite(void* addr, size_t bytes, const std::string& what);

}  // namespace mpigpu

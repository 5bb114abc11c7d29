// Memory for a piece of a sparse shared segment (ShmSegment::Create's sparse tail), before its
// first store: MADV_POPULATE_WRITE faults the pages in, so a full /dev/shm is an error here
// (kNoMemory) instead of a SIGBUS in whichever process touches the page first. Bytes already
// there are not changed (a page may be shared with neighbours in use).
//
// Kernels before 5.14 lack MADV_POPULATE_WRITE (RHEL 8's 4.18): there the pages are reserved
// with posix_fallocate on the file behind the mapping (ENOSPC is the same kNoMemory), then
// faulted in by an atomic add of zero. ShmSegment registers its mapping's file for that
// (RegisterPopulateFile) when the fallback is in use; memory with no registered file is only
// touched, as before.
#pragma once

#include <cstddef>
#include <string>

#include "memcopy/status.h"

namespace mpigpu {

Status PopulateForWrite(void* addr, size_t bytes, const std::string& what);

// Whether PopulateForWrite falls back (the kernel lacks MADV_POPULATE_WRITE, or a test forced it).
bool PopulateFallsBack();
// [base, base + bytes) maps `fd` from offset 0; the registry owns fd (closed by Unregister).
void RegisterPopulateFile(const void* base, size_t bytes, int fd);
void UnregisterPopulateFile(const void* base);
// Tests: take the fallback whatever the kernel has.
void ForcePopulateFallbackForTesting(bool on);

}  // namespace mpigpu

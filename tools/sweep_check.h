// mpigpu-sweep -c: every size's messages carry a pattern (memcopy/pattern.h) that the receiver
// verifies; a wrong byte is printed and ends the job with kExitCheckFailed.
#pragma once

#include <cstddef>

#include "memcopy/status.h"
#include "tools/sweep_series.h"

namespace mpigpu {
namespace sweep {

// The size of each of a pair's check buffers (Ctx::check_s, check_r): a window of the largest
// messages, within a bound (64 MiB, or one message when that is larger).
size_t CheckBufferBytes(const Options& o);

// Before the timed loop: the message this rank sends gets its pattern, the buffer it receives
// into a poison pattern.
Status PrepareCheck(Ctx& c, size_t size_index, size_t size);

// After the timed loop: the receive buffer must hold the last timed message; then a window of
// fresh messages (each slot its own pattern) goes through and every slot is verified.
Status CheckSize(Ctx& c, size_t size_index, size_t size);

}  // namespace sweep
}  // namespace mpigpu

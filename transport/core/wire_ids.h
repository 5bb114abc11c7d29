// The wire ids of the LMT back-ends (LmtCaps::wire_id, MsgHeader::lmt): one per back-end, fixed,
// so that ranks agree on them whatever each one's configuration. 0 is kNoLmt (core/wire.h).
#pragma once

#include <cstdint>

namespace mpigpu::transport {

constexpr uint8_t kWireIdIpc = 1;   // transport/lmt/ipc_lmt.h
constexpr uint8_t kWireIdCma = 2;   // transport/lmt/cma_lmt.h
constexpr uint8_t kWireIdRing = 3;  // transport/lmt/ring_lmt.h
constexpr uint8_t kWireIdChan = 4;  // transport/lmt/chan_lmt.h
constexpr uint8_t kWireIdIb = 5;    // internode/ib/ib_lmt.h
// Not a back-end: the engine's own control messages (send cancellation, engine_cancel.cc).
constexpr uint8_t kWireIdCore = 255;

}  // namespace mpigpu::transport
